"""Kafka Connect workers on AWS: the per-DC `connect` count and its rule, where the workers go,
their security group, and their place in the inventory."""

from __future__ import annotations

import copy
import dataclasses
from collections import Counter
from typing import Any

import pytest
import yaml
from stack_harness import ROOT, Res, StackRun, example_config, run_stack, stack_file_settings

from infra import ports
from infra.config import parse_stack_config
from infra.config_rules import MIN_CONNECT_WORKERS
from infra.model import ConfigError, InstanceTypes, SshConfig, StackConfig
from infra.placement import HostPlan, plan_stack
from infra.policy import rules
from kafkakit.rules.connect import connect_errors

INSTANCE = "aws:ec2/instance:Instance"
SG = "aws:ec2/securityGroup:SecurityGroup"
INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
ZONES = {"dc1": ["eu-west-1a", "eu-west-1b", "eu-west-1c"], "dc2": ["x-1a", "x-1b", "x-1c"]}
ADMIN = "172.16.5.0/24"
REST = ports.KAFKA_CONNECT_REST


def with_workers(cfg: StackConfig, **counts: int) -> StackConfig:
    dcs = tuple(dataclasses.replace(d, connect=counts.get(d.name, d.connect)) for d in cfg.data_centres)
    return dataclasses.replace(cfg, data_centres=dcs)


def planned_workers(cfg: StackConfig) -> list[HostPlan]:
    return [h for h in plan_stack(cfg, ZONES) if h.group == "kafka_connect"]


def small_raw(connect: Any) -> dict[str, Any]:
    raw = copy.deepcopy(stack_file_settings("small"))
    raw["dataCentres"][0]["connect"] = connect
    return raw


