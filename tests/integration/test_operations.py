"""Day-2 operations on the lab: the roll's health gate and order. The rolling restart under load is
a scenario (scenarios/test_faults.py::test_the_rolling_restart); dry runs are in test_idempotence.py."""

from __future__ import annotations

from kafkakit.cluster.admin import cluster_health
from tests.integration.conftest import controller_id, fresh_admin, wait_until
from tests.integration.faults import zookeeper_mode
from tests.integration.playbooks import playbook_process, restart_order, roll_leaders, run_playbook


def started_at(host) -> str:  # noqa: ANN001 - testinfra host
    return host.check_output("systemctl show -p ActiveEnterTimestampMonotonic --value kafka")


def test_the_roll_refuses_to_start_on_an_unhealthy_cluster(lab, client_conf, healthy_after):
    controller = controller_id(client_conf)
    victim = next(b for b in lab.brokers("dc1") if b.broker_id != controller)
    others = {b.name: lab.testinfra(b) for b in lab.brokers("dc1") if b.name != victim.name}
    before = {name: started_at(h) for name, h in others.items()}
    lab.testinfra(victim).run_test("systemctl stop kafka")
    try:
        wait_until(
            "the stopped broker deregistered",
            lambda: victim.broker_id not in cluster_health(fresh_admin(client_conf)).brokers,
            60,
        )
        proc = playbook_process("ops/rolling-restart.yml", "-e", "roll_dc=dc1")
        assert proc.returncode != 0, "the roll started on a cluster with a broker down"
        assert "refusing to roll kafka_broker" in proc.stdout
        assert f"dc1: missing brokers [{victim.broker_id}]" in proc.stdout
        assert "-e roll_allow_unhealthy=true" in proc.stdout
        assert restart_order(proc.stdout) == []
        assert {name: started_at(h) for name, h in others.items()} == before, "a broker was restarted anyway"
    finally:
        lab.testinfra(victim).run_test("systemctl start kafka")


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
    output = run_playbook(*roll)
    order = restart_order(output, "zookeeper")
    assert sorted(order) == sorted(servers), order
    # The leader as the roll read it (the plan parses each server's `srvr`): last, and one server.
    leaders = roll_leaders(output, "zookeeper")
    assert leaders == [order[-1]], f"the leader the roll read, {leaders}, not last: {order}"
    modes = sorted(zookeeper_mode(h) for h in servers.values())
    assert modes == ["follower", "follower", "leader"], modes
