"""Day-2 operations on the lab: the roll's health gate and its order, read without a restart
(roll_check_only). The rolls themselves are scenarios (scenarios/test_faults.py: the brokers' under
load, ZooKeeper's with its leader last); dry runs are in test_idempotence.py."""

from __future__ import annotations

from kafkakit.cluster.admin import cluster_health, wait_healthy
from tests.integration.conftest import controller_id, fresh_admin, wait_until
from tests.integration.playbooks import playbook_process, restart_order, roll_report, run_playbook


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

    # Positive control: with every broker back and nothing under-replicated, the same roll passes
    # its gate and reports its order, every dc1 broker and the controller it read last (its health
    # gate alone: the roll itself is scenarios/test_faults.py::test_the_rolling_restart).
    ids = [b.broker_id for b in lab.brokers("dc1")]
    assert wait_healthy(fresh_admin(client_conf), ids, timeout=300).healthy(ids)
    output = run_playbook("ops/rolling-restart.yml", "-e", "roll_dc=dc1", "-e", "roll_check_only=true")
    hosts, leaders = roll_report(output)
    assert sorted(hosts) == sorted(b.name for b in lab.brokers("dc1")), hosts
    assert leaders == [hosts[-1]], f"the controller the roll read, {leaders}, not last: {hosts}"
    assert restart_order(output) == []
    assert {name: started_at(h) for name, h in others.items()} == before, "the check-only roll restarted a broker"
