"""A full data disk (KRaft dc2): the disk and under-replicated alerts fire, the other broker serves,
ops/recover-broker.yml refuses a healthy broker and brings the full one back, under load."""

from __future__ import annotations

import re
import time
import uuid

from kafkakit.cluster.admin import delete_topics_retrying
from tests.integration.accounting import account
from tests.integration.clients import ProduceReport
from tests.integration.conftest import wait_until
from tests.integration.faults import RATE, assert_clean, broker_back, fill_one_broker, run_scenario
from tests.integration.lab import Lab
from tests.integration.playbooks import playbook_process, run_playbook
from tests.integration.prometheus import Prometheus

# roles/kafka_broker's kafka_data_dirs (the lab keeps the default).
DATA_DIR = "/var/lib/kafka/data"


def test_a_full_data_disk_fires_its_alerts_the_other_broker_serves_and_the_recovery_brings_it_back(
    lab: Lab, prometheus: Prometheus
) -> None:
    """dc2 (KRaft, two brokers, min.insync.replicas 1), under a transactional acks=all load: a
    one-replica topic fills one broker's data volume until the broker stops. The disk and the
    under-replicated alerts fire, the other broker takes the whole load, the operator deletes the
    topic, the broker still cannot start, ops/recover-broker.yml refuses a healthy broker and frees
    and restarts this one, both alerts clear, and nothing acknowledged is lost (faults.py)."""
    dc = "dc2"
    conf = lab.client_conf(dc)
    other, victim = lab.brokers(dc)[0], lab.brokers(dc)[-1]
    host = lab.testinfra(victim)
    urp = f'kafka_server_replicamanager_underreplicatedpartitions{{dc="{dc}"}}'
    # Before the fault: the metric is scraped from every broker at 0 and both alerts are quiet, so
    # the firing below is this fault's and not one left over (nor an alert that cannot clear).
    quiet = lambda: (  # noqa: E731
        {r["metric"]["instance"]: float(r["value"][1]) for r in prometheus.query(urp)}
        == {b.name: 0.0 for b in lab.brokers(dc)}
        and not prometheus.firing("KafkaUnderReplicatedPartitions", dc=dc)
        and not prometheus.firing("KafkaDataDiskFull", instance=victim.name)
    )
    wait_until(f"{dc} scraped with no under-replicated partition and the alerts quiet", quiet, 300)
    fill = f"fill-{uuid.uuid4().hex[:8]}"
    times: dict[str, float] = {}

    def fault(_topic: str, report: ProduceReport) -> None:
        start = time.monotonic()
        filled = fill_one_broker(conf, victim.broker_id, fill, cap_bytes=4 * 2**30)
        wait_until(f"{victim.name} out of the cluster", lambda: not broker_back(conf, victim.broker_id)(), 120)
        times[f"filled {filled / 2**20:.0f} MiB, broker out"] = time.monotonic() - start
        # The last bytes: what a real fill leaves free is luck (a restart between two crashes can
        # squeeze in); the test leaves none, as Kafka's user, inside the fill topic's partition.
        host.run(f"runuser -u kafka -- dd if=/dev/zero of={DATA_DIR}/{fill}-0/top-off bs=1M")
        took = wait_until(
            "KafkaDataDiskFull firing", lambda: prometheus.firing("KafkaDataDiskFull", instance=victim.name), 240
        )
        times["disk alert firing"] = took
        wait_until(
            "KafkaUnderReplicatedPartitions firing",
            lambda: prometheus.firing("KafkaUnderReplicatedPartitions", dc=dc),
            120,
        )
        # The other broker keeps the load going alone.
        during = len(report.acked)
        wait_until("the load acknowledged while the broker is down", lambda: len(report.acked) >= during + RATE * 5, 60)
        # The operator deletes the topic that filled the disk; its data stays on the stopped broker,
        # which cannot start to remove it.
        delete_topics_retrying(conf, [fill])
        assert host.file(f"{DATA_DIR}/{fill}-0").is_directory
        assert not broker_back(conf, victim.broker_id)()
        # Refused for a broker that serves with room on its disk; the same run for the full one,
        # next, is the positive control.
        refused = playbook_process(
            "ops/recover-broker.yml", "-e", f"recover_host={other.name}", "-e", f"recover_confirm={other.name}"
        )
        assert refused.returncode != 0 and f"{other.name} serves and its data volume is" in refused.stdout, (
            refused.stdout[-2000:]
        )
        start = time.monotonic()
        out = run_playbook(
            "ops/recover-broker.yml", "-e", f"recover_host={victim.name}", "-e", f"recover_confirm={victim.name}"
        )
        times["recovery (playbook, broker back in every ISR)"] = time.monotonic() - start
        # Only the deleted topic and what Kafka itself dropped: a live partition in this list would
        # be re-replicated and pass unseen (once, every id with a '+' or '/' was on it).
        deleted = re.search(rf"deleted on {victim.name}: ([^;]*);", " ".join(out.split()))
        assert deleted, out[-3000:]
        names = deleted[1].split(", ")
        assert f"{fill}-0" in names and all(n == f"{fill}-0" or n.endswith(("-delete", "-stray")) for n in names), names
        assert not host.file(f"{DATA_DIR}/{fill}-0").exists and host.file(f"{DATA_DIR}/__cluster_metadata-0").exists
        assert broker_back(conf, victim.broker_id)()
        for alert, labels in (
            ("KafkaUnderReplicatedPartitions", {"dc": dc}),
            ("KafkaDataDiskFull", {"instance": victim.name}),
        ):
            times[f"{alert} cleared"] = wait_until(
                f"{alert} cleared", lambda a=alert, kv=labels: not prometheus.firing(a, **kv), 300
            )

    outcome = run_scenario(f"a full data disk on {victim.name}", conf, fault, replicas=2, with_report=True)
    assert_clean(outcome)
    for what, seconds in times.items():
        account(f"step {what}: {seconds:.0f} s")
