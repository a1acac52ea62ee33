"""Partition reassignment plans for scale-out (fill new brokers) and scale-in (drain brokers).

Plans move as few replicas as balance needs, never reduce the number of racks a partition
spans, and keep each replica's position, so a moved preferred leader hands its leadership to
the broker that replaces it. The output is the JSON Kafka's kafka-reassign-partitions tool reads;
the tool executes it with a replication throttle (ansible/ops/scale-out.yml).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

Partition = tuple[str, int]
Assignment = dict[Partition, list[int]]


class PlanError(ValueError):
    """The brokers asked for cannot take or give up replicas as asked."""


@dataclass(frozen=True)
class Move:
    partition: Partition
    source: int
    target: int


def replica_counts(assignment: Mapping[Partition, list[int]], brokers: Iterable[int]) -> Counter[int]:
    counts: Counter[int] = Counter({b: 0 for b in brokers})
    for replicas in assignment.values():
        counts.update(replicas)
    return counts


def leader_counts(assignment: Mapping[Partition, list[int]], brokers: Iterable[int]) -> Counter[int]:
    counts: Counter[int] = Counter({b: 0 for b in brokers})
    counts.update(replicas[0] for replicas in assignment.values() if replicas)
    return counts


def _racks_after(replicas: list[int], source: int, target: int, racks: Mapping[int, str]) -> int:
    return len({racks[b] for b in replicas if b != source} | {racks[target]})


def _allowed(replicas: list[int], source: int, target: int, racks: Mapping[int, str]) -> bool:
    """target may replace source without the partition losing rack spread."""
    if target in replicas:
        return False
    return _racks_after(replicas, source, target, racks) >= len({racks[b] for b in replicas})


def _apply(plan: Assignment, move: Move) -> None:
    replicas = plan[move.partition]
    replicas[replicas.index(move.source)] = move.target


def plan_scale_out(
    assignment: Mapping[Partition, list[int]], racks: Mapping[int, str], new_brokers: Iterable[int]
) -> tuple[Assignment, list[Move]]:
    """Move replicas onto `new_brokers` until replica counts are as even as rack spread allows.

    Returns the full new assignment and the moves, in the order they were chosen."""
    new = sorted(set(new_brokers))
    _check_brokers(assignment, racks, new)
    brokers = sorted(racks)
    plan: Assignment = {tp: list(r) for tp, r in assignment.items()}
    moves: list[Move] = []
    counts = replica_counts(plan, brokers)
    leaders = leader_counts(plan, brokers)
    while True:
        move = _best_fill_move(plan, racks, new, counts, leaders)
        if move is None:
            return plan, moves
        was_leader = plan[move.partition][0] == move.source
        _apply(plan, move)
        moves.append(move)
        counts[move.source] -= 1
        counts[move.target] += 1
        if was_leader:
            leaders[move.source] -= 1
            leaders[move.target] += 1


def _best_fill_move(
    plan: Assignment,
    racks: Mapping[int, str],
    new: list[int],
    counts: Counter[int],
    leaders: Counter[int],
) -> Move | None:
    """The move that most reduces imbalance: onto the emptiest new broker, from the fullest broker
    that can give it a replica; a leader replica while the source leads two or more partitions more,
    and from the topic the target holds the smallest share of, so each topic spreads too."""
    for target in sorted(new, key=lambda b: (counts[b], b)):
        held = Counter(t for (t, _), replicas in plan.items() if target in replicas)
        sizes = Counter(t for t, _ in plan)
        for source in sorted(counts, key=lambda b: (-counts[b], b)):
            if counts[source] - counts[target] < 2:
                break  # no source is fuller by two or more: moving would not even things out
            # Even out leaderships between the two as well as replicas.
            want_leader = leaders[source] - leaders[target] >= 2
            candidates = [
                ((replicas[0] == source) != want_leader, held[tp[0]] / sizes[tp[0]], tp)
                for tp, replicas in plan.items()
                if source in replicas and _allowed(replicas, source, target, racks)
            ]
            if candidates:
                *_, tp = min(candidates)
                return Move(tp, source, target)
    return None


def plan_drain(
    assignment: Mapping[Partition, list[int]], racks: Mapping[int, str], leaving: Iterable[int]
) -> tuple[Assignment, list[Move]]:
    """Move every replica off `leaving` onto the remaining brokers: same rack first, else a rack
    the partition does not use yet, the least loaded broker among those."""
    gone = sorted(set(leaving))
    _check_brokers(assignment, racks, gone)
    staying = [b for b in sorted(racks) if b not in gone]
    plan: Assignment = {tp: list(r) for tp, r in assignment.items()}
    counts = replica_counts(plan, staying)
    moves: list[Move] = []
    for tp in sorted(plan):
        for source in [b for b in plan[tp] if b in gone]:
            replicas = plan[tp]
            options = [b for b in staying if _allowed(replicas, source, b, racks)] or [
                b for b in staying if b not in replicas
            ]
            if not options:
                raise PlanError(f"{tp[0]}-{tp[1]}: no broker left to take a replica from {source}")
            target = min(options, key=lambda b: (racks[b] != racks[source], counts[b], b))
            move = Move(tp, source, target)
            _apply(plan, move)
            moves.append(move)
            counts[target] += 1
    return plan, moves


def drain_candidates(
    assignment: Mapping[Partition, list[int]], racks: Mapping[int, str], leaving: Iterable[int]
) -> list[int]:
    """The leaving brokers a drain still has to plan for: a broker an earlier run drained and
    stopped is no longer registered and holds nothing, so a re-run leaves it out instead of failing."""
    held = {b for replicas in assignment.values() for b in replicas}
    return sorted(b for b in set(leaving) if b in racks or b in held)


def partitions_on(assignment: Mapping[Partition, list[int]], brokers: Iterable[int]) -> dict[int, list[str]]:
    """For each of `brokers` that still holds a replica, its partitions ("topic-3"), sorted."""
    asked = set(brokers)
    held: dict[int, list[str]] = {}
    for (topic, partition), replicas in sorted(assignment.items()):
        for b in set(replicas) & asked:
            held.setdefault(b, []).append(f"{topic}-{partition}")
    return dict(sorted(held.items()))


def drained_refusal(assignment: Mapping[Partition, list[int]], brokers: Iterable[int], shown: int = 20) -> str:
    """Why `brokers` must not be stopped yet ('' when none holds a replica): one line naming each
    broker's partitions (the first `shown` of them)."""
    held = partitions_on(assignment, brokers)
    if not held:
        return ""
    parts = []
    for b, names in held.items():
        more = f" and {len(names) - shown} more" if len(names) > shown else ""
        parts.append(f"broker {b} holds {len(names)}: {', '.join(names[:shown])}{more}")
    return (
        "refusing to stop brokers that still hold replicas (stopping them would take those replicas away; "
        "a partition created during the drain can land on them): "
        + "; ".join(parts)
        + ". Run ops/scale-in.yml again to drain them"
    )


