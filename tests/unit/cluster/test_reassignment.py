"""Scale-out and drain plans: balance, rack spread, minimal movement."""

from __future__ import annotations

import itertools
from concurrent.futures import Future

import pytest
from confluent_kafka import KafkaError, KafkaException, TopicPartition

from kafkakit.cluster.reassignment import (
    PlanError,
    elect_preferred_leaders,
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


class FakeElection:
    """An admin client whose elect_leaders answers from a script: an exception to raise, or a
    per-partition result ({partition: None | error}) as confluent-kafka's future gives it."""

    def __init__(self, *answers: object) -> None:
        self.answers = list(answers)
        self.calls = 0

    def elect_leaders(self, election_type: object, partitions: object) -> object:
        self.calls += 1
        future: Future = Future()
        answer = self.answers.pop(0)
        if isinstance(answer, BaseException):
            future.set_exception(answer)
        else:
            future.set_result(answer)
        return future


def partition_errors(**codes: int | None) -> dict:
    return {
        TopicPartition("orders", int(p[1:])): None if code is None else KafkaException(KafkaError(code))
        for p, code in codes.items()
    }


def test_a_timed_out_election_is_repeated_and_counts_what_it_elected() -> None:
    not_needed = KafkaError.ELECTION_NOT_NEEDED
    admin = FakeElection(
        KafkaException(KafkaError(KafkaError._TIMED_OUT)),
        partition_errors(p0=None, p1=KafkaError.REQUEST_TIMED_OUT, p2=not_needed),
        partition_errors(p0=not_needed, p1=None, p2=not_needed),
    )
    assert elect_preferred_leaders(admin, interval=0) == 2
    assert admin.calls == 3


def test_a_partition_error_given_as_a_bare_kafka_error_is_read_too() -> None:
    # The binding also answers a partition with the KafkaError itself, not wrapped.
    bare = {TopicPartition("orders", 0): KafkaError(KafkaError.REQUEST_TIMED_OUT), TopicPartition("orders", 1): None}
    assert elect_preferred_leaders(FakeElection(bare, partition_errors(p0=None, p1=None)), interval=0) == 3
    refused = {TopicPartition("orders", 0): KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED)}
    with pytest.raises(PlanError, match="orders-0: .*TOPIC_AUTHORIZATION_FAILED"):
        elect_preferred_leaders(FakeElection(refused), interval=0)


def test_an_election_refused_for_another_reason_fails_at_once() -> None:
    # Positive control: the same client, answering at once, elects without an error.
    assert elect_preferred_leaders(FakeElection(partition_errors(p0=None)), interval=0) == 1
    admin = FakeElection(partition_errors(p0=KafkaError.TOPIC_AUTHORIZATION_FAILED), partition_errors(p0=None))
    with pytest.raises(PlanError, match="orders-0: .*TOPIC_AUTHORIZATION_FAILED"):
        elect_preferred_leaders(admin, interval=0)
    denied = FakeElection(KafkaException(KafkaError(KafkaError.CLUSTER_AUTHORIZATION_FAILED)), {})
    with pytest.raises(KafkaException, match="CLUSTER_AUTHORIZATION_FAILED"):
        elect_preferred_leaders(denied, interval=0)
    assert admin.calls == denied.calls == 1


def test_an_election_still_timing_out_at_its_deadline_fails() -> None:
    admin = FakeElection(*[partition_errors(p0=KafkaError.REQUEST_TIMED_OUT)] * 3)
    with pytest.raises(PlanError, match="orders-0: .*REQUEST_TIMED_OUT"):
        elect_preferred_leaders(admin, timeout=0, interval=0)
    assert admin.calls == 1
