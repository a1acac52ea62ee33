"""kafkakit's policy pack: `pulumi preview --policy-pack infra/policy`."""
