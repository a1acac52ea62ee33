"""The policy pack: each rule flags its violation, and the program's own stacks pass them all."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from pulumi_policy import (
    EnforcementLevel,
    PolicyCustomTimeouts,
    PolicyResourceOptions,
    ResourceValidationArgs,
)
from stack_harness import StackRun

from infra.policy import rules
from infra.policy.pack import PACK_NAME, POLICIES
from infra.policy.rules import (
    INGRESS_RULE,
    INSTANCE,
    LAUNCH_TEMPLATE,
    SECURITY_GROUP,
    SECURITY_GROUP_RULE,
    VOLUME,
    violations,
)

GOOD_INSTANCE = {
    "associatePublicIpAddress": False,
    "metadataOptions": {"httpTokens": "required"},
    "rootBlockDevice": {"encrypted": True, "kmsKeyId": "arn:aws:kms:eu-west-1:1:key/k"},
}


def test_the_example_stacks_pass_every_policy(example: StackRun) -> None:
    checked = 0
    for r in example.resources:
        assert violations(r.typ, r.inputs) == {}, r.name
        checked += r.typ in (VOLUME, INSTANCE, INGRESS_RULE)
    assert checked > 40


def test_a_registered_volume_without_encryption_is_flagged(small: StackRun) -> None:
    volume = copy.deepcopy(next(r for r in small.resources if r.typ == VOLUME).inputs)
    volume["encrypted"] = False
    del volume["kmsKeyId"]
    assert violations(VOLUME, volume) == {
        "data-volume-encryption": [
            "EBS volume is not encrypted (set encrypted: true)",
            "EBS volume has no customer-managed KMS key (set kmsKeyId)",
        ]
    }


def test_a_registered_instance_with_imdsv1_and_a_public_ip_is_flagged(small: StackRun) -> None:
    instance = copy.deepcopy(next(r for r in small.resources if r.typ == INSTANCE).inputs)
    instance["metadataOptions"]["httpTokens"] = "optional"
    instance["associatePublicIpAddress"] = True
    assert set(violations(INSTANCE, instance)) == {"imdsv2-required", "no-public-ip-on-hosts"}


@pytest.mark.parametrize(
    "resource_type, props, policy",
    [
        (VOLUME, {"encrypted": True}, "data-volume-encryption"),
        (VOLUME, {"kmsKeyId": "k"}, "data-volume-encryption"),
        (INSTANCE, {**GOOD_INSTANCE, "rootBlockDevice": {}}, "data-volume-encryption"),
        (
            INSTANCE,
            {**GOOD_INSTANCE, "ebsBlockDevices": [{"deviceName": "/dev/sdf", "encrypted": False}]},
            "data-volume-encryption",
        ),
        (
            LAUNCH_TEMPLATE,
            {
                "metadataOptions": {"httpTokens": "required"},
                "blockDeviceMappings": [{"ebs": {"encrypted": "false"}}],
            },
            "data-volume-encryption",
        ),
        (INSTANCE, {**GOOD_INSTANCE, "metadataOptions": {}}, "imdsv2-required"),
        (
            INSTANCE,
            {k: v for k, v in GOOD_INSTANCE.items() if k != "metadataOptions"},
            "imdsv2-required",
        ),
        (LAUNCH_TEMPLATE, {"metadataOptions": {"httpTokens": "optional"}}, "imdsv2-required"),
        (INSTANCE, {**GOOD_INSTANCE, "associatePublicIpAddress": True}, "no-public-ip-on-hosts"),
        (
            INSTANCE,
            {k: v for k, v in GOOD_INSTANCE.items() if k != "associatePublicIpAddress"},
            "no-public-ip-on-hosts",
        ),
    ],
)
def test_each_host_and_volume_rule_flags_its_violation(resource_type: str, props: dict[str, Any], policy: str) -> None:
    assert list(violations(resource_type, props)) == [policy]


def ingress(**props: Any) -> dict[str, Any]:
    return {"securityGroupId": "sg-1", "ipProtocol": "tcp", **props}


@pytest.mark.parametrize(
    "resource_type, props",
    [
        (INGRESS_RULE, ingress(fromPort=9093, toPort=9093, cidrIpv4="0.0.0.0/0")),
        (INGRESS_RULE, ingress(fromPort=2182, toPort=2182, cidrIpv6="::/0")),
        (INGRESS_RULE, ingress(fromPort=9000, toPort=9100, cidrIpv4="0.0.0.0/0")),  # holds 9091-3
        (INGRESS_RULE, ingress(ipProtocol="-1", cidrIpv4="0.0.0.0/0")),
        (INGRESS_RULE, ingress(fromPort=7077, toPort=7077, cidrIpv4="0.0.0.0/4")),
        (
            SECURITY_GROUP_RULE,
            {
                "type": "ingress",
                "protocol": "tcp",
                "fromPort": 3888,
                "toPort": 3888,
                "cidrBlocks": ["10.0.0.0/8", "0.0.0.0/0"],
            },
        ),
        (
            SECURITY_GROUP,
            {
                "ingress": [
                    {
                        "protocol": "tcp",
                        "fromPort": 8080,
                        "toPort": 8081,
                        "cidrBlocks": ["0.0.0.0/0"],
                    }
                ]
            },
        ),
        (
            SECURITY_GROUP,
            {"ingress": [{"protocol": "-1", "fromPort": 0, "toPort": 0, "ipv6CidrBlocks": ["::/0"]}]},
        ),
    ],
)
def test_public_ingress_to_a_data_port_is_flagged(resource_type: str, props: dict) -> None:
    assert list(violations(resource_type, props)) == ["no-public-ingress-to-data-ports"]


@pytest.mark.parametrize(
    "resource_type, props",
    [
        (INGRESS_RULE, ingress(fromPort=443, toPort=443, cidrIpv4="0.0.0.0/0")),  # not a data port
        (INGRESS_RULE, ingress(fromPort=9093, toPort=9093, cidrIpv4="192.168.100.0/24")),
        (INGRESS_RULE, ingress(fromPort=9093, toPort=9093, referencedSecurityGroupId="sg-2")),
        (INGRESS_RULE, ingress(ipProtocol="icmp", fromPort=-1, toPort=-1, cidrIpv4="0.0.0.0/0")),
        (SECURITY_GROUP_RULE, {"type": "egress", "protocol": "-1", "cidrBlocks": ["0.0.0.0/0"]}),
        (SECURITY_GROUP, {"egress": [{"protocol": "-1", "cidrBlocks": ["0.0.0.0/0"]}]}),
    ],
)
def test_allowed_ingress_and_egress_are_not_flagged(resource_type: str, props: dict) -> None:
    assert violations(resource_type, props) == {}


def test_the_message_names_the_ports_and_the_source() -> None:
    found = rules.no_public_data_ingress(INGRESS_RULE, ingress(fromPort=2000, toPort=3000, cidrIpv4="0.0.0.0/0"))
    assert found == [
        "security group ingress rule opens data port(s) [2181, 2182, 2888] to 0.0.0.0/0; "
        "allow declared client networks only"
    ]


def _args(resource_type: str, props: dict[str, Any]) -> ResourceValidationArgs:
    opts = PolicyResourceOptions(
        protect=False,
        ignore_changes=[],
        delete_before_replace=None,
        aliases=[],
        custom_timeouts=PolicyCustomTimeouts(0, 0, 0),
        additional_secret_outputs=[],
    )
    return ResourceValidationArgs(resource_type, props, "urn:x", "x", opts, None)


def test_the_pack_reports_through_the_policy_sdk() -> None:
    assert [p.name for p in POLICIES] == list(rules.RULES)
    assert PACK_NAME == "kafkakit-guardrails"
    assert all(p.enforcement_level == EnforcementLevel.MANDATORY for p in POLICIES)
    by_name = {p.name: p for p in POLICIES}
    reported: list[str] = []
    by_name["imdsv2-required"].validate(
        _args(INSTANCE, {**GOOD_INSTANCE, "metadataOptions": {"httpTokens": "optional"}}),
        lambda message, urn=None: reported.append(message),
    )
    assert reported == ["instance allows IMDSv1 (set metadataOptions.httpTokens: required)"]
    reported.clear()
    by_name["imdsv2-required"].validate(
        _args(INSTANCE, GOOD_INSTANCE), lambda message, urn=None: reported.append(message)
    )
    assert reported == []
