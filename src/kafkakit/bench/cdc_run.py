"""One run of the cdc case (kafkakit.bench.cdc) against the lab, ending in its result line:

    python -m kafkakit.bench.cdc_run --inventory build/lab/hosts.yml --client-dir build/lab --dc dc1 \\
        --rate 500 --seconds 60 --tag 1 [--no-spark] [--host-exec 'podman exec']

In order: a read_committed consumer on this machine from the topic's current end; the Spark CDC
job started on the data centre's Spark master and waited for until it has read the topic up to
there; the rows committed by one psql session on the database host, as the table's owner over
TLS (build/lab/<dc>/source-db.env, the password from its file, passed in psql's environment
only); every committed row waited for in Kafka, then in Spark's output; the job stopped and its
folder removed. The rows stay in the table, as an application's would. When the Spark part fails,
the run says why and reports the Kafka figures without it.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from confluent_kafka import Consumer, TopicPartition

from kafkakit.bench.cdc import (
    DEFAULT_RATE,
    DEFAULT_SECONDS,
    SPARK_TRIGGER,
    TOOL,
    TOPIC,
    Arrival,
    SparkBatches,
    cdc_figures,
    check_tag,
    checkpoint_command,
    count_sql,
    covered,
    insert_of,
    pacing,
    parse_checkpoint,
    writer_sql,
)
from kafkakit.bench.lab import members
from kafkakit.bench.nodes import HostRun, host_runner
from kafkakit.bench.parsers import format_scenario
from kafkakit.cluster.admin import read_client_conf

DRAIN_TIMEOUT = 120.0  # s after the last commit for every committed row to be read from Kafka
SPARK_START_TIMEOUT = 600.0  # s: the job's first batch reads the whole topic
SPARK_DRAIN_TIMEOUT = 300.0
SPARK_POLL = 2.0
POLL = 0.2
# What the spark role installs, and where the tests' runs of the job live beside the bench's.
SPARK_SUBMIT = "/usr/local/bin/kafkakit-spark-submit"
SPARK_JOB = "/opt/spark-jobs/cdc.py"
SPARK_KAFKA_CONFIG = "/etc/spark/kafka/client.properties"
SPARK_FOLDER = "/srv/spark/bench"
TIMESTAMP_TYPES = {0: "none", 1: "CreateTime", 2: "LogAppendTime"}


def say(message: str) -> None:
    # stdout: the bench keeps a run's output with its result in results.json.
    print(message, flush=True)


def member(inventory: Mapping[str, Any], group: str, dc: str) -> str:
    """The first host of `group` in data centre `dc`."""
    return members(inventory, group, dc)[0]


@dataclass(frozen=True)
class SourceDb:
    host: str  # its inventory name, which is the lab container's name
    address: str
    port: str
    name: str
    user: str
    password_file: Path

    def conninfo(self) -> str:
        return f"host={self.address} port={self.port} dbname={self.name} user={self.user} sslmode=require"


def source_db(client_dir: Path, dc: str, host: str) -> SourceDb:
    """From build/lab/<dc>/source-db.env, what ansible/lab/source-db.yml writes for people."""
    env = read_client_conf(client_dir / dc / "source-db.env")  # KEY=VALUE lines, # comments
    password = env.get("SOURCE_DB_PASSWORD_FILE") or str(client_dir / "secrets" / "source-db-owner")
    return SourceDb(host, env["SOURCE_DB_HOST"], env["SOURCE_DB_PORT"], env["SOURCE_DB_NAME"], env["SOURCE_DB_USER"],
                    Path(password))  # fmt: skip


def psql(db: SourceDb, host_exec: str, sql: str, timeout: float) -> str:
    """`sql` in one psql session on the database host. The password reaches psql through its
    environment only: the exec command's `--env PGPASSWORD` (podman and docker exec take the
    value from their own environment), never an argument or the output."""
    password = db.password_file.read_text().split()[0]  # the password lookup's file may add " salt=..."
    argv = ["psql", "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", db.conninfo(), "-c", sql]
    command = [*shlex.split(host_exec), "--env", "PGPASSWORD", db.host, *argv]
    env = {**os.environ, "PGPASSWORD": password}
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"psql on {db.host} exited {done.returncode}: {done.stderr[-1000:]}")
    return done.stdout


class Arrivals:
    """A read_committed consumer of the connector's topic from its current end, in a thread of
    its own, keeping each insert of the run with the wall-clock time it was received."""

    def __init__(self, conf: Mapping[str, str], tag: str, topic: str = TOPIC) -> None:
        self.tag = tag
        settings = {"group.id": f"bench-cdc-{tag}", "isolation.level": "read_committed", "enable.auto.commit": "false"}
        self.consumer = Consumer({**conf, **settings})
        partitions = self.consumer.list_topics(topic, timeout=20).topics[topic].partitions
        self.start_offsets = {
            p: self.consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=20)[1] for p in partitions
        }
        self.consumer.assign([TopicPartition(topic, p, o) for p, o in self.start_offsets.items()])
        self.arrivals: list[Arrival] = []
        self.timestamp_types: set[int] = set()
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._consume, daemon=True)
        self._thread.start()

    def _consume(self) -> None:
        try:
            while not self._stop.is_set():
                # One message per poll: a batch call waits for its count or its timeout, which
                # would delay the receive times of the first records of a batch.
                m = self.consumer.poll(POLL)
                if m is None or m.error() is not None:
                    continue
                received = time.time() * 1000
                change = insert_of(m.value(), self.tag)
                if change is not None:
                    kind, ts = m.timestamp()
                    self.timestamp_types.add(kind)
                    self.arrivals.append(Arrival(change, m.partition(), m.offset(), ts, received))
        except BaseException as exc:  # handed to the main thread, which reports it
            self.error = exc

    def distinct(self) -> int:
        if self.error is not None:
            raise RuntimeError(f"the consumer failed: {self.error}")
        return len({a.change.id for a in list(self.arrivals)})

    def ends(self) -> dict[int, int]:
        """Partition -> one past the last offset of the run's records: what Spark must read."""
        out: dict[int, int] = {}
        for a in list(self.arrivals):
            out[a.partition] = max(out.get(a.partition, 0), a.offset + 1)
        return out

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)
        self.consumer.close()


