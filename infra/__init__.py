"""kafkakit's Pulumi program for AWS.

Importing this package has no side effects: `infra/__main__.py` runs the program, the tests
build it under `pulumi.runtime.set_mocks`, and the policy pack imports only `infra.ports`.
"""
