"""topic_ready: what counts as a topic ready to use right after its creation."""

from __future__ import annotations

from types import SimpleNamespace

from kafkakit.cluster.admin import topic_ready


class FakeAdmin:
    def __init__(self, leaders: list[int], error: object = None) -> None:
        partitions = {i: SimpleNamespace(leader=leader) for i, leader in enumerate(leaders)}
        self.meta = SimpleNamespace(topics={"t": SimpleNamespace(partitions=partitions, error=error)})

    def list_topics(self, topic: str, timeout: float) -> SimpleNamespace:
        return self.meta


def test_every_partition_needs_a_leader() -> None:
    assert topic_ready(FakeAdmin([1, 2, 3]), "t", 3)
    assert not topic_ready(FakeAdmin([1, -1, 3]), "t", 3)


def test_a_metadata_answer_without_partitions_is_not_ready() -> None:
    # A lagging broker's answer right after creation; all() of nothing would say "ready".
    assert not topic_ready(FakeAdmin([]), "t")
    assert not topic_ready(FakeAdmin([]), "t", 3)


def test_the_partition_count_must_match_when_given() -> None:
    assert not topic_ready(FakeAdmin([1, 2]), "t", 3)
    assert topic_ready(FakeAdmin([1, 2]), "t")


def test_a_topic_error_is_not_ready() -> None:
    assert not topic_ready(FakeAdmin([1], error="UNKNOWN_TOPIC_OR_PART"), "t", 1)
