"""How long a data centre keeps a silent broker (issue #47, a leader's host lost): the session and
heartbeat settings are role variables written into server.properties, controller.properties and
zoo.cfg, and their defaults are the values that were in effect before they were variables."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.unit.support.bench_template import template_env

ROOT = Path(__file__).resolve().parents[3]

# Kafka's and ZooKeeper's own defaults (KRaftConfigs, ReplicationConfigs and the 3.9 broker's
# zookeeper.session.timeout.ms; ZooKeeper's tickTime, and -1 for "2 and 20 ticks").
EFFECTIVE = {
    "kafka_zookeeper_session_timeout_ms": 18000,
    "kafka_broker_session_timeout_ms": 9000,
    "kafka_broker_heartbeat_interval_ms": 2000,
    "kafka_replica_lag_time_max_ms": 30000,
    "zookeeper_tick_time": 2000,
    "zookeeper_min_session_timeout": -1,
    "zookeeper_max_session_timeout": -1,
}
HOSTS = {
    "dc1-kafka1": {"private_ip": "10.0.1.1", "zookeeper_id": 1},
    "dc1-kafka2": {"private_ip": "10.0.1.2", "zookeeper_id": 2},
    "dc1-kafka3": {"private_ip": "10.0.1.3", "zookeeper_id": 3},
}
FACTS: dict[str, Any] = {
    "ansible_managed": "Ansible managed",
    "dc": "dc1",
    "private_ip": "10.0.1.1",
    "broker_id": 1,
    "controller_id": 101,
    "kafka_rack": "dc1-az1",
    "kafka_keystore_password": "k",
    "kafka_zookeeper_password": "z",
    "zookeeper_keystore_password": "z",
    "kafka_super_users": ["dc1:brokers", "admin"],
    "kafka_cluster_brokers": list(HOSTS),
    "kafka_zookeeper_connect": "10.0.1.1:2182/kafka",
    "kafka_controller_bootstrap_servers": "10.0.2.1:9094",
    "kafka_controller_migrating": False,
    "groups": {"zookeeper": list(HOSTS), "dc1": list(HOSTS)},
    "hostvars": HOSTS,
}


def defaults(*roles: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for role in roles:
        out.update(yaml.safe_load((ROOT / "roles" / role / "defaults" / "main.yml").read_text()))
    return out


def render(role: str, template: str, roles: tuple[str, ...], **overrides: Any) -> dict[str, str]:
    """The template as the template module renders it, as key -> value (comments left out)."""
    env = template_env(role)
    text = env.get_template(template).render({**defaults(*roles), **FACTS, **overrides})
    lines = [line for line in text.splitlines() if "=" in line and not line.startswith("#")]
    return dict(line.split("=", 1) for line in lines)


def broker(**overrides: Any) -> dict[str, str]:
    return render("kafka_broker", "server.properties.j2", ("kafka_common", "kafka_broker"), **overrides)


def controller(**overrides: Any) -> dict[str, str]:
    roles = ("kafka_common", "kafka_controller")
    return render("kafka_controller", "controller.properties.j2", roles, **overrides)


def zoo_cfg(**overrides: Any) -> dict[str, str]:
    return render("zookeeper", "zoo.cfg.j2", ("kafka_common", "zookeeper"), **overrides)


def test_the_defaults_are_the_values_in_effect_before():
    found = defaults("kafka_common", "kafka_broker", "zookeeper")
    assert {k: found[k] for k in EFFECTIVE} == EFFECTIVE
    specs = {
        role: yaml.safe_load((ROOT / "roles" / role / "meta/argument_specs.yml").read_text())["argument_specs"]
        for role in ("kafka_common", "kafka_broker", "zookeeper")
    }
    declared = {k: v["default"] for s in specs.values() for k, v in s["main"]["options"].items() if k in EFFECTIVE}
    assert declared == EFFECTIVE


def test_a_zookeeper_broker_writes_its_session_and_the_lag_limit_and_no_lease():
    props = broker()
    assert props["zookeeper.session.timeout.ms"] == "18000" and props["replica.lag.time.max.ms"] == "30000"
    assert "broker.session.timeout.ms" not in props and "broker.heartbeat.interval.ms" not in props
    props = broker(kafka_zookeeper_session_timeout_ms=4000, kafka_replica_lag_time_max_ms=10000)
    assert props["zookeeper.session.timeout.ms"] == "4000" and props["replica.lag.time.max.ms"] == "10000"


@pytest.mark.parametrize("mode,phase", [("kraft", ""), ("zookeeper", "migration")])
def test_a_broker_that_heartbeats_to_controllers_writes_the_lease(mode, phase):
    props = broker(kafka_metadata_mode=mode, kafka_migration_phase=phase)
    assert (props["broker.session.timeout.ms"], props["broker.heartbeat.interval.ms"]) == ("9000", "2000")
    props = broker(
        kafka_metadata_mode=mode,
        kafka_migration_phase=phase,
        kafka_broker_session_timeout_ms=4000,
        kafka_broker_heartbeat_interval_ms=1000,
    )
    assert (props["broker.session.timeout.ms"], props["broker.heartbeat.interval.ms"]) == ("4000", "1000")
    assert ("zookeeper.session.timeout.ms" in props) == (mode == "zookeeper")


def test_a_controller_writes_the_lease_it_gives_and_its_migration_session():
    props = controller()
    assert (props["broker.session.timeout.ms"], props["broker.heartbeat.interval.ms"]) == ("9000", "2000")
    assert "zookeeper.session.timeout.ms" not in props
    props = controller(
        kafka_controller_migrating=True, kafka_zookeeper_session_timeout_ms=6000, kafka_broker_session_timeout_ms=4000
    )
    assert props["zookeeper.session.timeout.ms"] == "6000" and props["broker.session.timeout.ms"] == "4000"


def test_zoo_cfg_leaves_the_session_bounds_to_zookeeper_unless_set():
    cfg = zoo_cfg()
    assert cfg["tickTime"] == "2000" and "minSessionTimeout" not in cfg and "maxSessionTimeout" not in cfg
    cfg = zoo_cfg(zookeeper_tick_time=1000, zookeeper_min_session_timeout=3000, zookeeper_max_session_timeout=20000)
    assert (cfg["tickTime"], cfg["minSessionTimeout"], cfg["maxSessionTimeout"]) == ("1000", "3000", "20000")


# --- the settings against each other (kafkakit.rules.sessions, the preflight) ---------------------


def test_zookeeper_grants_a_session_within_its_bounds():
    from kafkakit.rules.sessions import Ensemble, granted, zookeeper_bounds

    assert zookeeper_bounds(2000) == (4000, 40000) and zookeeper_bounds(1000, 3000) == (3000, 20000)
    assert [granted(s, (4000, 40000)) for s in (1000, 4000, 18000, 60000)] == [4000, 4000, 18000, 40000]
    assert Ensemble(1000, max_ms=10000).bounds == (2000, 10000)


def test_a_lease_of_at_least_two_heartbeats_is_fine_and_a_shorter_one_is_said_once_per_pair():
    from kafkakit.rules.sessions import lease_errors

    assert lease_errors("dc2", {(9000, 2000): ["b1"], (4000, 2000): ["b2"], (4000, 1000): ["c1"]}) == []
    [message] = lease_errors("dc2", {(3000, 2000): ["b1", "c1"], (4000, 1000): ["b2"]})
    assert message.startswith("dc2: kafka_broker_heartbeat_interval_ms=2000 on ['b1', 'c1'] is more than half of")
    assert lease_errors("dc2", {(0, 0): ["b1"]})[0].endswith("must both be above 0")
