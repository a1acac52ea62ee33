"""The disaster-recovery drill's client side: an application's consumer group moves from the
source data centre to the target and resumes from MirrorMaker 2's translated offsets.

prepare():  produce N run-tagged, sequence-numbered records in the source; a fresh group starts at
            the topic's current end, consumes K of them and commits; wait until MM2 has copied all
            N and written the group's translated offsets into the target.
(the playbook then stops every broker and ZooKeeper server of the source)
failover(): the same group consumes the mirrored topic in the target from the translated offsets.
            Skipped = records of the run seen in neither DC (must be 0); duplicates = records seen
            in both, or twice in the target (at least once is the contract: a figure).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import NewTopic

from kafkakit.cluster.admin import admin_client, admin_from_conf, client_conf, create_topics_retrying, topic_ready
from kafkakit.mirror.lag import wait_mirror


def _consumer(conf: dict[str, str], group: str) -> Consumer:
    # earliest: a partition without a translated offset is re-read, never skipped.
    return Consumer({**conf, "group.id": group, "auto.offset.reset": "earliest", "enable.auto.commit": "false"})


def ensure_topic(conf: Mapping[str, str], topic: str, partitions: int, replication_factor: int) -> None:
    """The topic exists and every broker we may ask lists its partitions with leaders (right after
    creation a lagging metadata cache answers with none, and an empty offset list cannot be committed).
    Creation is retried with a fresh client (a roll or a fault before the drill may have moved the
    controller); a topic that exists already is left as it is."""
    create_topics_retrying(conf, [NewTopic(topic, partitions, replication_factor)])
    admin = admin_from_conf(conf)
    deadline = time.monotonic() + 60
    while True:
        if topic_ready(admin, topic, timeout=30):
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"{topic}: partitions or leaders missing from the metadata after 60 s")
        time.sleep(0.5)


def _end_offsets(consumer: Consumer, topic: str, wait_seconds: float = 60) -> dict[int, int]:
    # The consumer may ask another broker than the admin client did, whose metadata cache can
    # still lag the topic's creation: wait for it to list every partition with a leader.
    deadline = time.monotonic() + wait_seconds
    while True:
        meta = consumer.list_topics(topic, timeout=30).topics[topic]
        leaders = [p.leader for p in meta.partitions.values()]
        if meta.error is None and leaders and min(leaders) >= 0:
            break
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"{topic}: partitions or leaders missing from the consumer's metadata after {wait_seconds:.0f} s"
            )
        time.sleep(0.5)
    return {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1] for p in meta.partitions}


def _seq_of(value: bytes | None, run_id: str) -> int | None:
    try:
        record = json.loads(value or b"")
    except ValueError:
        return None
    return int(record["seq"]) if isinstance(record, dict) and record.get("run") == run_id else None


@dataclass
class Prepared:
    run_id: str
    group: str
    produced: int
    consumed: list[int]
    start_offsets: dict[int, int]
    committed: dict[int, int]
    translated: dict[int, int] = field(default_factory=dict)
    seconds_to_translate: float = -1.0
    lag_before_failover: int = -1


def prepare(
    source: str,
    source_bootstrap: str,
    target_bootstrap: str,
    client_config: Mapping[str, Any],
    topic: str,
    target_topic: str,
    group_prefix: str,
    messages: int,
    consume_first: int,
    partitions: int,
    replication_factor: int,
    wait_seconds: float,
) -> Prepared:
    run_id = uuid.uuid4().hex[:10]
    group = f"{group_prefix}{run_id}"
    src = client_conf(source_bootstrap, client_config)
    ensure_topic(src, topic, partitions, replication_factor)

    # The group starts where the topic ends now, so only this run's records are in its way.
    c = _consumer(src, group)
    start = _end_offsets(c, topic)
    c.commit(offsets=[TopicPartition(topic, p, o) for p, o in start.items()], asynchronous=False)

    producer = Producer({**src, "acks": "all", "enable.idempotence": "true", "linger.ms": "5"})
    failures: list[str] = []
    for seq in range(messages):
        value = json.dumps({"run": run_id, "seq": seq}).encode()
        producer.produce(
            topic, key=f"{run_id}-{seq % 16}", value=value, on_delivery=lambda e, _m: e and failures.append(str(e))
        )
        producer.poll(0)
    if producer.flush(120) or failures:
        raise RuntimeError(f"could not produce the drill's records: {failures[:3]}")

    c.subscribe([topic])
    consumed: list[int] = []
    deadline = time.monotonic() + 120
    while len(consumed) < consume_first and time.monotonic() < deadline:
        msg = c.poll(0.5)
        if msg is None or msg.error():
            continue
        seq = _seq_of(msg.value(), run_id)
        if seq is not None:
            consumed.append(seq)
    # Commit exactly what was handed to the application, as at-least-once consumers do.
    c.commit(asynchronous=False)
    committed = {tp.partition: tp.offset for tp in c.committed([TopicPartition(topic, p) for p in start], timeout=30)}
    c.close()

    prepared = Prepared(run_id, group, messages, consumed, start, committed)
    # Every record copied before the source goes away...
    mirror = wait_mirror(
        0,
        wait_seconds,
        source=source,
        source_bootstrap=source_bootstrap,
        target_bootstrap=target_bootstrap,
        client_config=client_config,
        topics=[{"name": topic}],
        topics_exclude=[],
    )
    prepared.lag_before_failover = mirror.total_lag if not mirror.error else -1
    # ...and the group's position translated into the target.
    prepared.translated, prepared.seconds_to_translate = _wait_translated(
        target_bootstrap, client_config, target_topic, group, committed, start, wait_seconds
    )
    return prepared


def _wait_translated(
    target_bootstrap: str,
    client_config: Mapping[str, Any],
    target_topic: str,
    group: str,
    committed: Mapping[int, int],
    start: Mapping[int, int],
    wait_seconds: float,
) -> tuple[dict[int, int], float]:
    """Poll the target until MM2 has written the group's offsets for every partition it moved on."""
    admin = admin_client(target_bootstrap, client_config)
    wanted = {p for p, o in committed.items() if o > start.get(p, 0)}
    began = time.monotonic()
    translated: dict[int, int] = {}
    while time.monotonic() - began < wait_seconds:
        try:
            request = [ConsumerGroupTopicPartitions(group, [TopicPartition(target_topic, p) for p in committed])]
            result = admin.list_consumer_group_offsets(request)[group].result(timeout=30)
            translated = {tp.partition: tp.offset for tp in result.topic_partitions if tp.offset >= 0}
        except KafkaException:
            translated = {}
        if wanted <= set(translated):
            return translated, round(time.monotonic() - began, 1)
        time.sleep(2)  # poll interval of a bounded wait
    return translated, -1.0


