"""A load that accounts for every message through a scenario's steps: a transactional producer
(idempotent, acks=all; a message is acknowledged when its transaction commits) and a consumer
group that commits each message it reads (the migration and upgrade scenarios)."""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Protocol

from confluent_kafka import KafkaException
from confluent_kafka.admin import NewTopic

from kafkakit.cluster.admin import create_topics_retrying
from tests.integration.clients import ProduceReport, consumer, produce_transactions, read_all
from tests.integration.conftest import wait_until


class Steps(Protocol):
    def during(self, at: float) -> str:
        """The step and task running at `at` (time.time())."""
        ...


@dataclass
class GroupReader:
    """A consumer group member reading the load's committed transactions, committing each message
    once processed: after a roll it resumes from what it committed, so every redelivery is one
    whose commit failed."""

    conf: dict[str, str]
    topic: str
    group: str = field(default_factory=lambda: f"orders-load-{uuid.uuid4().hex[:6]}")
    seen: set[str] = field(default_factory=set)
    redelivered: int = 0
    failed_commits: int = 0
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        c = consumer(self.conf, self.group, **{"isolation.level": "read_committed"})
        c.subscribe([self.topic])
        try:
            while not self.stop.is_set():
                msg = c.poll(0.5)
                if msg is None or msg.error():
                    continue
                value = msg.value().decode()
                if value in self.seen:
                    self.redelivered += 1
                self.seen.add(value)
                try:
                    c.commit(message=msg, asynchronous=False)
                except KafkaException:
                    self.failed_commits += 1
        finally:
            c.close()


@dataclass
class Load:
    """The transactional producer and the group reader, both running through the steps. Why
    transactions: a plain idempotent producer stored one value twice across a broker roll of this
    test (2026-11-27: librdkafka bumped its epoch and re-sent an in-flight message, as in
    confluentinc/librdkafka#4953); a committed transaction is read once by read_committed readers."""

    conf: dict[str, str]
    topic: str
    events: list[tuple[float, str]] = field(default_factory=list)
    replication: int = 3
    report: ProduceReport = field(default_factory=ProduceReport)
    stop: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        create_topics_retrying(self.conf, [NewTopic(self.topic, 6, self.replication)])
        self.reader = GroupReader(self.conf, self.topic)
        self.threads = [threading.Thread(target=self.produce), threading.Thread(target=self.reader.run)]
        for t in self.threads:
            t.start()

    def produce(self) -> None:
        """The producer, its end (an exception or a fatal error included) noted among the steps' events."""
        try:
            produce_transactions(
                self.conf,
                self.topic,
                10_000_000,
                keys=["a", "b", "c"],
                rate_per_s=50,
                report=self.report,
                stop=self.stop,
                window_s=0.2,
                trace_idempotence=True,
            )
        except Exception as exc:
            self.events.append((time.monotonic(), f"the producer stopped: {exc!r}"))
            raise
        if self.report.failed:
            self.events.append((time.monotonic(), f"the producer stopped: {self.report.failed[-1]}"))
        else:
            self.events.append((time.monotonic(), "the producer stopped as asked"))

    def timeline(self) -> str:
        first = self.events[0][0] if self.events else 0.0
        return "\n".join(f"  +{t - first:6.0f} s  {what}" for t, what in sorted(self.events))

    def finish(self, what: str) -> str:
        """Stop the load; every acknowledged message is in the topic once and was read by the group."""
        self.stop.set()
        self.threads[0].join(300)
        stopped = [e for _, e in self.events if e.startswith("the producer stopped")]
        assert stopped == ["the producer stopped as asked"], (
            f"{what}: the producer failed\n{self.timeline()}\nproduce() refusals: {self.report.refused[-10:]}"
        )
        wait_until(
            "the group read every acknowledged message",
            lambda: {f"{d.key}:{d.seq}" for d in self.report.acked} <= self.reader.seen,
            120,
        )
        self.reader.stop.set()
        self.threads[1].join(60)
        r = self.report
        assert r.failed == [], f"{what}: sends failed: {r.failed[:5]}\n{self.timeline()}"
        assert len(r.acked) == r.sent > 0
        acked = {f"{d.key}:{d.seq}" for d in r.acked}
        messages = read_all(self.conf, self.topic, len(acked), timeout=180)
        values = [m.value().decode() for m in messages]
        assert not acked - set(values), f"{what}: {len(acked - set(values))} acknowledged messages lost"
        # Where each copy sits says who wrote it twice: the producer (two offsets, both in the log)
        # or the reader (the same partition and offset read again).
        copies: dict[str, list[tuple[int, int]]] = {}
        for m in messages:
            copies.setdefault(m.value().decode(), []).append((m.partition(), m.offset()))
        twice = {v: at for v, at in copies.items() if len(at) > 1}
        bumps = [line for line in r.idempotence if "epoch" in line.lower() or "DRAIN" in line]
        assert not twice, (
            f"{what}: duplicates (value: [(partition, offset)]): {dict(list(twice.items())[:10])}; "
            "the producer's epoch changes:\n" + "\n".join(bumps[-20:]) + f"\nsteps:\n{self.timeline()}"
        )
        # Resumed from committed offsets: a message came twice only when its commit had failed.
        assert self.reader.redelivered <= self.reader.failed_commits, (
            f"{what}: {self.reader.redelivered} redelivered, {self.reader.failed_commits} commits failed"
        )
        return (
            f"{what}: {r.sent} sent, {len(acked)} committed, 0 lost, 0 duplicated, longest window without "
            f"a commit {r.longest_gap_s:.2f} s, {r.aborted} transactions aborted and sent again "
            f"({len(r.refused)} at produce()), {len(bumps)} idempotence epoch events; group: "
            f"{len(self.reader.seen)} read, {self.reader.redelivered} redelivered after "
            f"{self.reader.failed_commits} failed commits"
        )

    def longest_window(self, checks: Steps) -> str:
        """When the longest window without a commit began, and what ran then."""
        began = self.report.longest_gap_end - self.report.longest_gap_s
        return f"began {time.strftime('%H:%M:%S', time.localtime(began))}, during {checks.during(began)}"
