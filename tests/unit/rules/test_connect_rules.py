"""The preflight's Kafka Connect rules (kafkakit.rules.connect), directly and through the whole
preflight (kafkakit.rules.inventory.preflight_errors) on an inventory shaped like the lab's; and the
declared connectors' references (their classes' plugins, their principals) the role checks first."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from kafkakit.rules.connect import connect_errors, connector_reference_errors, plugin_connectors

DEFAULTS = {
    "kafka_connect_min_workers": 2,
    "kafka_connect_replication_factor": 3,
    "kafka_connect_min_insync_replicas": 2,
}
BROKERS = ["b1", "b2", "b3"]


def test_a_roll_timeout_shorter_than_the_rebalance_delay_is_refused():
    settings = {**DEFAULTS, "kafka_connect_rebalance_delay_ms": 30000, "kafka_connect_ready_timeout": 300}
    assert connect_errors("dc1", ["w1", "w2"], BROKERS, settings) == []
    # Connect's own default delay (5 min) with the default timeout: the roll races the delay.
    settings["kafka_connect_rebalance_delay_ms"] = 300000
    assert connect_errors("dc1", ["w1", "w2"], BROKERS, settings) == [
        "dc1: kafka_connect_ready_timeout=300 s is too short for kafka_connect_rebalance_delay_ms=300000: "
        "a restarted worker gets its connectors back only after the delay, so the roll would give up on it; "
        "give it at least 360 s"
    ]


def test_a_config_topic_read_as_long_as_a_rebalance_is_refused():
    settings = {**DEFAULTS, "kafka_connect_worker_sync_timeout_ms": 30000}
    assert connect_errors("dc1", ["w1", "w2"], BROKERS, settings) == []
    settings["kafka_connect_worker_sync_timeout_ms"] = 60000
    assert connect_errors("dc1", ["w1", "w2"], BROKERS, settings) == [
        "dc1: kafka_connect_worker_sync_timeout_ms=60000 is not below Connect's rebalance timeout (60000 ms): "
        "a worker still reading the config topic would be dropped from the group"
    ]


def test_two_workers_on_three_brokers_pass():
    assert connect_errors("dc1", ["w1", "w2"], BROKERS, DEFAULTS) == []
    assert connect_errors("dc1", [], [], DEFAULTS) == []


def test_one_worker_is_refused_unless_the_inventory_says_one_is_enough():
    assert connect_errors("dc1", ["w1"], BROKERS, DEFAULTS) == [
        "dc1: 1 Kafka Connect worker(s) ['w1']; at least 2 so that the Connect cluster outlives one "
        "(kafka_connect_min_workers)"
    ]
    assert connect_errors("dc1", ["w1"], BROKERS, {**DEFAULTS, "kafka_connect_min_workers": 1}) == []


def test_internal_topics_cannot_have_more_replicas_than_brokers_nor_a_larger_isr():
    assert connect_errors("dc2", ["w1", "w2"], ["b1", "b2"], DEFAULTS) == [
        "dc2: Connect's internal topics want replication factor 3 (kafka_connect_replication_factor) "
        "but the data centre has 2 broker(s)"
    ]
    settings = {**DEFAULTS, "kafka_connect_replication_factor": 2, "kafka_connect_min_insync_replicas": 3}
    assert connect_errors("dc1", ["w1", "w2"], BROKERS, settings) == [
        "dc1: kafka_connect_min_insync_replicas=3 is above kafka_connect_replication_factor=2: "
        "no write to Connect's internal topics could succeed"
    ]


def test_workers_need_brokers_and_a_kafka_4_release():
    assert connect_errors("dc9", ["w1", "w2"], [], DEFAULTS) == [
        "dc9: kafka_connect hosts ['w1', 'w2'] in a data centre with no Kafka brokers to connect to"
    ]
    assert connect_errors("dc1", ["w1", "w2"], BROKERS, {**DEFAULTS, "kafka_connect_version": "3.9.2"}) == [
        "dc1: kafka_connect_version=3.9.2: the workers run a Kafka 4.x release"
    ]
    assert connect_errors("dc1", ["w1", "w2"], BROKERS, {**DEFAULTS, "kafka_connect_version": "4.3.1"}) == []


def test_the_preflight_refuses_a_lone_worker_and_takes_two():
    from kafkakit.rules.inventory import HostRecord, build_inventory, preflight_errors
    from tests.unit.rules.test_inventory import DEFAULTS as TOPOLOGY_DEFAULTS
    from tests.unit.rules.test_inventory import as_play_view

    zk_kafka = ("zookeeper", "kafka_broker")
    hosts = [
        HostRecord(f"dc1-kafka{i}", "dc1", f"dc1-az{i}", f"10.0.0.1{i}", zk_kafka, broker_id=i, zookeeper_id=i)
        for i in (1, 2, 3)
    ]
    worker1 = HostRecord("dc1-connect-1", "dc1", "dc1-az1", "10.0.0.41", ("kafka_connect",))
    worker2 = HostRecord("dc1-connect-2", "dc1", "dc1-az2", "10.0.0.42", ("kafka_connect",))
    defaults = {**TOPOLOGY_DEFAULTS, **DEFAULTS}
    groups, hostvars = as_play_view(build_inventory([*hosts, worker1]))
    assert preflight_errors(groups, hostvars, defaults) == [
        "dc1: 1 Kafka Connect worker(s) ['dc1-connect-1']; at least 2 so that the Connect cluster outlives one "
        "(kafka_connect_min_workers)"
    ]
    groups, hostvars = as_play_view(build_inventory([*hosts, worker1, worker2]))
    assert preflight_errors(groups, hostvars, defaults) == []


# --- the declared connectors' classes and principals -------------------------------------------


def _plugin_archive(tmp_path: Path, key: str, connectors: str) -> None:
    text = f"name=x\nversion=y\nconnectors={connectors}\n".encode()
    with tarfile.open(tmp_path / f"{key}.tgz", "w:gz") as tar:
        info = tarfile.TarInfo(f"{key}/PLUGIN")
        info.size = len(text)
        tar.addfile(info, io.BytesIO(text))


def test_a_connector_class_must_come_from_a_declared_plugin_or_kafka_itself(tmp_path: Path):
    _plugin_archive(tmp_path, "debezium-postgres-3.6.1.Final", "io.debezium.connector.postgresql.PostgresConnector")
    plugins = [{"name": "debezium-postgres", "version": "3.6.1.Final"}]
    provided = plugin_connectors(str(tmp_path), plugins)
    assert provided == {"debezium-postgres-3.6.1.Final": {"io.debezium.connector.postgresql.PostgresConnector"}}
    users = [{"name": "orders-cdc"}]
    good = [
        {"name": "cdc", "class": "io.debezium.connector.postgresql.PostgresConnector", "principal": "orders-cdc"},
        {"name": "hb", "class": "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector"},
    ]
    assert connector_reference_errors("dc1", good, users, provided) == []
    typo = [{"name": "cdc", "class": "io.debezium.connector.postgres.PostgresConnector"}]
    assert connector_reference_errors("dc1", typo, users, provided) == [
        "dc1: connector cdc: class io.debezium.connector.postgres.PostgresConnector is in no declared plugin "
        "(kafka_connect_plugins: ['debezium-postgres-3.6.1.Final'])"
    ]
    # A connector declared absent is not checked: it is on its way out.
    assert connector_reference_errors("dc1", [{**typo[0], "state": "absent"}], users, provided) == []


def test_a_principal_must_be_a_declared_user_and_a_plugin_must_have_its_archive(tmp_path: Path):
    provided = plugin_connectors(str(tmp_path), [{"name": "debezium-postgres", "version": "3.6.0.Final"}])
    assert provided == {"debezium-postgres-3.6.0.Final": None}
    hb = {"name": "hb", "class": "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector", "principal": "nobody"}
    assert connector_reference_errors("dc1", [hb], [{"name": "somebody"}], provided) == [
        "dc1: Connect plugin debezium-postgres-3.6.0.Final: no archive debezium-postgres-3.6.0.Final.tgz in "
        "kafka_connect_plugin_src",
        "dc1: connector hb: principal nobody is no user of kafka_users",
    ]
    assert connector_reference_errors("dc1", [hb], [{"name": "nobody"}], {}) == []


def test_an_archive_whose_plugin_file_names_no_classes_may_provide_any(tmp_path: Path):
    key = "debezium-postgres-3.6.1.Final"
    text = b"name=debezium-postgres\nversion=3.6.1.Final\n"
    with tarfile.open(tmp_path / f"{key}.tgz", "w:gz") as tar:
        info = tarfile.TarInfo(f"{key}/PLUGIN")
        info.size = len(text)
        tar.addfile(info, io.BytesIO(text))
    provided = plugin_connectors(str(tmp_path), [{"name": "debezium-postgres", "version": "3.6.1.Final"}])
    cdc = {"name": "cdc", "class": "io.debezium.connector.postgresql.PostgresConnector"}
    assert connector_reference_errors("dc1", [cdc], [], provided) == []