def _check_brokers(assignment: Mapping[Partition, list[int]], racks: Mapping[int, str], asked: list[int]) -> None:
    if not asked:
        raise PlanError("no brokers given")
    unknown = [b for b in asked if b not in racks]
    if unknown:
        raise PlanError(f"brokers {unknown} are not registered in the cluster")
    missing = sorted({b for r in assignment.values() for b in r} - set(racks))
    if missing:
        raise PlanError(f"partitions have replicas on brokers {missing} that are not registered; fix that first")


def reassignment_json(plan: Mapping[Partition, list[int]], current: Mapping[Partition, list[int]]) -> dict[str, Any]:
    """The document kafka-reassign-partitions --execute reads: only partitions that change."""
    changed = [
        {"topic": t, "partition": p, "replicas": plan[(t, p)]}
        for t, p in sorted(plan)
        if plan[(t, p)] != list(current[(t, p)])
    ]
    return {"version": 1, "partitions": changed}


# --- reading the cluster (confluent-kafka AdminClient) ------------------------------------------

# What kafka-reassign-partitions --execute --throttle sets, and --verify removes when done.
BROKER_THROTTLES = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")
TOPIC_THROTTLES = ("leader.replication.throttled.replicas", "follower.replication.throttled.replicas")


def read_cluster(admin: Any, timeout: float = 15.0) -> tuple[Assignment, dict[int, str]]:
    """The current assignment of every topic and each registered broker's rack."""
    cluster = admin.describe_cluster(request_timeout=timeout).result(timeout=timeout + 5)
    racks = {node.id: node.rack or f"broker-{node.id}" for node in cluster.nodes}
    meta = admin.list_topics(timeout=timeout)
    assignment = {(topic, p.id): list(p.replicas) for topic, t in meta.topics.items() for p in t.partitions.values()}
    return assignment, racks


