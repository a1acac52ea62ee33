"""Issue 9 on the cloud side: a Prometheus host per data centre, its security group, the
ports it scrapes, the Spark ports beside them, and the `kafkakit:monitoring.enabled` switch."""

from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path
from typing import Any

import pytest
import yaml
from stack_harness import ROOT, Res, StackRun, example_config, run_stack

from infra import ports
from infra.config import parse_stack_config
from infra.model import ConfigError, MonitoringConfig, SshConfig, StackConfig
from infra.placement import instance_count, plan_stack
from infra.policy import rules
from infra.security_groups import SCRAPED_PORTS
from kafkakit.monitoring import prometheus as monitoring

INSTANCE = "aws:ec2/instance:Instance"
SG = "aws:ec2/securityGroup:SecurityGroup"
INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
ADMIN = "172.16.5.0/24"
METRICS_PORTS = {
    ports.PROMETHEUS,
    ports.NODE_EXPORTER,
    ports.JMX_KAFKA_BROKER,
    ports.JMX_ZOOKEEPER,
    ports.JMX_MIRRORMAKER,
}


def role_defaults(role: str) -> dict[str, Any]:
    return yaml.safe_load((ROOT / "roles" / role / "defaults" / "main.yml").read_text())


def with_admins(cfg: StackConfig) -> StackConfig:
    return dataclasses.replace(cfg, ssh=SshConfig(key_name="ops", cidrs=(ADMIN,)))


@pytest.fixture(scope="module")
def admin_run() -> StackRun:
    """The small stack with an admin network declared, so the admin-only ports have a source."""
    return run_stack(with_admins(example_config("small")))


@pytest.fixture(scope="module")
def dark_run() -> StackRun:
    """The small stack with monitoring switched off."""
    return run_stack(dataclasses.replace(example_config("small"), monitoring=MonitoringConfig(enabled=False)))


def monitors(run: StackRun) -> list[Res]:
    return [i for i in run.of(INSTANCE) if i.inputs["tags"]["Role"] == "monitoring"]


# ------------------------------------------------------------------------ the ports


def test_the_ports_are_the_ansible_sides() -> None:
    assert ports.PROMETHEUS == monitoring.PROMETHEUS_PORT == 9090
    assert ports.NODE_EXPORTER == monitoring.NODE_EXPORTER_PORT == 9100
    assert (
        {
            "kafka_broker": ports.JMX_KAFKA_BROKER,
            "zookeeper": ports.JMX_ZOOKEEPER,
            "mirrormaker": ports.JMX_MIRRORMAKER,
            "kafka_controller": ports.JMX_KAFKA_CONTROLLER,
            "kafka_connect": ports.JMX_KAFKA_CONNECT,
        }
        == monitoring.JMX_PORTS
        == {
            "kafka_broker": 7071,
            "zookeeper": 7072,
            "mirrormaker": 7073,
            "kafka_controller": 7074,
            "kafka_connect": 7075,
        }
    )
    # The roles' defaults are what the hosts actually listen on.
    mon = role_defaults("monitoring")
    assert mon["monitoring_jmx_ports"] == monitoring.JMX_PORTS
    assert mon["monitoring_node_exporter_port"] == ports.NODE_EXPORTER
    assert mon["monitoring_prometheus_port"] == ports.PROMETHEUS
    spark = role_defaults("spark")
    assert spark["spark_master_port"] == ports.SPARK_MASTER
    assert spark["spark_master_webui_port"] == ports.SPARK_MASTER_UI
    assert spark["spark_worker_webui_port"] == ports.SPARK_WORKER_UI
    assert spark["spark_driver_port"] == ports.SPARK_DRIVER
    assert spark["spark_block_manager_port"] == ports.SPARK_BLOCK_MANAGER


@pytest.mark.parametrize("port", sorted(METRICS_PORTS | {ports.SPARK_DRIVER, ports.SPARK_BLOCK_MANAGER}))
def test_the_policy_pack_refuses_metrics_and_spark_ports_to_the_world(port: int) -> None:
    props = {"ipProtocol": "tcp", "fromPort": port, "toPort": port, "cidrIpv4": "0.0.0.0/0"}
    assert rules.no_public_data_ingress(rules.INGRESS_RULE, props)


# ------------------------------------------------------------------------ the host


def test_one_monitoring_host_per_data_centre_in_its_first_az(example: StackRun) -> None:
    cfg = example_config(example.outputs["inventory"]["all"]["vars"]["kafkakit_stack"])
    found = {i.inputs["tags"]["DataCentre"]: i for i in monitors(example)}
    assert sorted(i.name for i in found.values()) == ["dc1-monitor-1", "dc2-monitor-1"]
    for dc, host in found.items():
        info = example.outputs["dataCentres"][dc]
        assert host.region == info["region"]
        assert host.inputs["availabilityZone"] == info["availabilityZones"][0]
        assert host.inputs["instanceType"] == cfg.instance_types.monitoring
        roles = example.group_roles()
        assert [roles[g] for g in host.inputs["vpcSecurityGroupIds"]] == ["monitoring"]


