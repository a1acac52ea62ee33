"""The minor upgrade: dc2 (KRaft) from the previous Kafka 4.x minor release to the current one, under
load. Kafka 4.4's storage format is not forward-compatible, so the lab's dc2 (formatted by the current
release) cannot be rolled back to the previous one: dc2 is made again on it for this test (a new
cluster: storage and KRaft state removed, then site.yml), and the test's records from before are gone.

Then, while a transactional producer and a committing consumer group run on dc2 and MirrorMaker 2
mirrors a dc1 (ZooKeeper mode, 3.9) topic into it: the features step asked for too early, refused;
the controllers rolled (the active one last), then the brokers; the features step, metadata.version
read before and after; the binaries asked back to the previous release, refused before any node
restarts. dc2 ends on the current release as `make lab` left it, made again on it if the test fails
half-way."""

from __future__ import annotations

import re
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
import yaml
from confluent_kafka import KafkaError
from confluent_kafka.admin import NewTopic

from kafkakit.bench.nodes import CONTROLLER_CLIENT, TOOL_RUNNER
from kafkakit.cluster.admin import create_topics_retrying, delete_topics_retrying
from kafkakit.guards.upgrade import RELEASE_METADATA, finalized_metadata, release_line
from tests.integration.accounting import account, step
from tests.integration.clients import ProduceReport, consumer, produce_sequence
from tests.integration.conftest import wait_until
from tests.integration.lab import ROOT, Lab
from tests.integration.load import Load
from tests.integration.mirror import MIRROR_PREFIX, mm2_host, remote
from tests.integration.playbooks import playbook_process, restart_order, run_playbook
from tests.integration.quorum import controller_by_id, leader

PREVIOUS, CURRENT = "4.3.1", "4.4.0"  # Makefile: KAFKA_PREVIOUS, KAFKA_KRAFT_VERSION
DC = "dc2"
KRAFT_STATE = ROOT / f"build/lab/pki/kraft/{DC}.yml"
RELEASE_VARS = ROOT / "build/test-logs/upgrade-dc2-release.yml"
BROKER_DATA = "/var/lib/kafka/data"  # kafka_broker: kafka_data_dirs
CONTROLLER_DATA = "/var/lib/kafka-controller/metadata"  # kafka_controller: kafka_controller_metadata_dir
STORAGE_RECORD = "/etc/kafka/storage-formatted-by.json"  # kafka_common: kafka_storage_record
FEATURES = "org.apache.kafka.tools.FeatureCommand"


def running_versions(lab: Lab) -> dict[str, str]:
    """What each dc2 broker and controller logged as its version when it last started."""
    versions = {}
    nodes = [(b, "kafka") for b in lab.brokers(DC)] + [(c, "kafka-controller") for c in lab.controllers(DC)]
    for node, unit in nodes:
        found = re.findall(r"Kafka version: (\S+)", lab.journal_of_this_start(node, unit))
        versions[node.name] = found[-1] if found else "?"
    return versions


def metadata_version(lab: Lab) -> str:
    """dc2's finalized metadata.version, from kafka-features describe on a controller."""
    controllers = lab.controllers(DC)
    servers = ",".join(f"{c.ip}:9094" for c in controllers)
    out = lab.testinfra(controllers[0]).check_output(
        f"{TOOL_RUNNER} {FEATURES} --bootstrap-controller {servers} --command-config {CONTROLLER_CLIENT} describe"
    )
    return finalized_metadata(out)


def on_current(lab: Lab) -> bool:
    """Whether every dc2 node runs CURRENT and dc2 has finalized CURRENT's metadata.version."""
    try:
        return (
            set(running_versions(lab).values()) == {CURRENT}
            and metadata_version(lab) == RELEASE_METADATA[release_line(CURRENT)]
        )
    except Exception:  # noqa: BLE001 - a dc2 that cannot answer is not on CURRENT
        return False


