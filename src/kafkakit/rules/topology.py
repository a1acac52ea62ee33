"""Topology rules shared by the Ansible preflight and the Pulumi stack config.

Both sides describe a deployment as a `Topology` (one `Cluster` per data centre) and call
`validate()`, which returns one plain-English message per broken rule (empty = valid).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field

MIN_ENSEMBLE = 3
MIN_CONTROLLERS = 3
METADATA_MODES = ("zookeeper", "kraft")
# Dedicated KRaft controllers are numbered from here (101, 102, ...): their node.id never meets a
# broker_id (1..n), and stays clear of the brokers when a ZooKeeper DC migrates to KRaft later.
FIRST_CONTROLLER_ID = 101
_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?(?:[-+][0-9A-Za-z.-]+)?$")


@dataclass(frozen=True)
class Node:
    """A ZooKeeper server, a Kafka broker or a KRaft controller: its numeric id and its rack (AZ)."""

    host: str
    node_id: int
    rack: str


@dataclass(frozen=True)
class Topic:
    name: str
    partitions: int
    replication_factor: int
    consumers: int = 0


@dataclass
class Cluster:
    """One data centre's Kafka cluster and what keeps its metadata: a ZooKeeper ensemble
    (metadata_mode "zookeeper", Kafka 3.x) or a dedicated KRaft controller quorum ("kraft", 4.x)."""

    name: str
    zookeepers: list[Node] = field(default_factory=list)
    brokers: list[Node] = field(default_factory=list)
    replication_factor: int = 3
    min_insync_replicas: int = 2
    topics: list[Topic] = field(default_factory=list)
    # The lab's dc2 is a small DR site; production sites keep the full ensemble rule.
    min_ensemble: int = MIN_ENSEMBLE
    metadata_mode: str = "zookeeper"
    # KRaft: the dedicated controllers (node.id = controller_id) and the quorum-size floor, which
    # only a lab lowers, as min_ensemble above.
    controllers: list[Node] = field(default_factory=list)
    min_controllers: int = MIN_CONTROLLERS
    # The Kafka release the DC runs, like "4.3.1"; None when unknown (then unchecked).
    kafka_version: str | None = None
    # Replication factors of Kafka's internal topics; None when not declared (then unchecked).
    offsets_topic_replication_factor: int | None = None
    transaction_state_log_replication_factor: int | None = None
    transaction_state_log_min_isr: int | None = None
    share_coordinator_state_topic_replication_factor: int | None = None  # KRaft (4.x) only
    # ZooKeeper-only settings found on the DC's hosts, as "name" or "name (host)".
    zookeeper_settings: list[str] = field(default_factory=list)


@dataclass
class Topology:
    clusters: list[Cluster] = field(default_factory=list)


def _duplicates(values: list[int]) -> list[int]:
    return sorted(v for v, n in Counter(values).items() if n > 1)


def kafka_major(version: str) -> int | None:
    """The major release of a Kafka version string ("4.3.1" -> 4), None if it is not one."""
    m = _VERSION.match(version.strip())
    return int(m.group(1)) if m else None


def definitions_line(version: str | None) -> str | None:
    """Which of the kit's tables of Kafka's definitions (topic configs, ConfigDefs) describes a release:
    "3" (3.9), "4.3" (4.0 to 4.3: 4.4 only adds definitions), "4.4" (4.4 and later 4.x); None for a
    version of no line the kit ships (5.x) or not a version at all."""
    m = _VERSION.match(version.strip()) if version else None
    if m is None or m.group(1) not in ("3", "4"):
        return None
    if m.group(1) == "3":
        return "3"
    return "4.4" if int(m.group(2)) >= 4 else "4.3"


def _check_mode(c: Cluster) -> list[str]:
    """The metadata mode, the Kafka release it needs, and nothing of the other mode in the DC."""
    if c.metadata_mode not in METADATA_MODES:
        return [f"{c.name}: unknown metadata mode {c.metadata_mode!r}; kafka_metadata_mode is 'zookeeper' or 'kraft'"]
    errors = []
    major = None
    if c.kafka_version is not None:
        major = kafka_major(c.kafka_version)
        if major is None:
            errors.append(f"{c.name}: kafka_version {c.kafka_version!r} is not a Kafka release like 4.3.1")
    if c.metadata_mode == "kraft":
        # 3.9.x too: a DC migrated from ZooKeeper (ops/migrate-to-kraft.yml) runs KRaft on 3.9 until
        # ops/upgrade.yml takes it to 4.x.
        if major is not None and major < 4 and not c.kafka_version.strip().startswith("3.9."):
            errors.append(
                f"{c.name}: KRaft mode runs Kafka 4.x, not {c.kafka_version}; set kafka_version to a 4.x release "
                "(a ZooKeeper data centre on 3.x moves to KRaft through the migration, not by switching the mode)"
            )
        if c.zookeepers:
            errors.append(
                f"{c.name}: a KRaft data centre has no ZooKeeper, but zookeeper host(s) "
                f"{[z.host for z in c.zookeepers]} are in it; remove them from the zookeeper group"
            )
        if c.zookeeper_settings:
            errors.append(f"{c.name}: ZooKeeper setting(s) {c.zookeeper_settings} in a KRaft data centre; remove them")
    else:
        if major is not None and major != 3:
            hint = " (4.x has no ZooKeeper mode: set kafka_metadata_mode: kraft)" if major > 3 else ""
            errors.append(f"{c.name}: a ZooKeeper data centre runs Kafka 3.x, not {c.kafka_version}{hint}")
    return errors


def _check_controllers(c: Cluster) -> list[str]:
    """A KRaft DC's controller quorum, or the one a ZooKeeper DC migrates to (ops/migrate-to-kraft.yml):
    odd, big enough, spread over the racks, own node ids."""
    if c.metadata_mode != "kraft" and not c.controllers:
        return []
    n = len(c.controllers)
    errors = []
    if n < c.min_controllers:
        errors.append(
            f"{c.name}: the KRaft controller quorum has {n} controller(s); at least {c.min_controllers} are needed"
        )
    if n % 2 == 0 and n > 0:
        errors.append(
            f"{c.name}: the KRaft controller quorum has an even number of controllers ({n}); "
            "use an odd number so a majority survives a split"
        )
    dup = _duplicates([x.node_id for x in c.controllers])
    if dup:
        errors.append(f"{c.name}: duplicate controller_id {dup}")
    if any(x.node_id < 0 for x in c.controllers):
        errors.append(f"{c.name}: controller_id must not be negative")
    shared = sorted({b.node_id for b in c.brokers} & {x.node_id for x in c.controllers})
    if shared:
        errors.append(
            f"{c.name}: node id(s) {shared} belong to a broker and a controller; broker_id and controller_id "
            f"are both node.id and must be unique in the data centre (controllers count from {FIRST_CONTROLLER_ID})"
        )
    racks = {x.rack for x in c.brokers + c.controllers}
    if n > 1 and racks:
        limit = math.ceil(n / len(racks))
        per_rack = Counter(x.rack for x in c.controllers)
        if max(per_rack.values()) > limit:
            errors.append(
                f"{c.name}: the controllers are not spread over the racks ({dict(sorted(per_rack.items()))} with "
                f"{len(racks)} rack(s) in the data centre); put at most {limit} in one rack so a rack outage "
                "keeps the quorum"
            )
    return errors


def _check_internal_topics(c: Cluster) -> list[str]:
    """Kafka's own topics must fit on the brokers, or their coordinators never start."""
    n = len(c.brokers)
    if n == 0:
        return []  # "no Kafka brokers" says it already
    declared = [
        ("offsets.topic.replication.factor", c.offsets_topic_replication_factor, "__consumer_offsets"),
        ("transaction.state.log.replication.factor", c.transaction_state_log_replication_factor, "__transaction_state"),
    ]
    if c.metadata_mode == "kraft":
        declared.append(
            (
                "share.coordinator.state.topic.replication.factor",
                c.share_coordinator_state_topic_replication_factor,
                "__share_group_state",
            )
        )
    errors = []
    for prop, rf, topic in declared:
        if rf is not None and rf > n:
            errors.append(f"{c.name}: {prop}={rf} is above the broker count {n}; Kafka could not create {topic}")
    rf, min_isr = c.transaction_state_log_replication_factor, c.transaction_state_log_min_isr
    if rf is not None and min_isr is not None and min_isr > rf:
        errors.append(
            f"{c.name}: transaction.state.log.min.isr={min_isr} is above transaction.state.log.replication.factor="
            f"{rf}; no transaction could commit"
        )
    return errors


