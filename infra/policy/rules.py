"""The guardrails as plain functions: (resource type, input properties) -> violation messages.

Properties use the engine's camelCase names, as a policy pack receives them (and as
`pulumi.runtime.set_mocks` records them, so the tests run these over a whole mocked stack).
During a preview an unknown value raises the policy SDK's UnknownValueError on access, which
the SDK turns into "not checked yet".
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from infra.ports import DATA_PORTS, range_holds_data_port

VOLUME = "aws:ebs/volume:Volume"
INSTANCE = "aws:ec2/instance:Instance"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
SECURITY_GROUP = "aws:ec2/securityGroup:SecurityGroup"
SECURITY_GROUP_RULE = "aws:ec2/securityGroupRule:SecurityGroupRule"
INGRESS_RULE = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"

Rule = Callable[[str, Mapping[str, Any]], list[str]]


def _items(value: Any) -> list[Any]:
    if isinstance(value, Sequence) and not isinstance(value, str):
        return list(value)
    return []


def _truthy(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.lower() == "true")


# ------------------------------------------------------------------ encryption of data volumes


def volume_encryption(resource_type: str, props: Mapping[str, Any]) -> list[str]:
    """Every EBS volume encrypted; standalone data volumes with a customer-managed key."""
    if resource_type == VOLUME:
        out = []
        if not _truthy(props.get("encrypted")):
            out.append("EBS volume is not encrypted (set encrypted: true)")
        if not props.get("kmsKeyId"):
            out.append("EBS volume has no customer-managed KMS key (set kmsKeyId)")
        return out
    if resource_type == INSTANCE:
        out = []
        root = props.get("rootBlockDevice")
        if not isinstance(root, Mapping) or not _truthy(root.get("encrypted")):
            out.append("instance root volume is not encrypted (rootBlockDevice.encrypted)")
        for i, dev in enumerate(_items(props.get("ebsBlockDevices"))):
            if not isinstance(dev, Mapping) or not _truthy(dev.get("encrypted")):
                out.append(f"instance EBS block device {i} is not encrypted")
        return out
    if resource_type == LAUNCH_TEMPLATE:
        return [
            f"launch template block device {i} is not encrypted"
            for i, m in enumerate(_items(props.get("blockDeviceMappings")))
            if isinstance(m, Mapping) and isinstance(m.get("ebs"), Mapping) and not _truthy(m["ebs"].get("encrypted"))
        ]
    return []


# ------------------------------------------------------------------ no public ingress to data ports


def open_to_internet(cidr: Any) -> bool:
    """A CIDR wider than a /8 (0.0.0.0/0, ::/0, ...) is the internet, not a client network."""
    if not isinstance(cidr, str):
        return False
    try:
        return ipaddress.ip_network(cidr, strict=False).prefixlen < 8
    except ValueError:
        return False


def _port_range(rule: Mapping[str, Any], protocol_key: str) -> tuple[int, int]:
    protocol = str(rule.get(protocol_key, "tcp")).lower()
    if protocol in ("-1", "all"):
        return 0, 65535
    if protocol in ("icmp", "1", "icmpv6", "58"):
        return -1, -1  # ICMP types and codes, not ports
    low, high = rule.get("fromPort"), rule.get("toPort")
    if low is None and high is None:
        return 0, 65535
    return int(low if low is not None else high), int(high if high is not None else low)


def _public_data_ingress(cidrs: Iterable[Any], low: int, high: int, what: str) -> list[str]:
    if not range_holds_data_port(low, high):
        return []
    ports = sorted(p for p in DATA_PORTS if low <= p <= high)
    return [
        f"{what} opens data port(s) {ports} to {cidr}; allow declared client networks only"
        for cidr in cidrs
        if open_to_internet(cidr)
    ]


def no_public_data_ingress(resource_type: str, props: Mapping[str, Any]) -> list[str]:
    if resource_type == INGRESS_RULE:
        low, high = _port_range(props, "ipProtocol")
        cidrs = [props.get("cidrIpv4"), props.get("cidrIpv6")]
        return _public_data_ingress(cidrs, low, high, "security group ingress rule")
    if resource_type == SECURITY_GROUP_RULE:
        if props.get("type") != "ingress":
            return []
        low, high = _port_range(props, "protocol")
        cidrs = _items(props.get("cidrBlocks")) + _items(props.get("ipv6CidrBlocks"))
        return _public_data_ingress(cidrs, low, high, "security group rule")
    if resource_type == SECURITY_GROUP:
        out = []
        for rule in _items(props.get("ingress")):
            if isinstance(rule, Mapping):
                low, high = _port_range(rule, "protocol")
                cidrs = _items(rule.get("cidrBlocks")) + _items(rule.get("ipv6CidrBlocks"))
                out += _public_data_ingress(cidrs, low, high, "security group inline ingress")
        return out
    return []


# ------------------------------------------------------------------ IMDSv2 and public addresses


def imdsv2_required(resource_type: str, props: Mapping[str, Any]) -> list[str]:
    if resource_type not in (INSTANCE, LAUNCH_TEMPLATE):
        return []
    options = props.get("metadataOptions")
    tokens = options.get("httpTokens") if isinstance(options, Mapping) else None
    if tokens != "required":
        kind = "instance" if resource_type == INSTANCE else "launch template"
        return [f"{kind} allows IMDSv1 (set metadataOptions.httpTokens: required)"]
    return []


def no_public_ip(resource_type: str, props: Mapping[str, Any]) -> list[str]:
    """Data nodes live in private subnets; a public address must be refused explicitly."""
    if resource_type != INSTANCE:
        return []
    if props.get("associatePublicIpAddress") is not False:
        return ["instance may get a public IP (set associatePublicIpAddress: false)"]
    return []


RULES: dict[str, Rule] = {
    "data-volume-encryption": volume_encryption,
    "no-public-ingress-to-data-ports": no_public_data_ingress,
    "imdsv2-required": imdsv2_required,
    "no-public-ip-on-hosts": no_public_ip,
}


def violations(resource_type: str, props: Mapping[str, Any]) -> dict[str, list[str]]:
    """Every rule's messages for one resource, by policy name (empty lists left out)."""
    found = {name: rule(resource_type, props) for name, rule in RULES.items()}
    return {name: msgs for name, msgs in found.items() if msgs}
