"""Stack configuration: the examples are valid, every bad config fails with its message."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pulumi
import pytest
from pulumi.runtime import config as runtime_config
from stack_harness import AwsMocks, example_config, stack_file_settings

from infra.config import parse_stack_config
from infra.model import ConfigError, VolumeSpec
from infra.program import load_stack_config


def small() -> dict[str, Any]:
    return copy.deepcopy(stack_file_settings("small"))


def dc(raw: dict[str, Any], i: int = 0) -> dict[str, Any]:
    return raw["dataCentres"][i]


def as_zookeeper_dc(d: dict[str, Any], **changes: Any) -> None:
    """Turn the small stack's KRaft dc2 into a ZooKeeper DC, then apply `changes`."""
    d.pop("controllers", None)
    d.update(metadataMode="zookeeper", **changes)


def errors_of(raw: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as e:
        parse_stack_config(raw, stack="unit")
    return e.value.messages


def test_the_example_stacks_are_valid() -> None:
    s, p = example_config("small"), example_config("production")
    assert [d.region for d in s.data_centres] == ["eu-west-1", "eu-central-1"]
    assert s.data_centres[0].availability_zones == () and s.data_centres[0].zone_count == 3
    assert p.data_centres[1].availability_zones == (
        "eu-central-1a",
        "eu-central-1b",
        "eu-central-1c",
    )
    assert p.kafka_volume == VolumeSpec(size_gib=1000, iops=6000, throughput_mibps=500)
    assert (p.mirrormaker.source, p.mirrormaker.target, p.mirrormaker.hosts) == ("dc1", "dc2", 2)
    assert not s.protect_data_volumes and p.protect_data_volumes and p.ssm_endpoints
    assert not s.ssh.enabled and not p.ssh.enabled


def test_defaults_fill_in_a_minimal_two_dc_config() -> None:
    cfg = parse_stack_config(
        {
            "dataCentres": [
                {"name": "dc1", "region": "eu-west-1", "vpcCidr": "10.1.0.0/16"},
                {"name": "dc2", "region": "us-east-1", "vpcCidr": "10.2.0.0/16"},
            ]
        },
        stack="minimal",
    )
    assert (cfg.replication_factor, cfg.min_insync_replicas) == (3, 2)
    assert (cfg.mirrormaker.source, cfg.mirrormaker.target, cfg.mirrormaker.hosts) == (
        "dc1",
        "dc2",
        1,
    )
    assert cfg.spark.enabled and cfg.spark.data_centre == "dc1"
    assert cfg.nat_gateway and not cfg.ssm_endpoints and cfg.protect_data_volumes


Edit = Callable[[dict[str, Any]], None]

BAD_CONFIGS: list[tuple[str, Edit, list[str]]] = [
    (
        "even ensemble",
        lambda r: dc(r).update(zookeepers=2),
        [
            "dc1: the ZooKeeper ensemble has 2 server(s); at least 3 are needed",
            "dc1: the ZooKeeper ensemble has an even number of servers (2); "
            "use an odd number so a majority survives a split",
        ],
    ),
    (
        "ensemble larger than the AZ count",
        lambda r: dc(r).update(zookeepers=5),
        [
            "dc1: 5 ZooKeeper servers over 3 availability zone(s); each server needs its own AZ "
            "so one AZ outage keeps the quorum"
        ],
    ),
    (
        "brokers not a multiple of the AZs",
        lambda r: dc(r).update(brokers=4),
        ["dc1: 4 brokers cannot be spread evenly over 3 availability zones; use a multiple of 3"],
    ),
    (
        "replication factor above brokers and racks",
        lambda r: r.update(replicationFactor=4, minInsyncReplicas=2),
        [
            "dc1: default replication factor 4 is above the broker count 3",
            "dc1: 3 rack(s) ['eu-west-1-zone1', 'eu-west-1-zone2', 'eu-west-1-zone3'] cannot hold "
            "replication factor 4; each replica needs its own rack",
        ],
    ),
    (
        "fewer AZs than the replication factor",
        lambda r: as_zookeeper_dc(dc(r, 1), zoneCount=2, zookeepers=1, brokers=4),
        [
            "dc2: the ZooKeeper ensemble has 1 server(s); at least 3 are needed",
            "dc2: 2 rack(s) ['eu-central-1-zone1', 'eu-central-1-zone2'] cannot hold "
            "replication factor 3; each replica needs its own rack",
        ],
    ),
    (
        "min.insync.replicas not below RF",
        lambda r: r.update(minInsyncReplicas=3),
        ["dc1: min.insync.replicas=3 must be below the replication factor 3"],
    ),
    (
        "client port open to the internet",
        lambda r: r.update(clientCidrs=["0.0.0.0/0"]),
        ["kafkakit:clientCidrs: 0.0.0.0/0 is too wide (/0)"],
    ),
    (
        "Spark open to the internet",
        lambda r: r["spark"].update(clientCidrs=["0.0.0.0/0"]),
        ["kafkakit:spark.clientCidrs: 0.0.0.0/0 is too wide (/0)"],
    ),
    (
        "not a CIDR",
        lambda r: r.update(clientCidrs=["10.0.0.1/8"]),
        ["kafkakit:clientCidrs: '10.0.0.1/8' is not an IPv4 network in CIDR form"],
    ),
    (
        "overlapping VPCs",
        lambda r: dc(r, 1).update(vpcCidr="10.10.128.0/17"),
        ["dc1 and dc2: VPC CIDRs 10.10.0.0/16 and 10.10.128.0/17 overlap"],
    ),
    (
        "public VPC range",
        lambda r: dc(r).update(vpcCidr="8.8.0.0/16"),
        ["dc1.vpcCidr: 8.8.0.0/16 is not a private (RFC 1918) range"],
    ),
    (
        "VPC too small",
        lambda r: dc(r).update(vpcCidr="10.10.0.0/26"),
        ["dc1.vpcCidr: 10.10.0.0/26 must be between a /16 and a /24"],
    ),
    (
        "two DCs in one region",
        lambda r: dc(r, 1).update(region="eu-west-1"),
        ["kafkakit:dataCentres: each data centre needs its own AWS region"],
    ),
    (
        "not a region",
        lambda r: dc(r).update(region="mars-1"),
        ["dc1: 'mars-1' is not an AWS region name like eu-west-1"],
    ),
    (
        "DC name unusable as an Ansible group",
        lambda r: dc(r, 1).update(name="dc-2"),
        ["dc-2: data centre names become Ansible group names"],
    ),
    (
        "DC name clashing with a component group",
        lambda r: dc(r, 1).update(name="zookeeper"),
        ["zookeeper: 'zookeeper' is already an inventory group name"],
    ),
    (
        "AZs of another region",
        lambda r: dc(r).update(availabilityZones=["eu-west-1a", "eu-west-1b", "us-east-1a"]),
        ["dc1: availabilityZones ['us-east-1a'] are not AZs of eu-west-1"],
    ),
    (
        "AZ list and count disagree",
        lambda r: dc(r).update(availabilityZones=["eu-west-1a", "eu-west-1b"], zoneCount=3),
        ["dc1: 2 availabilityZones listed but zoneCount is 3"],
    ),
    (
        "too many AZs",
        lambda r: dc(r).update(zoneCount=7),
        ["dc1: zoneCount must be 1..6, not 7"],
    ),
    (
        "Graviton type on an x86 stack",
        lambda r: r["instanceTypes"].update(kafka="m7g.large"),
        ["kafkakit:instanceTypes (kafka_broker): m7g.large is an arm64 type"],
    ),
    (
        "instance too small for a JVM",
        lambda r: r["instanceTypes"].update(zookeeper="t3.micro"),
        ["kafkakit:instanceTypes (zookeeper): t3.micro is too small for a JVM with TLS"],
    ),
    (
        "not an instance type",
        lambda r: r["instanceTypes"].update(sparkWorker="large"),
        ["kafkakit:instanceTypes (spark_worker): 'large' is not an EC2 instance type"],
    ),
    (
        "gp3 throughput above its IOPS",
        lambda r: r["kafkaVolume"].update(throughputMibps=1000),
        ["kafkakit:kafkaVolume.throughputMibps: gp3 allows at most 0.25 MiB/s per provisioned IOPS"],
    ),
    (
        "gp3 IOPS out of range",
        lambda r: r["zookeeperVolume"].update(iops=20000),
        ["kafkakit:zookeeperVolume.iops: gp3 takes 3000..16000 IOPS, not 20000"],
    ),
    (
        "MirrorMaker with one DC",
        lambda r: r["dataCentres"].pop(),
        [
            "kafkakit:mirrormaker: MirrorMaker 2 needs two data centres, not only ['dc1']",
            "kafkakit:mirrormaker.target: 'dc2' is not in ['dc1']",
        ],
    ),
    (
        "MirrorMaker into its own source",
        lambda r: r["mirrormaker"].update(target="dc1"),
        ["kafkakit:mirrormaker: source and target are both 'dc1'"],
    ),
    (
        "Spark in an unknown DC",
        lambda r: r["spark"].update(dataCentre="dc9"),
        ["kafkakit:spark.dataCentre: 'dc9' is not in ['dc1', 'dc2']"],
    ),
    (
        "no way to reach Systems Manager",
        lambda r: r.update(natGateway=False, ssmEndpoints=False),
        ["kafkakit: with natGateway and ssmEndpoints both off the hosts cannot reach Systems Manager"],
    ),
    (
        "SSH from the internet",
        lambda r: r.update(ssh={"keyName": "ops", "cidrs": ["0.0.0.0/0"]}),
        ["kafkakit:ssh.cidrs: 0.0.0.0/0 is too wide (/0)"],
    ),
    (
        "SSH networks without a key",
        lambda r: r.update(ssh={"cidrs": ["10.99.0.0/24"]}),
        ["kafkakit:ssh: cidrs are declared but no keyName"],
    ),
    (
        "overriding a program tag",
        lambda r: r["tags"].update(Name="mine"),
        ["kafkakit:tags: 'Name' is set by the program and cannot be overridden"],
    ),
    (
        "no data centre",
        lambda r: r.update(dataCentres=[]),
        ["kafkakit:dataCentres: declare at least one data centre"],
    ),
]


@pytest.mark.parametrize("edit, expected", [(e, m) for _, e, m in BAD_CONFIGS], ids=[n for n, _, _ in BAD_CONFIGS])
def test_bad_config_fails_with_its_message(edit: Edit, expected: list[str]) -> None:
    raw = small()
    edit(raw)
    messages = errors_of(raw)
    for want in expected:
        assert any(m.startswith(want) for m in messages), f"{want!r} not in {messages}"


SHAPE_ERRORS: list[tuple[str, Edit, str]] = [
    (
        "unknown DC setting",
        lambda r: dc(r).update(brokerz=3),
        "kafkakit:dataCentres[0].brokerz: unknown setting",
    ),
    (
        "unknown top-level setting",
        lambda r: r.update(replicationFactr=3),
        "kafkakit:replicationFactr: unknown setting",
    ),
    (
        "a word for a count",
        lambda r: dc(r).update(brokers="three"),
        "kafkakit:dataCentres[0].brokers: expected a whole number, got 'three'",
    ),
    (
        "true is not a count",
        lambda r: r.update(replicationFactor=True),
        "kafkakit:replicationFactor: expected a whole number, got True",
    ),
    (
        "yes is not a boolean",
        lambda r: r.update(natGateway="yes"),
        "kafkakit:natGateway: expected true or false, got 'yes'",
    ),
    (
        "missing VPC range",
        lambda r: dc(r).pop("vpcCidr"),
        "kafkakit:dataCentres[0].vpcCidr: required",
    ),
    (
        "a string for a list",
        lambda r: r.update(clientCidrs="10.0.0.0/8"),
        "kafkakit:clientCidrs: expected a list of strings, got '10.0.0.0/8'",
    ),
    (
        "a list for a section",
        lambda r: r.update(spark=[1]),
        "kafkakit:spark: expected a mapping, got list",
    ),
]


@pytest.mark.parametrize("edit, expected", [(e, m) for _, e, m in SHAPE_ERRORS], ids=[n for n, _, _ in SHAPE_ERRORS])
def test_malformed_settings_are_named_exactly(edit: Edit, expected: str) -> None:
    raw = small()
    edit(raw)
    assert expected in errors_of(raw)


def test_every_problem_is_reported_at_once_in_one_error() -> None:
    raw = small()
    dc(raw).update(zookeepers=2, brokers=4)
    raw.update(clientCidrs=["0.0.0.0/0"], natGateway=False)
    with pytest.raises(ConfigError) as e:
        parse_stack_config(raw, stack="unit")
    assert len(e.value.messages) == 5
    text = str(e.value)
    assert text.startswith("invalid kafkakit stack configuration (5):\n  - ")
    assert all(f"  - {m}" in text for m in e.value.messages)


def test_numbers_and_booleans_set_from_the_cli_are_accepted() -> None:
    # `pulumi config set kafkakit:replicationFactor 3` stores the string "3".
    raw = small()
    raw.update(replicationFactor="3", natGateway="true", minInsyncReplicas=2.0)
    cfg = parse_stack_config(raw, stack="unit")
    assert (cfg.replication_factor, cfg.nat_gateway, cfg.min_insync_replicas) == (3, True, 2)


@pytest.fixture
def pulumi_config() -> Callable[[dict[str, Any]], None]:
    """Set the running stack's config the way the Pulumi engine would, then restore it."""
    pulumi.runtime.set_mocks(AwsMocks({}), project="kafkakit", stack="cli")
    before = dict(runtime_config.CONFIG.get())

    def set_config(values: dict[str, Any]) -> None:
        runtime_config.set_all_config({k: v if isinstance(v, str) else json.dumps(v) for k, v in values.items()})

    yield set_config
    runtime_config.set_all_config(before)


def test_load_stack_config_reads_the_kafkakit_namespace(pulumi_config) -> None:
    pulumi_config(
        {
            "aws:region": "eu-west-1",
            "pulumi:disable-default-providers": ["aws"],
            **{f"kafkakit:{k}": v for k, v in stack_file_settings("small").items()},
            "kafkakit:replicationFactor": "3",
            "kafkakit:architecture": "x86_64",  # a plain string, not JSON
        }
    )
    cfg = load_stack_config()
    assert cfg == parse_stack_config({**stack_file_settings("small"), "replicationFactor": 3}, stack=cfg.stack)


def test_load_stack_config_rejects_a_misspelt_key(pulumi_config) -> None:
    settings = {f"kafkakit:{k}": v for k, v in stack_file_settings("small").items()}
    pulumi_config({**settings, "kafkakit:dataCenters": []})
    with pytest.raises(ConfigError, match=r"kafkakit:dataCenters: unknown setting"):
        load_stack_config()
