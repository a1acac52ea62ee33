"""The fault matrix under load, with zero-loss accounting (tests/integration/faults.py): a
ZooKeeper leader SIGKILLed and back with diverged epochs, a broker host paused then stopped and
started, a KRaft controller host stopped and started, the rolling restart; and the ZooKeeper roll,
refused with a server down, then through with its leader last. The contract tier keeps
one SIGKILL per metadata mode (tests/integration/test_faults.py, test_kraft_quorum.py)."""

from __future__ import annotations

import subprocess
import time

import pytest

from tests.integration import quorum
from tests.integration.accounting import account
from tests.integration.clients import produce_sequence, read_all
from tests.integration.conftest import controller_id, leader_of, wait_until
from tests.integration.faults import (
    answers_itself,
    assert_clean,
    broker_back,
    leaders_of,
    run_scenario,
    zookeeper_mode,
)
from tests.integration.playbooks import playbook_process, restart_order, roll_leaders, run_playbook

pytestmark = pytest.mark.faults

# roles/zookeeper's zookeeper_data_dir (the lab keeps the default).
ZOOKEEPER_DATA_DIR = "/var/lib/zookeeper/data"
KRAFT_DC = quorum.KRAFT_DC


def test_sigkill_of_one_zookeeper_server_and_its_recovery_from_diverged_epochs(
    lab, client_conf, new_topic, healthy_after
):
    """The ensemble's leader is SIGKILLed; the ensemble serves on. The server then comes back with
    an accepted epoch ahead of the ensemble's (what a full disk left on the lab once): it never
    serves on its own, and ops/recover-zookeeper.yml resyncs it from the new leader, refusing a
    server that serves. All of it under the scenario's load."""

    def fault(_topic: str) -> None:
        # The ensemble's leader: the worst one to lose.
        hosts = {z.name: lab.testinfra(z) for z in lab.zookeepers("dc1")}
        name, leader = next((n, h) for n, h in hosts.items() if zookeeper_mode(h) == "leader")
        leader.run_test("systemctl kill --signal=SIGKILL zookeeper")
        # The two survivors elect a leader among themselves: exactly a leader and a follower.
        others = {n: h for n, h in hosts.items() if n != name}
        survivors = lambda: sorted(zookeeper_mode(h) for h in others.values()) == ["follower", "leader"]  # noqa: E731
        wait_until("new ZooKeeper leader", survivors, 60)
        # The ensemble serves with one server down: topic creation goes through the controller
        # to ZooKeeper (it needs a working quorum), and the new topic takes and serves records.
        topic = new_topic(partitions=3)
        report = produce_sequence(client_conf, topic, 300)
        assert report.failed == [] and len(report.acked) == 300, report.failed[:5]
        assert len(read_all(client_conf, topic, 300)) == 300

        # Back with diverged epoch files: it is refused by the new leader, again and again.
        leader.run_test("systemctl stop zookeeper")
        epoch_file = f"{ZOOKEEPER_DATA_DIR}/version-2/acceptedEpoch"
        epoch = int(leader.file(epoch_file).content_string.strip())
        leader.run_test(f"echo {epoch + 50} > {epoch_file}")
        since = leader.check_output("date +%s")
        leader.run_test("systemctl start zookeeper")
        refused = f"journalctl -u zookeeper --since=@{since} | grep -q 'is less than accepted epoch, {epoch + 50}'"
        wait_until("the new leader refusing the diverged server", lambda: leader.run(refused).rc == 0, 60)
        assert zookeeper_mode(leader) == ""

        # Refused for a server that serves (the control beside the recovery)...
        follower = next(n for n, h in others.items() if zookeeper_mode(h) == "follower")
        proc = playbook_process(
            "ops/recover-zookeeper.yml", "-e", f"recover_host={follower}", "-e", f"recover_confirm={follower}"
        )
        assert proc.returncode != 0 and f"{follower} serves (Mode: follower)" in proc.stdout, proc.stdout[-2000:]
        assert zookeeper_mode(hosts[follower]) == "follower"
        # ...and it brings the diverged one back, its old data set aside, not deleted: one more
        # set-aside directory than before (an earlier run on this lab may have left one).
        set_aside = f"find {ZOOKEEPER_DATA_DIR} -maxdepth 1 -type d -name 'version-2.diverged-*'"
        before = set(leader.check_output(set_aside).split())
        run_playbook("ops/recover-zookeeper.yml", "-e", f"recover_host={name}", "-e", f"recover_confirm={name}")
        assert zookeeper_mode(leader) in ("leader", "follower")
        added = set(leader.check_output(set_aside).split()) - before
        assert len(added) == 1, f"set aside by this recovery: {sorted(added)} (there before: {sorted(before)})"
        assert int(leader.file(epoch_file).content_string.strip()) < epoch + 50

    outcome = run_scenario("ZooKeeper leader SIGKILLed, back diverged, recovered", client_conf, fault)
    assert_clean(outcome)


