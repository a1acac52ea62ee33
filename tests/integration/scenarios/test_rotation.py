"""The CA rotation as an operator runs it, under steady acks=all loads. ops/rotate-ca.yml promotes a
new CA and stops: a producer that trusts only the old CA (an application the kit does not manage)
sends throughout without a failure, the servers' new certificates reaching it through the new CA's
cross certificate. ops/retire-ca.yml is refused without the confirmation and before the soak, with
nothing changed; given both, it retires the old CA while a producer that trusts only the new CA
sends on without a failure, and the old-CA client's new connections are refused after it. A broker
older than its truststore (a run that failed between a new CA bundle and the roll) is restarted by
the next run, alone."""

from __future__ import annotations

import re
import shutil
import subprocess
import threading
from pathlib import Path

from confluent_kafka import KafkaError, Producer

from tests.integration import connect_lab
from tests.integration.accounting import account, step
from tests.integration.clients import ProduceReport, produce_sequence, read_all
from tests.integration.lab import CLIENT_DIR, Lab
from tests.integration.playbooks import playbook_process, recap, restart_order, run_playbook, run_site


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


def account_clean(what: str, report: ProduceReport) -> None:
    """The load's figures in the run's accounting; then none failed, every send acknowledged."""
    account(
        f"{what}: sent {report.sent}, acknowledged {len(report.acked)}, failed {len(report.failed)}, "
        f"longest gap without an ack {report.longest_gap_s:.2f} s"
    )
    assert report.failed == [], report.failed[:5]
    assert len(report.acked) == report.sent > 200


PKI = CLIENT_DIR / "pki"  # the lab's kafka_pki_ca_dir: the CA, and trusted.crt, the bundle clients read
# Retire confirmed, without the soak, and without the phase's Spark smoke job (the contract tier's
# test_spark.py submits it).
RETIRE_NOW = (
    "ops/retire-ca.yml",
    "-e",
    f"rotate_retire_confirm={PKI}",
    "-e",
    "rotate_soak_hours=0",
    "-e",
    "verify_spark_smoke=false",
)


def new_connection_refused(conf: dict[str, str], topic: str) -> KafkaError | None:
    """The error of one send from a new producer with `conf` (None when it is acknowledged)."""
    errors: list[KafkaError | None] = []
    producer = Producer({**conf, "acks": "all", "message.timeout.ms": "20000"})
    producer.produce(topic, b"probe", on_delivery=lambda err, _msg: errors.append(err))
    producer.flush(30)
    return errors[0] if errors else KafkaError(KafkaError._MSG_TIMED_OUT)


def retire_if_promoted() -> None:
    """What a failed rotation test leaves, undone: a promoted CA (old/ still there) is retired, so
    the lab trusts one CA again, as the next scenario expects."""
    if (PKI / "old" / "ca.crt").is_file():
        out = playbook_process(*RETIRE_NOW)
        account(f"clean-up after a failure: retire-ca.yml exit {out.returncode}")


def restart_failed_connect() -> None:
    """A connector or task a failed rotation left FAILED is restarted (Connect's onlyFailed restart),
    so the next scenario finds the pipeline running."""
    failed = connect_lab.failed_parts()
    if failed:
        out = playbook_process("ops/connect-restart-failed.yml", "-e", f"connect_dc={connect_lab.DC}")
        account(f"clean-up: {'; '.join(failed)}; connect-restart-failed.yml exit {out.returncode}")


