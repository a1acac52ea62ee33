"""MirrorMaker 2 from dc1 to dc2, run by the mirrormaker2 role on dc2-mm2-1 (pull model)."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import ConfigResource, NewTopic, ResourceType

from kafkakit import dr_drill
from kafkakit.admin import create_topics_retrying, delete_topics_retrying, wait_healthy
from kafkakit.mirror_lag import mirror_state, wait_mirror
from tests.integration.clients import ProduceReport, produce_sequence, read_all
from tests.integration.conftest import controller_id, fresh_admin, wait_until
from tests.integration.lab import ROOT, Lab
from tests.integration.playbooks import run_playbook

# What inventories/local/group_vars set for the lab's flow and MM2.
SOURCE, TARGET = "dc1", "dc2"
REFRESH_S = 10
MIRROR_PREFIX = "mirror-"


def remote(topic: str) -> str:
    return f"{SOURCE}.{topic}"


@pytest.fixture(scope="module")
def dc2_conf(lab: Lab) -> dict[str, str]:
    return lab.client_conf(TARGET)


def split(conf: dict[str, str]) -> tuple[str, dict[str, str]]:
    rest = dict(conf)
    return rest.pop("bootstrap.servers"), rest


def topic_partitions(conf: dict[str, str], topic: str) -> int:
    meta = fresh_admin(conf).list_topics(timeout=10).topics.get(topic)
    return 0 if meta is None or meta.error is not None else len(meta.partitions)


@pytest.fixture
def mirrored_topic(client_conf: dict[str, str], dc2_conf: dict[str, str]) -> Iterator[Callable[..., str]]:
    """Topics in dc1 under the flow's mirror- prefix; both copies are deleted afterwards (retried
    with a fresh client: a test restarts a dc1 broker in between; a copy not in dc2 counts as gone)."""
    made: list[str] = []

    def make(partitions: int = 6, **configs: str) -> str:
        name = f"{MIRROR_PREFIX}{uuid.uuid4().hex[:10]}"
        create_topics_retrying(client_conf, [NewTopic(name, partitions, 3, config=configs)])
        made.append(name)
        wait_until("leaders", lambda: topic_partitions(client_conf, name) == partitions, 30)
        return name

    yield make
    for conf, names in ((client_conf, made), (dc2_conf, [remote(t) for t in made])):
        if names:
            delete_topics_retrying(conf, names)


def mm2_host(lab: Lab):  # noqa: ANN201 - testinfra host
    return lab.testinfra(lab.groups["mirrormaker"][0])


def flow_state(client_conf: dict[str, str], dc2_conf: dict[str, str], topic: str, max_lag: int, wait_s: float):  # noqa: ANN201
    src_bootstrap, admin_conf = split(client_conf)
    return wait_mirror(
        max_lag,
        wait_s,
        source=SOURCE,
        source_bootstrap=src_bootstrap,
        target_bootstrap=split(dc2_conf)[0],
        client_config=admin_conf,
        topics=[{"name": topic}],
        topics_exclude=[],
    )


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
    print(f"\n{remote(topic)} appeared in {TARGET} {took:.1f}s after its creation in {SOURCE}")


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


def test_a_group_resumes_in_dc2_from_its_translated_offsets_without_skipping(client_conf, dc2_conf, mirrored_topic):
    topic = mirrored_topic(partitions=6)
    wait_until("mirrored topic", lambda: topic_partitions(dc2_conf, remote(topic)) == 6, 3 * REFRESH_S + 30)
    src_bootstrap, admin_conf = split(client_conf)
    prepared = dr_drill.prepare(
        source=SOURCE,
        source_bootstrap=src_bootstrap,
        target_bootstrap=split(dc2_conf)[0],
        client_config=admin_conf,
        topic=topic,
        target_topic=remote(topic),
        group_prefix=f"{MIRROR_PREFIX}group-",
        messages=1500,
        consume_first=500,
        partitions=6,
        replication_factor=3,
        wait_seconds=120,
    )
    assert len(prepared.consumed) == 500
    assert prepared.lag_before_failover == 0
    assert prepared.seconds_to_translate >= 0, f"offsets not translated into {TARGET}: {prepared.translated}"
    # A translated offset never lies beyond what the group had consumed in dc1.
    assert sum(prepared.translated.values()) <= sum(prepared.committed.values())

    report = dr_drill.failover(
        target_bootstrap=split(dc2_conf)[0],
        client_config=admin_conf,
        target_topic=remote(topic),
        run_id=prepared.run_id,
        group=prepared.group,
        produced=prepared.produced,
        consumed_in_source=prepared.consumed,
        translated=prepared.translated,
        seconds_to_translate=prepared.seconds_to_translate,
        timeout=90,
    )
    assert report.skipped == 0, report.skipped_seqs
    # Resuming from the translated offsets, not from the beginning: far fewer than all 500 again.
    assert report.delivered_twice < 500
    print(f"\nresumed in {TARGET}: {report.delivered_in_target} delivered, {report.delivered_twice} twice")


def test_mm2_restart_and_a_source_broker_restart_lose_nothing(
    lab, client_conf, dc2_conf, mirrored_topic, healthy_after
):
    topic = mirrored_topic(partitions=6)
    wait_until("mirrored topic", lambda: topic_partitions(dc2_conf, remote(topic)) == 6, 3 * REFRESH_S + 30)
    count = 6000
    report = ProduceReport()
    load = threading.Thread(
        target=produce_sequence,
        args=(client_conf, topic, count),
        kwargs={"keys": [f"k{i}" for i in range(6)], "rate_per_s": 200, "report": report},
    )
    load.start()
    wait_until("first third of the load", lambda: len(report.acked) >= count // 3, 120)
    mm2_host(lab).run_test("systemctl restart kafka-mirrormaker")
    wait_until("second third of the load", lambda: len(report.acked) >= 2 * count // 3, 120)
    # A broker that is not the controller, so the restart is about partition leadership only.
    controller = controller_id(client_conf)
    victim = next(b for b in lab.brokers(SOURCE) if b.broker_id != controller)
    lab.testinfra(victim).run_test("systemctl restart kafka")
    load.join(300)
    assert report.failed == [] and len(report.acked) == count

    got = read_all(dc2_conf, remote(topic), count, timeout=240)
    seqs = [int(m.value().decode().split(":")[1]) for m in got]
    missing = set(range(count)) - set(seqs)
    assert not missing, f"{len(missing)} messages lost across the restarts"
    print(
        f"\n{count} mirrored across an MM2 restart and a restart of broker {victim.broker_id}: "
        f"0 lost, {len(seqs) - len(set(seqs))} duplicates so far read"
    )


def test_the_lag_check_sees_a_stopped_mirrormaker_fall_behind_and_catch_up(lab, client_conf, dc2_conf, mirrored_topic):
    topic = mirrored_topic(partitions=3)
    wait_until("mirrored topic", lambda: topic_partitions(dc2_conf, remote(topic)) == 3, 3 * REFRESH_S + 30)
    host = mm2_host(lab)
    host.run_test("systemctl stop kafka-mirrormaker")
    try:
        assert produce_sequence(client_conf, topic, 900, keys=["a", "b", "c"]).failed == []
        src_bootstrap, admin_conf = split(client_conf)
        behind = mirror_state(SOURCE, src_bootstrap, split(dc2_conf)[0], admin_conf, [{"name": topic}], [])
        assert behind.error == ""
        assert behind.total_lag == 900, behind.as_dict()
    finally:
        host.run_test("systemctl start kafka-mirrormaker")
    caught_up = flow_state(client_conf, dc2_conf, topic, max_lag=0, wait_s=180)
    assert caught_up.ok(0), caught_up.as_dict()
    assert caught_up.total_lag == 0


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


def test_the_dr_drill_skips_nothing_and_brings_dc1_back(lab, client_conf):
    started = time.time()
    # The drill refuses to take a data centre down unless named (issue 16).
    run_playbook("ops/dr-drill.yml", "-e", f"dr_drill_confirm={SOURCE}")
    reports = [p for p in (ROOT / "build/dr-drill").glob("*.json") if p.stat().st_mtime >= started]
    assert len(reports) == 1, "the drill wrote no report"
    report = json.loads(reports[0].read_text())
    assert report["skipped"] == 0
    assert report["produced"] == 2000 and report["consumed_in_source"] == 700
    assert report["delivered_in_target"] >= 2000 - 700
    figures = ("produced", "consumed_in_source", "delivered_in_target", "skipped", "delivered_twice")
    timings = ("seconds_to_translate", "seconds_to_first_record")
    print(f"\nDR drill: {json.dumps({k: report[k] for k in figures + timings})}")
    # The playbook waited for dc1 to be whole again; check it independently.
    ids = [b.broker_id for b in lab.brokers(SOURCE)]
    health = wait_healthy(fresh_admin(client_conf), ids, timeout=60)
    assert health.healthy(ids), health.as_dict()