def test_a_paused_broker_host_then_stopped_and_started(lab, client_conf, healthy_after):
    """A broker host paused (SIGSTOP) past its ZooKeeper session, then resumed; then the same host
    stopped and started (systemd boots it: storage unlock, ZooKeeper and Kafka on their own). The
    victim leads a partition of the topic under load and is not the controller. (One scenario for
    both host faults, which each took a scenario of their own.)"""

    def fault(topic: str) -> None:
        controller = controller_id(client_conf)
        partition, leader = next((p, b) for p, b in sorted(leaders_of(client_conf, topic).items()) if b != controller)
        victim = lab.broker_by_id(leader)
        subprocess.run(["podman", "pause", victim.name], check=True, capture_output=True)
        try:
            # Paused past its ZooKeeper session: the controller must fence it and move leadership.
            moved = lambda: leader_of(client_conf, topic, partition) not in (victim.broker_id, -1)  # noqa: E731
            wait_until("leadership moved off the paused host", moved)
        finally:
            subprocess.run(["podman", "unpause", victim.name], check=True, capture_output=True)
        wait_until("broker back", broker_back(client_conf, victim.broker_id), 180)

        subprocess.run(["podman", "stop", "-t", "120", victim.name], check=True, capture_output=True)
        wait_until("broker gone", lambda: not broker_back(client_conf, victim.broker_id)(), 60)
        subprocess.run(["podman", "start", victim.name], check=True, capture_output=True)
        wait_until("broker back", broker_back(client_conf, victim.broker_id), 300)

    outcome = run_scenario("broker host paused and resumed, then stopped and started", client_conf, fault)
    assert_clean(outcome)


def test_a_stopped_and_started_controller_host(lab, kraft_conf, quorum_after):
    def fault(_topic: str) -> None:
        victim = next(c for c in lab.controllers(KRAFT_DC) if c.controller_id != quorum.leader(lab, KRAFT_DC))
        subprocess.run(["podman", "stop", "-t", "120", victim.name], check=True, capture_output=True)
        try:
            # Two of three voters keep the quorum: it still has a leader while the host is down.
            wait_until("the voter behind", lambda: not quorum.quorum_whole(lab, KRAFT_DC), 60)
            assert quorum.leader(lab, KRAFT_DC) > 0
        finally:
            subprocess.run(["podman", "start", victim.name], check=True, capture_output=True)
        # systemd boots the host: the storage unlock and the controller come up on their own.
        wait_until("quorum whole", lambda: quorum.quorum_whole(lab, KRAFT_DC), 300)

    outcome = run_scenario(
        "KRaft controller host stopped and started", kraft_conf, fault, quorum.replicas(lab, KRAFT_DC)
    )
    assert_clean(outcome)


def test_the_rolling_restart(lab, client_conf, healthy_after):
    """ops/rolling-restart.yml under load: every dc1 broker restarted exactly once, the controller
    the roll read last; no failed send, nothing lost, nothing stored twice."""
    roll: dict = {}

    def fault(_topic: str) -> None:
        began = time.monotonic()
        roll["output"] = run_playbook("ops/rolling-restart.yml", "-e", "roll_dc=dc1")
        roll["seconds"] = time.monotonic() - began
        # Each broker back before the next, the last one included: it answers the moment the roll
        # returns (a check that read the other brokers' lagging metadata once let it end early).
        last = next(b for b in lab.brokers("dc1") if b.name == restart_order(roll["output"])[-1])
        roll["last_serving"] = answers_itself(client_conf, last.ip)

    outcome = run_scenario("rolling restart of dc1", client_conf, fault)
    order = restart_order(roll["output"])
    leaders = roll_leaders(roll["output"])
    account(f"rolling restart of dc1 ({' -> '.join(order)}, controller read: {leaders}) in {roll['seconds']:.0f} s")
    assert sorted(order) == sorted(b.name for b in lab.brokers("dc1")), order
    assert roll["last_serving"], f"{order[-1]}, restarted last, did not answer when the roll returned"
    # The controller as the roll read it: one read earlier may be stale by the roll's start.
    assert leaders == [order[-1]], f"the controller the roll read, {leaders}, not last: {order}"
    assert_clean(outcome)


def test_the_zookeeper_roll_refuses_an_incomplete_ensemble_and_otherwise_restarts_the_leader_last(lab):
    servers = {z.name: lab.testinfra(z) for z in lab.zookeepers("dc1")}
    roll = ("ops/rolling-restart.yml", "-e", "roll_dc=dc1", "-e", "restart_service=zookeeper")
    leader = next(name for name, host in servers.items() if zookeeper_mode(host) == "leader")
    follower = next(name for name in servers if name != leader)
    servers[follower].run_test("systemctl stop zookeeper")
    try:
        proc = playbook_process(*roll)
        assert proc.returncode != 0, "the roll started with a ZooKeeper server down"
        assert "refusing to roll zookeeper" in proc.stdout
        assert f"dc1: ZooKeeper servers not serving ['{follower}']" in proc.stdout
        assert restart_order(proc.stdout, "zookeeper") == []
    finally:
        servers[follower].run_test("systemctl start zookeeper")
        wait_until("server rejoined", lambda: zookeeper_mode(servers[follower]) in ("leader", "follower"))

    # Positive control: with every server serving, the same roll goes through, the leader last.
    began = time.monotonic()
    output = run_playbook(*roll)
    order = restart_order(output, "zookeeper")
    account(
        f"ZooKeeper roll of dc1 refused with {follower} down; then {' -> '.join(order)} "
        f"(leader read: {roll_leaders(output, 'zookeeper')}) in {time.monotonic() - began:.0f} s"
    )
    assert sorted(order) == sorted(servers), order
    # The leader as the roll read it (the plan parses each server's `srvr`): last, and one server.
    leaders = roll_leaders(output, "zookeeper")
    assert leaders == [order[-1]], f"the leader the roll read, {leaders}, not last: {order}"
    modes = sorted(zookeeper_mode(h) for h in servers.values())
    assert modes == ["follower", "follower", "leader"], modes
