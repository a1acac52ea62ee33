"""The rules a stack configuration must keep; each broken rule is one message.

Cloud-only rules live here; the topology rules are kafkakit.rules.topology's, shared with the
Ansible preflight, applied to the hosts infra.placement would create.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping, Sequence

from infra.model import PROJECT, DataCentreConfig, StackConfig, VolumeSpec
from infra.placement import plan_stack, topology_of
from kafkakit.rules.inventory import COMPONENT_GROUPS
from kafkakit.rules.topology import validate as validate_topology

MAX_ZONES = 6  # no AWS region offers more usable AZs to one account
# kafka_common's kafka_connect_min_workers, which the preflight applies to the inventory this stack
# makes (a copy: Pulumi does not read the roles; tests/unit/infra/test_infra_connect.py ties them).
MIN_CONNECT_WORKERS = 2
ARCHITECTURES = ("x86_64", "arm64")

_DC_NAME = re.compile(r"^[a-z][a-z0-9]{0,15}$")
_REGION = re.compile(r"^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d$")
_INSTANCE_TYPE = re.compile(r"^([a-z]+)(\d+)([a-z-]*)\.([a-z0-9]+)$")
_TAG_KEY = re.compile(r"^[\w .:/=+\-@]{1,128}$")
# Tags the program sets itself; a stack cannot override them.
RESERVED_TAGS = frozenset({"Name", "Project", "Stack", "ManagedBy", "DataCentre", "Role", "Rack"})
# Too small for a JVM with TLS: the broker, the controller, ZooKeeper, MM2, Connect and Spark all run one.
_TOO_SMALL = frozenset({"nano", "micro"})


def placeholder_zones(cfg: StackConfig) -> dict[str, list[str]]:
    """The AZs each DC will use: the declared ones, or stand-ins until the region is asked."""
    return {
        dc.name: list(dc.availability_zones) or [f"{dc.region}-zone{i + 1}" for i in range(dc.zone_count)]
        for dc in cfg.data_centres
    }


def breaks_planning(dc: DataCentreConfig) -> bool:
    return not 1 <= dc.zone_count <= MAX_ZONES or min(dc.zookeepers, dc.controllers, dc.brokers) < 0


def topology_errors(cfg: StackConfig, zones: Mapping[str, Sequence[str]]) -> list[str]:
    """The Ansible preflight's topology rules, applied to the hosts this stack would create."""
    return validate_topology(topology_of(cfg, plan_stack(cfg, zones)))


def _cidr(value: str, where: str, errors: list[str]) -> ipaddress.IPv4Network | None:
    try:
        return ipaddress.IPv4Network(value, strict=True)
    except ValueError as e:
        errors.append(f"{where}: {value!r} is not an IPv4 network in CIDR form ({e})")
        return None


def _client_cidrs(values: Sequence[str], where: str, errors: list[str]) -> None:
    for value in values:
        net = _cidr(value, where, errors)
        if net is not None and net.prefixlen < 8:
            errors.append(
                f"{where}: {value} is too wide (/{net.prefixlen}); data ports accept only "
                "declared client networks, never the internet"
            )


def _instance_type_errors(cfg: StackConfig) -> list[str]:
    errors = []
    for group, itype in cfg.instance_types.by_group().items():
        m = _INSTANCE_TYPE.match(itype)
        where = f"{PROJECT}:instanceTypes ({group})"
        if not m:
            errors.append(f"{where}: {itype!r} is not an EC2 instance type like m6i.large")
            continue
        family_suffix, size = m.group(3), m.group(4)
        arch = "arm64" if "g" in family_suffix else "x86_64"  # m7g, c6gn, t4g: Graviton
        if arch != cfg.architecture:
            errors.append(
                f"{where}: {itype} is an {arch} type but the stack's architecture is "
                f"{cfg.architecture}; every host boots the same AMI architecture"
            )
        if size in _TOO_SMALL:
            errors.append(f"{where}: {itype} is too small for a JVM with TLS; use .small or larger")
    return errors