def test_ca_rotation_keeps_unmanaged_clients_working_until_a_confirmed_retire(
    lab: Lab, client_conf, new_topic, healthy_after, tmp_path: Path
):
    hosts = [lab.testinfra(b) for b in lab.brokers("dc1")]
    before = {issuer_of(h) for h in hosts}
    assert len(before) == 1
    topic = new_topic(partitions=3)
    # The probes' own topic: the load's topic is read back and every record parsed as the load's.
    probes = new_topic(partitions=1)
    broker = lab.brokers("dc1")[0].ip
    # An application that trusts the CA it was given at its start, and keeps it.
    shutil.copy(PKI / "trusted.crt", tmp_path / "old-ca.crt")
    old_conf = {**client_conf, "ssl.ca.location": str(tmp_path / "old-ca.crt")}

    try:
        with step("promote (ops/rotate-ca.yml)"):
            old_client = Load(old_conf, topic)
            try:
                out_promote = run_playbook("ops/rotate-ca.yml")
                chain = presented(broker, 9093)
            finally:
                old_report = old_client.finish()
        account_clean("old-CA client through promote", old_report)
        assert "ops/retire-ca.yml -e rotate_retire_confirm=" in " ".join(out_promote.split()), out_promote[-2000:]
        assert (PKI / "trusted.crt").read_text().count("BEGIN CERTIFICATE") == 2, (
            "promote keeps the old CA beside the new"
        )
        # The server's certificate, then the new CA that issued it, cross-signed by the old one.
        assert len(chain) == 2 and chain[1][0] == chain[0][1] and chain[1][1] != chain[1][0], chain
        # The old CA still opens new connections after promote.
        assert new_connection_refused(old_conf, probes) is None

        # Retire refused without the confirmation, then before the soak: nothing changes either time.
        refused = playbook_process("ops/retire-ca.yml")
        assert refused.returncode != 0 and f"-e rotate_retire_confirm={PKI}" in " ".join(refused.stdout.split())
        soak = playbook_process("ops/retire-ca.yml", "-e", f"rotate_retire_confirm={PKI}")
        assert soak.returncode != 0 and "the soak is 168 h" in " ".join(soak.stdout.split()), soak.stdout[-2000:]
        assert (PKI / "old" / "ca.crt").is_file() and (PKI / "ca-cross.crt").is_file()
        assert len(presented(broker, 9093)) == 2, "a refused retire changed what the servers present"
        assert new_connection_refused(old_conf, probes) is None

        # An application given the new CA only, as the promote message says, sends through retire.
        shutil.copy(PKI / "ca.crt", tmp_path / "new-ca.crt")
        new_conf = {**client_conf, "ssl.ca.location": str(tmp_path / "new-ca.crt")}
        with step("retire (ops/retire-ca.yml, confirmed, soak 0 h)"):
            new_client = Load(new_conf, topic, first_seq=1_000_000)
            try:
                out_retire = run_playbook(*RETIRE_NOW)
            finally:
                new_report = new_client.finish()
        account_clean("new-CA client through retire", new_report)
        # Retire did retire: the old CA's new connections fail the handshake (the positive control
        # beside it is the new-CA client above).
        error = new_connection_refused(old_conf, probes)
        account(f"old-CA client after retire: a new connection gets {error}")
        assert error is not None

        acked = {d.seq for report in (old_report, new_report) for d in report.acked}
        got = read_all(client_conf, topic, len(acked), timeout=120)
        seen = {int(m.value().decode().split(":")[1]) for m in got}
        assert acked <= seen, f"{len(acked - seen)} acknowledged messages lost"

        after = {issuer_of(h) for h in hosts}
        assert len(after) == 1 and after != before, f"issuers before {before}, after {after}"
        # The old CA is gone from the bundle everyone trusts and from what the servers present, and
        # the verification reported days left.
        assert (PKI / "trusted.crt").read_text().count("BEGIN CERTIFICATE") == 1
        assert not (PKI / "old").exists() and not (PKI / "promoted-at").exists()
        assert len(presented(broker, 9093)) == 1
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
    finally:
        retire_if_promoted()
        restart_failed_connect()


def test_a_broker_older_than_its_truststore_is_restarted_alone(lab: Lab):
    stale, other = lab.brokers("dc2")[-1].name, lab.brokers("dc2")[0].name
    before = {name: lab.unit_started(name) for name in (stale, other)}
    # What a run that failed after installing a new CA bundle and before the roll leaves behind.
    lab.testinfra(stale).run_test("touch /etc/kafka/tls/truststore.pem")
    with step("site.yml on a broker older than its truststore and one that is not"):
        stats = recap(run_site("--limit", f"{stale},{other}"))
    assert all(stats[name]["failed"] == 0 for name in (stale, other))
    assert lab.unit_started(stale) != before[stale], "the broker older than its truststore was not restarted"
    # Positive control: the same run on a broker whose files are older than it restarts nothing.
    assert lab.unit_started(other) == before[other], "a broker with nothing newer than it was restarted"
    # And the restart left nothing stale behind: the next run changes nothing on either.
    with step("site.yml on both again"):
        again = recap(run_site("--limit", f"{stale},{other}"))
    changed = {name: again[name]["changed"] for name in (stale, other) if again[name]["changed"]}
    assert changed == {}, f"a run after the restart still changed something: {changed}"
