"""roles/kafka_controller/templates/controller.properties.j2: a KRaft controller carries its data
centre's topic defaults as the brokers do. Kafka's controllers fill in num.partitions and
default.replication.factor for topics created without them (Admin createTopics, Kafka Streams;
auto-created ones too from Kafka 5.0, KIP-1211), and with Eligible Leader Replicas (on from 4.1) the
cluster-wide min.insync.replicas is born from the active controller's static value."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from tests.unit.support.bench_template import ROOT, SAMPLE_HOST, template_env

TOPIC_DEFAULTS = {
    "num.partitions": "kafka_num_partitions",
    "default.replication.factor": "kafka_default_replication_factor",
    "min.insync.replicas": "kafka_min_insync_replicas",
}
CONTROLLER_HOST: dict[str, Any] = {
    "ansible_managed": "Ansible managed",
    "controller_id": 101,
    "dc": "dc2",
    "private_ip": "10.213.7.21",
    "kafka_keystore_password": "keystore-secret",
    "kafka_super_users": ["dc2:brokers", "dc2:controllers", "admin"],
    "kafka_controller_bootstrap_servers": "10.213.7.21:9094,10.213.7.22:9094,10.213.7.23:9094",
    "kafka_controller_migrating": False,
    "kafka_controller_metadata_dir": "/var/lib/kafka-controller/metadata",
}


def properties(text: str) -> dict[str, str]:
    pairs = (line.split("=", 1) for line in text.splitlines() if line and not line.startswith("#") and "=" in line)
    return {k: v for k, v in pairs}


def render(role: str, template: str, host: dict[str, Any], **overrides: Any) -> dict[str, str]:
    """The template as the template module renders it, with kafka_common's and the role's defaults."""
    variables: dict[str, Any] = {}
    for defaults in ("kafka_common", role):
        variables.update(yaml.safe_load((ROOT / "roles" / defaults / "defaults" / "main.yml").read_text()))
    env = template_env(role)
    return properties(env.get_template(template).render({**variables, **host, **overrides}))


def render_controller(**overrides: Any) -> dict[str, str]:
    return render("kafka_controller", "controller.properties.j2", CONTROLLER_HOST, **overrides)


def test_the_controllers_carry_the_topic_defaults_the_brokers_have() -> None:
    controller = render_controller()
    broker = render("kafka_broker", "server.properties.j2", SAMPLE_HOST)
    for name in TOPIC_DEFAULTS:
        assert controller.get(name) == broker.get(name) is not None, name
    assert (controller["num.partitions"], controller["default.replication.factor"]) == ("6", "3")
    assert controller["min.insync.replicas"] == "2"


@pytest.mark.parametrize("name, variable", TOPIC_DEFAULTS.items())
def test_a_data_centres_value_reaches_its_controllers(name: str, variable: str) -> None:
    assert render_controller(**{variable: 5})[name] == "5"


def test_the_topic_defaults_are_defined_once_for_brokers_and_controllers() -> None:
    common = yaml.safe_load((ROOT / "roles/kafka_common/defaults/main.yml").read_text())
    broker = yaml.safe_load((ROOT / "roles/kafka_broker/defaults/main.yml").read_text())
    for variable in TOPIC_DEFAULTS.values():
        assert variable in common and variable not in broker, variable