# ------------------------------------------------------------------------ its security group


def test_prometheus_answers_only_the_admin_networks(admin_run: StackRun, small: StackRun) -> None:
    regions = {"eu-west-1", "eu-central-1"}
    assert admin_run.rules_into("monitoring") == {
        (region, port, port, ADMIN) for region in regions for port in (ports.PROMETHEUS, ports.SSH)
    }
    # No admin network declared: nothing reaches the monitoring hosts at all.
    assert small.rules_into("monitoring") == set()


def test_the_monitoring_hosts_reach_exactly_the_scrape_ports(admin_run: StackRun) -> None:
    roles = admin_run.group_roles()
    monitor_ips = {f"{m.state['privateIp']}/32": m.region for m in monitors(admin_run)}
    granted: set[tuple[str, str, int, str]] = set()
    for r in admin_run.of(INGRESS):
        ref = r.inputs.get("referencedSecurityGroupId")
        if ref and roles.get(ref) == "monitoring":
            source = "local"
        elif r.inputs.get("cidrIpv4") in monitor_ips:
            assert monitor_ips[r.inputs["cidrIpv4"]] != r.region, "same region goes by group, not address"
            source = "remote"
        else:
            continue
        assert r.inputs["fromPort"] == r.inputs["toPort"]
        granted.add((r.region or "", roles[r.inputs["securityGroupId"]], int(r.inputs["fromPort"]), source))
    expected = set()
    # dc1 (eu-west-1) is a ZooKeeper DC with Connect workers (their JMX agent, node exporter and REST
    # API: connector states) and Spark (the master's node exporter: the CDC jobs' lag); dc2
    # (eu-central-1) a KRaft DC with MM2.
    for region, metadata, has_mm2 in (("eu-west-1", "zookeeper", False), ("eu-central-1", "controller", True)):
        for group, scraped in {
            **({"controller": (7074, 9100)} if metadata == "controller" else {"zookeeper": (7072, 9100)}),
            "kafka": (7071, 9100, 9093),
            **({"mirrormaker": (7073, 9100)} if has_mm2 else {"connect": (7075, 9100, 8083), "spark": (9100,)}),
        }.items():
            expected |= {(region, group, port, source) for port in scraped for source in ("local", "remote")}
    assert granted == expected
    assert set(SCRAPED_PORTS) == {"zookeeper", "controller", "kafka", "mirrormaker", "connect", "spark"}


def test_every_target_prometheus_is_given_is_open_to_every_monitoring_host(example: StackRun) -> None:
    """Scrape targets as the role renders them from this inventory, checked against the rules."""
    inv = example.outputs["inventory"]["all"]["children"]
    # As Ansible sees them: each host's variables over its DC group's (kafka_metadata_mode).
    hostvars = {
        h: {**inv[dc].get("vars", {}), **hv}
        for dc in example.outputs["dataCentres"]
        for h, hv in inv[dc]["hosts"].items()
    }
    groups = {g: list(body["hosts"]) for g, body in inv.items()}
    # The controllers' JMX agent port, as the monitoring role will scrape it once it names one.
    jmx_ports = {"kafka_controller": ports.JMX_KAFKA_CONTROLLER, **monitoring.JMX_PORTS}
    jobs = monitoring.scrape_configs(groups, hostvars, jmx_ports=jmx_ports)
    instances = {i.name: i for i in example.of(INSTANCE)}
    targets = [
        (sc["labels"]["instance"], int(t.rsplit(":", 1)[1]))
        for job in jobs
        if job["job_name"] != "prometheus"  # each Prometheus scrapes itself, no network involved
        for sc in job["static_configs"]
        for t in sc["targets"]
    ]
    assert len(targets) > 20
    rules_by_group: dict[str, list[dict]] = {}
    for r in example.of(INGRESS):
        rules_by_group.setdefault(r.inputs["securityGroupId"], []).append(r.inputs)
    for mon in monitors(example):
        (mon_sg,) = mon.inputs["vpcSecurityGroupIds"]
        mon_cidr = f"{mon.state['privateIp']}/32"
        for host, port in targets:
            target = instances[host]
            (sg,) = target.inputs["vpcSecurityGroupIds"]
            allowed = [
                r
                for r in rules_by_group.get(sg, [])
                if r["fromPort"] <= port <= r["toPort"]
                and (r.get("referencedSecurityGroupId") == mon_sg or r.get("cidrIpv4") == mon_cidr)
            ]
            assert allowed, f"{mon.name} cannot scrape {host}:{port}"


def test_no_metrics_port_is_open_to_a_wide_network(example: StackRun) -> None:
    for r in example.of(INGRESS):
        low, high = int(r.inputs["fromPort"]), int(r.inputs["toPort"])
        if high - low > 1000:
            continue  # the Spark group's own range, source checked in test_infra_stack
        if any(low <= p <= high for p in METRICS_PORTS):
            cidr = r.inputs.get("cidrIpv4")
            assert r.inputs.get("referencedSecurityGroupId") or (cidr and cidr.endswith("/32")), r.name