def errors_of(raw: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as e:
        parse_stack_config(raw, stack="unit")
    return e.value.messages


def workers(run: StackRun) -> list[Res]:
    return sorted((i for i in run.of(INSTANCE) if i.inputs["tags"]["Role"] == "kafka_connect"), key=lambda i: i.name)


def ip_of(run: StackRun, name: str) -> str:
    return run.named(name, INSTANCE).state["privateIp"] + "/32"


@pytest.fixture(scope="module")
def admin_run() -> StackRun:
    """The small stack with an admin network declared, so the admin-only ports have a source."""
    return run_stack(dataclasses.replace(example_config("small"), ssh=SshConfig(key_name="ops", cidrs=(ADMIN,))))


# ------------------------------------------------------------------------ the count and its rule


@pytest.mark.parametrize("count", [0, 2, 3])
def test_no_workers_or_at_least_two_are_accepted(count: int) -> None:
    cfg = parse_stack_config(small_raw(count), stack="unit")
    assert cfg.data_centre("dc1").connect == count
    assert len(planned_workers(cfg)) == count


def test_one_worker_is_refused_with_one_message() -> None:
    assert errors_of(small_raw(1)) == [
        "dc1.connect: a Kafka Connect cluster needs at least 2 workers, not 1: one worker is no cluster "
        "to fail over in (0 builds none)"
    ]


@pytest.mark.parametrize(
    "value, message",
    [
        (-2, "dc1.connect: must not be negative, not -2"),
        ("two", "kafkakit:dataCentres[0].connect: expected a whole number, got 'two'"),
    ],
)
def test_a_count_that_is_no_count_is_refused(value: Any, message: str) -> None:
    assert errors_of(small_raw(value)) == [message]


def test_the_minimum_is_the_preflights() -> None:
    defaults = yaml.safe_load((ROOT / "roles" / "kafka_common" / "defaults" / "main.yml").read_text())
    assert defaults["kafka_connect_min_workers"] == MIN_CONNECT_WORKERS == 2
    # The stack refuses exactly the counts the preflight would refuse in the inventory it makes.
    settings = {"kafka_connect_min_workers": defaults["kafka_connect_min_workers"]}
    for count in range(5):
        names = [f"dc1-connect-{i + 1}" for i in range(count)]
        try:
            parse_stack_config(small_raw(count), stack="unit")
            ours = []
        except ConfigError as e:
            ours = [m for m in e.messages if m.startswith("dc1.connect:")]
        assert bool(ours) == bool(connect_errors("dc1", names, ["dc1-kafka-1"], settings)), count


def test_no_workers_by_default_and_a_type_like_mirrormakers() -> None:
    dcs = [{"name": "dc1", "region": "eu-west-1", "vpcCidr": "10.1.0.0/16"}]
    cfg = parse_stack_config({"dataCentres": dcs}, stack="unit")
    assert cfg.data_centre("dc1").connect == 0 and planned_workers(cfg) == []
    assert cfg.instance_types.connect == InstanceTypes().mirrormaker == "t3.medium"
    assert cfg.instance_types.by_group()["kafka_connect"] == "t3.medium"
    typed = parse_stack_config({"dataCentres": dcs, "instanceTypes": {"connect": "m6i.large"}}, stack="unit")
    assert typed.instance_types.connect == "m6i.large"
    assert errors_of({"dataCentres": dcs, "instanceTypes": {"connect": "t3.micro"}}) == [
        "kafkakit:instanceTypes (kafka_connect): t3.micro is too small for a JVM with TLS; use .small or larger"
    ]


# ------------------------------------------------------------------------ placement


@pytest.mark.parametrize("count", [2, 3, 4, 7])
def test_workers_are_named_and_dealt_over_the_azs_like_the_brokers(count: int) -> None:
    cfg = with_workers(example_config("small"), dc1=count)
    found = planned_workers(cfg)
    assert [h.name for h in found] == [f"dc1-connect-{i + 1}" for i in range(count)]
    assert [h.zone for h in found] == [ZONES["dc1"][i % 3] for i in range(count)]
    per_zone = Counter(h.zone for h in found)
    assert max(per_zone.values()) - min(per_zone[z] for z in ZONES["dc1"]) <= 1
    for h in found:
        assert (h.dc, h.instance_type) == ("dc1", cfg.instance_types.connect)
        assert h.data_volume is None and h.broker_id is None  # their state lives in Kafka topics


def test_the_small_stack_runs_two_workers_in_dc1_on_two_azs(small: StackRun) -> None:
    found = workers(small)
    assert [w.name for w in found] == ["dc1-connect-1", "dc1-connect-2"]
    zones = [small.by_id(w.inputs["subnetId"]).inputs["availabilityZone"] for w in found]
    assert zones == small.outputs["dataCentres"]["dc1"]["availabilityZones"][:2]
    roles = small.group_roles()
    for w in found:
        assert w.region == "eu-west-1" and w.inputs["instanceType"] == "t3.medium"
        assert w.inputs["tags"]["DataCentre"] == "dc1"
        assert [roles[g] for g in w.inputs["vpcSecurityGroupIds"]] == ["connect"]
    # dc2 declares none: no workers and no group there.
    assert [g for g in small.of(SG) if g.inputs["tags"].get("Role") == "connect"] == [small.named("dc1-connect-sg", SG)]


def test_the_production_stack_runs_one_worker_per_pinned_az(production: StackRun) -> None:
    found = workers(production)
    assert [w.name for w in found] == ["dc1-connect-1", "dc1-connect-2", "dc1-connect-3"]
    assert [w.inputs["availabilityZone"] for w in found] == ["eu-west-1a", "eu-west-1b", "eu-west-1c"]
    assert {w.inputs["instanceType"] for w in found} == {"m6i.large"}


# ------------------------------------------------------------------------ security groups


def test_the_rest_api_answers_only_the_workers_the_monitoring_hosts_and_admins(
    small: StackRun, admin_run: StackRun
) -> None:
    def expected(run: StackRun) -> set[tuple[str, int, int, str]]:
        return {
            ("eu-west-1", REST, REST, "connect"),  # followers forward writes to the leader
            ("eu-west-1", REST, REST, "monitoring"),
            ("eu-west-1", REST, REST, ip_of(run, "dc2-monitor-1")),  # the other region, by address
        } | {
            # Prometheus scrapes the workers' JMX agent and node exporter, from both monitoring hosts.
            ("eu-west-1", port, port, source)
            for port in (ports.JMX_KAFKA_CONNECT, ports.NODE_EXPORTER)
            for source in ("monitoring", ip_of(run, "dc2-monitor-1"))
        }

    # No admin network declared: no SSH, and REST only from inside the deployment.
    assert small.rules_into("connect") == expected(small)
    assert admin_run.rules_into("connect") == expected(admin_run) | {
        ("eu-west-1", REST, REST, ADMIN),
        ("eu-west-1", ports.SSH, ports.SSH, ADMIN),
    }


def test_the_workers_reach_their_own_brokers_client_port_and_nothing_else(admin_run: StackRun) -> None:
    roles = admin_run.group_roles()
    (connect_sg,) = [g for g, role in roles.items() if role == "connect"]
    granted = {
        (r.region, roles[r.inputs["securityGroupId"]], int(r.inputs["fromPort"]), int(r.inputs["toPort"]))
        for r in admin_run.of(INGRESS)
        if r.inputs.get("referencedSecurityGroupId") == connect_sg
    }
    assert granted == {
        ("eu-west-1", "kafka", ports.KAFKA_CLIENT, ports.KAFKA_CLIENT),
        ("eu-west-1", "connect", REST, REST),
    }
    # Nothing of dc2 is opened to a worker's address either: its Kafka cluster is not theirs.
    addresses = {ip_of(admin_run, w.name) for w in workers(admin_run)}
    assert not [r.name for r in admin_run.of(INGRESS) if r.inputs.get("cidrIpv4") in addresses]


def test_the_mirrormaker_rest_port_stays_mm2s_alone(small: StackRun) -> None:
    assert {row for row in small.rules_into("mirrormaker") if row[1] == ports.MIRRORMAKER_REST} == {
        ("eu-central-1", ports.MIRRORMAKER_REST, ports.MIRRORMAKER_REST, "mirrormaker")
    }


def test_the_rest_port_is_a_data_port_the_policy_guards() -> None:
    assert REST in ports.DATA_PORTS
    props = {"ipProtocol": "tcp", "fromPort": REST, "toPort": REST, "cidrIpv4": "0.0.0.0/0"}
    assert rules.no_public_data_ingress(rules.INGRESS_RULE, props)


def test_no_workers_build_no_group_and_open_nothing(small: StackRun) -> None:
    run = run_stack(with_workers(example_config("small"), dc1=0))
    assert workers(run) == []
    assert "connect" not in run.group_roles().values()
    assert run.outputs["inventory"]["all"]["children"]["kafka_connect"] == {"hosts": {}}
    kept = {r.name for r in small.of(INGRESS) if "connect" not in r.name}
    assert {r.name for r in run.of(INGRESS)} == kept
    assert len(kept) < len(small.of(INGRESS))


# ------------------------------------------------------------------------ the inventory


def test_the_workers_land_in_the_kafka_connect_group_with_the_usual_host_vars(small: StackRun) -> None:
    children = small.outputs["inventory"]["all"]["children"]
    assert sorted(children["kafka_connect"]["hosts"]) == ["dc1-connect-1", "dc1-connect-2"]
    spark_worker = children["dc1"]["hosts"]["dc1-spark-worker-1"]
    for w in workers(small):
        hv = children["dc1"]["hosts"][w.name]
        assert set(hv) == set(spark_worker)  # same shape as any host without a data volume
        assert hv["dc"] == "dc1" and hv["kafka_rack"] == w.inputs["availabilityZone"]
        assert hv["private_ip"] == hv["ansible_host"] == w.state["privateIp"]
        assert hv["ansible_aws_ssm_instance_id"] == w.id
        assert w.name not in children["dc2"]["hosts"]
    racks = [children["dc1"]["hosts"][f"dc1-connect-{i}"]["kafka_rack"] for i in (1, 2)]
    assert racks == small.outputs["dataCentres"]["dc1"]["availabilityZones"][:2]