def _check_ensemble(c: Cluster) -> list[str]:
    if c.metadata_mode != "zookeeper":
        return []
    n = len(c.zookeepers)
    errors = []
    if n < c.min_ensemble:
        errors.append(f"{c.name}: the ZooKeeper ensemble has {n} server(s); at least {c.min_ensemble} are needed")
    if n % 2 == 0 and n > 0:
        errors.append(
            f"{c.name}: the ZooKeeper ensemble has an even number of servers ({n}); "
            "use an odd number so a majority survives a split"
        )
    dup = _duplicates([z.node_id for z in c.zookeepers])
    if dup:
        errors.append(f"{c.name}: duplicate zookeeper_id {dup}")
    bad = [z.host for z in c.zookeepers if not 1 <= z.node_id <= 255]
    if bad:
        errors.append(f"{c.name}: zookeeper_id must be 1..255 on {bad}")
    return errors


def _check_brokers(c: Cluster) -> list[str]:
    errors = []
    n = len(c.brokers)
    if n == 0:
        return [f"{c.name}: no Kafka brokers are declared"]
    dup = _duplicates([b.node_id for b in c.brokers])
    if dup:
        errors.append(f"{c.name}: duplicate broker_id {dup}")
    if any(b.node_id < 0 for b in c.brokers):
        errors.append(f"{c.name}: broker_id must not be negative")
    rf = c.replication_factor
    if rf > n:
        errors.append(f"{c.name}: default replication factor {rf} is above the broker count {n}")
    racks = {b.rack for b in c.brokers}
    if rf > len(racks):
        errors.append(
            f"{c.name}: {len(racks)} rack(s) {sorted(racks)} cannot hold replication factor {rf}; "
            "each replica needs its own rack"
        )
    if c.min_insync_replicas >= rf and rf > 1:
        errors.append(
            f"{c.name}: min.insync.replicas={c.min_insync_replicas} must be below the replication "
            f"factor {rf}, or one broker down stops every acks=all producer"
        )
    if c.min_insync_replicas < 1:
        errors.append(f"{c.name}: min.insync.replicas must be at least 1")
    return errors


