"""Real clients against every data centre (dc1 on ZooKeeper, dc2 on KRaft): partitioning,
ordering, groups, offsets, rack placement, and KIP-848's consumer group protocol where it exists."""

from __future__ import annotations

import time
from collections import defaultdict

import pytest
from confluent_kafka import (
    OFFSET_BEGINNING,
    OFFSET_END,
    ConsumerGroupTopicPartitions,
    ConsumerGroupType,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

from tests.integration.clients import (
    ProduceReport,
    assign_at,
    consume,
    consumer,
    debug_logger,
    produce_sequence,
    read_all,
)
from tests.integration.lab import Lab

pytestmark = pytest.mark.every_dc
# What librdkafka logs (debug cgrp) when the group's coordinator lacks KIP-848's heartbeat request.
UNSUPPORTED = "ConsumerGroupHeartbeatRequest not supported by broker"


def test_keyed_messages_keep_their_partition_and_order(client_conf, new_topic):
    topic = new_topic(partitions=6)
    keys = [f"user-{i}" for i in range(12)]
    report = produce_sequence(client_conf, topic, 600, keys=keys)
    assert not report.failed and len(report.acked) == 600

    partition_of = {d.key: d.partition for d in report.acked}
    assert all(d.partition == partition_of[d.key] for d in report.acked)
    assert len(set(partition_of.values())) > 1, "12 keys all hashed to one partition"

    got = read_all(client_conf, topic, 600)
    assert len(got) == 600
    seqs_by_key: dict[str, list[int]] = defaultdict(list)
    for m in got:
        key, seq = m.value().decode().split(":")
        assert m.partition() == partition_of[key]
        seqs_by_key[key].append(int(seq))
    for key, seqs in seqs_by_key.items():
        assert seqs == sorted(seqs), f"{key} arrived out of order"


def test_a_group_of_two_splits_six_partitions(client_conf, new_topic):
    topic = new_topic(partitions=6)
    produce_sequence(client_conf, topic, 60, keys=[f"k{i}" for i in range(30)])
    group = f"split-{topic}"
    a, b = consumer(client_conf, group), consumer(client_conf, group)
    a.subscribe([topic])
    b.subscribe([topic])
    try:
        got_a, got_b = [], []
        for _ in range(60):
            got_a += consume(a, 60, timeout=0.5)
            got_b += consume(b, 60, timeout=0.5)
            if len(a.assignment()) + len(b.assignment()) == 6 and len(got_a) + len(got_b) >= 60:
                break
        parts_a = {tp.partition for tp in a.assignment()}
        parts_b = {tp.partition for tp in b.assignment()}
        assert len(parts_a) == 3 and len(parts_b) == 3
        assert parts_a.isdisjoint(parts_b)
        assert {m.partition() for m in got_a} <= parts_a
        assert {m.partition() for m in got_b} <= parts_b
    finally:
        a.close()
        b.close()


def test_committed_offsets_survive_a_consumer_restart(client_conf, new_topic):
    topic = new_topic(partitions=1)
    produce_sequence(client_conf, topic, 100)
    group = f"resume-{topic}"
    first = consumer(client_conf, group)
    first.subscribe([topic])
    got = consume(first, 40)
    assert len(got) >= 40
    first.commit(message=got[39], asynchronous=False)
    first.close()

    second = consumer(client_conf, group)
    second.subscribe([topic])
    rest = consume(second, 60)
    second.close()
    assert [m.offset() for m in rest] == list(range(40, 100))


def test_new_consumers_start_from_earliest_latest_or_an_offset(client_conf, new_topic):
    topic = new_topic(partitions=1)
    produce_sequence(client_conf, topic, 50)

    earliest = consumer(client_conf)
    assign_at(earliest, topic, 1, OFFSET_BEGINNING)
    assert consume(earliest, 1)[0].offset() == 0
    earliest.close()

    at_30 = consumer(client_conf)
    assign_at(at_30, topic, 1, 30)
    assert [m.offset() for m in consume(at_30, 20)] == list(range(30, 50))
    at_30.close()

    latest = consumer(client_conf, **{"auto.offset.reset": "latest"})
    latest.assign([TopicPartition(topic, 0, OFFSET_END)])
    assert consume(latest, 1, timeout=3) == []
    # Only what is produced after it started reaches a consumer at the end.
    produce_sequence(client_conf, topic, 5)
    fresh = consume(latest, 5, timeout=30)
    latest.close()
    assert [m.offset() for m in fresh] == list(range(50, 55))


def test_replicas_of_a_partition_sit_on_distinct_racks(lab, dc, admin, new_topic):
    # As many replicas as the DC has racks, up to 3: dc1 has three, the lab's dc2 two.
    rack_of = {b.broker_id: b.rack for b in lab.brokers(dc)}
    replicas = min(3, len(set(rack_of.values())))
    topic = new_topic(partitions=6, replication_factor=replicas)
    meta = admin.list_topics(topic=topic, timeout=10).topics[topic]
    for p in meta.partitions.values():
        racks = {rack_of[r] for r in p.replicas}
        assert len(racks) == replicas, f"partition {p.id} replicas {p.replicas} on racks {racks}"


def test_declared_topics_exist_as_declared(lab: Lab, dc: str, admin: AdminClient) -> None:
    """The DC's kafka_topics in the inventory's group_vars; site.yml created them."""
    declared = [t for t in lab.group_vars(dc).get("kafka_topics") or [] if t.get("state", "present") == "present"]
    if not declared:
        pytest.skip(f"the inventory declares no topics for {dc}")
    meta = admin.list_topics(timeout=10).topics
    for topic in declared:
        name = topic["name"]
        assert name in meta, f"{name} is declared for {dc} but not in the cluster"
        partitions = meta[name].partitions.values()
        assert len(partitions) == topic["partitions"], name
        # kafka_resources's default when a topic gives none.
        assert {len(p.replicas) for p in partitions} == {topic.get("replication_factor", 3)}, name
        resource = ConfigResource(ResourceType.TOPIC, name)
        configs = admin.describe_configs([resource])[resource].result(timeout=20)
        for key, value in (topic.get("configs") or {}).items():
            assert configs[key].value == str(value), f"{name} {key}"


def end_offsets(report: ProduceReport) -> dict[int, int]:
    """Each written partition's end offset: what a group that read everything has committed."""
    ends: dict[int, int] = {}
    for d in report.acked:
        ends[d.partition] = max(ends.get(d.partition, 0), d.offset + 1)
    return ends


def committed(admin: AdminClient, group: str, topic: str, partitions: int) -> dict[int, int]:
    """The group's committed offsets on the topic's partitions, as the admin API sees them."""
    request = [ConsumerGroupTopicPartitions(group, [TopicPartition(topic, p) for p in range(partitions)])]
    found = admin.list_consumer_group_offsets(request, request_timeout=20)[group].result(timeout=30)
    return {tp.partition: tp.offset for tp in found.topic_partitions if tp.offset >= 0}


@pytest.mark.every_dc("kraft")
def test_a_kip848_group_and_a_classic_group_both_read_a_topic_fully(client_conf, admin, new_topic):
    """KIP-848: a group on the new consumer protocol (the broker assigns) beside a classic one, on
    the same topic; each reads every message and commits, and the admin API tells them apart."""
    topic = new_topic(partitions=4)
    report = produce_sequence(client_conf, topic, 200, keys=[f"k{i}" for i in range(20)])
    assert not report.failed and len(report.acked) == 200
    groups = {ConsumerGroupType.CONSUMER: f"kip848-{topic}", ConsumerGroupType.CLASSIC: f"classic-{topic}"}
    readers = {
        kind: consumer(client_conf, group, protocol="consumer" if kind == ConsumerGroupType.CONSUMER else "classic")
        for kind, group in groups.items()
    }
    try:
        for reader in readers.values():
            reader.subscribe([topic])
        for kind, reader in readers.items():
            got = consume(reader, 200, timeout=90, distinct=True)
            assert {m.value() for m in got} == {f"{d.key}:{d.seq}".encode() for d in report.acked}, kind
            reader.commit(asynchronous=False)
        for group in groups.values():
            assert committed(admin, group, topic, 4) == end_offsets(report), group
        # Described while both groups have their member.
        futures = admin.describe_consumer_groups(list(groups.values()), request_timeout=20)
        for kind, group in groups.items():
            description = futures[group].result(timeout=30)
            assert description.type == kind, group
            assert len(description.members) == 1, group
        listed = admin.list_consumer_groups(types={ConsumerGroupType.CONSUMER}, request_timeout=20).result(timeout=30)
        names = {g.group_id for g in listed.valid}
        assert groups[ConsumerGroupType.CONSUMER] in names
        assert groups[ConsumerGroupType.CLASSIC] not in names
    finally:
        for reader in readers.values():
            reader.close()


@pytest.mark.every_dc("zookeeper")
def test_a_zookeeper_dc_serves_a_classic_group_but_not_a_kip848_one(client_conf, new_topic):
    """The pair of the test above on Kafka 3.9: the classic group reads everything, while a
    consumer on the new protocol gets no assignment, so reads nothing, and librdkafka says why:
    it needs Kafka 4's ConsumerGroupHeartbeat, which the 3.9 coordinator does not offer."""
    topic = new_topic(partitions=2)
    produce_sequence(client_conf, topic, 50)
    heard: list[str] = []
    classic = consumer(client_conf, f"classic-{topic}")
    modern = consumer(client_conf, f"kip848-{topic}", protocol="consumer", **debug_logger(heard, "cgrp"))
    try:
        classic.subscribe([topic])
        assert len(consume(classic, 50, timeout=60, distinct=True)) == 50
        modern.subscribe([topic])
        records = []
        deadline = time.monotonic() + 60
        while not any(UNSUPPORTED in line for line in heard):
            assert time.monotonic() < deadline, "librdkafka never found the coordinator without KIP-848 in 60 s"
            msg = modern.poll(0.5)
            if msg is not None and msg.error() is None:
                records.append(msg)
        assert records == [] and modern.assignment() == []
    finally:
        classic.close()
        modern.close()
