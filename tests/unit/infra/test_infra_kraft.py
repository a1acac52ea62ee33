"""Issue 14 on the cloud side: a per-DC `metadataMode`. A KRaft DC gets dedicated controllers over
distinct AZs instead of ZooKeeper servers, their own security group (9094 from the DC's controllers
and brokers only), encrypted data volumes, and lands in the inventory's `kafka_controller` group
with `controller_id`; a ZooKeeper DC stays as it was. The small stack has one of each, like the lab."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest
from stack_harness import StackRun, run_stack, stack_file_settings

from infra import ports
from infra.config import parse_stack_config
from infra.model import ConfigError, DataCentreConfig, SparkConfig, StackConfig
from infra.outputs import KRAFT_KAFKA_VERSION
from infra.placement import plan_stack, topology_of
from infra.policy import rules
from kafkakit.rules.topology import validate

INSTANCE = "aws:ec2/instance:Instance"
VOLUME = "aws:ebs/volume:Volume"
ATTACHMENT = "aws:ec2/volumeAttachment:VolumeAttachment"
SUBNET = "aws:ec2/subnet:Subnet"
KEY = "aws:kms/key:Key"
SG = "aws:ec2/securityGroup:SecurityGroup"
INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"


def instances(run: StackRun, role: str, dc: str | None = None) -> list:
    return [
        i
        for i in run.of(INSTANCE)
        if i.inputs["tags"]["Role"] == role and (dc is None or i.inputs["tags"]["DataCentre"] == dc)
    ]


def zone_of(run: StackRun, instance: Any) -> str:
    return run.by_id(instance.inputs["subnetId"]).inputs["availabilityZone"]


def groups_of(run: StackRun, dc: str) -> dict[str, str]:
    """Security group id -> component, for the groups of one DC."""
    return {g.id: g.inputs["tags"]["Role"] for g in run.of(SG) if g.inputs["tags"].get("DataCentre") == dc}


def one_dc(mode: str, zones: int = 3, **dc: Any) -> StackConfig:
    region = "us-east-1"  # six AZs in the mocks
    return StackConfig(
        stack="unit",
        data_centres=(
            DataCentreConfig(
                name="dc1", region=region, vpc_cidr="10.30.0.0/16", zone_count=zones, metadata_mode=mode, **dc
            ),
        ),
        spark=SparkConfig(data_centre="dc1"),
        tags={"Owner": "platform-team"},
    )


# ------------------------------------------------------------------------ the small stack: one of each


def test_the_small_stack_is_the_labs_shape() -> None:
    cfg = parse_stack_config(stack_file_settings("small"), stack="small")
    dc1, dc2 = cfg.data_centres
    assert (dc1.metadata_mode, dc1.zookeepers, dc1.controllers) == ("zookeeper", 3, 0)
    assert (dc2.metadata_mode, dc2.zookeepers, dc2.controllers) == ("kraft", 0, 3)


def test_a_kraft_dc_has_its_controllers_in_distinct_azs_and_no_zookeeper(small: StackRun) -> None:
    controllers = instances(small, "kafka_controller", "dc2")
    assert sorted(c.name for c in controllers) == ["dc2-controller-1", "dc2-controller-2", "dc2-controller-3"]
    zones = [zone_of(small, c) for c in controllers]
    assert sorted(zones) == small.outputs["dataCentres"]["dc2"]["availabilityZones"]
    assert {c.inputs["instanceType"] for c in controllers} == {"t3.small"}
    assert instances(small, "zookeeper", "dc2") == []
    # The ZooKeeper DC beside it is unchanged: three servers, no controllers.
    assert len(instances(small, "zookeeper", "dc1")) == 3
    assert instances(small, "kafka_controller", "dc1") == []


def test_each_controller_has_an_encrypted_data_volume_in_its_az(small: StackRun) -> None:
    dc2_key = next(k for k in small.of(KEY) if k.region == "eu-central-1").state["arn"]
    attached = {a.inputs["instanceId"]: small.by_id(a.inputs["volumeId"]) for a in small.of(ATTACHMENT)}
    for c in instances(small, "kafka_controller"):
        volume = attached[c.id]
        assert volume.inputs["encrypted"] is True and volume.inputs["kmsKeyId"] == dc2_key
        assert volume.inputs["type"] == "gp3" and volume.inputs["size"] == 10  # controllerVolume.sizeGib
        assert volume.inputs["availabilityZone"] == zone_of(small, c)
        assert volume.inputs["tags"]["Role"] == "kafka_controller"


def test_the_controller_port_opens_only_to_the_dcs_controllers_and_brokers(small: StackRun) -> None:
    dc2 = groups_of(small, "dc2")
    assert set(dc2.values()) == {"controller", "kafka", "mirrormaker", "monitoring"}  # no zookeeper group
    assert "controller" not in groups_of(small, "dc1").values()
    controller_sg = next(g for g, role in dc2.items() if role == "controller")
    into = [r.inputs for r in small.of(INGRESS) if r.inputs["securityGroupId"] == controller_sg]
    on_9094 = [r for r in into if r["fromPort"] <= ports.KAFKA_CONTROLLER <= r["toPort"]]
    assert sorted(dc2[r["referencedSecurityGroupId"]] for r in on_9094) == ["controller", "kafka"]
    assert all("cidrIpv4" not in r for r in on_9094)  # no network, local or remote, by address
    # Everything else into the controllers is a metrics scrape (7074 JMX, 9100 node exporter).
    others = {int(r["fromPort"]) for r in into if r not in on_9094}
    assert others == {ports.JMX_KAFKA_CONTROLLER, ports.NODE_EXPORTER}
    # Controllers reach nothing by their group (they never connect to brokers), and no ZooKeeper
    # port is open anywhere in dc2.
    dc2_rules = [r.inputs for r in small.of(INGRESS) if r.inputs["securityGroupId"] in dc2]
    from_controllers = [r for r in dc2_rules if r.get("referencedSecurityGroupId") == controller_sg]
    assert {dc2[r["securityGroupId"]] for r in from_controllers} == {"controller"}
    assert not [r for r in dc2_rules if r["fromPort"] in (2182, 2888, 3888)]


def test_controllers_sit_only_in_the_controller_group(small: StackRun) -> None:
    roles = groups_of(small, "dc2")
    for c in instances(small, "kafka_controller"):
        assert [roles[g] for g in c.inputs["vpcSecurityGroupIds"]] == ["controller"]


def test_the_inventory_has_the_controller_group_ids_and_each_dcs_mode(small: StackRun) -> None:
    children = small.outputs["inventory"]["all"]["children"]
    assert sorted(children["kafka_controller"]["hosts"]) == ["dc2-controller-1", "dc2-controller-2", "dc2-controller-3"]
    assert sorted(children["zookeeper"]["hosts"]) == ["dc1-zk-1", "dc1-zk-2", "dc1-zk-3"]
    assert children["dc1"]["vars"] == {"kafka_metadata_mode": "zookeeper"}
    assert children["dc2"]["vars"] == {"kafka_metadata_mode": "kraft", "kafka_version": KRAFT_KAFKA_VERSION}
    ids = {}
    for name in children["kafka_controller"]["hosts"]:
        hv = children["dc2"]["hosts"][name]
        ids[name] = hv["controller_id"]
        assert "broker_id" not in hv and "zookeeper_id" not in hv
        assert hv["storage_volume_id"].startswith("volume-") and hv["kafka_rack"].startswith("eu-central-1")
        instance = small.named(name, INSTANCE)
        assert hv["ansible_aws_ssm_instance_id"] == instance.id and hv["private_ip"] == instance.state["privateIp"]
    assert ids == {"dc2-controller-1": 101, "dc2-controller-2": 102, "dc2-controller-3": 103}
    brokers = {
        children["dc2"]["hosts"][b]["broker_id"] for b in children["kafka_broker"]["hosts"] if b.startswith("dc2")
    }
    assert brokers == {1, 2, 3} and not brokers & set(ids.values())


# ------------------------------------------------------------------------ both modes, other shapes


@pytest.mark.parametrize("count, zones", [(3, 3), (5, 6)])
def test_a_kraft_dc_of_n_controllers_uses_n_distinct_azs(count: int, zones: int) -> None:
    run = run_stack(one_dc("kraft", zones=zones, zookeepers=0, controllers=count))
    controllers = instances(run, "kafka_controller")
    assert len(controllers) == count == len({zone_of(run, c) for c in controllers})
    assert instances(run, "zookeeper") == []
    assert sorted(run.outputs["inventory"]["all"]["children"]["kafka_controller"]["hosts"]) == [
        f"dc1-controller-{i}" for i in range(1, count + 1)
    ]
    assert "zookeeper" not in set(groups_of(run, "dc1").values())


def test_a_single_controller_fails_before_any_cloud_resource() -> None:
    with pytest.raises(ConfigError) as e:
        run_stack(one_dc("kraft", zookeepers=0, controllers=1))
    assert e.value.messages == ["dc1: the KRaft controller quorum has 1 controller(s); at least 3 are needed"]


def test_a_zookeeper_dc_has_no_controllers_no_controller_group_and_no_9094() -> None:
    run = run_stack(one_dc("zookeeper"))
    assert instances(run, "kafka_controller") == [] and len(instances(run, "zookeeper")) == 3
    assert "controller" not in set(groups_of(run, "dc1").values())
    assert not [r for r in run.of(INGRESS) if r.inputs["fromPort"] == ports.KAFKA_CONTROLLER]
    children = run.outputs["inventory"]["all"]["children"]
    assert children["kafka_controller"] == {"hosts": {}}
    assert children["dc1"]["vars"] == {"kafka_metadata_mode": "zookeeper"}


def test_the_planned_kraft_topology_is_what_the_preflight_validates() -> None:
    cfg = parse_stack_config(stack_file_settings("small"), stack="small")
    zones = {"dc1": ["a", "b", "c"], "dc2": ["x", "y", "z"]}
    topology = topology_of(cfg, plan_stack(cfg, zones))
    assert validate(topology) == []
    dc1, dc2 = topology.clusters
    assert dc2.metadata_mode == "kraft" and dc2.zookeepers == []
    assert [(n.node_id, n.rack) for n in dc2.controllers] == [(101, "x"), (102, "y"), (103, "z")]
    assert dc1.metadata_mode == "zookeeper" and dc1.controllers == []


# ------------------------------------------------------------------------ the configuration


def small_raw() -> dict[str, Any]:
    return copy.deepcopy(stack_file_settings("small"))


def test_kraft_defaults_are_three_controllers_and_no_zookeeper() -> None:
    raw = {"dataCentres": [{"name": "dc1", "region": "eu-west-1", "vpcCidr": "10.1.0.0/16", "metadataMode": "kraft"}]}
    (dc,) = parse_stack_config(raw, stack="unit").data_centres
    assert (dc.metadata_mode, dc.zookeepers, dc.controllers) == ("kraft", 0, 3)
    del raw["dataCentres"][0]["metadataMode"]
    (dc,) = parse_stack_config(raw, stack="unit").data_centres
    assert (dc.metadata_mode, dc.zookeepers, dc.controllers) == ("zookeeper", 3, 0)
    cfg = parse_stack_config(raw, stack="unit")
    assert cfg.instance_types.controller == "t3.medium" and cfg.controller_volume.size_gib == 20


BAD_KRAFT: list[tuple[str, dict[str, Any], list[str]]] = [
    (
        "unknown mode",
        {"metadataMode": "zk"},
        ["dc2: unknown metadata mode 'zk'; kafka_metadata_mode is 'zookeeper' or 'kraft'"],
    ),
    (
        "ZooKeeper servers in a KRaft DC",
        {"zookeepers": 3},
        [
            "dc2: a KRaft data centre has no ZooKeeper, but zookeeper host(s) ['dc2-zk-1', 'dc2-zk-2', 'dc2-zk-3'] "
            "are in it; remove them from the zookeeper group"
        ],
    ),
    (
        "two controllers for a ZooKeeper DC to migrate to",
        {"metadataMode": "zookeeper", "zookeepers": 3, "controllers": 2},
        [
            "dc2: the KRaft controller quorum has 2 controller(s); at least 3 are needed",
            "dc2: the KRaft controller quorum has an even number of controllers (2); use an odd number so a "
            "majority survives a split",
        ],
    ),
    (
        "one controller",
        {"controllers": 1},
        ["dc2: the KRaft controller quorum has 1 controller(s); at least 3 are needed"],
    ),
    (
        "more controllers than AZs",
        {"controllers": 5},
        [
            "dc2: 5 KRaft controllers over 3 availability zone(s); each controller needs its own AZ so one AZ "
            "outage keeps the quorum"
        ],
    ),
    (
        "an even quorum",
        {"controllers": 4, "zoneCount": 6, "brokers": 6, "region": "us-east-1"},
        [
            "dc2: the KRaft controller quorum has an even number of controllers (4); "
            "use an odd number so a majority survives a split"
        ],
    ),
    ("a negative count", {"controllers": -1}, ["dc2.controllers: must not be negative, not -1"]),
]


@pytest.mark.parametrize("change, expected", [(c, e) for _, c, e in BAD_KRAFT], ids=[n for n, _, _ in BAD_KRAFT])
def test_bad_kraft_configs_fail_with_their_message(change: dict[str, Any], expected: list[str]) -> None:
    raw = small_raw()
    raw["dataCentres"][1].update(change)
    with pytest.raises(ConfigError) as e:
        parse_stack_config(raw, stack="unit")
    assert e.value.messages == expected


def test_controller_instance_type_and_volume_follow_the_usual_rules() -> None:
    raw = small_raw()
    raw["instanceTypes"]["controller"] = "t3.micro"
    raw["controllerVolume"] = {"sizeGib": 10, "iops": 2000}
    with pytest.raises(ConfigError) as e:
        parse_stack_config(raw, stack="unit")
    assert e.value.messages == [
        "kafkakit:instanceTypes (kafka_controller): t3.micro is too small for a JVM with TLS; use .small or larger",
        "kafkakit:controllerVolume.iops: gp3 takes 3000..16000 IOPS, not 2000",
    ]


def test_the_controller_port_is_a_data_port_the_policy_guards() -> None:
    assert ports.KAFKA_CONTROLLER == 9094 and ports.KAFKA_CONTROLLER in ports.DATA_PORTS
    assert ports.JMX_KAFKA_CONTROLLER in ports.DATA_PORTS
    props = {"securityGroupId": "sg-1", "ipProtocol": "tcp", "fromPort": 9094, "toPort": 9094, "cidrIpv4": "0.0.0.0/0"}
    assert list(rules.violations(INGRESS, props)) == ["no-public-ingress-to-data-ports"]


def test_switching_dc2_to_zookeeper_gives_back_the_old_small_stack_shape() -> None:
    raw = small_raw()
    dc2 = raw["dataCentres"][1]
    dc2.pop("controllers")
    dc2.update(metadataMode="zookeeper", zookeepers=3)
    cfg = parse_stack_config(raw, stack="unit")
    run = run_stack(dataclasses.replace(cfg, stack="small"))
    assert len(instances(run, "zookeeper")) == 6 and instances(run, "kafka_controller") == []
    assert len(run.of(INSTANCE)) == 19
