"""kafkakit: shared code for the Ansible plugins, the Pulumi program and the tests."""
