"""MirrorMaker 2 from dc1 to dc2, run by the mirrormaker2 role on dc2-mm2-1 (pull model). Its faults,
the DR drill and a group resuming from its translated offsets are the dr scenario
(scenarios/test_dr.py, scenarios/test_mirror_offsets.py, `make test-dr`)."""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import ConfigResource, ResourceType

from tests.integration.accounting import account
from tests.integration.clients import produce_sequence, read_all
from tests.integration.conftest import fresh_admin, wait_until
from tests.integration.lab import ROOT, Lab
from tests.integration.mirror import REFRESH_S, SOURCE, TARGET, remote, topic_partitions


def test_mm2_finds_kafkas_connectors_by_their_manifests_without_scanning_classes(lab: Lab):
    """plugin.discovery=service_load on the flow's worker: its start read the manifests only (the
    connectors it found are the ones the tests below see mirroring)."""
    for host in lab.members("mirrormaker", TARGET):
        journal = lab.journal_of_this_start(host, "kafka-mirrormaker")
        assert "Scanning plugins with ServiceLoaderScanner" in journal, (host.name, journal[-2000:])
        assert "ReflectionScanner" not in journal, host.name


def test_a_new_topic_appears_in_dc2_with_its_partitions_and_configs(client_conf, dc2_conf, mirrored_topic):
    topic = mirrored_topic(partitions=4, **{"retention.ms": "3600000", "max.message.bytes": "524288"})
    # Picked up by the next topic refresh; allow three intervals for MM2's task reconfiguration.
    took = wait_until("mirrored topic", lambda: topic_partitions(dc2_conf, remote(topic)) == 4, 3 * REFRESH_S + 30)

    def synced() -> bool:
        res = ConfigResource(ResourceType.TOPIC, remote(topic))
        admin = fresh_admin(dc2_conf)
        configs = admin.describe_configs([res])[res].result(timeout=10)
        return configs["retention.ms"].value == "3600000" and configs["max.message.bytes"].value == "524288"

    wait_until("topic configs", synced, 3 * REFRESH_S + 30)
    account(f"{remote(topic)} appeared in {TARGET} {took:.1f}s after its creation in {SOURCE}")


def test_keyed_messages_all_arrive_in_order_per_partition(client_conf, dc2_conf, mirrored_topic):
    topic = mirrored_topic(partitions=6)
    count = 3000
    keys = [f"k{i}" for i in range(12)]
    report = produce_sequence(client_conf, topic, count, keys=keys)
    assert report.failed == [] and len(report.acked) == count
    source_partition = {d.seq: d.partition for d in report.acked}

    wait_until("mirrored topic", lambda: topic_partitions(dc2_conf, remote(topic)) == 6, 3 * REFRESH_S + 30)
    got = read_all(dc2_conf, remote(topic), count, timeout=120)
    seqs = [int(m.value().decode().split(":")[1]) for m in got]
    assert set(seqs) == set(range(count)), f"{count - len(set(seqs))} messages missing in {TARGET}"
    # MM2 keeps partitioning, and within a partition the order of the source.
    assert all(source_partition[int(m.value().decode().split(":")[1])] == m.partition() for m in got)
    for key in keys:
        in_order = [int(m.value().decode().split(":")[1]) for m in got if m.key().decode() == key]
        assert in_order == sorted(in_order), f"key {key} out of order in {TARGET}"


def mm2_conf(lab: Lab, dc: str) -> dict[str, str]:
    """The MM2 principal's librdkafka settings, from the lab's generated secret."""
    password = (ROOT / "build/lab/secrets/kafka-mirrormaker").read_text().strip()
    conf = lab.client_conf(dc)
    return {**conf, "sasl.username": "mirrormaker", "sasl.password": password}


def test_the_mm2_principal_reads_nothing_outside_its_patterns(lab, client_conf, dc2_conf, new_topic, mirrored_topic):
    outside = new_topic(partitions=1, replication_factor=3)  # test-*, not in the flow's patterns
    inside = mirrored_topic(partitions=1)  # made after it: once mirrored, MM2 has seen both
    assert produce_sequence(client_conf, outside, 10).failed == []
    assert produce_sequence(client_conf, inside, 10).failed == []
    # MM2 reads with assign() and no group: what it meets is the topic's own authorization.
    c = Consumer({**mm2_conf(lab, SOURCE), "group.id": "mirror-probe", "enable.auto.commit": "false"})
    try:
        meta = c.list_topics(outside, timeout=20).topics[outside]
        assert meta.error is not None and meta.error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, meta.error
        # Without metadata there is no partition to fetch from.
        with pytest.raises(KafkaException):
            c.get_watermark_offsets(TopicPartition(outside, 0), timeout=20)
        # The same principal does see a topic inside its patterns.
        assert c.list_topics("orders", timeout=20).topics["orders"].error is None
    finally:
        c.close()
    # Nor may it write into dc1, the source.
    errors: list[KafkaError] = []
    p = Producer({**mm2_conf(lab, SOURCE), "acks": "all"})
    p.produce("orders", b"x", on_delivery=lambda e, _m: errors.append(e))
    p.flush(30)
    assert errors and errors[0] is not None and errors[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    # And the unmatched topic is not in dc2, read once MirrorMaker has refreshed its topic list
    # after both topics existed: the matched one, made second, has arrived.
    mirrored = lambda: topic_partitions(dc2_conf, remote(inside)) == 1  # noqa: E731
    wait_until("the matched topic mirrored", mirrored, 3 * REFRESH_S + 30)
    assert remote(outside) not in fresh_admin(dc2_conf).list_topics(timeout=10).topics
