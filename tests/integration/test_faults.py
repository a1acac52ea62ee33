"""Fault injection with zero-loss accounting, after Kafka's own replication system tests.

Each scenario: an idempotent acks=all producer writes sequence-numbered messages at a steady rate
while the fault happens; afterwards an independent consumer reads the topic back. Reported: sent,
acknowledged, lost (acknowledged but never read: must be 0), duplicated, and the longest window
without a successful send. `pytest -m faults -s` runs the suite alone and prints the table.
"""

from __future__ import annotations

import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import NewTopic

from kafkakit.admin import cluster_health
from tests.integration.clients import ProduceReport, produce_sequence, read_all
from tests.integration.conftest import controller_id, fresh_admin, leader_of, wait_until
from tests.integration.test_failover import zookeeper_mode
from tests.integration.test_idempotence import run_playbook

pytestmark = pytest.mark.faults

RATE = 200
WARMUP = 600  # acknowledged messages before the fault lands


@dataclass
class Outcome:
    scenario: str
    sent: int
    acked: int
    lost: int
    duplicated: int
    longest_gap_s: float

    def row(self) -> str:
        return (
            f"| {self.scenario} | {self.sent} | {self.acked} | {self.lost} | {self.duplicated} "
            f"| {self.longest_gap_s:.2f} |"
        )


OUTCOMES: list[Outcome] = []


@pytest.fixture(scope="module", autouse=True)
def table() -> Iterator[None]:
    yield
    if OUTCOMES:
        print("\n| scenario | sent | acked | lost | duplicated | longest gap without an ack (s) |")
        print("| --- | --- | --- | --- | --- | --- |")
        for outcome in OUTCOMES:
            print(outcome.row())


def create_topic(conf: dict[str, str], topic: str) -> None:
    """Create the scenario's topic; retried while the previous fault's controller move settles."""
    deadline = time.monotonic() + 120
    while True:
        admin = fresh_admin(conf)
        try:
            admin.create_topics([NewTopic(topic, 6, 3)])[topic].result(timeout=30)
            return
        except KafkaException as exc:
            if exc.args[0].code() == KafkaError.TOPIC_ALREADY_EXISTS:
                return
            if not exc.args[0].retriable() and exc.args[0].code() != KafkaError.NOT_CONTROLLER:
                raise
            assert time.monotonic() < deadline, f"cannot create {topic}: {exc}"
            time.sleep(1)


def drop_topic(conf: dict[str, str], topic: str) -> None:
    """Clean-up, retried while a controller move settles."""
    deadline = time.monotonic() + 120
    while True:
        admin = fresh_admin(conf)
        try:
            admin.delete_topics([topic])[topic].result(timeout=30)
            return
        except KafkaException as exc:
            if exc.args[0].code() == KafkaError.UNKNOWN_TOPIC_OR_PART:
                return
            assert time.monotonic() < deadline, f"cannot delete {topic}: {exc}"
            time.sleep(1)


def run_scenario(name: str, conf: dict[str, str], fault: Callable[[str], None]) -> Outcome:
    topic = f"fault-{uuid.uuid4().hex[:8]}"
    create_topic(conf, topic)
    wait_until("leaders", lambda: leader_of(conf, topic) >= 0, 30)
    report = ProduceReport()
    stop = threading.Event()
    load = threading.Thread(
        target=produce_sequence,
        args=(conf, topic, 1_000_000),
        kwargs={"keys": [f"k{i}" for i in range(6)], "rate_per_s": RATE, "report": report, "stop": stop},
    )
    load.start()
    try:
        wait_until("warm-up", lambda: len(report.acked) >= WARMUP)
        fault(topic)
        # Keep writing for a while on the recovered cluster, so the recovery is under load too.
        settled = len(report.acked)
        wait_until("load after recovery", lambda: len(report.acked) >= settled + RATE * 5, 180)
    finally:
        stop.set()
        load.join(300)
    got = read_all(conf, topic, len(report.acked), timeout=180)
    seen = [m.value().decode() for m in got]
    acked = {f"{d.key}:{d.seq}" for d in report.acked}
    outcome = Outcome(
        scenario=name,
        sent=report.sent,
        acked=len(report.acked),
        lost=len(acked - set(seen)),
        duplicated=len(seen) - len(set(seen)),
        longest_gap_s=report.longest_gap_s,
    )
    OUTCOMES.append(outcome)
    drop_topic(conf, topic)
    return outcome


