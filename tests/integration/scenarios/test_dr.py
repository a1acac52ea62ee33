"""MirrorMaker 2 and the data centres under faults: an MM2 restart and a source broker restart lose
nothing, the lag check sees a stopped MM2 fall behind and catch up, and the DR drill
(ops/dr-drill.yml) skips nothing and brings dc1 back."""

from __future__ import annotations

import json
import threading
import time

from kafkakit.cluster.admin import wait_healthy
from kafkakit.mirror.lag import mirror_state
from tests.integration.accounting import account
from tests.integration.clients import ProduceReport, produce_sequence, read_all
from tests.integration.conftest import controller_id, fresh_admin, wait_until
from tests.integration.lab import ROOT
from tests.integration.mirror import REFRESH_S, SOURCE, flow_state, mm2_host, remote, split, topic_partitions
from tests.integration.playbooks import run_playbook


def test_mm2_restart_and_a_source_broker_restart_lose_nothing(
    lab, client_conf, dc2_conf, mirrored_topic, healthy_after
):
    topic = mirrored_topic(partitions=6)
    wait_until("mirrored topic", lambda: topic_partitions(dc2_conf, remote(topic)) == 6, 3 * REFRESH_S + 30)
    count = 6000
    report = ProduceReport()
    load = threading.Thread(
        target=produce_sequence,
        args=(client_conf, topic, count),
        kwargs={"keys": [f"k{i}" for i in range(6)], "rate_per_s": 200, "report": report},
    )
    load.start()
    wait_until("first third of the load", lambda: len(report.acked) >= count // 3, 120)
    mm2_host(lab).run_test("systemctl restart kafka-mirrormaker")
    wait_until("second third of the load", lambda: len(report.acked) >= 2 * count // 3, 120)
    # A broker that is not the controller, so the restart is about partition leadership only.
    controller = controller_id(client_conf)
    victim = next(b for b in lab.brokers(SOURCE) if b.broker_id != controller)
    lab.testinfra(victim).run_test("systemctl restart kafka")
    load.join(300)
    assert report.failed == [] and len(report.acked) == count

    got = read_all(dc2_conf, remote(topic), count, timeout=240)
    seqs = [int(m.value().decode().split(":")[1]) for m in got]
    missing = set(range(count)) - set(seqs)
    assert not missing, f"{len(missing)} messages lost across the restarts"
    account(
        f"{count} mirrored across an MM2 restart and a restart of broker {victim.broker_id}: "
        f"0 lost, {len(seqs) - len(set(seqs))} duplicates so far read"
    )


def test_the_lag_check_sees_a_stopped_mirrormaker_fall_behind_and_catch_up(lab, client_conf, dc2_conf, mirrored_topic):
    topic = mirrored_topic(partitions=3)
    wait_until("mirrored topic", lambda: topic_partitions(dc2_conf, remote(topic)) == 3, 3 * REFRESH_S + 30)
    host = mm2_host(lab)
    host.run_test("systemctl stop kafka-mirrormaker")
    try:
        assert produce_sequence(client_conf, topic, 900, keys=["a", "b", "c"]).failed == []
        src_bootstrap, admin_conf = split(client_conf)
        behind = mirror_state(SOURCE, src_bootstrap, split(dc2_conf)[0], admin_conf, [{"name": topic}], [])
        assert behind.error == ""
        assert behind.total_lag == 900, behind.as_dict()
    finally:
        host.run_test("systemctl start kafka-mirrormaker")
    caught_up = flow_state(client_conf, dc2_conf, topic, max_lag=0, wait_s=180)
    assert caught_up.ok(0), caught_up.as_dict()
    assert caught_up.total_lag == 0


def test_the_dr_drill_skips_nothing_and_brings_dc1_back(lab, client_conf):
    started = time.time()
    # The drill refuses to take a data centre down unless named (issue 16).
    run_playbook("ops/dr-drill.yml", "-e", f"dr_drill_confirm={SOURCE}")
    reports = [p for p in (ROOT / "build/dr-drill").glob("*.json") if p.stat().st_mtime >= started]
    assert len(reports) == 1, "the drill wrote no report"
    report = json.loads(reports[0].read_text())
    assert report["skipped"] == 0
    assert report["produced"] == 2000 and report["consumed_in_source"] == 700
    assert report["delivered_in_target"] >= 2000 - 700
    figures = ("produced", "consumed_in_source", "delivered_in_target", "skipped", "delivered_twice")
    timings = ("seconds_to_translate", "seconds_to_first_record")
    account(f"DR drill: {json.dumps({k: report[k] for k in figures + timings})}")
    # The playbook waited for dc1 to be whole again; check it independently.
    ids = [b.broker_id for b in lab.brokers(SOURCE)]
    health = wait_healthy(fresh_admin(client_conf), ids, timeout=60)
    assert health.healthy(ids), health.as_dict()