def remake_dc2(lab: Lab, version: str) -> None:
    """dc2 made again on Kafka `version`: its brokers and controllers stopped, their storage, the
    storage records and the KRaft state removed, then site.yml deploys dc2 (a new cluster with the
    lab's users, ACLs, topics and quotas); MirrorMaker 2, whose internal topics were in dc2,
    restarted."""
    for node, unit, data in [(b, "kafka", BROKER_DATA) for b in lab.brokers(DC)] + [
        (c, "kafka-controller", CONTROLLER_DATA) for c in lab.controllers(DC)
    ]:
        host = lab.testinfra(node)
        host.run_expect([0], f"systemctl stop {unit}")
        host.run_expect([0], f"find {data} -mindepth 1 -delete && rm -f {STORAGE_RECORD}")
    KRAFT_STATE.unlink(missing_ok=True)
    # The release for dc2's nodes alone: an inventory source of host variables, which outrank the
    # inventory's group_vars/dc2.yml (an extra variable would give dc1 4.x too, refused).
    nodes = [n.name for n in lab.brokers(DC) + lab.controllers(DC)]
    RELEASE_VARS.write_text(yaml.safe_dump({"all": {"hosts": {n: {"kafka_version": version} for n in nodes}}}))
    run_playbook("site.yml", "--limit", f"{DC}:localhost", "-i", str(RELEASE_VARS))
    mm2_host(lab).run_expect([0], "systemctl restart kafka-mirrormaker")


@pytest.fixture
def dc2_on_previous(lab: Lab) -> Iterator[Lab]:
    """dc2 on PREVIOUS for the test; on CURRENT with CURRENT's metadata.version afterwards, whatever happened."""
    try:
        with step(f"dc2 made again on {PREVIOUS}"):
            remake_dc2(lab, PREVIOUS)
        yield lab
    finally:
        if not on_current(lab):
            with step(f"dc2 made again on {CURRENT} after a failure"):
                remake_dc2(lab, CURRENT)


@dataclass
class Mirrored:
    """A dc1 topic written at a steady rate (acks=all) and its MirrorMaker 2 copy in dc2 read as it
    arrives: when each value first arrived, and how many came twice (MirrorMaker 2 is at least once)."""

    source_conf: dict[str, str]
    target_conf: dict[str, str]
    topic: str = field(default_factory=lambda: f"{MIRROR_PREFIX}upgrade-{uuid.uuid4().hex[:8]}")
    report: ProduceReport = field(default_factory=ProduceReport)
    arrived: dict[str, float] = field(default_factory=dict)  # value -> time.monotonic() it first arrived
    twice: int = 0
    stop_producing: threading.Event = field(default_factory=threading.Event)
    stop_reading: threading.Event = field(default_factory=threading.Event)

    def start(self) -> None:
        # dc1 creates no topic on a producer's request: made here like the flow's other test topics.
        create_topics_retrying(self.source_conf, [NewTopic(self.topic, 3, 3)])
        self.threads = [threading.Thread(target=self.produce), threading.Thread(target=self.read)]
        for t in self.threads:
            t.start()

    def produce(self) -> None:
        produce_sequence(
            self.source_conf, self.topic, 10_000_000, rate_per_s=20, report=self.report, stop=self.stop_producing
        )

    def read(self) -> None:
        # A pattern subscription sees a new topic at the next metadata refresh (5 min by default).
        c = consumer(self.target_conf, **{"topic.metadata.refresh.interval.ms": "2000"})
        # MirrorMaker 2 creates the remote topic after its next topic refresh.
        c.subscribe([f"^{re.escape(remote(self.topic))}$"])
        try:
            while not self.stop_reading.is_set():
                msg = c.poll(0.5)
                if msg is None or (msg.error() and msg.error().code() == KafkaError._PARTITION_EOF):
                    continue
                if msg.error():
                    continue  # the remote topic is not there yet, or dc2 is rolling
                value = msg.value().decode()
                if value in self.arrived:
                    self.twice += 1
                else:
                    self.arrived[value] = time.monotonic()
        finally:
            c.close()

    def arrivals(self, start: float, end: float) -> int:
        return sum(1 for at in list(self.arrived.values()) if start <= at < end)

    def finish(self) -> str:
        self.stop_producing.set()
        self.threads[0].join(300)
        acked = {f"{d.key}:{d.seq}" for d in self.report.acked}
        wait_until("MirrorMaker 2 copied every dc1 record into dc2", lambda: acked <= self.arrived.keys(), 180)
        self.stop_reading.set()
        self.threads[1].join(60)
        assert self.report.failed == [] and len(acked) == self.report.sent > 0, self.report.failed[:3]
        delete_topics_retrying(self.source_conf, [self.topic])
        delete_topics_retrying(self.target_conf, [remote(self.topic)])
        return f"{self.report.sent} written to dc1, {len(acked)} acknowledged, all in dc2, {self.twice} twice"