class SparkRun:
    """One run of spark-jobs/cdc.py as a transient systemd unit on the Spark master (as the tests
    run it), its output and checkpoints under SPARK_FOLDER/<unit>."""

    def __init__(self, run: HostRun, master: str, name: str) -> None:
        self.run, self.master, self.name = run, master, name
        self.base = f"{SPARK_FOLDER}/{name}"

    def start(self) -> None:
        job = [SPARK_SUBMIT, SPARK_JOB, "run", "--kafka-config", SPARK_KAFKA_CONFIG, "--source", TOPIC]
        job += ["--output", f"{self.base}/out", "--checkpoints", f"{self.base}/checkpoints", "--trigger", SPARK_TRIGGER]
        self.run(self.master, ["systemd-run", f"--unit={self.name}", "--collect", *job])

    def batches(self) -> SparkBatches:
        return parse_checkpoint(self.run(self.master, ["sh", "-c", checkpoint_command(f"{self.base}/checkpoints")]))

    def active(self) -> bool:
        try:
            state = self.run(self.master, ["systemctl", "is-active", self.name])
        except RuntimeError:  # is-active exits non-zero for a unit that is not running
            return False
        return state.strip() in ("active", "activating")

    def journal(self) -> str:
        return self.run(self.master, ["journalctl", "-u", self.name, "--no-pager", "-o", "cat", "-n", "30"])

    def started(self) -> bool:
        """Whether the driver has started its query (spark-jobs/cdc.py prints `cdc: started`)."""
        journal = f"journalctl -u {shlex.quote(self.name)} -o cat --no-pager | grep -q '^cdc: started'"
        try:
            self.run(self.master, ["sh", "-c", journal])
        except RuntimeError:
            return False
        return True

    def wait_covered(self, needed: Mapping[int, int], timeout: float, what: str) -> SparkBatches:
        """Until the job runs its query and its committed batches have read up to `needed` (an
        empty topic needs no batch, so the query's start is waited for as well)."""
        deadline = time.monotonic() + timeout
        while True:
            batches = self.batches()
            if covered(batches, needed) and self.started():
                return batches
            if not self.active():
                raise RuntimeError(f"the Spark job stopped before {what}:\n{self.journal()[-1500:]}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"the Spark job not past {what} within {timeout:.0f}s: needed {dict(needed)}")
            time.sleep(SPARK_POLL)

    def remove(self) -> None:
        """Best effort: a clean-up failure must not hide the run's result or its error."""
        for argv in (["systemctl", "stop", self.name], ["rm", "-rf", self.base]):
            try:
                self.run(self.master, argv)
            except RuntimeError as exc:
                say(f"Spark clean-up: {exc}")


def wait_rows(arrivals: Arrivals, committed: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while (n := arrivals.distinct()) < committed:
        if time.monotonic() > deadline:
            raise TimeoutError(f"{n} of the {committed} committed rows read from Kafka within {timeout:.0f}s")
        time.sleep(POLL)


def measure(args: argparse.Namespace) -> dict[str, float]:
    tag = check_tag(f"bench-cdc-{args.tag}")
    inventory = yaml.safe_load(args.inventory.read_text())
    db = source_db(args.client_dir, args.dc, member(inventory, "source_db", args.dc))
    plan = pacing(args.rate, args.seconds)
    hosts = host_runner(args.host_exec)
    spark = SparkRun(hosts, member(inventory, "spark_master", args.dc), tag) if args.spark else None
    batches: SparkBatches | None = None
    arrivals = Arrivals(read_client_conf(args.client_dir / args.dc / "client.conf"), tag)
    try:
        if spark is not None:
            try:
                spark.start()
                spark.wait_covered(arrivals.start_offsets, SPARK_START_TIMEOUT, "the topic's end before the run")
            except (RuntimeError, TimeoutError) as exc:
                say(f"Spark left out of this run: {exc}")
                spark.remove()
                spark = None
        say(f"{tag}: {plan.rows} rows, {plan.rows_per_transaction} a transaction every {plan.interval_s * 1000:.1f} ms")
        started = time.monotonic()
        psql(db, args.host_exec, writer_sql(plan, tag), timeout=3 * args.seconds + 120)
        say(f"{tag}: the writer ended after {time.monotonic() - started:.1f} s")
        committed = int(psql(db, args.host_exec, count_sql(tag), timeout=120).strip())
        wait_rows(arrivals, committed, DRAIN_TIMEOUT)
        if spark is not None:
            try:
                batches = spark.wait_covered(arrivals.ends(), SPARK_DRAIN_TIMEOUT, "the run's rows")
            except (RuntimeError, TimeoutError) as exc:
                say(f"Spark left out of this run: {exc}")
    finally:
        arrivals.stop()
        if spark is not None:
            spark.remove()
    say("record timestamps: " + ", ".join(sorted(TIMESTAMP_TYPES.get(t, str(t)) for t in arrivals.timestamp_types)))
    return cdc_figures(arrivals.arrivals, batches)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m kafkakit.bench.cdc_run", description=__doc__.split("\n\n")[0])
    p.add_argument("--inventory", type=Path, required=True, help="the lab inventory (build/lab/hosts.yml)")
    p.add_argument("--client-dir", type=Path, required=True, help="build/lab: <dc>/client.conf and source-db.env")
    p.add_argument("--dc", default="dc1", help="the connector's data centre (%(default)s)")
    p.add_argument("--rate", type=int, default=DEFAULT_RATE, help="rows committed per second (%(default)s)")
    p.add_argument("--seconds", type=int, default=DEFAULT_SECONDS, help="seconds of commits (%(default)s)")
    p.add_argument("--host-exec", default="podman exec", help="runs argv on a lab host: <this> <host> argv")
    p.add_argument("--tag", default="0", help="in the run's row tag and Spark unit name")
    p.add_argument("--no-spark", dest="spark", action="store_false", help="Kafka only, no Spark job")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    print(format_scenario(TOOL, measure(args)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
