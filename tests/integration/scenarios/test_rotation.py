"""The CA rotation (ops/rotate-ca.yml: promote, then retire, each rolled out one server at a time)
under a steady acks=all load: no failed send, nothing lost, new CA everywhere after. Through promote
the producer trusts only the old CA: the servers' new certificates reach it through the new CA's
cross certificate, which they present until retire."""

from __future__ import annotations

import re
import subprocess
import threading

from tests.integration.accounting import account
from tests.integration.clients import ProduceReport, produce_sequence, read_all
from tests.integration.lab import CLIENT_DIR, Lab
from tests.integration.playbooks import restart_order, run_playbook


def issuer_of(host) -> str:
    return host.check_output("openssl x509 -noout -issuer -in /etc/kafkakit/pki/host.crt")


def presented(ip: str, port: int) -> list[tuple[str, str]]:
    """(subject, issuer) of each certificate a server presents on `port`, its own first."""
    out = subprocess.run(
        ["openssl", "s_client", "-connect", f"{ip}:{port}", "-showcerts"],
        input="",
        capture_output=True,
        text=True,
        timeout=30,
    ).stdout
    return re.findall(r"^ *\d+ s:(.*)\n *i:(.*)$", out, re.M)


class Load:
    """A steady acks=all producer in the background, with its own report."""

    def __init__(self, conf: dict[str, str], topic: str, first_seq: int = 0) -> None:
        self.report, self.stop = ProduceReport(), threading.Event()
        self.thread = threading.Thread(
            target=produce_sequence,
            args=(conf, topic, 1_000_000),
            kwargs={"rate_per_s": 50, "report": self.report, "stop": self.stop, "first_seq": first_seq},
        )
        self.thread.start()

    def finish(self) -> ProduceReport:
        self.stop.set()
        self.thread.join(300)
        return self.report


def test_ca_rotation_under_load_loses_nothing(lab: Lab, client_conf, new_topic, healthy_after):
    hosts = [lab.testinfra(b) for b in lab.brokers("dc1")]
    before = {issuer_of(h) for h in hosts}
    assert len(before) == 1
    topic = new_topic(partitions=3)

    # Promote under a client that trusts only the old CA: the servers it meets present their new
    # certificates with the new CA cross-signed by the old one. Then, as an operator would, clients
    # restart with the new bundle (old + new CA) before retire takes the old CA away.
    first = Load(client_conf, topic)
    try:
        out_promote = run_playbook("ops/rotate-certificates.yml", "-e", "rotate_phase=promote")
        chain = presented(lab.brokers("dc1")[0].ip, 9093)
    finally:
        first_report = first.finish()
    bundle = (CLIENT_DIR / "pki" / "trusted.crt").read_text()
    assert bundle.count("BEGIN CERTIFICATE") == 2, "promote must keep the old CA beside the new one in the bundle"
    # The server's certificate, then the new CA that issued it, cross-signed by the old one.
    assert len(chain) == 2 and chain[1][0] == chain[0][1] and chain[1][1] != chain[1][0], chain

    second = Load(client_conf, topic, first_seq=1_000_000)
    try:
        # Without the phase's Spark smoke job: test_spark.py, next in the suite, submits the same
        # job against the rotated certificates (and it is the default of an operator's run).
        out_retire = run_playbook(
            "ops/rotate-certificates.yml", "-e", "rotate_phase=retire", "-e", "verify_spark_smoke=false"
        )
    finally:
        second_report = second.finish()

    acked = set()
    for report in (first_report, second_report):
        assert report.failed == [], report.failed[:5]
        assert len(report.acked) == report.sent > 200, f"sent {report.sent}, acked {len(report.acked)}"
        acked |= {d.seq for d in report.acked}
    got = read_all(client_conf, topic, len(acked), timeout=120)
    seen = {int(m.value().decode().split(":")[1]) for m in got}
    assert acked <= seen, f"{len(acked - seen)} acknowledged messages lost"

    after = {issuer_of(h) for h in hosts}
    assert len(after) == 1 and after != before, f"issuers before {before}, after {after}"
    # The old CA is gone from the bundle everyone trusts and from what the servers present, and
    # the verification reported days left.
    assert (CLIENT_DIR / "pki" / "trusted.crt").read_text().count("BEGIN CERTIFICATE") == 1
    assert len(presented(lab.brokers("dc1")[0].ip, 9093)) == 1
    for out in (out_promote, out_retire):
        assert "host certificate" in out and "days left" in out
    # Each phase changes every server's stores: each server of every component restarts exactly
    # once per phase, through the one roll (roles/roll). Spark's daemons hold no store (its jobs'
    # Kafka clients read the CA bundle when they start), so they do not restart.
    for out in (out_promote, out_retire):
        for unit, members in (
            ("zookeeper", [z.name for dc in ("dc1", "dc2") for z in lab.zookeepers(dc)]),
            ("kafka", [b.name for dc in ("dc1", "dc2") for b in lab.brokers(dc)]),
            # dc2 is KRaft: its controllers restart once each instead of a ZooKeeper ensemble there.
            ("kafka-controller", [c.name for dc in ("dc1", "dc2") for c in lab.controllers(dc)]),
            ("kafka-mirrormaker", lab.groups["mirrormaker"]),
        ):
            assert sorted(restart_order(out, unit)) == sorted(members), (unit, restart_order(out, unit))
    gap = max(first_report.longest_gap_s, second_report.longest_gap_s)
    account(
        f"CA rotation under load: sent {first_report.sent + second_report.sent}, acked {len(acked)}, "
        f"failed 0, lost 0, longest gap without an ack {gap:.2f}s"
    )
