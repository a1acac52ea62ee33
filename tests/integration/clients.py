"""Real producers and consumers (confluent-kafka) that account for every message."""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, Producer, TopicPartition


@dataclass
class Delivery:
    key: str
    seq: int
    partition: int
    offset: int


@dataclass
class ProduceReport:
    sent: int = 0
    acked: list[Delivery] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    longest_gap_s: float = 0.0
    longest_gap_end: float = 0.0  # time.time() when that window ended: which step it fell in
    aborted: int = 0  # transactions aborted and sent again (produce_transactions only)
    # produce() refusals of a topic librdkafka's metadata momentarily lacked (a broker rolling
    # between metadata sources): the transaction was aborted and sent again (produce_transactions).
    refused: list[str] = field(default_factory=list)
    # librdkafka's idempotence events (PID, epoch bumps, drains), kept when asked for: they say
    # whether a value stored twice came from the client re-sending under a new epoch.
    idempotence: list[str] = field(default_factory=list)


class _Keep(logging.Handler):
    def __init__(self, into: list[str]) -> None:
        super().__init__(logging.DEBUG)
        self.into = into

    def emit(self, record: logging.LogRecord) -> None:
        self.into.append(f"{time.strftime('%H:%M:%S')} {record.getMessage()}")


def debug_logger(into: list[str], contexts: str) -> dict[str, object]:
    """Client settings that log librdkafka's debug `contexts` (eos, cgrp, ...) into `into`."""
    log = logging.getLogger(f"kafkakit.librdkafka.{uuid.uuid4().hex[:8]}")
    log.propagate = False
    log.setLevel(logging.DEBUG)
    log.addHandler(_Keep(into))
    return {"debug": contexts, "logger": log}


def idempotence_logger(into: list[str]) -> dict[str, object]:
    """Producer settings that log librdkafka's idempotence state changes into `into`."""
    return debug_logger(into, "eos")


def _gap(report: ProduceReport, gap: float) -> None:
    if gap > report.longest_gap_s:
        report.longest_gap_s, report.longest_gap_end = gap, time.time()


def durable_producer(conf: dict[str, str], **extra: object) -> Producer:
    """acks=all + idempotence: what the kit promises not to lose."""
    return Producer({**conf, "acks": "all", "enable.idempotence": "true", "linger.ms": "5", **extra})


def produce_sequence(
    conf: dict[str, str],
    topic: str,
    count: int,
    keys: Iterable[str] = ("k0",),
    rate_per_s: float | None = None,
    report: ProduceReport | None = None,
    stop: threading.Event | None = None,
    first_seq: int = 0,
    trace_idempotence: bool = False,
) -> ProduceReport:
    """Send up to `count` messages 'key:seq' round-robin over `keys` (fewer if `stop` is set);
    wait for every delivery report. Pass `report` to watch progress from another thread;
    `trace_idempotence` keeps librdkafka's idempotence events in `report.idempotence`."""
    keys = list(keys)
    report = report if report is not None else ProduceReport()
    last_ok = time.monotonic()

    def on_delivery(err: KafkaError | None, msg: Message) -> None:
        nonlocal last_ok
        if err is not None:
            report.failed.append(str(err))
            return
        now = time.monotonic()
        _gap(report, now - last_ok)
        last_ok = now
        key, seq = msg.value().decode().split(":")
        report.acked.append(Delivery(key, int(seq), msg.partition(), msg.offset()))

    extra: dict[str, object] = {"delivery.timeout.ms": "120000"}
    if trace_idempotence:
        extra |= idempotence_logger(report.idempotence)
    producer = durable_producer(conf, **extra)
    start = time.monotonic()
    for seq in range(first_seq, first_seq + count):
        if stop is not None and stop.is_set():
            break
        key = keys[seq % len(keys)]
        while True:
            try:
                producer.produce(topic, key=key, value=f"{key}:{seq}", on_delivery=on_delivery)
                break
            except BufferError:
                producer.poll(0.1)
        report.sent += 1
        producer.poll(0)
        if rate_per_s:
            # Pace the load so a fault lands in the middle of it. poll() returns as soon as it has
            # served a delivery report, so it is called again until the message's time has come, a
            # tenth of a second at most each time so that `stop` is seen: one long poll() with nothing
            # in flight once held a finished load (and its join) for five minutes.
            due = start + (seq - first_seq + 1) / rate_per_s
            while (ahead := due - time.monotonic()) > 0 and not (stop is not None and stop.is_set()):
                producer.poll(min(ahead, 0.1))
    remaining = producer.flush(180)
    assert remaining == 0, f"{remaining} messages still in flight after 180 s"
    return report


