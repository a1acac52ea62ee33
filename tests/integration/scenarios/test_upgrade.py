"""The upgrade path: dc2 (KRaft) rolled from one Kafka 4.x patch release to the next under load:
controllers first (the active one last), then brokers, then the features step."""

from __future__ import annotations

import re
import threading
import uuid

from confluent_kafka.admin import NewTopic

from kafkakit.cluster.admin import create_topics_retrying, delete_topics_retrying
from tests.integration.accounting import account
from tests.integration.clients import ProduceReport, produce_sequence, read_all
from tests.integration.playbooks import restart_order, run_playbook
from tests.integration.quorum import controller_by_id, leader

PREVIOUS, CURRENT = "4.3.1", "4.4.0"  # Makefile: KAFKA_PREVIOUS, KAFKA_KRAFT_VERSION


def running_versions(lab) -> dict[str, str]:  # noqa: ANN001 - Lab
    """What each dc2 broker and controller logged as its version when it last started."""
    versions = {}
    nodes = [(b, "kafka") for b in lab.brokers("dc2")] + [(c, "kafka-controller") for c in lab.controllers("dc2")]
    for node, unit in nodes:
        host = lab.testinfra(node)
        since = host.check_output(f"systemctl show -p ActiveEnterTimestamp --value {unit}")
        log = host.check_output(f"journalctl -u {unit} --since '{since}' --no-pager -o cat")
        found = re.findall(r"Kafka version: (\S+)", log)
        versions[node.name] = found[-1] if found else "?"
    return versions


def test_dc2_rolls_from_the_previous_patch_release_to_the_current_one_under_load(lab):
    conf = lab.client_conf("dc2")
    run_playbook("ops/upgrade.yml", "-e", "roll_dc=dc2", "-e", f"kafka_version={PREVIOUS}")
    assert set(running_versions(lab).values()) == {PREVIOUS}

    # acks=all under the upgrade; dc2 holds RF 2 with min.insync.replicas 1.
    topic = f"upgrade-{uuid.uuid4().hex[:8]}"
    report = ProduceReport()
    stop = threading.Event()
    load = threading.Thread(
        target=produce_sequence,
        args=(conf, topic, 1_000_000),
        kwargs={"keys": ["a", "b", "c"], "rate_per_s": 100, "report": report, "stop": stop},
    )
    # The first ops/upgrade.yml run just rolled dc2: the controller may have moved.
    create_topics_retrying(conf, [NewTopic(topic, 3, 2)])
    active = leader(lab, "dc2")
    assert active > 0, "no quorum leader before the upgrade"
    load.start()
    try:
        out = run_playbook("ops/upgrade.yml", "-e", "roll_dc=dc2")  # the inventory's version
    finally:
        stop.set()
        load.join(300)

    assert set(running_versions(lab).values()) == {CURRENT}
    assert sorted(restart_order(out)) == sorted(b.name for b in lab.brokers("dc2"))
    assert sorted(restart_order(out, "kafka-controller")) == sorted(c.name for c in lab.controllers("dc2"))
    # The active controller last: one leader change in the whole roll.
    assert restart_order(out, "kafka-controller")[-1] == controller_by_id(lab, "dc2", active).name
    # Controllers before brokers: the first broker restart comes after the last controller's.
    banners = re.findall(r"^TASK \[roll : Restart (\S+) on \S+\]", out, re.M)
    assert banners.index("kafka") > len(banners) - 1 - banners[::-1].index("kafka-controller")
    assert re.search(r"TASK \[Upgrade the features to the new release line, dc2\]", out), "no features step"
    assert report.failed == [] and len(report.acked) == report.sent > 0
    got = {m.value().decode() for m in read_all(conf, topic, report.sent, timeout=120)}
    assert not {f"{d.key}:{d.seq}" for d in report.acked} - got, "acknowledged messages lost in the upgrade"
    # A fresh client per attempt: one made before the roll asked the old controller (NOT_CONTROLLER).
    delete_topics_retrying(conf, [topic])
    account(
        f"dc2 {PREVIOUS} -> {CURRENT}: {report.sent} sent during the roll, 0 failed, 0 lost, "
        f"longest gap {report.longest_gap_s:.2f}s"
    )