@dataclass
class DrillReport:
    run_id: str
    group: str
    produced: int
    consumed_in_source: int
    delivered_in_target: int
    skipped: int
    delivered_twice: int
    skipped_seqs: list[int]
    translated_partitions: int
    seconds_to_translate: float
    seconds_to_first_record: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def failover(
    target_bootstrap: str,
    client_config: Mapping[str, Any],
    target_topic: str,
    run_id: str,
    group: str,
    produced: int,
    consumed_in_source: Sequence[int],
    translated: Mapping[Any, int],
    seconds_to_translate: float,
    timeout: float,
) -> DrillReport:
    c = _consumer(client_conf(target_bootstrap, client_config), group)
    c.subscribe([target_topic])
    remaining = set(range(produced)) - set(consumed_in_source)
    delivered: list[int] = []
    began = time.monotonic()
    first = -1.0
    deadline = began + timeout
    while remaining and time.monotonic() < deadline:
        msg = c.poll(0.5)
        if msg is None or msg.error():
            continue
        seq = _seq_of(msg.value(), run_id)
        if seq is None:
            continue
        if first < 0:
            first = round(time.monotonic() - began, 1)
        delivered.append(seq)
        remaining.discard(seq)
    c.commit(asynchronous=False)  # the group now lives in the target
    c.close()
    seen_twice = len(delivered) - len(set(delivered)) + len(set(delivered) & set(consumed_in_source))
    return DrillReport(
        run_id=run_id,
        group=group,
        produced=produced,
        consumed_in_source=len(consumed_in_source),
        delivered_in_target=len(delivered),
        skipped=len(remaining),
        delivered_twice=seen_twice,
        skipped_seqs=sorted(remaining)[:20],
        translated_partitions=len(translated),
        seconds_to_translate=seconds_to_translate,
        seconds_to_first_record=first,
    )