def produce_transactions(
    conf: dict[str, str],
    topic: str,
    count: int,
    keys: Iterable[str] = ("k0",),
    rate_per_s: float = 200,
    report: ProduceReport | None = None,
    stop: threading.Event | None = None,
    window_s: float = 0.1,
    trace_idempotence: bool = False,
    resend_for_s: float = 300,
) -> ProduceReport:
    """Send up to `count` messages 'key:seq' in short transactions (one per `window_s`); a message
    is acknowledged when its transaction commits. An aborted transaction is sent again with the
    same values and counted in `report.aborted`, for at most `resend_for_s` per transaction. Why
    transactions: the idempotent producer alone can store a value twice when a leader change makes
    librdkafka bump its epoch (confluentinc/librdkafka#4953); read_committed readers see each
    committed value once. `trace_idempotence` as in produce_sequence."""
    keys = list(keys)
    report = report if report is not None else ProduceReport()
    extra: dict[str, object] = {
        "transactional.id": f"kafkakit-test-{uuid.uuid4().hex[:8]}",
        "transaction.timeout.ms": "60000",
    }
    if trace_idempotence:
        extra |= idempotence_logger(report.idempotence)
    producer = durable_producer(conf, **extra)
    _retrying(lambda: producer.init_transactions(30), "init_transactions")
    start = last_ok = time.monotonic()
    seq = 0
    try:
        while seq < count and not (stop is not None and stop.is_set()):
            batch: list[tuple[str, int]] = []
            window_end = time.monotonic() + window_s
            while seq < count and time.monotonic() < window_end:
                batch.append((keys[seq % len(keys)], seq))
                seq += 1
                # Pace the load so a fault lands in the middle of it.
                ahead = start + seq / rate_per_s - time.monotonic()
                if ahead > 0:
                    time.sleep(ahead)
            report.sent += len(batch)
            give_up = time.monotonic() + resend_for_s
            while not _commit(producer, topic, batch, report.refused):
                report.aborted += 1
                if time.monotonic() > give_up:
                    report.failed.append(f"a transaction of {len(batch)} aborted for {resend_for_s:.0f} s")
                    return report
            now = time.monotonic()
            _gap(report, now - last_ok)
            last_ok = now
            report.acked.extend(Delivery(key, s, -1, -1) for key, s in batch)
    except KafkaException as e:  # fatal: the rest can never be committed
        report.failed.append(str(e.args[0]))
    return report


# Raised by produce() itself when the client's metadata lacks the topic for a moment; the topic
# is there, so the transaction is aborted and sent again, and the refusal kept in the report.
_UNKNOWN = {KafkaError._UNKNOWN_TOPIC, KafkaError._UNKNOWN_PARTITION}


def _commit(producer: Producer, topic: str, batch: list[tuple[str, int]], refused: list[str]) -> bool:
    """One transaction holding `batch`: True once committed, False when it had to be aborted."""
    try:
        producer.begin_transaction()
        for key, seq in batch:
            while True:
                try:
                    producer.produce(topic, key=key, value=f"{key}:{seq}")
                    break
                except BufferError:
                    producer.poll(0.1)
        _retrying(lambda: producer.commit_transaction(60), "commit_transaction")
        return True
    except KafkaException as e:
        if e.args[0].code() in _UNKNOWN:
            refused.append(f"{time.strftime('%H:%M:%S')} {e.args[0]}")
            producer.poll(1)  # give the metadata refresh a moment before sending again
        elif not e.args[0].txn_requires_abort():
            raise
    _retrying(lambda: producer.abort_transaction(60), "abort_transaction")
    return False


