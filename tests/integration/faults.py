"""Fault scenarios with zero-loss accounting, after Kafka's own replication system tests.

run_scenario(): a transactional acks=all producer writes sequence-numbered messages at a steady
rate on a fresh topic, one short transaction per 100 ms, while the fault happens; afterwards an
independent read_committed consumer reads the topic back. Reported (Outcome): sent, acknowledged
(committed), failed, lost (committed but never read), duplicated (a value stored at two offsets),
transactions aborted and sent again, and the longest window without a commit.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from confluent_kafka import KafkaError, KafkaException, Message, Producer
from confluent_kafka.admin import NewTopic

from kafkakit.cluster.admin import cluster_health, create_topics_retrying, delete_topics_retrying
from tests.integration.accounting import account
from tests.integration.clients import ProduceReport, produce_transactions, read_all
from tests.integration.conftest import controller_id, fresh_admin, leader_of, wait_until

RATE = 200
WARMUP = 600  # acknowledged messages before the fault lands


@dataclass
class Outcome:
    scenario: str
    sent: int
    acked: int
    failed: int
    lost: int
    duplicated: int
    longest_gap_s: float
    aborted: int = 0

    def line(self) -> str:
        return (
            f"{self.scenario}: sent {self.sent}, committed {self.acked}, failed {self.failed}, lost {self.lost}, "
            f"duplicated {self.duplicated}, aborted and resent {self.aborted}, "
            f"longest window without a commit {self.longest_gap_s:.2f} s"
        )


def assert_clean(outcome: Outcome) -> None:
    """What every scenario promises: every message committed, none lost, none stored twice."""
    assert outcome.failed == 0, outcome
    assert outcome.sent == outcome.acked, outcome
    assert outcome.lost == 0, outcome
    assert outcome.duplicated == 0, outcome


def run_scenario(
    name: str, conf: dict[str, str], fault: Callable[..., None], replicas: int = 3, with_report: bool = False
) -> Outcome:
    """The scenario's load on a fresh topic around `fault(topic)` (`fault(topic, report)` with
    `with_report`, for a fault that watches the load go on)."""
    topic = f"fault-{uuid.uuid4().hex[:8]}"
    # Retried with a fresh client: the previous scenario may have moved the controller.
    create_topics_retrying(conf, [NewTopic(topic, 6, replicas)])
    wait_until("leaders", lambda: leader_of(conf, topic) >= 0, 30)
    report = ProduceReport()
    stop = threading.Event()
    load = threading.Thread(
        target=produce_transactions,
        args=(conf, topic, 1_000_000),
        kwargs={"keys": [f"k{i}" for i in range(6)], "rate_per_s": RATE, "report": report, "stop": stop},
    )
    load.start()
    try:
        wait_until("warm-up", lambda: len(report.acked) >= WARMUP)
        fault(topic, report) if with_report else fault(topic)
        # Keep writing for a while on the recovered cluster, so the recovery is under load too.
        settled = len(report.acked)
        wait_until("load after recovery", lambda: len(report.acked) >= settled + RATE * 5, 180)
    finally:
        stop.set()
        load.join(300)
    got = read_all(conf, topic, len(report.acked), timeout=180)
    # One value per stored record (partition, offset): a record the reader was handed twice (its
    # group rejoined and started over) is not a duplicate; a value stored at two offsets is.
    stored = {(m.partition(), m.offset()): m.value().decode() for m in got}
    values = list(stored.values())
    acked = {f"{d.key}:{d.seq}" for d in report.acked}
    outcome = Outcome(
        scenario=name,
        sent=report.sent,
        acked=len(report.acked),
        failed=len(report.failed),
        lost=len(acked - set(values)),
        duplicated=len(values) - len(set(values)),
        longest_gap_s=report.longest_gap_s,
        aborted=report.aborted,
    )
    account(outcome.line())
    delete_topics_retrying(conf, [topic])
    return outcome


def broker_back(conf: dict[str, str], broker_id: int) -> Callable[[], bool]:
    return lambda: broker_id in cluster_health(fresh_admin(conf)).brokers


def zookeeper_mode(host) -> str:  # noqa: ANN001 - testinfra host
    """leader, follower or standalone from the server's `srvr` answer; "" while it does not serve."""
    out = host.run("zookeeper-4lw srvr").stdout
    return next((line.split(": ")[1] for line in out.splitlines() if line.startswith("Mode: ")), "")


def fill_one_broker(conf: dict[str, str], broker_id: int, topic: str, cap_bytes: int) -> int:
    """Write incompressible records to a new one-replica topic on `broker_id` until its writes
    fail (its disk is full and it stopped) or `cap_bytes` went out; the bytes acknowledged."""
    create_topics_retrying(conf, [NewTopic(topic, 1, replica_assignment=[[broker_id]])])
    wait_until("the fill topic's leader", lambda: leader_of(conf, topic) == broker_id, 30)
    producer = Producer(
        {
            **conf,
            "acks": "1",
            "linger.ms": "20",
            "batch.size": "1000000",
            "compression.type": "none",
            "message.timeout.ms": "20000",
            "queue.buffering.max.kbytes": "65536",
        }
    )
    chunk = os.urandom(480 * 1024)  # two per batch, under the topic's 1 MB record batch limit
    acked, failed, sent = [0], [], 0

    def done(err: KafkaError | None, _msg: Message) -> None:
        if err is None:
            acked[0] += len(chunk)
        else:
            failed.append(err)

    while not failed and sent < cap_bytes:
        try:
            producer.produce(topic, value=chunk, on_delivery=done)
            sent += len(chunk)
        except BufferError:
            producer.poll(0.1)
        producer.poll(0)
    producer.flush(60)
    return acked[0]


def leaders_of(client_conf: dict[str, str], topic: str) -> dict[int, int]:
    """Each partition's leader (-1 while it has none), from one metadata request."""
    meta = fresh_admin(client_conf).list_topics(topic=topic, timeout=10).topics.get(topic)
    return {} if meta is None else {p: found.leader for p, found in meta.partitions.items()}


def active_controller(client_conf: dict[str, str], what: str) -> int:
    """The active controller's id, once there is one (an election may be running)."""
    found = [-1]

    def read() -> bool:
        found[0] = controller_id(client_conf)
        return found[0] >= 0

    wait_until(what, read, 30)
    return found[0]


def answers_itself(client_conf: dict[str, str], ip: str) -> bool:
    """The broker at `ip` answers a metadata request itself (a client bootstrapped to it alone)."""
    port = client_conf["bootstrap.servers"].split(",")[0].rsplit(":", 1)[1]
    try:
        fresh_admin({**client_conf, "bootstrap.servers": f"{ip}:{port}"}).list_topics(timeout=5)
    except KafkaException:
        return False
    return True
