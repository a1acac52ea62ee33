"""Real faults from the lab issue: a partition leader's broker is SIGKILLed under an acks=all
load; one ZooKeeper server goes down. Every message is counted."""

from __future__ import annotations

import threading
import time

import pytest

from tests.integration.clients import ProduceReport, produce_sequence, read_all
from tests.integration.conftest import leader_of


def test_sigkill_of_the_leader_elects_a_new_one_and_loses_nothing(lab, client_conf, new_topic, healthy_after):
    topic = new_topic(partitions=1, replication_factor=3)
    old_leader = leader_of(client_conf, topic)
    victim = lab.testinfra(lab.broker_by_id(old_leader))

    report = ProduceReport()
    load = threading.Thread(
        target=produce_sequence,
        args=(client_conf, topic, 3000),
        kwargs={"rate_per_s": 300, "report": report},
    )
    load.start()
    # The kill must land mid-stream: wait until a tenth of the load is acknowledged.
    while len(report.acked) < 300 and load.is_alive():
        time.sleep(0.05)
    victim.run_test("systemctl kill --signal=SIGKILL kafka")

    deadline = time.monotonic() + 60
    new_leader = old_leader
    while time.monotonic() < deadline and new_leader in (old_leader, -1):
        new_leader = leader_of(client_conf, topic)
        time.sleep(0.5)
    load.join(240)

    assert new_leader not in (old_leader, -1), "no new leader was elected"
    assert report.failed == [], report.failed[:5]
    acked = {d.seq for d in report.acked}
    assert len(acked) == 3000
    got = read_all(client_conf, topic, 3000, timeout=120)
    seen = [int(m.value().decode().split(":")[1]) for m in got]
    lost = acked - set(seen)
    assert not lost, f"{len(lost)} acknowledged messages lost"
    assert len(seen) == len(set(seen)), "idempotent producer wrote duplicates"
    print(f"\nleader {old_leader} -> {new_leader}; longest gap without an ack {report.longest_gap_s:.2f}s")


def zookeeper_mode(host) -> str:
    out = host.run("zookeeper-4lw srvr").stdout
    return next((line.split(": ")[1] for line in out.splitlines() if line.startswith("Mode: ")), "")


@pytest.fixture
def one_zookeeper_down(lab):
    zk = lab.testinfra(lab.zookeepers("dc1")[-1])
    zk.run_test("systemctl stop zookeeper")
    yield zk
    zk.run_test("systemctl start zookeeper")
    deadline = time.monotonic() + 120
    while zookeeper_mode(zk) not in ("leader", "follower") and time.monotonic() < deadline:
        time.sleep(1)


def test_the_ensemble_serves_with_one_zookeeper_down(
    lab, admin, client_conf, new_topic, one_zookeeper_down, healthy_after
):
    survivors = [lab.testinfra(z) for z in lab.zookeepers("dc1")[:-1]]
    # If the stopped server led, the other two elect a new leader first.
    deadline = time.monotonic() + 60
    while True:
        modes = sorted(zookeeper_mode(z) for z in survivors)
        if modes == ["follower", "leader"] or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert modes == ["follower", "leader"]
    # Topic creation goes through the controller to ZooKeeper: it needs a working quorum.
    topic = new_topic(partitions=3)
    report = produce_sequence(client_conf, topic, 300)
    assert report.failed == [] and len(report.acked) == 300
    assert len(read_all(client_conf, topic, 300)) == 300