def _volume_errors(name: str, v: VolumeSpec) -> list[str]:
    where = f"{PROJECT}:{name}"
    errors = []
    if not 1 <= v.size_gib <= 16384:
        errors.append(f"{where}.sizeGib: gp3 volumes hold 1..16384 GiB, not {v.size_gib}")
    if not 3000 <= v.iops <= 16000:
        errors.append(f"{where}.iops: gp3 takes 3000..16000 IOPS, not {v.iops}")
    if not 125 <= v.throughput_mibps <= 1000:
        errors.append(f"{where}.throughputMibps: gp3 takes 125..1000 MiB/s, not {v.throughput_mibps}")
    elif v.throughput_mibps * 4 > v.iops:
        errors.append(
            f"{where}.throughputMibps: gp3 allows at most 0.25 MiB/s per provisioned IOPS "
            f"({v.throughput_mibps} MiB/s needs {v.throughput_mibps * 4} IOPS, {v.iops} set)"
        )
    return errors


def _data_centre_errors(dc: DataCentreConfig) -> list[str]:
    errors: list[str] = []
    label = dc.name or "data centre"
    if not _DC_NAME.match(dc.name):
        errors.append(
            f"{label}: data centre names become Ansible group names; use lowercase letters and "
            f"digits starting with a letter (like dc1), not {dc.name!r}"
        )
    elif dc.name in COMPONENT_GROUPS or dc.name in ("all", "ungrouped"):
        errors.append(f"{label}: {dc.name!r} is already an inventory group name")
    if not _REGION.match(dc.region):
        errors.append(f"{label}: {dc.region!r} is not an AWS region name like eu-west-1")
    net = _cidr(dc.vpc_cidr, f"{label}.vpcCidr", errors)
    if net is not None and not 16 <= net.prefixlen <= 24:
        errors.append(f"{label}.vpcCidr: {dc.vpc_cidr} must be between a /16 and a /24")
    if net is not None and not net.is_private:
        errors.append(f"{label}.vpcCidr: {dc.vpc_cidr} is not a private (RFC 1918) range")
    if not 1 <= dc.zone_count <= MAX_ZONES:
        errors.append(f"{label}: zoneCount must be 1..{MAX_ZONES}, not {dc.zone_count}")
    if dc.availability_zones:
        if len(dc.availability_zones) != dc.zone_count:
            errors.append(
                f"{label}: {len(dc.availability_zones)} availabilityZones listed but zoneCount is {dc.zone_count}"
            )
        if len(set(dc.availability_zones)) != len(dc.availability_zones):
            errors.append(f"{label}: availabilityZones lists an AZ twice")
        foreign = [z for z in dc.availability_zones if not re.fullmatch(rf"{dc.region}[a-z]", z)]
        if foreign:
            errors.append(f"{label}: availabilityZones {foreign} are not AZs of {dc.region}")
    counts = (
        ("zookeepers", dc.zookeepers),
        ("controllers", dc.controllers),
        ("brokers", dc.brokers),
        ("connect", dc.connect),
    )
    for key, count in counts:
        if count < 0:
            errors.append(f"{label}.{key}: must not be negative, not {count}")
    if 0 < dc.connect < MIN_CONNECT_WORKERS:
        errors.append(
            f"{label}.connect: a Kafka Connect cluster needs at least {MIN_CONNECT_WORKERS} workers, not "
            f"{dc.connect}: one worker is no cluster to fail over in (0 builds none)"
        )
    if dc.zookeepers > dc.zone_count >= 1:
        errors.append(
            f"{label}: {dc.zookeepers} ZooKeeper servers over {dc.zone_count} availability "
            "zone(s); each server needs its own AZ so one AZ outage keeps the quorum"
        )
    if dc.controllers > dc.zone_count >= 1:
        errors.append(
            f"{label}: {dc.controllers} KRaft controllers over {dc.zone_count} availability "
            "zone(s); each controller needs its own AZ so one AZ outage keeps the quorum"
        )
    if dc.brokers > 0 and dc.zone_count >= 1 and dc.brokers % dc.zone_count:
        errors.append(
            f"{label}: {dc.brokers} brokers cannot be spread evenly over {dc.zone_count} "
            f"availability zones; use a multiple of {dc.zone_count}"
        )
    for sg in dc.client_security_group_ids:
        if not re.fullmatch(r"sg-[0-9a-f]{8,17}", sg):
            errors.append(f"{label}.clientSecurityGroupIds: {sg!r} is not a security group id")
    if dc.ami is not None and not re.fullmatch(r"ami-[0-9a-f]{8,17}", dc.ami):
        errors.append(f"{label}.ami: {dc.ami!r} is not an AMI id")
    return errors


