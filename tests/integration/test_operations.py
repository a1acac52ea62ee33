"""Day-2 operations on the lab: the rolling restart, and dry runs that change nothing."""

from __future__ import annotations

import re
import threading
import time

from kafkakit.admin import cluster_health
from tests.integration.clients import ProduceReport, produce_sequence, read_all
from tests.integration.conftest import controller_id, fresh_admin
from tests.integration.test_idempotence import playbook_process, recap, run_playbook


def started_at(host) -> str:  # noqa: ANN001 - testinfra host
    return host.check_output("systemctl show -p ActiveEnterTimestampMonotonic --value kafka")


def restart_order(output: str) -> list[str]:
    """Hosts in the order the roll restarted them (from the task banners)."""
    return re.findall(r"(?:TASK|RUNNING HANDLER) \[kafka_broker : Restart kafka on (\S+)\]", output)


def test_the_roll_refuses_to_start_on_an_unhealthy_cluster(lab, client_conf, healthy_after):
    controller = controller_id(client_conf)
    victim = next(b for b in lab.brokers("dc1") if b.broker_id != controller)
    others = {b.name: lab.testinfra(b) for b in lab.brokers("dc1") if b.name != victim.name}
    before = {name: started_at(h) for name, h in others.items()}
    lab.testinfra(victim).run_test("systemctl stop kafka")
    try:
        deadline = time.monotonic() + 60
        while victim.broker_id in cluster_health(fresh_admin(client_conf)).brokers:
            assert time.monotonic() < deadline, "the stopped broker stayed registered"
            time.sleep(0.5)
        proc = playbook_process("rolling-restart.yml", "-e", "roll_dc=dc1")
        assert proc.returncode != 0, "the roll started on a cluster with a broker down"
        assert "refusing to roll dc1" in proc.stdout
        assert f"missing brokers [{victim.broker_id}]" in proc.stdout
        assert restart_order(proc.stdout) == []
        assert {name: started_at(h) for name, h in others.items()} == before, "a broker was restarted anyway"
    finally:
        lab.testinfra(victim).run_test("systemctl start kafka")


def test_the_roll_under_load_fails_no_send_and_restarts_the_controller_last(lab, client_conf, new_topic, healthy_after):
    topic = new_topic(partitions=6, replication_factor=3)
    controller = controller_id(client_conf)
    count = 12000
    report = ProduceReport()
    stop = threading.Event()
    load = threading.Thread(
        target=produce_sequence,
        args=(client_conf, topic, count),
        kwargs={"keys": [f"k{i}" for i in range(6)], "rate_per_s": 100, "report": report, "stop": stop},
    )
    load.start()
    began = time.monotonic()
    try:
        out = run_playbook("rolling-restart.yml", "-e", "roll_dc=dc1")
    finally:
        stop.set()
        load.join(300)
    rolled_s = time.monotonic() - began

    order = restart_order(out)
    assert sorted(order) == sorted(b.name for b in lab.brokers("dc1")), order
    assert order[-1] == lab.broker_by_id(controller).name, f"controller {controller} not last: {order}"
    assert report.failed == [], report.failed[:5]
    assert len(report.acked) == report.sent > 0
    got = read_all(client_conf, topic, report.sent, timeout=120)
    seen = {m.value().decode() for m in got}
    lost = {f"{d.key}:{d.seq}" for d in report.acked} - seen
    assert not lost, f"{len(lost)} acknowledged messages lost"
    print(
        f"\nrolling restart of dc1 ({' -> '.join(order)}) in {rolled_s:.0f}s under {report.sent} sends: "
        f"0 failed, 0 lost, longest gap without an ack {report.longest_gap_s:.2f}s"
    )


def test_check_mode_on_an_unchanged_lab_changes_nothing_and_fails_nothing():
    stats = recap(run_playbook("site.yml", "--check"))
    assert stats
    assert {h: s["changed"] for h, s in stats.items() if s["changed"]} == {}
    assert all(s["failed"] == 0 and s["unreachable"] == 0 for s in stats.values())
