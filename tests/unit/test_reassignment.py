"""Scale-out and drain plans: balance, rack spread, minimal movement."""

from __future__ import annotations

import itertools

import pytest

from kafkakit.reassignment import (
    PlanError,
    leader_counts,
    plan_drain,
    plan_scale_out,
    reassignment_json,
    replica_counts,
)

RACKS = {1: "az1", 2: "az2", 3: "az3"}


def rack_aware(topic: str, partitions: int, brokers: list[int]) -> dict[tuple[str, int], list[int]]:
    """What Kafka gives three brokers in three racks at RF 3: every broker, leaders rotating."""
    return {(topic, p): [brokers[(p + i) % len(brokers)] for i in range(3)] for p in range(partitions)}


def cluster() -> dict[tuple[str, int], list[int]]:
    return {**rack_aware("orders", 12, [1, 2, 3]), **rack_aware("__consumer_offsets", 50, [1, 2, 3])}


def rack_spread(assignment: dict, racks: dict) -> dict:
    return {tp: len({racks[b] for b in r}) for tp, r in assignment.items()}


def test_a_new_broker_takes_half_of_its_racks_replicas_and_spread_is_kept() -> None:
    racks = {**RACKS, 4: "az1"}
    current = cluster()
    plan, moves = plan_scale_out(current, racks, [4])
    counts = replica_counts(plan, racks)
    # Only broker 1 shares a rack with 4, so only it can give replicas without losing spread.
    assert {m.source for m in moves} == {1}
    assert counts[1] + counts[4] == 62 and abs(counts[1] - counts[4]) <= 1
    assert counts[2] == counts[3] == 62
    assert rack_spread(plan, racks) == rack_spread(current, racks)
    assert len(moves) == counts[4]  # nothing moved twice
    for topic, partitions in (("orders", 12), ("__consumer_offsets", 50)):
        on_new = sum(4 in r for (t, _), r in plan.items() if t == topic)
        assert abs(on_new - partitions / 2) <= 1, f"{topic}: {on_new} of {partitions} moved"
    leaders = leader_counts(plan, racks)
    assert abs(leaders[4] - leaders[1]) <= 1 and leaders[2] == leader_counts(current, racks)[2]


def test_a_broker_in_a_new_rack_draws_from_every_broker() -> None:
    racks = {**RACKS, 4: "az4"}
    plan, moves = plan_scale_out(cluster(), racks, [4])
    counts = replica_counts(plan, racks)
    assert {m.source for m in moves} == {1, 2, 3}
    assert max(counts.values()) - min(counts.values()) <= 1
    assert all(len(set(r)) == 3 for r in plan.values())


def test_two_new_brokers_share_the_load() -> None:
    racks = {**RACKS, 4: "az1", 5: "az2"}
    plan, _ = plan_scale_out(cluster(), racks, [4, 5])
    counts = replica_counts(plan, racks)
    assert abs(counts[1] - counts[4]) <= 1 and abs(counts[2] - counts[5]) <= 1
    assert counts[3] == 62


def test_a_balanced_cluster_gets_an_empty_plan() -> None:
    current = cluster()
    plan, moves = plan_scale_out(current, RACKS, [3])
    assert moves == [] and plan == current
    assert reassignment_json(plan, current) == {"version": 1, "partitions": []}


def test_drain_empties_the_broker_and_restores_spread() -> None:
    racks = {**RACKS, 4: "az1"}
    current = cluster()
    grown, _ = plan_scale_out(current, racks, [4])
    drained, moves = plan_drain(grown, racks, [4])
    assert replica_counts(drained, racks)[4] == 0
    assert all(m.target == 1 for m in moves)  # the same rack first
    assert rack_spread(drained, racks) == rack_spread(current, racks)


def test_drain_refuses_when_no_broker_can_take_a_replica() -> None:
    with pytest.raises(PlanError, match="no broker left"):
        plan_drain(cluster(), RACKS, [3])


@pytest.mark.parametrize(
    ("brokers", "message"),
    [([], "no brokers"), ([9], r"\[9\] are not registered")],
)
def test_unknown_brokers_are_refused(brokers: list[int], message: str) -> None:
    with pytest.raises(PlanError, match=message):
        plan_scale_out(cluster(), RACKS, brokers)


def test_replicas_on_an_unregistered_broker_are_refused() -> None:
    current = {("t", 0): [1, 2, 7]}
    with pytest.raises(PlanError, match=r"\[7\]"):
        plan_scale_out(current, {**RACKS, 4: "az1"}, [4])


def test_the_tool_document_lists_only_changed_partitions_with_positions_kept() -> None:
    racks = {**RACKS, 4: "az1"}
    current = cluster()
    plan, moves = plan_scale_out(current, racks, [4])
    doc = reassignment_json(plan, current)
    assert len(doc["partitions"]) == len(moves)
    for entry in doc["partitions"]:
        before = current[(entry["topic"], entry["partition"])]
        after = entry["replicas"]
        changed = [i for i, (a, b) in enumerate(itertools.zip_longest(before, after)) if a != b]
        assert len(changed) == 1 and before[changed[0]] == 1 and after[changed[0]] == 4