# ------------------------------------------------------------------------ Spark beside it


def test_spark_ports_are_open_inside_the_group_and_uis_only_to_admins(admin_run: StackRun) -> None:
    spark = admin_run.rules_into("spark")
    assert {(low, high) for _, low, high, source in spark if source == "spark"} == {
        ports.SPARK_INTERNAL,
        (ports.SSH, ports.SSH),
    }
    low, high = ports.SPARK_INTERNAL
    for port in (ports.SPARK_MASTER, ports.SPARK_DRIVER, ports.SPARK_BLOCK_MANAGER, ports.SPARK_MASTER_UI):
        assert low <= port <= high
    for port in (ports.SPARK_MASTER_UI, ports.SPARK_WORKER_UI):
        assert {source for _, lo, _, source in spark if lo == port} == {ADMIN}
    assert {source for _, lo, _, source in spark if lo == ports.SPARK_MASTER} == {"192.168.100.0/24"}


# ------------------------------------------------------------------------ inventory and switch


def test_the_inventory_has_the_monitoring_group_with_the_usual_host_vars(example: StackRun) -> None:
    children = example.outputs["inventory"]["all"]["children"]
    assert sorted(children["monitoring"]["hosts"]) == ["dc1-monitor-1", "dc2-monitor-1"]
    worker = children["dc1"]["hosts"]["dc1-spark-worker-1"]
    for dc in ("dc1", "dc2"):
        hv = children[dc]["hosts"][f"{dc}-monitor-1"]
        instance = example.named(f"{dc}-monitor-1", INSTANCE)
        assert set(hv) == set(worker)  # same shape as any host without a data volume
        assert hv["dc"] == dc and hv["kafka_rack"] == instance.inputs["availabilityZone"]
        assert hv["private_ip"] == hv["ansible_host"] == instance.state["privateIp"]
        assert hv["ansible_aws_ssm_instance_id"] == instance.id


def test_the_ansible_script_lists_the_monitoring_group(small: StackRun) -> None:
    spec = importlib.util.spec_from_file_location("aws_inventory", Path(ROOT, "inventories", "aws", "pulumi_stack.py"))
    assert spec and spec.loader
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    listed = script.to_script_inventory(small.outputs["inventory"])
    assert sorted(listed["monitoring"]["hosts"]) == ["dc1-monitor-1", "dc2-monitor-1"]
    assert "monitoring" in listed["all"]["children"]
    assert listed["_meta"]["hostvars"]["dc2-monitor-1"]["dc"] == "dc2"


def test_switching_monitoring_off_removes_host_group_and_ports(dark_run: StackRun, small: StackRun) -> None:
    dark = dataclasses.replace(example_config("small"), monitoring=MonitoringConfig(enabled=False))
    zones = {dc: info["availabilityZones"] for dc, info in small.outputs["dataCentres"].items()}
    # The plan (and so the cost tables and the validation) leaves them out too.
    assert instance_count(plan_stack(dark, zones))["monitoring"] == 0
    assert instance_count(plan_stack(example_config("small"), zones))["monitoring"] == 2
    assert monitors(dark_run) == []
    assert "monitoring" not in dark_run.group_roles().values()
    assert dark_run.outputs["inventory"]["all"]["children"]["monitoring"] == {"hosts": {}}
    assert not [r for r in dark_run.of(INGRESS) if int(r.inputs["fromPort"]) in METRICS_PORTS]
    # Everything else stays as it was: the same hosts and rules, less the monitoring ones.
    assert {i.name for i in dark_run.of(INSTANCE)} == {i.name for i in small.of(INSTANCE)} - {
        "dc1-monitor-1",
        "dc2-monitor-1",
    }
    kept = {r.name for r in small.of(INGRESS) if "monitor" not in r.name}
    assert {r.name for r in dark_run.of(INGRESS)} == kept
    assert len(kept) < len(small.of(INGRESS))


def test_the_switch_and_instance_type_are_read_from_the_stack_config() -> None:
    raw = {
        "dataCentres": [{"name": "dc1", "region": "eu-west-1", "vpcCidr": "10.1.0.0/16"}],
        "monitoring": {"enabled": "false"},
        "instanceTypes": {"monitoring": "t3.small"},
    }
    cfg = parse_stack_config(raw, stack="unit")
    assert cfg.monitoring == MonitoringConfig(enabled=False) and cfg.instance_types.monitoring == "t3.small"
    default = parse_stack_config({"dataCentres": raw["dataCentres"]}, stack="unit")
    assert default.monitoring.enabled and default.instance_types.monitoring == "t3.medium"
    assert example_config("small").instance_types.monitoring == "t3.small"
    with pytest.raises(ConfigError) as e:
        parse_stack_config({**raw, "monitoring": {"enabled": 3, "hosts": 2}}, stack="unit")
    assert e.value.messages == [
        "kafkakit:monitoring.enabled: expected true or false, got 3",
        "kafkakit:monitoring.hosts: unknown setting",
    ]
    assert example_config("production").instance_types.monitoring == "m6i.large"
