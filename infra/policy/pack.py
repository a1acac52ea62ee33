"""The policy pack's policies: thin wrappers that report what infra.policy.rules finds."""

from __future__ import annotations

from pulumi_policy import (
    EnforcementLevel,
    ReportViolation,
    ResourceValidation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
)

from infra.policy.rules import RULES, Rule

PACK_NAME = "kafkakit-guardrails"

DESCRIPTIONS = {
    "data-volume-encryption": "EBS volumes encrypted; data volumes with a customer-managed key.",
    "no-public-ingress-to-data-ports": "No ZooKeeper, Kafka, Spark, MM2 or metrics port open to the world.",
    "imdsv2-required": "Instances and launch templates require IMDSv2 session tokens.",
    "no-public-ip-on-hosts": "Instances never get a public IP address.",
}


def _validator(rule: Rule) -> ResourceValidation:
    def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
        for message in rule(args.resource_type, args.props):
            report_violation(message, None)

    return validate


POLICIES = [
    ResourceValidationPolicy(
        name=name,
        description=DESCRIPTIONS[name],
        enforcement_level=EnforcementLevel.MANDATORY,
        validate=_validator(rule),
    )
    for name, rule in RULES.items()
]
