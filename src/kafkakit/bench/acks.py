"""The failover scenario's producer: acks=all at a steady rate, each acknowledgement's time
kept, and the longest stretch without one."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping

from confluent_kafka import KafkaError, Message, Producer


def longest_ack_gap(acks: Iterable[float], start: float, end: float) -> float:
    """The longest stretch of [start, end] without an acknowledgement: from `start` (the fault)
    to the first ack, between consecutive acks, and from the last ack to `end`."""
    if end < start:
        raise ValueError(f"the window ends ({end}) before it starts ({start})")
    edges = [start, *sorted(t for t in acks if start <= t <= end), end]
    return max(b - a for a, b in zip(edges, edges[1:], strict=False))


class AckLog:
    """Delivery reports of one producer: the monotonic time of each ack, and the errors."""

    def __init__(self) -> None:
        self.acked: list[float] = []
        self.failed: list[str] = []

    def on_delivery(self, err: KafkaError | None, _msg: Message) -> None:
        # Runs in the producing thread, inside poll(); list.append is atomic under the GIL.
        if err is None:
            self.acked.append(time.monotonic())
        else:
            self.failed.append(str(err))

    def count_after(self, moment: float) -> int:
        return sum(1 for t in list(self.acked) if t > moment)


def produce_steadily(conf: Mapping[str, str], topic: str, rate: int, log: AckLog, stop: threading.Event) -> None:
    """Send `rate` records a second until `stop`, then wait for the outstanding ones. Idempotent
    acks=all: a send held up by the fault is retried, not lost, so it shows as a gap."""
    producer = Producer({**conf, "acks": "all", "enable.idempotence": "true", "linger.ms": "0"})
    interval = 1.0 / rate
    due = time.monotonic()
    sent = 0
    while not stop.is_set():
        producer.produce(topic, value=str(sent).encode(), on_delivery=log.on_delivery)
        sent += 1
        due += interval
        # poll() returns as soon as it has served a report, so wait out the rest of the interval.
        while (left := due - time.monotonic()) > 0:
            producer.poll(left)
    producer.flush(60)


class PartitionAcks:
    """Delivery reports of one producer writing numbered records over several partitions: each
    ack's time and partition, the numbers acknowledged, the errors, and how many were sent."""

    def __init__(self) -> None:
        self.acks: list[tuple[float, int]] = []
        self.numbers: list[int] = []
        self.failed: list[str] = []
        self.sent = 0

    def on_delivery(self, err: KafkaError | None, msg: Message) -> None:
        # Runs in the producing thread, inside poll(); list.append is atomic under the GIL.
        if err is None:
            self.acks.append((time.monotonic(), msg.partition()))
            self.numbers.append(int(msg.value()))
        else:
            self.failed.append(str(err))

    def times(self, partition: int | None = None) -> list[float]:
        """Ack times, of one partition or of all."""
        return [t for t, p in list(self.acks) if partition is None or p == partition]

    def count_after(self, moment: float, partition: int | None = None) -> int:
        return sum(1 for t in self.times(partition) if t > moment)


def produce_round_robin(
    conf: Mapping[str, str], topic: str, partitions: int, rate: int, log: PartitionAcks, stop: threading.Event
) -> None:
    """Send `rate` records a second, numbered 0, 1, ..., to partition n % `partitions` in turn,
    until `stop`; then wait for the outstanding ones. Idempotent acks=all, as produce_steadily."""
    producer = Producer({**conf, "acks": "all", "enable.idempotence": "true", "linger.ms": "0"})
    interval = 1.0 / rate
    due = time.monotonic()
    while not stop.is_set():
        n = log.sent
        producer.produce(topic, value=str(n).encode(), partition=n % partitions, on_delivery=log.on_delivery)
        log.sent = n + 1
        due += interval
        while (left := due - time.monotonic()) > 0:
            producer.poll(left)
    producer.flush(60)