def _retrying(call: Callable[[], None], what: str, attempts: int = 10) -> None:
    """Repeat `call` while it fails with a retriable error (a coordinator moving in a roll)."""
    for attempt in range(attempts):
        try:
            call()
            return
        except KafkaException as e:
            if not e.args[0].retriable() or attempt == attempts - 1:
                raise
    raise AssertionError(f"{what} did not succeed")


def consumer(conf: dict[str, str], group: str | None = None, protocol: str = "classic", **extra: object) -> Consumer:
    """A group consumer; `protocol` is its group.protocol: classic, or consumer (KIP-848, Kafka 4+)."""
    settings = {
        **conf,
        "group.id": group or f"test-{uuid.uuid4().hex[:8]}",
        "auto.offset.reset": "earliest",
        "enable.auto.commit": "false",
    }
    if protocol == "classic":
        settings["session.timeout.ms"] = "10000"
    else:
        # KIP-848 members take their session timeout from the broker: librdkafka refuses the setting.
        settings["group.protocol"] = protocol
    return Consumer({**settings, **extra})


def consume(c: Consumer, expected: int, timeout: float = 60.0, distinct: bool = False) -> list[Message]:
    """Poll until `expected` messages (with `distinct`: distinct values) arrived or `timeout` passed."""
    got: list[Message] = []
    values: set[bytes | None] = set()
    deadline = time.monotonic() + timeout
    while (len(values) if distinct else len(got)) < expected and time.monotonic() < deadline:
        msg = c.poll(0.5)
        if msg is None:
            continue
        if msg.error():
            if msg.error().code() == KafkaError._PARTITION_EOF:
                continue
            raise AssertionError(f"consumer error: {msg.error()}")
        got.append(msg)
        values.add(msg.value())
    return got


def read_all(conf: dict[str, str], topic: str, expected: int, timeout: float = 60.0) -> list[Message]:
    """Every message of `topic` from the beginning, by an independent consumer: until `expected`
    distinct values were read, so a duplicate never stands in for a message not yet read. What an
    aborted transaction wrote is not a message: read_committed, said rather than left to the default."""
    c = consumer(conf, **{"isolation.level": "read_committed"})
    c.subscribe([topic])
    try:
        return consume(c, expected, timeout, distinct=True)
    finally:
        c.close()


def assign_at(c: Consumer, topic: str, partitions: int, offset: int) -> None:
    c.assign([TopicPartition(topic, p, offset) for p in range(partitions)])


def produce_one(conf: dict[str, str], topic: str) -> KafkaError | None:
    """The delivery error of one acks=all message, or None when it was written. Not idempotent,
    so a refusal is the topic's WRITE ACL and not the cluster's IDEMPOTENT_WRITE."""
    errors: list[KafkaError | None] = []
    p = Producer({**conf, "acks": "all", "message.timeout.ms": "10000"})
    p.produce(topic, value=b"probe", on_delivery=lambda err, msg: errors.append(err))
    p.flush(20)
    return errors[0] if errors else KafkaError(KafkaError._MSG_TIMED_OUT)


AUTHZ = {
    KafkaError.TOPIC_AUTHORIZATION_FAILED,
    KafkaError.GROUP_AUTHORIZATION_FAILED,
    KafkaError.CLUSTER_AUTHORIZATION_FAILED,
    KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
}


def denied(err: KafkaError | None) -> bool:
    return err is not None and err.code() in AUTHZ


def read_error(conf: dict[str, str], topic: str, group: str, protocol: str = "classic") -> KafkaError | None:
    """The first error a consumer in `group` meets reading `topic`, or None once it gets a record."""
    c = consumer(conf, group, protocol=protocol)
    c.subscribe([topic])
    try:
        for _ in range(40):
            msg = c.poll(0.5)
            if msg is None:
                continue
            return msg.error()  # None for a real record
        return KafkaError(KafkaError._TIMED_OUT)
    finally:
        c.close()