def test_dc2_moves_to_the_next_minor_release_under_load(dc2_on_previous: Lab) -> None:
    lab = dc2_on_previous
    conf = lab.client_conf(DC)
    assert set(running_versions(lab).values()) == {PREVIOUS}
    before = metadata_version(lab)
    assert before == RELEASE_METADATA[release_line(PREVIOUS)], before

    mirror = Mirrored(lab.client_conf("dc1"), conf)
    mirror.start()
    load = Load(conf, f"upgrade-{uuid.uuid4().hex[:8]}", replication=2)
    load.events.append((time.monotonic(), "load started"))
    marks: dict[str, float] = {"start": time.monotonic()}
    try:
        wait_until("MirrorMaker 2 mirroring into dc2 before the upgrade", lambda: len(mirror.arrived) > 0, 120)

        # The features step before any node runs the new line: refused, metadata.version untouched.
        with step("the features step asked for too early, refused"):
            early = playbook_process("ops/upgrade.yml", "-e", f"roll_dc={DC}", "-e", "upgrade_step=features")
        assert early.returncode != 0, early.stdout[-2000:]
        assert "refusing the features step to" in early.stdout and "do not run Kafka" in early.stdout, early.stdout[
            -3000:
        ]
        assert metadata_version(lab) == before and set(running_versions(lab).values()) == {PREVIOUS}

        active = leader(lab, DC)
        assert active > 0, "no quorum leader before the upgrade"
        marks["roll"] = time.monotonic()
        with step(f"controllers, then brokers, {PREVIOUS} -> {CURRENT}"):
            roll = run_playbook("ops/upgrade.yml", "-e", f"roll_dc={DC}", "-e", "upgrade_step=roll")
        marks["rolled"] = time.monotonic()
        assert set(running_versions(lab).values()) == {CURRENT}
        assert metadata_version(lab) == before, "the roll alone moved metadata.version"
        assert sorted(restart_order(roll)) == sorted(b.name for b in lab.brokers(DC))
        assert sorted(restart_order(roll, "kafka-controller")) == sorted(c.name for c in lab.controllers(DC))
        # The active controller last: one leader change in the whole roll.
        assert restart_order(roll, "kafka-controller")[-1] == controller_by_id(lab, DC, active).name
        # Controllers before brokers: the first broker restart comes after the last controller's.
        banners = re.findall(r"^TASK \[roll : Restart (\S+) on \S+\]", roll, re.M)
        assert banners.index("kafka") > len(banners) - 1 - banners[::-1].index("kafka-controller")

        with step("the features step"):
            features = run_playbook("ops/upgrade.yml", "-e", f"roll_dc={DC}", "-e", "upgrade_step=features")
        marks["features"] = time.monotonic()
        after = metadata_version(lab)
        assert after == RELEASE_METADATA[release_line(CURRENT)] != before, after
        assert f"{DC} metadata.version {before} -> {after}" in features, features[-2000:]
        assert not restart_order(features) and not restart_order(features, "kafka-controller")

        # Back to the previous release: refused before any node restarts (its newest
        # metadata.version is below the one now finalized, and 4.4 formatted nothing it could read
        # anyway). The same playbook's run above is the control.
        with step(f"back to {PREVIOUS}, refused"):
            back = playbook_process("ops/upgrade.yml", "-e", f"roll_dc={DC}", "-e", f"kafka_version={PREVIOUS}")
        assert back.returncode != 0, back.stdout[-2000:]
        assert f"refusing to move the data centre to Kafka {PREVIOUS}" in back.stdout, back.stdout[-3000:]
        assert f"its metadata.version is {after}" in back.stdout, back.stdout[-3000:]
        assert not re.search(r"^TASK \[roll : Restart ", back.stdout, re.M), "a node restarted before the refusal"
        assert set(running_versions(lab).values()) == {CURRENT}
        marks["refused"] = time.monotonic()
        wait_until(
            "MirrorMaker 2 mirroring into dc2 after the upgrade",
            lambda: mirror.arrivals(marks["refused"], float("inf")) > 0,
            120,
        )
    except BaseException:
        for stop in (load.stop, load.reader.stop, mirror.stop_producing, mirror.stop_reading):
            stop.set()
        raise
    accounting = load.finish(f"dc2 {PREVIOUS} -> {CURRENT}")
    mirrored = mirror.finish()
    during = mirror.arrivals(marks["roll"], marks["rolled"])
    assert during > 0, "MirrorMaker 2 copied nothing into dc2 while it rolled"
    account(accounting)
    account(f"metadata.version {before} -> {after}")
    account(
        f"MirrorMaker 2 (dc1 -> dc2): {mirrored}; arrived before the roll "
        f"{mirror.arrivals(marks['start'], marks['roll'])}, during it {during}, after the features step "
        f"{mirror.arrivals(marks['features'], float('inf'))}"
    )
