"""The preflight refuses bad input (issue 16): one table of malformed inventories, each with the
messages it must produce, read the way ansible/preflight.yml reads them (the variables check,
then kafkakit.rules.inventory.preflight_errors with the real role defaults).

Each case starts from fixtures/preflight_good.yml (valid) and breaks one thing.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from kafkakit.rules.inventory import missing_variables, preflight_errors

ROOT = Path(__file__).resolve().parents[3]
GOOD = Path(__file__).parents[1] / "fixtures" / "preflight_good.yml"
# As the preflight loads them (ansible/preflight.yml, preflight_defaults).
DEFAULTS: dict[str, Any] = {}
for _role in ("kafka_common", "storage", "kafka_broker", "zookeeper"):
    DEFAULTS.update(yaml.safe_load((ROOT / "roles" / _role / "defaults" / "main.yml").read_text()))
DEFAULTS.pop("kafka_version")

View = tuple[dict[str, list[str]], dict[str, dict[str, Any]]]


def play_view(doc: dict) -> View:
    """`groups` and `hostvars` as Ansible builds them: all vars, then the host's group vars
    (component groups, then its data centre), then its own vars."""
    children = doc["all"]["children"]
    groups: dict[str, list[str]] = {name: list(g.get("hosts") or {}) for name, g in children.items()}
    hosts = list(dict.fromkeys(h for names in groups.values() for h in names))
    groups["all"] = hosts
    hostvars: dict[str, dict[str, Any]] = {}
    for h in hosts:
        hv = copy.deepcopy(doc["all"].get("vars", {}))
        for _name, g in sorted(children.items(), key=lambda item: item[0].startswith("dc")):
            if h in (g.get("hosts") or {}):
                hv.update(copy.deepcopy(g.get("vars", {})))
        for g in children.values():
            hv.update(copy.deepcopy((g.get("hosts") or {}).get(h) or {}))
        hostvars[h] = hv
    return groups, hostvars


def refusals(view: View) -> list[str]:
    """What the preflight says, in its order: the variables first, then everything else."""
    groups, hostvars = view
    return missing_variables(groups, hostvars) or preflight_errors(groups, hostvars, DEFAULTS)


@pytest.fixture
def good() -> View:
    return play_view(yaml.safe_load(GOOD.read_text()))


def dc_set(dc: str, **values: Any) -> Callable[[View], None]:
    """A group variable of data centre `dc`: set on each of its hosts."""

    def mutate(view: View) -> None:
        for h in view[0][dc]:
            view[1][h].update(copy.deepcopy(values))

    return mutate


def host_set(host: str, **values: Any) -> Callable[[View], None]:
    return lambda view: view[1][host].update(values)


def all_set(**values: Any) -> Callable[[View], None]:
    def mutate(view: View) -> None:
        for hv in view[1].values():
            hv.update(copy.deepcopy(values))

    return mutate


def topic(**fields: Any) -> Callable[[View], None]:
    """dc1 declares one more topic, `clicks` unless named."""
    entry = {"name": "clicks", "partitions": 3, "replication_factor": 3, **fields}
    entry = {k: v for k, v in entry.items() if v is not DROP}

    def mutate(view: View) -> None:
        for h in view[0]["dc1"]:
            view[1][h]["kafka_topics"] = [*view[1][h]["kafka_topics"], copy.deepcopy(entry)]

    return mutate


DROP = object()
QUOTA_KEYS = "producer_byte_rate, consumer_byte_rate, request_percentage, controller_mutation_rate"
NOT_POSITIVE = "must be above 0 (Kafka refuses a quota of 0 or less; to lift a quota, remove it)"
USERS = [{"name": "orders-writer", "password": "x"}, {"name": "gone", "password": "x", "state": "absent"}]


def acls(*principals: str) -> Callable[[View], None]:
    entries = [{"principal": p, "resource_type": "topic", "name": "orders", "operations": ["read"]} for p in principals]
    return dc_set("dc1", kafka_users=USERS, kafka_acls=entries)


def acl(principal: str = "User:orders-writer", **fields: Any) -> Callable[[View], None]:
    """dc1 declares its users and one ACL entry: orders-writer reads topic orders unless `fields` say otherwise."""
    entry = {"principal": principal, "resource_type": "topic", "name": "orders", "operations": ["read"], **fields}
    return dc_set("dc1", kafka_users=USERS, kafka_acls=[{k: v for k, v in entry.items() if v is not DROP}])


def user(**fields: Any) -> Callable[[View], None]:
    """dc1 declares one user, app1 with a password unless `fields` say otherwise."""
    return dc_set("dc1", kafka_users=[{"name": "app1", "password": "x", **fields}])


def joins(group: str, host: str, **values: Any) -> Callable[[View], None]:
    """`host` joins component group `group` (a KRaft controller, a Connect worker, a MirrorMaker 2
    host), with `values` set on every host (the secrets its group needs)."""

    def mutate(view: View) -> None:
        view[0][group] = [*view[0].get(group, []), host]
        all_set(**values)(view)

    return mutate


def several(*changes: Callable[[View], None]) -> Callable[[View], None]:
    def mutate(view: View) -> None:
        for change in changes:
            change(view)

    return mutate


SECRET_HINT = (
    ': put the secrets in an ansible-vault file of the inventory (README, "Secrets") and kafka_pki_ca_dir in its '
    "group_vars"
)
DC1_BROKERS = "['dc1-kafka1', 'dc1-kafka2', 'dc1-kafka3']"
ALL_BROKERS = "['dc1-kafka1', 'dc1-kafka2', 'dc1-kafka3', 'dc2-kafka1', 'dc2-kafka2']"
ALL_HOSTS = ALL_BROKERS  # every host of the good inventory is a broker

# case -> (the change, the messages the preflight must give, in order)
BAD: dict[str, tuple[Callable[[View], None], list[str]]] = {
    # --- topics: fields, sizes, state ---------------------------------------------------------
    "topic-config-typo": (
        topic(configs={"retention.msx": "1000"}),
        ["dc1: topic clicks: 'retention.msx' is not a topic config of Kafka 3.x (did you mean 'retention.ms'?)"],
    ),
    "topic-config-unknown": (
        topic(configs={"colour": "blue"}),
        ["dc1: topic clicks: 'colour' is not a topic config of Kafka 3.x"],
    ),
    "topic-config-broker-only-name": (
        topic(configs={"log.retention.hours": "1"}),
        ["dc1: topic clicks: 'log.retention.hours' is not a topic config of Kafka 3.x (did you mean 'retention.ms'?)"],
    ),
    "topic-config-gone-in-kafka-4-kraft-dc": (
        several(dc_set("dc1", kafka_metadata_mode="kraft"), topic(configs={"message.format.version": "2.8"})),
        ["dc1: topic clicks: 'message.format.version' is not a topic config of Kafka 4.x"],
    ),
    "topic-config-gone-in-the-declared-4-x": (
        several(dc_set("dc1", kafka_version="4.3.1"), topic(configs={"message.downconversion.enable": "false"})),
        ["dc1: topic clicks: 'message.downconversion.enable' is not a topic config of Kafka 4.x"],
    ),
    "topic-without-partitions": (
        topic(partitions=DROP),
        ["dc1: topic clicks: partitions is missing; give the partition count (at least 1)"],
    ),
    "partitions-not-a-number": (
        topic(partitions="six"),
        ["dc1: topic clicks: partitions='six' is not a whole number"],
    ),
    "partitions-a-float": (topic(partitions=2.5), ["dc1: topic clicks: partitions=2.5 is not a whole number"]),
    "partitions-a-bool": (topic(partitions=True), ["dc1: topic clicks: partitions=True is not a whole number"]),
    "partitions-zero": (topic(partitions=0), ["dc1: topic clicks needs at least 1 partition"]),
    "rf-zero": (topic(replication_factor=0), ["dc1: topic clicks: replication_factor=0 must be at least 1"]),
    "rf-minus-one": (topic(replication_factor=-1), ["dc1: topic clicks: replication_factor=-1 must be at least 1"]),
    "rf-not-a-number": (
        topic(replication_factor="three"),
        ["dc1: topic clicks: replication_factor='three' is not a whole number"],
    ),
    "rf-above-the-dc-brokers": (
        topic(replication_factor=4),
        ["dc1: topic clicks has replication factor 4 above the broker count 3"],
    ),
    "rf-default-above-a-small-dc": (
        dc_set("dc2", kafka_topics=[{"name": "dr", "partitions": 1}]),
        ["dc2: topic dr has replication factor 3 above the broker count 2"],
    ),
    "unknown-topic-field": (
        topic(partitions=DROP, partiton=3),
        [
            "dc1: topic clicks: unknown field 'partiton' (did you mean 'partitions'?); a topic has "
            "['name', 'partitions', 'replication_factor', 'configs', 'consumers', 'state']",
            "dc1: topic clicks: partitions is missing; give the partition count (at least 1)",
        ],
    ),
    "consumers-not-a-number": (topic(consumers="many"), ["dc1: topic clicks: consumers='many' is not a whole number"]),
    "state-typo": (topic(state="abset"), ["dc1: topic clicks: state='abset' is neither 'present' nor 'absent'"]),
    "topic-name-bad-character": (
        topic(name="clicks/eu"),
        [
            "dc1: topic name 'clicks/eu' has character(s) ['/'] Kafka does not allow; use only letters, digits, "
            "'.', '_' and '-'"
        ],
    ),
    "topic-name-dot": (topic(name="."), ["dc1: topic name '.' is not a topic name (empty, '.' and '..' are reserved)"]),
    "topic-name-too-long": (
        topic(name="t" * 250),
        [f"dc1: topic name '{'t' * 250}' is 250 characters long; Kafka allows at most 249"],
    ),
    "topic-without-name": (topic(name=DROP), ["dc1: kafka_topics[2] has no name"]),
    "topic-names-colliding": (
        several(topic(name="clicks.eu"), topic(name="clicks_eu")),
        [
            "dc1: topics 'clicks.eu' and 'clicks_eu' collide: Kafka treats '.' and '_' alike in topic names "
            "and refuses the second; rename one"
        ],
    ),
    "topic-declared-twice": (topic(name="orders"), ["dc1: topic(s) declared twice: ['orders']"]),
    "topics-not-a-list": (
        dc_set("dc1", kafka_topics={"orders": 6}),
        ["dc1: kafka_topics must be a list of topics, not {'orders': 6}"],
    ),
    "topic-not-a-mapping": (
        dc_set("dc1", kafka_topics=["orders"]),
        ["dc1: kafka_topics[0] must be a mapping (name, partitions, ...), not 'orders'"],
    ),
    "topic-configs-not-a-mapping": (
        topic(configs=["retention.ms=1"]),
        ["dc1: topic clicks: configs must be a mapping of topic config names to values, not ['retention.ms=1']"],
    ),
    # --- topic config values, as Kafka's own ConfigDef takes them (kafkakit.rules.topic_configs) ------
    "topic-cleanup-policy-typo": (
        topic(configs={"cleanup.policy": "compacted"}),
        [
            "dc1: topic clicks: cleanup.policy='compacted' is not one of Kafka's ['compact', 'delete'] "
            "(did you mean 'compact'?)"
        ],
    ),
    "topic-cleanup-policy-one-of-two-wrong": (
        topic(configs={"cleanup.policy": "compact,deleted"}),
        [
            "dc1: topic clicks: cleanup.policy='compact,deleted' has 'deleted', which is not one of Kafka's "
            "['compact', 'delete'] (did you mean 'delete'?)"
        ],
    ),
    "topic-cleanup-policy-a-yaml-list": (
        topic(configs={"cleanup.policy": ["compact", "delete"]}),
        ["dc1: topic clicks: cleanup.policy=['compact', 'delete'] is a list; give Kafka a comma-separated string"],
    ),
    "topic-compression-typo": (
        topic(configs={"compression.type": "zip"}),
        [
            "dc1: topic clicks: compression.type='zip' is not one of Kafka's ['uncompressed', 'zstd', 'lz4', "
            "'snappy', 'gzip', 'producer'] (did you mean 'gzip'?)"
        ],
    ),
    "topic-timestamp-type-typo": (
        topic(configs={"message.timestamp.type": "create"}),
        [
            "dc1: topic clicks: message.timestamp.type='create' is not one of Kafka's ['CreateTime', "
            "'LogAppendTime'] (did you mean 'CreateTime'?)"
        ],
    ),
    "topic-retention-negative": (
        topic(configs={"retention.ms": -5}),
        ["dc1: topic clicks: retention.ms=-5 is outside Kafka's range [-1,...]"],
    ),
    "topic-retention-with-a-unit": (
        topic(configs={"retention.ms": "7d"}),
        ["dc1: topic clicks: retention.ms='7d' is not a whole number"],
    ),
    "topic-max-message-bytes-beyond-int": (
        topic(configs={"max.message.bytes": 4294967296}),
        ["dc1: topic clicks: max.message.bytes=4294967296 does not fit Kafka's INT type"],
    ),
    "topic-dirty-ratio-above-one": (
        topic(configs={"min.cleanable.dirty.ratio": "1.5"}),
        ["dc1: topic clicks: min.cleanable.dirty.ratio='1.5' is outside Kafka's range [0,...,1]"],
    ),
    "topic-segment-bytes-below-4-x-least": (
        several(dc_set("dc1", kafka_metadata_mode="kraft"), topic(configs={"segment.bytes": "65536"})),
        ["dc1: topic clicks: segment.bytes='65536' is outside Kafka's range [1048576,...]"],
    ),
    "topic-boolean-as-yes": (
        topic(configs={"preallocate": "yes"}),
        ["dc1: topic clicks: preallocate='yes' is not true or false"],
    ),
    "topic-gzip-level-zero": (
        topic(configs={"compression.gzip.level": 0}),
        ["dc1: topic clicks: compression.gzip.level=0 is outside Kafka's range [1,...,9] or -1"],
    ),
    "topic-throttled-replicas-malformed": (
        topic(configs={"leader.replication.throttled.replicas": "0-1"}),
        [
            "dc1: topic clicks: leader.replication.throttled.replicas='0-1' is neither '*' nor partition:broker "
            "pairs (Kafka's [partitionId]:[brokerId],[partitionId]:[brokerId],...)"
        ],
    ),
    # --- per-topic durability -----------------------------------------------------------------
    "topic-unclean-election": (
        topic(configs={"unclean.leader.election.enable": "true"}),
        ["dc1: topic clicks: unclean.leader.election.enable=true can lose acknowledged writes; the kit keeps it false"],
    ),
    "topic-unclean-election-bool": (
        topic(configs={"unclean.leader.election.enable": True}),
        ["dc1: topic clicks: unclean.leader.election.enable=true can lose acknowledged writes; the kit keeps it false"],
    ),
    "topic-min-isr-equal-to-rf": (
        topic(configs={"min.insync.replicas": "3"}),
        [
            "dc1: topic clicks: min.insync.replicas=3 must be below its replication factor 3, "
            "or one broker down stops every acks=all producer"
        ],
    ),
    "topic-min-isr-above-rf": (
        topic(replication_factor=2, configs={"min.insync.replicas": 4}),
        [
            "dc1: topic clicks: min.insync.replicas=4 must be below its replication factor 2, "
            "or one broker down stops every acks=all producer"
        ],
    ),
    "topic-min-isr-not-a-number": (
        topic(configs={"min.insync.replicas": "two"}),
        ["dc1: topic clicks: min.insync.replicas='two' is not a whole number >= 1"],
    ),
    # --- kafka_extra_properties -----------------------------------------------------------------
    "extra-min-isr": (
        dc_set("dc1", kafka_extra_properties={"min.insync.replicas": 1}),
        [
            f"kafka_extra_properties of {DC1_BROKERS} overrides min.insync.replicas: "
            "set kafka_min_insync_replicas instead"
        ],
    ),
    "extra-unclean-election": (
        all_set(kafka_extra_properties={"unclean.leader.election.enable": "true"}),
        [
            f"kafka_extra_properties of {ALL_BROKERS} overrides unclean.leader.election.enable: the kit sets it "
            "for security or durability and keeps it"
        ],
    ),
    "extra-listeners-on-one-host": (
        host_set("dc2-kafka2", kafka_extra_properties={"listeners": "PLAINTEXT://:9092"}),
        [
            "kafka_extra_properties of ['dc2-kafka2'] overrides listeners: the kit sets it for security or "
            "durability and keeps it"
        ],
    ),
    "extra-ssl-and-sasl": (
        dc_set("dc1", kafka_extra_properties={"ssl.client.auth": "none", "sasl.enabled.mechanisms": "PLAIN"}),
        [
            f"kafka_extra_properties of {DC1_BROKERS} overrides sasl.enabled.mechanisms: the kit sets it for "
            "security or durability and keeps it",
            f"kafka_extra_properties of {DC1_BROKERS} overrides ssl.client.auth: the kit sets it for security or "
            "durability and keeps it",
        ],
    ),
    "extra-authorizer-and-super-users": (
        dc_set("dc1", kafka_extra_properties={"authorizer.class.name": "", "super.users": "User:ANONYMOUS"}),
        [
            f"kafka_extra_properties of {DC1_BROKERS} overrides authorizer.class.name: the kit sets it for "
            "security or durability and keeps it",
            f"kafka_extra_properties of {DC1_BROKERS} overrides super.users: set kafka_admin_user instead",
        ],
    ),
    "extra-log-dirs": (
        dc_set("dc1", kafka_extra_properties={"log.dirs": "/tmp/kafka"}),
        [f"kafka_extra_properties of {DC1_BROKERS} overrides log.dirs: set kafka_data_dirs instead"],
    ),
    "extra-default-rf": (
        dc_set("dc2", kafka_extra_properties={"default.replication.factor": 1}),
        [
            "kafka_extra_properties of ['dc2-kafka1', 'dc2-kafka2'] overrides default.replication.factor: "
            "set kafka_default_replication_factor instead"
        ],
    ),
    "extra-controller-listeners": (
        several(
            joins(
                "kafka_controller", "dc2-kafka2", kafka_controller_extra_properties={"listeners": "CONTROLLER://:9093"}
            ),
            host_set("dc2-kafka2", controller_id=9),
        ),
        [
            "kafka_controller_extra_properties of ['dc2-kafka2'] overrides listeners: the kit sets it for security "
            "or durability and keeps it"
        ],
    ),
    "extra-connect-client-security": (
        joins(
            "kafka_connect",
            "dc1-kafka1",
            kafka_connect_password="p",
            kafka_connect_keystore_password="p",
            kafka_connect_min_workers=1,
            kafka_connect_extra_properties={
                "producer.security.protocol": "PLAINTEXT",
                "listeners.https.ssl.client.auth": "none",
                "connector.client.config.override.policy": "All",
                "offset.flush.interval.ms": "1000",
            },
        ),
        [
            "kafka_connect_extra_properties of ['dc1-kafka1'] overrides connector.client.config.override.policy: "
            "set kafka_connect_client_config_override_policy instead",
            "kafka_connect_extra_properties of ['dc1-kafka1'] overrides listeners.https.ssl.client.auth: the kit "
            "sets it for security or durability and keeps it",
            "kafka_connect_extra_properties of ['dc1-kafka1'] overrides producer.security.protocol: the kit sets it "
            "for security or durability and keeps it",
        ],
    ),
    "extra-mirrormaker-cluster-security": (
        joins(
            "mirrormaker",
            "dc2-kafka2",
            kafka_mirrormaker_password="p",
            mirrormaker_extra_properties={"dc1.ssl.endpoint.identification.algorithm": "", "tasks.max": 4},
        ),
        [
            "mirrormaker_extra_properties of ['dc2-kafka2'] overrides dc1.ssl.endpoint.identification.algorithm: "
            "the kit sets it for security or durability and keeps it"
        ],
    ),
    # --- TLS versions ---------------------------------------------------------------------------
    "tls-an-old-version": (
        all_set(kafka_tls_protocols=["TLSv1.3", "TLSv1.1"]),
        [
            f"kafka_tls_protocols=['TLSv1.3', 'TLSv1.1'] on {ALL_BROKERS} enables ['TLSv1.1']: only Kafka's default "
            "TLS versions ['TLSv1.2', 'TLSv1.3'] are allowed (an older one is broken)"
        ],
    ),
    "tls-a-typo": (
        all_set(kafka_tls_protocols=["TLS1.3"]),
        [
            f"kafka_tls_protocols=['TLS1.3'] on {ALL_BROKERS} enables ['TLS1.3']: only Kafka's default TLS versions "
            "['TLSv1.2', 'TLSv1.3'] are allowed (an older one is broken)"
        ],
    ),
    "tls-a-string": (
        dc_set("dc2", zookeeper_tls_protocols="TLSv1.3"),
        [
            "zookeeper_tls_protocols='TLSv1.3' on ['dc2-kafka1', 'dc2-kafka2'] must be a non-empty list of TLS "
            "versions, of ['TLSv1.2', 'TLSv1.3']"
        ],
    ),
    # --- Kafka's internal topics and the DC's numeric settings -----------------------------------
    "offsets-rf-above-brokers": (
        dc_set("dc2", kafka_offsets_topic_replication_factor=3),
        [
            "dc2: offsets.topic.replication.factor=3 is above the broker count 2; "
            "Kafka could not create __consumer_offsets"
        ],
    ),
    "transaction-rf-above-brokers": (
        dc_set("dc2", kafka_transaction_state_log_replication_factor=3),
        [
            "dc2: transaction.state.log.replication.factor=3 is above the broker count 2; "
            "Kafka could not create __transaction_state"
        ],
    ),
    "offsets-rf-not-a-number": (
        dc_set("dc2", kafka_offsets_topic_replication_factor="two"),
        ["kafka_offsets_topic_replication_factor='two' on ['dc2-kafka1', 'dc2-kafka2'] is not a whole number"],
    ),
    "offsets-rf-zero": (
        dc_set("dc2", kafka_offsets_topic_replication_factor=0),
        ["kafka_offsets_topic_replication_factor=0 on ['dc2-kafka1', 'dc2-kafka2'] must be at least 1"],
    ),
    "default-rf-minus-one": (
        dc_set("dc2", kafka_default_replication_factor=-1),
        ["kafka_default_replication_factor=-1 on ['dc2-kafka1', 'dc2-kafka2'] must be at least 1"],
    ),
    "min-isr-not-a-number": (
        dc_set("dc1", kafka_min_insync_replicas="2x"),
        [f"kafka_min_insync_replicas='2x' on {DC1_BROKERS} is not a whole number"],
    ),
    "connect-rebalance-delay-with-a-unit": (
        all_set(kafka_connect_rebalance_delay_ms="30s"),
        [f"kafka_connect_rebalance_delay_ms='30s' on {ALL_HOSTS} is not a whole number"],
    ),
    "connect-sync-timeout-zero": (
        all_set(kafka_connect_worker_sync_timeout_ms=0),
        [f"kafka_connect_worker_sync_timeout_ms=0 on {ALL_HOSTS} must be at least 1"],
    ),
    "connect-ready-timeout-negative": (
        all_set(kafka_connect_ready_timeout=-1),
        [f"kafka_connect_ready_timeout=-1 on {ALL_HOSTS} must be at least 1"],
    ),
    # --- data directories ---------------------------------------------------------------------
    "data-dir-outside-the-volume": (
        dc_set("dc1", kafka_data_dirs=["/data/kafka"]),
        [
            f"host(s) {DC1_BROKERS}: kafka_data_dirs entry '/data/kafka' is outside the encrypted data volume "
            "['/var/lib/kafka', '/srv/kafkakit/kafka']; put the data directories under one of them (roles/storage)"
        ],
    ),
    "data-dir-escaping-the-volume": (
        host_set("dc1-kafka1", kafka_data_dirs=["/var/lib/kafka/data", "/var/lib/kafka/../kafka-plain"]),
        [
            "host(s) ['dc1-kafka1']: kafka_data_dirs entry '/var/lib/kafka/../kafka-plain' is outside the "
            "encrypted data volume ['/var/lib/kafka', '/srv/kafkakit/kafka']; put the data directories under one "
            "of them (roles/storage)"
        ],
    ),
    "data-dir-relative": (
        host_set("dc2-kafka1", kafka_data_dirs=["kafka-data"]),
        ["host(s) ['dc2-kafka1']: kafka_data_dirs entry 'kafka-data' is not an absolute path"],
    ),
    "data-dirs-not-a-list": (
        host_set("dc2-kafka1", kafka_data_dirs="/var/lib/kafka/data"),
        ["host dc2-kafka1: kafka_data_dirs='/var/lib/kafka/data' must be a non-empty list of absolute paths"],
    ),
    # --- host facts -----------------------------------------------------------------------------
    "broker-id-not-a-number": (
        host_set("dc1-kafka2", broker_id="two"),
        ["host dc1-kafka2: broker_id='two' is not a whole number"],
    ),
    "zookeeper-id-a-float": (
        host_set("dc1-kafka3", zookeeper_id=3.5),
        ["host dc1-kafka3: zookeeper_id=3.5 is not a whole number"],
    ),
    "broker-id-duplicate": (host_set("dc1-kafka3", broker_id=1), ["dc1: duplicate broker_id [1]"]),
    "private-ip-malformed": (
        host_set("dc1-kafka2", private_ip="10.99.0.300"),
        ["host dc1-kafka2: private_ip='10.99.0.300' is not an IP address"],
    ),
    "private-ip-a-name": (
        host_set("dc2-kafka2", private_ip="dc2-kafka2.internal"),
        ["host dc2-kafka2: private_ip='dc2-kafka2.internal' is not an IP address"],
    ),
    "private-ip-duplicate": (
        host_set("dc2-kafka2", private_ip="10.99.0.11"),
        ["hosts ['dc1-kafka1', 'dc2-kafka2'] share private_ip 10.99.0.11; each host needs its own address"],
    ),
    # --- secrets -------------------------------------------------------------------------------
    "secret-empty-everywhere": (
        all_set(kafka_keystore_password=""),
        [f"missing or empty variable(s) ['kafka_keystore_password']{SECRET_HINT}"],
    ),
    "secret-blank-on-one-broker": (
        host_set("dc2-kafka2", kafka_admin_password="  "),
        [
            "kafka_admin_password is missing or empty on host(s) ['dc2-kafka2']; "
            "every host of ['kafka_broker', 'kafka_controller'] "
            "needs it (set it in group_vars/all, ansible-vault)"
        ],
    ),
    "secret-missing-on-a-zookeeper-server": (
        lambda view: view[1]["dc2-kafka1"].pop("zookeeper_keystore_password"),
        [
            "zookeeper_keystore_password is missing or empty on host(s) ['dc2-kafka1']; every host of "
            "['zookeeper'] needs it (set it in group_vars/all, ansible-vault)"
        ],
    ),
    "secret-none": (
        all_set(kafka_pki_ca_passphrase=None),
        [f"missing or empty variable(s) ['kafka_pki_ca_passphrase']{SECRET_HINT}"],
    ),
    # --- users and ACLs -------------------------------------------------------------------------
    "acl-for-an-undeclared-user": (
        acls("User:orders-writer", "User:orders-witer"),
        [
            "dc1: kafka_acls[1] is for User:orders-witer, which no declared user has; add orders-witer to "
            "kafka_users or fix the principal (declared: ['orders-writer'])"
        ],
    ),
    "acl-for-a-removed-user": (
        acls("User:gone"),
        [
            "dc1: kafka_acls[0] is for User:gone, which no declared user has; add gone to kafka_users or fix "
            "the principal (declared: ['orders-writer'])"
        ],
    ),
    "acl-principal-without-type": (
        acls("orders-writer"),
        ["dc1: kafka_acls[0] principal 'orders-writer' is not of the form User:<name>"],
    ),
    "acl-without-principal": (
        dc_set("dc1", kafka_acls=[{"resource_type": "topic", "name": "orders"}]),
        ["dc1: kafka_acls[0] has no principal (User:<name>)"],
    ),
    "user-without-name": (
        dc_set("dc1", kafka_users=[{"password": "x"}]),
        ["dc1: kafka_users[0] has no name"],
    ),
    # --- ACL and user values, as the kafka_acls and kafka_scram_users modules would take them -----
    "acl-operation-typo": (acl(operations=["Reed"]), ["dc1: kafka_acls[0]: unknown operation 'Reed'"]),
    "acl-operations-a-string": (acl(operations="read"), ["dc1: kafka_acls[0]: operations must be a non-empty list"]),
    "acl-operation-not-of-the-resource": (
        acl(resource_type="group", operations=["write"]),
        ["dc1: kafka_acls[0]: operation write does not apply to group (allowed: all, delete, describe, read)"],
    ),
    "acl-pattern-type-typo": (
        acl(pattern_type="prefix"),
        ["dc1: kafka_acls[0]: unknown pattern_type 'prefix'; expected literal or prefixed"],
    ),
    "acl-resource-type-typo": (
        acl(resource_type="topc"),
        ["dc1: kafka_acls[0]: unknown resource_type 'topc'; expected one of topic, group, cluster, transactional_id"],
    ),
    "acl-permission-typo": (
        acl(permission="alow"),
        ["dc1: kafka_acls[0]: unknown permission 'alow'; expected allow or deny"],
    ),
    "acl-field-typo": (
        acl(operations=DROP, operation=["read"]),
        ["dc1: kafka_acls[0]: unknown field(s) operation", "dc1: kafka_acls[0]: operations must be a non-empty list"],
    ),
    "acl-cluster-with-a-name": (
        acl(resource_type="cluster", name="dc1", operations=["idempotent_write"]),
        ["dc1: kafka_acls[0]: the cluster resource is named 'kafka-cluster', not 'dc1'"],
    ),
    "acl-prefixed-wildcard": (
        acl(pattern_type="prefixed", name="*"),
        ["dc1: kafka_acls[0]: '*' is a literal wildcard; a prefixed pattern needs a real prefix"],
    ),
    # --- ACLs that would open the cluster -----------------------------------------------------------
    "acl-all-to-every-user": (
        acl("User:*", name="*", operations=["all"]),
        [
            "dc1: kafka_acls[0]: allows all to every user (User:*); the kit grants everyone at most reads, "
            "writes and describes: name the users"
        ],
    ),
    "acl-cluster-alter-to-every-user": (
        acl("User:*", resource_type="cluster", name=DROP, operations=["alter", "describe", "alter_configs"]),
        [
            "dc1: kafka_acls[0]: allows alter, alter_configs to every user (User:*); the kit grants everyone at "
            "most reads, writes and describes: name the users"
        ],
    ),
    "acl-topic-delete-to-every-user": (
        acl("User:*", pattern_type="prefixed", name="orders", operations=["delete"]),
        [
            "dc1: kafka_acls[0]: allows delete to every user (User:*); the kit grants everyone at most reads, "
            "writes and describes: name the users"
        ],
    ),
    "acl-anything-to-anonymous": (
        acl("User:ANONYMOUS"),
        [
            "dc1: kafka_acls[0]: allows User:ANONYMOUS, Kafka's principal of a client that did not authenticate; "
            "grant to declared users"
        ],
    ),
    "acl-to-anonymous-declared-as-a-user": (
        several(acl("User:ANONYMOUS"), dc_set("dc1", kafka_users=[{"name": "ANONYMOUS", "password": "x"}])),
        [
            "dc1: kafka_acls[0]: allows User:ANONYMOUS, Kafka's principal of a client that did not authenticate; "
            "grant to declared users"
        ],
    ),
    "user-mechanism-typo": (
        user(mechanism="SCRAM-SHA-1"),
        ["dc1: kafka_users[0] (app1): unknown mechanism 'SCRAM-SHA-1'; expected one of SCRAM-SHA-256, SCRAM-SHA-512"],
    ),
    "user-state-typo": (
        user(state="abset"),
        ["dc1: kafka_users[0] (app1): state must be present or absent, not 'abset'"],
    ),
    "user-without-password": (
        user(password=""),
        ["dc1: kafka_users[0] (app1): a present user needs a non-empty password"],
    ),
    # --- client quotas, as Kafka (and the kafka_quotas module) would take them --------------------
    "quota-not-a-number": (
        user(quotas={"producer_byte_rate": "64k"}),
        ["dc1: kafka_users[0] (app1): producer_byte_rate='64k' is not a number"],
    ),
    "quota-a-boolean": (
        user(quotas={"consumer_byte_rate": True}),
        ["dc1: kafka_users[0] (app1): consumer_byte_rate=True is not a number"],
    ),
    "quota-zero": (
        user(quotas={"consumer_byte_rate": 0}),
        [f"dc1: kafka_users[0] (app1): consumer_byte_rate=0 {NOT_POSITIVE}"],
    ),
    "quota-negative": (
        user(quotas={"controller_mutation_rate": -2.5}),
        [f"dc1: kafka_users[0] (app1): controller_mutation_rate=-2.5 {NOT_POSITIVE}"],
    ),
    "quota-key-typo": (
        user(quotas={"produce_byte_rate": 65536}),
        [
            "dc1: kafka_users[0] (app1): unknown quota 'produce_byte_rate' (did you mean 'producer_byte_rate'?); "
            f"Kafka's user quotas are {QUOTA_KEYS}"
        ],
    ),
    "quota-byte-rate-with-a-fraction": (
        user(quotas={"producer_byte_rate": 1048576.5}),
        [
            "dc1: kafka_users[0] (app1): producer_byte_rate=1048576.5 is not a whole number: Kafka defines "
            "producer_byte_rate as LONG (bytes per second)"
        ],
    ),
    "request-percentage-as-text": (
        user(quotas={"request_percentage": "50%"}),
        [
            "dc1: kafka_users[0] (app1): request_percentage='50%' is a percentage written as text: give the number "
            "without '%' (the percentage of one network or I/O thread's time, e.g. 50)"
        ],
    ),
    "request-percentage-a-list": (
        user(quotas={"request_percentage": [50]}),
        ["dc1: kafka_users[0] (app1): request_percentage=[50] is not a number"],
    ),
    "quotas-not-a-mapping": (
        user(quotas=[65536]),
        [f"dc1: kafka_users[0] (app1): quotas must be a mapping of {QUOTA_KEYS} to numbers, not [65536]"],
    ),
    "quotas-on-an-absent-user": (
        user(state="absent", quotas={"producer_byte_rate": 65536}),
        ["dc1: kafka_users[0] (app1): quotas on a user declared state: absent; remove them (its quotas go with it)"],
    ),
    "quotas-in-two-entries-of-a-user": (
        dc_set(
            "dc1",
            kafka_users=[
                {"name": "app1", "password": "x", "quotas": {"producer_byte_rate": 1024}},
                {"name": "app1", "password": "x", "mechanism": "SCRAM-SHA-256", "quotas": {"producer_byte_rate": 2048}},
            ],
        ),
        ["dc1: kafka_users[1] (app1): its quotas are declared in kafka_users[0] too; keep them in one entry"],
    ),
    "quota-defaults-key-typo": (
        dc_set("dc1", kafka_user_quota_defaults={"consumer_rate": 1048576}),
        [
            "dc1: kafka_user_quota_defaults: unknown quota 'consumer_rate' (did you mean 'consumer_byte_rate'?); "
            f"Kafka's user quotas are {QUOTA_KEYS}"
        ],
    ),
    "quota-defaults-zero": (
        dc_set("dc1", kafka_user_quota_defaults={"producer_byte_rate": 0}),
        [f"dc1: kafka_user_quota_defaults: producer_byte_rate=0 {NOT_POSITIVE}"],
    ),
    "quota-defaults-request-percentage-as-text": (
        dc_set("dc1", kafka_user_quota_defaults={"request_percentage": "200 %"}),
        [
            "dc1: kafka_user_quota_defaults: request_percentage='200 %' is a percentage written as text: give the "
            "number without '%' (the percentage of one network or I/O thread's time, e.g. 50)"
        ],
    ),
    "quota-defaults-not-a-mapping": (
        dc_set("dc1", kafka_user_quota_defaults=10485760),
        [f"dc1: kafka_user_quota_defaults: quotas must be a mapping of {QUOTA_KEYS} to numbers, not 10485760"],
    ),
    # --- how long a silent broker is kept (issue #47): settings that disagree ------------------------
    "zookeeper-session-below-what-the-ensemble-grants": (
        dc_set("dc1", kafka_zookeeper_session_timeout_ms=3000),
        [
            f"dc1: kafka_zookeeper_session_timeout_ms=3000 on {DC1_BROKERS} is outside the sessions its ZooKeeper "
            "ensemble grants, 4000..40000 ms (2 × 2000, 20 × 2000, zookeeper_tick_time=2000): the brokers would get "
            "4000 ms"
        ],
    ),
    "zookeeper-session-above-a-set-maximum": (
        dc_set("dc1", zookeeper_tick_time=1000, zookeeper_max_session_timeout=10000),
        [
            f"dc1: kafka_zookeeper_session_timeout_ms=18000 on {DC1_BROKERS} is outside the sessions its ZooKeeper "
            "ensemble grants, 2000..10000 ms (2 × 1000, zookeeper_max_session_timeout=10000, "
            "zookeeper_tick_time=1000): the brokers would get 10000 ms"
        ],
    ),
    "zookeeper-session-bounds-crossed": (
        dc_set("dc1", zookeeper_min_session_timeout=9000, zookeeper_max_session_timeout=6000),
        [
            "dc1: ZooKeeper's minimum session timeout 9000 ms is above its maximum 6000 ms "
            "(zookeeper_min_session_timeout=9000, zookeeper_max_session_timeout=6000): ZooKeeper refuses to start"
        ],
    ),
    "kraft-heartbeat-above-half-the-lease": (
        several(dc_set("dc1", kafka_metadata_mode="kraft"), dc_set("dc1", kafka_broker_session_timeout_ms=3000)),
        [
            f"dc1: kafka_broker_heartbeat_interval_ms=2000 on {DC1_BROKERS} is more than half of "
            "kafka_broker_session_timeout_ms=3000: a broker one heartbeat late would be fenced (Kafka only logs an "
            "error); keep the interval at most half the session"
        ],
    ),
}


def test_the_good_inventory_passes(good: View) -> None:
    assert refusals(good) == []


@pytest.mark.parametrize("case", list(BAD))
def test_a_bad_inventory_is_refused_with_its_message(case: str, good: View) -> None:
    change, expected = BAD[case]
    change(good)
    assert refusals(good) == expected


def test_the_table_is_big_enough() -> None:
    assert len(BAD) >= 30


# --- positive controls: what is close to a refusal but fine ----------------------------------

FINE: dict[str, Callable[[View], None]] = {
    "valid-topic-configs": topic(
        configs={"retention.ms": "604800000", "cleanup.policy": "compact", "min.insync.replicas": 2}
    ),
    "a-3-x-only-config-in-a-zookeeper-dc": topic(configs={"message.timestamp.difference.max.ms": "1000"}),
    "unclean-election-false": topic(configs={"unclean.leader.election.enable": "false"}),
    "config-values-as-kafka-takes-them": topic(
        configs={
            "cleanup.policy": "compact, delete",
            "compression.type": "zstd",
            "message.timestamp.type": "LogAppendTime",
            "retention.ms": -1,
            "retention.bytes": "-1",
            "min.cleanable.dirty.ratio": 0.5,
            "preallocate": True,
            "unclean.leader.election.enable": False,
            "compression.gzip.level": "-1",
            "leader.replication.throttled.replicas": "*",
            "follower.replication.throttled.replicas": "0:1,1:2",
            "segment.bytes": 1073741824,
        }
    ),
    "rf-1-min-isr-1": topic(replication_factor=1, configs={"min.insync.replicas": 1}),
    "numbers-as-strings": topic(partitions="3", replication_factor="3"),
    "absent-topic": topic(state="absent"),
    "topic-name-with-dots-and-dashes": topic(name="team-a.clicks_v2"),
    "harmless-extra-properties": dc_set("dc1", kafka_extra_properties={"num.recovery.threads.per.data.dir": 2}),
    "zookeeper-session-at-the-ensemble-minimum": dc_set(
        "dc1", kafka_zookeeper_session_timeout_ms=4000, zookeeper_tick_time=1000, zookeeper_init_limit=20
    ),
    "a-lease-a-zookeeper-dc-ignores": dc_set("dc1", kafka_broker_heartbeat_interval_ms=9000),
    "data-dirs-on-the-volume": dc_set("dc1", kafka_data_dirs=["/var/lib/kafka/data", "/var/lib/kafka/data2"]),
    "data-dirs-on-own-storage-dirs": dc_set(
        "dc1",
        storage_dirs=[{"name": "kafka", "path": "/data/kafka", "unit": "kafka.service"}],
        kafka_data_dirs=["/data/kafka/d1"],
    ),
    "acls-for-declared-admin-service-broker-and-anyone": acls(
        "User:orders-writer", "User:admin", "User:mirrormaker", "User:monitoring", "User:dc1-kafka1", "User:*"
    ),
    "acl-values-as-kafka-takes-them": dc_set(
        "dc1",
        kafka_users=USERS,
        kafka_acls=[
            {"principal": "User:orders-writer", "resource_type": "topic", "name": "orders", "operations": ["Write"]},
            {"principal": "User:orders-writer", "resource_type": "cluster", "operations": ["IdempotentWrite"]},
            {
                "principal": "User:orders-writer",
                "resource_type": "group",
                "name": "orders-",
                "pattern_type": "prefixed",
                "operations": ["read", "describe"],
            },
            {
                "principal": "User:orders-writer",
                "resource_type": "transactional_id",
                "name": "tx",
                "operations": ["all"],
            },
            {"principal": "User:*", "resource_type": "topic", "name": "public", "operations": ["read", "write"]},
            {"principal": "User:*", "resource_type": "topic", "name": "*", "operations": ["all"], "permission": "deny"},
        ],
    ),
    "users-of-both-mechanisms-and-an-absent-one-without-password": dc_set(
        "dc1",
        kafka_users=[
            {"name": "a", "password": "x", "mechanism": "SCRAM-SHA-256"},
            {"name": "b", "password": "x", "mechanism": "scram-sha-512"},
            {"name": "c", "state": "absent"},
        ],
    ),
    "quotas-as-kafka-takes-them": several(
        dc_set(
            "dc1",
            kafka_users=[
                {
                    "name": "a",
                    "password": "x",
                    "quotas": {
                        "producer_byte_rate": "65536",  # a number typed as text
                        "consumer_byte_rate": 1048576.0,  # whole, as a float
                        "request_percentage": 0.5,  # a fraction of one thread's time
                        "controller_mutation_rate": 250,  # above 100: no percentage
                    },
                },
                {"name": "b", "password": "x", "quotas": {}},  # declared: none
                {"name": "c", "password": "x", "quotas": None},  # not declared
                {"name": "c", "password": "x", "mechanism": "SCRAM-SHA-256", "quotas": {"producer_byte_rate": 1}},
                {"name": "d", "state": "absent"},
            ],
            kafka_user_quota_defaults={"producer_byte_rate": 10485760, "request_percentage": 400},
        ),
    ),
    "quota-defaults-empty-and-null": several(
        dc_set("dc1", kafka_user_quota_defaults={}), dc_set("dc2", kafka_user_quota_defaults=None)
    ),
    "tls-1-3-only": all_set(kafka_tls_protocols=["TLSv1.3"], zookeeper_tls_protocols=["TLSv1.3"]),
    "harmless-extra-properties-of-connect-and-mirrormaker": several(
        joins(
            "kafka_connect",
            "dc1-kafka1",
            kafka_connect_password="p",
            kafka_connect_keystore_password="p",
            kafka_connect_min_workers=1,
            kafka_connect_extra_properties={"offset.flush.interval.ms": "1000", "task.shutdown.graceful.timeout.ms": 1},
        ),
        joins(
            "mirrormaker", "dc2-kafka2", kafka_mirrormaker_password="p", mirrormaker_extra_properties={"tasks.max": 4}
        ),
    ),
    "ipv6-private-ips": several(
        host_set("dc1-kafka1", private_ip="fd00::11"), host_set("dc1-kafka2", private_ip="fd00::12")
    ),
    "a-secret-set-per-host": several(
        all_set(kafka_admin_password=""),
        *(
            host_set(h, kafka_admin_password="p")
            for h in ["dc1-kafka1", "dc1-kafka2", "dc1-kafka3", "dc2-kafka1", "dc2-kafka2"]
        ),
    ),
}


@pytest.mark.parametrize("case", list(FINE))
def test_close_to_a_refusal_but_fine(case: str, good: View) -> None:
    FINE[case](good)
    assert refusals(good) == []


def test_input_errors_come_before_the_topology_read_from_them(good: View) -> None:
    # dc2 breaks a topology rule and a topic is malformed: the malformed input alone is reported
    # (the topology of a malformed inventory would be a guess).
    dc_set("dc2", kafka_default_replication_factor=3)(good)
    topic(partitions="six")(good)
    assert refusals(good) == ["dc1: topic clicks: partitions='six' is not a whole number"]


def test_no_traceback_for_any_case_when_everything_is_broken_at_once(good: View) -> None:
    for change, _ in BAD.values():
        try:
            change(good)
        except KeyError:
            pass  # a case that pops what an earlier one replaced
    assert refusals(good)  # messages, no exception