def _check_topics(c: Cluster) -> list[str]:
    errors = []
    n = len(c.brokers)
    dup = sorted(t for t, k in Counter(t.name for t in c.topics).items() if k > 1)
    if dup:
        errors.append(f"{c.name}: topic(s) declared twice: {dup}")
    for t in c.topics:
        if t.partitions < 1:
            errors.append(f"{c.name}: topic {t.name} needs at least 1 partition")
        if t.replication_factor > n:
            errors.append(
                f"{c.name}: topic {t.name} has replication factor {t.replication_factor} above the broker count {n}"
            )
        if t.consumers > t.partitions:
            errors.append(
                f"{c.name}: topic {t.name} has {t.partitions} partition(s) for {t.consumers} "
                "declared consumers; the extra consumers would sit idle"
            )
    return errors


def validate(topology: Topology) -> list[str]:
    """Every broken rule of the topology, one message each; an empty list means valid."""
    if not topology.clusters:
        return ["no data centre is declared"]
    errors: list[str] = []
    dup = sorted(n for n, k in Counter(c.name for c in topology.clusters).items() if k > 1)
    if dup:
        errors.append(f"data centre(s) declared twice: {dup}")
    for c in topology.clusters:
        errors += _check_mode(c)
        errors += _check_ensemble(c) + _check_controllers(c)
        errors += _check_brokers(c) + _check_internal_topics(c) + _check_topics(c)
    return errors
