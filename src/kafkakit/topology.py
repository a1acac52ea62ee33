"""Topology rules shared by the Ansible preflight and the Pulumi stack config.

Both sides describe a deployment as a `Topology` (one `Cluster` per data centre) and call
`validate()`, which returns one plain-English message per broken rule (empty = valid).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

MIN_ENSEMBLE = 3


@dataclass(frozen=True)
class Node:
    """A ZooKeeper server or a Kafka broker: its numeric id and its rack (AZ)."""

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
    """One data centre's Kafka cluster and the ZooKeeper ensemble behind it."""

    name: str
    zookeepers: list[Node] = field(default_factory=list)
    brokers: list[Node] = field(default_factory=list)
    replication_factor: int = 3
    min_insync_replicas: int = 2
    topics: list[Topic] = field(default_factory=list)
    # The lab's dc2 is a small DR site; production sites keep the full ensemble rule.
    min_ensemble: int = MIN_ENSEMBLE
    metadata_mode: str = "zookeeper"


@dataclass
class Topology:
    clusters: list[Cluster] = field(default_factory=list)


def _duplicates(values: list[int]) -> list[int]:
    return sorted(v for v, n in Counter(values).items() if n > 1)


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
        errors += _check_ensemble(c) + _check_brokers(c) + _check_topics(c)
    return errors
