"""kafkakit.cluster.topics.plan(): declared topic vs. cluster state, without a cluster."""

from __future__ import annotations

import pytest

from kafkakit.cluster.topics import TopicError, TopicSpec, TopicState, plan


def state(partitions: int = 6, rf: int = 3, **configs: str) -> TopicState:
    return TopicState(partitions=partitions, replication_factor=rf, configs=dict(configs))


def test_absent_topic_is_created():
    spec = TopicSpec("orders", 6, 3, {"retention.ms": "604800000"})
    assert plan(spec, None) == ["create topic orders with 6 partitions, replication factor 3"]


def test_matching_topic_is_a_no_op():
    spec = TopicSpec("orders", 6, 3, {"retention.ms": "604800000"})
    assert plan(spec, state(6, 3, **{"retention.ms": "604800000"})) == []


def test_undeclared_configs_on_the_topic_are_left_alone():
    spec = TopicSpec("orders", 6, 3)
    assert plan(spec, state(6, 3, **{"cleanup.policy": "compact"})) == []


def test_more_partitions_grow_the_topic():
    assert plan(TopicSpec("orders", 12, 3), state(6, 3)) == ["grow orders from 6 to 12 partitions"]


def test_changed_and_new_configs_are_set_in_key_order():
    spec = TopicSpec("orders", 6, 3, {"retention.ms": "86400000", "cleanup.policy": "compact", "x.same": "1"})
    current = state(6, 3, **{"retention.ms": "604800000", "x.same": "1"})
    assert plan(spec, current) == [
        "set cleanup.policy=compact on orders",
        "set retention.ms=86400000 on orders",
    ]


def test_grow_and_config_change_together():
    spec = TopicSpec("orders", 8, 3, {"retention.ms": "1"})
    assert plan(spec, state(6, 3)) == [
        "grow orders from 6 to 8 partitions",
        "set retention.ms=1 on orders",
    ]


def test_topic_declared_absent_is_deleted():
    assert plan(TopicSpec("old", 1, 3, present=False), state()) == ["delete topic old"]


def test_topic_declared_absent_and_already_gone_is_a_no_op():
    assert plan(TopicSpec("old", 1, 3, present=False), None) == []


def test_delete_ignores_partition_and_rf_differences():
    # Shrink/RF rules apply to topics that stay; a topic being deleted may differ freely.
    assert plan(TopicSpec("old", 1, 1, present=False), state(12, 3)) == ["delete topic old"]


def test_shrinking_partitions_is_refused():
    with pytest.raises(TopicError) as err:
        plan(TopicSpec("orders", 3, 3), state(6, 3))
    assert str(err.value) == (
        "topic orders: cannot shrink from 6 to 3 partitions "
        "(Kafka cannot remove partitions; key-to-partition mapping would break)"
    )


@pytest.mark.parametrize("declared", [2, 4])
def test_replication_factor_change_is_refused(declared):
    with pytest.raises(TopicError) as err:
        plan(TopicSpec("orders", 6, declared), state(6, 3))
    assert str(err.value) == (
        f"topic orders: replication factor is 3, declared {declared}; "
        "changing it needs a partition reassignment, not a config edit"
    )


def test_rf_change_is_refused_even_when_partitions_grow():
    with pytest.raises(TopicError, match="replication factor is 3, declared 2"):
        plan(TopicSpec("orders", 12, 2), state(6, 3))