def broker_back(conf: dict[str, str], broker_id: int) -> Callable[[], bool]:
    return lambda: broker_id in cluster_health(fresh_admin(conf)).brokers


def test_sigkill_of_the_partition_leader_then_restart(lab, client_conf, healthy_after):
    def fault(topic: str) -> None:
        victim = lab.broker_by_id(leader_of(client_conf, topic))
        host = lab.testinfra(victim)
        host.run_test("systemctl kill --signal=SIGKILL kafka")
        wait_until("new leader", lambda: leader_of(client_conf, topic) not in (victim.broker_id, -1))
        host.run_test("systemctl restart kafka")
        wait_until("broker back", broker_back(client_conf, victim.broker_id), 180)

    outcome = run_scenario("leader SIGKILLed and restarted", client_conf, fault)
    assert outcome.lost == 0 and outcome.sent == outcome.acked


def test_sigkill_of_the_controller(lab, client_conf, healthy_after):
    def fault(_topic: str) -> None:
        old = controller_id(client_conf)
        host = lab.testinfra(lab.broker_by_id(old))
        host.run_test("systemctl kill --signal=SIGKILL kafka")
        wait_until("new controller", lambda: controller_id(client_conf) not in (old, -1))
        host.run_test("systemctl restart kafka")
        wait_until("broker back", broker_back(client_conf, old), 180)

    outcome = run_scenario("controller SIGKILLed and restarted", client_conf, fault)
    assert outcome.lost == 0 and outcome.sent == outcome.acked


def test_sigkill_of_one_zookeeper_server(lab, client_conf, healthy_after):
    def fault(_topic: str) -> None:
        # The ensemble's leader: the worst one to lose.
        hosts = [lab.testinfra(z) for z in lab.zookeepers("dc1")]
        leader = next(h for h in hosts if zookeeper_mode(h) == "leader")
        leader.run_test("systemctl kill --signal=SIGKILL zookeeper")
        others = [h for h in hosts if h is not leader]
        wait_until("new ZooKeeper leader", lambda: sorted(zookeeper_mode(h) for h in others) == ["follower", "leader"])
        leader.run_test("systemctl restart zookeeper")
        wait_until("server rejoined", lambda: zookeeper_mode(leader) in ("leader", "follower"))

    outcome = run_scenario("ZooKeeper leader SIGKILLed and restarted", client_conf, fault)
    assert outcome.lost == 0 and outcome.sent == outcome.acked


def test_a_paused_broker_host(lab, client_conf, healthy_after):
    def fault(topic: str) -> None:
        victim = lab.broker_by_id(leader_of(client_conf, topic))
        subprocess.run(["podman", "pause", victim.name], check=True, capture_output=True)
        try:
            # Paused past its ZooKeeper session: the controller must fence it and move leadership.
            moved = lambda: leader_of(client_conf, topic) != victim.broker_id  # noqa: E731
            wait_until("leadership moved off the paused host", moved)
        finally:
            subprocess.run(["podman", "unpause", victim.name], check=True, capture_output=True)
        wait_until("broker back", broker_back(client_conf, victim.broker_id), 180)

    outcome = run_scenario("broker host paused (SIGSTOP) and resumed", client_conf, fault)
    assert outcome.lost == 0 and outcome.sent == outcome.acked


def test_a_stopped_and_started_broker_host(lab, client_conf, healthy_after):
    def fault(_topic: str) -> None:
        victim = next(b for b in lab.brokers("dc1") if b.broker_id != controller_id(client_conf))
        subprocess.run(["podman", "stop", "-t", "120", victim.name], check=True, capture_output=True)
        wait_until("broker gone", lambda: not broker_back(client_conf, victim.broker_id)(), 60)
        subprocess.run(["podman", "start", victim.name], check=True, capture_output=True)
        # systemd boots the host: storage unlock, ZooKeeper and Kafka come up on their own.
        wait_until("broker back", broker_back(client_conf, victim.broker_id), 300)

    outcome = run_scenario("broker host container stopped and started", client_conf, fault)
    assert outcome.lost == 0 and outcome.sent == outcome.acked


def test_the_rolling_restart(client_conf, healthy_after):
    outcome = run_scenario(
        "rolling restart of dc1", client_conf, lambda _t: run_playbook("rolling-restart.yml", "-e", "roll_dc=dc1")
    )
    assert outcome.lost == 0 and outcome.sent == outcome.acked