def cloud_errors(cfg: StackConfig) -> list[str]:
    """The rules only the cloud has: regions, networks, AZs, instance types, volumes, access."""
    errors: list[str] = []
    if not cfg.data_centres:
        return [f"{PROJECT}:dataCentres: declare at least one data centre"]
    for dc in cfg.data_centres:
        errors += _data_centre_errors(dc)
    names = [dc.name for dc in cfg.data_centres]
    regions = [dc.region for dc in cfg.data_centres]
    if len(set(regions)) != len(regions):
        errors.append(f"{PROJECT}:dataCentres: each data centre needs its own AWS region, got {regions}")
    nets = []
    for dc in cfg.data_centres:
        try:
            nets.append((dc.name, ipaddress.IPv4Network(dc.vpc_cidr)))
        except ValueError:
            pass  # reported above
    for i, (a, na) in enumerate(nets):
        for b, nb in nets[i + 1 :]:
            if na.overlaps(nb):
                errors.append(f"{a} and {b}: VPC CIDRs {na} and {nb} overlap; peered VPCs need disjoint ones")
    errors += _instance_type_errors(cfg)
    if cfg.architecture not in ARCHITECTURES:
        errors.append(f"{PROJECT}:architecture: one of {ARCHITECTURES}, not {cfg.architecture!r}")
    errors += _volume_errors("kafkaVolume", cfg.kafka_volume)
    errors += _volume_errors("zookeeperVolume", cfg.zookeeper_volume)
    errors += _volume_errors("controllerVolume", cfg.controller_volume)
    if not 8 <= cfg.root_volume_gib <= 1024:
        errors.append(f"{PROJECT}:rootVolumeGib: 8..1024, not {cfg.root_volume_gib}")
    _client_cidrs(cfg.client_cidrs, f"{PROJECT}:clientCidrs", errors)
    _client_cidrs(cfg.spark.client_cidrs, f"{PROJECT}:spark.clientCidrs", errors)

    if cfg.spark.enabled:
        if cfg.spark.data_centre not in names:
            errors.append(f"{PROJECT}:spark.dataCentre: {cfg.spark.data_centre!r} is not in {names}")
        if cfg.spark.workers < 1:
            errors.append(f"{PROJECT}:spark.workers: a Spark cluster needs at least 1 worker")
    mm = cfg.mirrormaker
    if mm.hosts < 0:
        errors.append(f"{PROJECT}:mirrormaker.hosts: must not be negative")
    if mm.hosts > 0:
        if len(names) < 2:
            errors.append(f"{PROJECT}:mirrormaker: MirrorMaker 2 needs two data centres, not only {names}")
        for role, dc_name in (("source", mm.source), ("target", mm.target)):
            if dc_name not in names:
                errors.append(f"{PROJECT}:mirrormaker.{role}: {dc_name!r} is not in {names}")
        if mm.source == mm.target:
            errors.append(f"{PROJECT}:mirrormaker: source and target are both {mm.source!r}")

    if not (cfg.nat_gateway or cfg.ssm_endpoints):
        errors.append(
            f"{PROJECT}: with natGateway and ssmEndpoints both off the hosts cannot reach "
            "Systems Manager, and Ansible reaches them only through it; enable one"
        )
    _client_cidrs(cfg.ssh.cidrs, f"{PROJECT}:ssh.cidrs", errors)
    if cfg.ssh.cidrs and not cfg.ssh.key_name:
        errors.append(f"{PROJECT}:ssh: cidrs are declared but no keyName")
    if cfg.ssh.key_name and not cfg.ssh.cidrs:
        errors.append(f"{PROJECT}:ssh: keyName is declared but no cidrs to allow SSH from")
    for key in cfg.tags:
        if key in RESERVED_TAGS or key.lower().startswith("aws:"):
            errors.append(f"{PROJECT}:tags: {key!r} is set by the program and cannot be overridden")
        elif not _TAG_KEY.match(key):
            errors.append(f"{PROJECT}:tags: {key!r} is not a valid tag key")
    if not 1 <= cfg.replication_factor <= 7:
        errors.append(f"{PROJECT}:replicationFactor: 1..7, not {cfg.replication_factor}")
    return errors