def empty_brokers(assignment: Mapping[Partition, list[int]], racks: Mapping[int, str]) -> list[int]:
    """Registered brokers that hold no replica: the ones a scale-out has just added."""
    return sorted(b for b, n in replica_counts(assignment, racks).items() if n == 0)


def throttles_left(admin: Any, topics: Iterable[str], brokers: Iterable[int], timeout: float = 15.0) -> list[str]:
    """Replication throttles still set on the brokers or topics ("broker 4: leader....rate")."""
    from confluent_kafka.admin import ConfigResource, ResourceType

    # librdkafka takes one BROKER resource per call; topics go in one call.
    calls = [[ConfigResource(ResourceType.BROKER, str(b))] for b in brokers]
    calls.append([ConfigResource(ResourceType.TOPIC, t) for t in topics])
    left: list[str] = []
    for resources in calls:
        if not resources:
            continue
        for resource, future in admin.describe_configs(resources, request_timeout=timeout).items():
            names = BROKER_THROTTLES if resource.restype == ResourceType.BROKER else TOPIC_THROTTLES
            for name, entry in future.result(timeout=timeout + 5).items():
                # A dynamic value set on this resource; static defaults are not throttles.
                if name in names and entry.value and not entry.is_default and entry.source != 5:
                    left.append(f"{resource.restype.name.lower()} {resource.name}: {name}={entry.value}")
    return sorted(left)


def elect_preferred_leaders(admin: Any, timeout: float = 120.0, interval: float = 2.0) -> int:
    """Hand leadership to each partition's first replica (a moved leader's replacement); the
    number of partitions whose leader changed. Partitions already led by it are not errors.

    Under load a ZooKeeper-mode controller can take longer than the client's request timeout
    (a CI run failed so). An election is safe to repeat, so a timed-out or
    retriable attempt is repeated until `timeout`; any other error is raised at once."""
    from confluent_kafka import ElectionType, KafkaError, KafkaException

    from kafkakit.cluster.admin import kafka_error, worth_retrying

    deadline = time.monotonic() + timeout
    elected = 0
    while True:
        try:
            # No timeout keywords: confluent-kafka 2.12's binding rejects them (SystemError).
            results = admin.elect_leaders(ElectionType.PREFERRED, None).result(timeout=60)
        except KafkaException as exc:
            if not (exc.args and worth_retrying(exc.args[0])) or time.monotonic() >= deadline:
                raise
            time.sleep(interval)
            continue
        errors = {tp: kafka_error(err) or err for tp, err in results.items() if err is not None}
        elected += len(results) - len(errors)
        failed = {tp: e for tp, e in errors.items() if e.code() != KafkaError.ELECTION_NOT_NEEDED}
        if not failed:
            return elected
        if time.monotonic() >= deadline or not all(worth_retrying(e) for e in failed.values()):
            lines = sorted(f"{tp.topic}-{tp.partition}: {e}" for tp, e in failed.items())
            raise PlanError("preferred leader election failed for " + ", ".join(lines[:10]))
        time.sleep(interval)
