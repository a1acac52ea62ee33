"""The lab's Spark cluster, driven as an operator would: jobs submitted on the master with the
command the spark role installs, the pipeline run as a transient systemd unit there, events
produced and results read with real Kafka clients."""

from __future__ import annotations

import json
import random
import shlex
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient

from kafkakit.cluster.spark_ui import bearer_token, ui_key
from tests.integration.clients import consumer, durable_producer
from tests.integration.lab import Host, Lab

SUBMIT = "/usr/local/bin/kafkakit-spark-submit"
JOBS = "/opt/spark-jobs"
KAFKA_CONFIG = "/etc/spark/kafka/client.properties"
SHARED = "/srv/spark"
TOPIC_PREFIX = "spark-"  # kafka_spark_topic_prefix: the topics the spark principal may use
WEBUI_PORT = 8080
WORKER_WEBUI_PORT = 8081


class SparkCluster:
    def __init__(self, lab: Lab, dc: str = "dc1") -> None:
        self.lab = lab
        self.master: Host = lab.members("spark_master", dc)[0]
        self.workers: list[Host] = lab.members("spark_worker", dc)

    def run(self, command: str, host: Host | None = None):  # noqa: ANN201 - testinfra CommandResult
        return self.lab.testinfra(host or self.master).run(command)

    def submit(self, job: str, *args: str, timeout: int = 600):  # noqa: ANN201
        """Run a job to completion on the cluster (driver on the master, client mode)."""
        argv = " ".join(shlex.quote(a) for a in args)
        return self.run(f"timeout {timeout} {SUBMIT} {JOBS}/{job} {argv}")

    @cached_property
    def ui_token(self) -> str:
        """A bearer token the web UIs accept: signed with the key derived from the RPC secret."""
        secret = self.run("cat /etc/spark/auth-secret").stdout.strip()
        assert secret, "no RPC secret on the master"
        return bearer_token(ui_key(secret))

    def ui_get(self, url: str, token: str | None = None) -> tuple[int, bytes]:
        """HTTP status and body of a UI page, with this bearer token (None: none sent)."""
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        try:
            with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10) as reply:
                return reply.status, reply.read()
        except urllib.error.HTTPError as err:
            return err.code, b""

    def status(self) -> dict:
        """The master's JSON status page: workers, their state and cores in use, applications."""
        code, body = self.ui_get(f"http://{self.master.ip}:{WEBUI_PORT}/json/", self.ui_token)
        assert code == 200, f"the master's UI answered {code}"
        return json.loads(body)

    def alive_workers(self) -> list[dict]:
        return [w for w in self.status()["workers"] if w["state"] == "ALIVE"]

    def wait_workers_alive(self, timeout: float = 120) -> None:
        want = {w.ip for w in self.workers}
        deadline = time.monotonic() + timeout
        while {w["host"] for w in self.alive_workers()} != want:
            assert time.monotonic() < deadline, f"workers not all ALIVE: {self.status()['workers']}"
            time.sleep(1)


class JobUnit:
    """A streaming job run as a transient systemd unit on the master (the driver outlives the SSH
    command and is stopped like a service), its files under SHARED/tests/<name>."""

    cluster: SparkCluster
    name: str
    JOB = ""

    @property
    def base(self) -> str:
        return f"{SHARED}/tests/{self.name}"

    def launch(self, args: list[str]) -> None:
        cmd = f"systemd-run --unit={self.name} --collect {SUBMIT} " + " ".join(shlex.quote(a) for a in args)
        result = self.cluster.run(cmd)
        assert result.rc == 0, result.stderr

    def active(self) -> bool:
        return self.cluster.run(f"systemctl is-active {self.name}").stdout.strip() in ("active", "activating")

    def journal(self, lines: int = 60) -> str:
        return self.cluster.run(f"journalctl -u {self.name} --no-pager -o cat -n {lines}").stdout

    def progress(self) -> list[dict]:
        """The driver's `progress` lines: one per finished micro-batch (and query)."""
        lines = self.journal(lines=5000).splitlines()
        return [json.loads(line[len("progress ") :]) for line in lines if line.startswith("progress ")]

    def stop(self) -> None:
        self.cluster.run(f"systemctl stop {self.name}")
        assert not self.active(), f"{self.name} still running"

    def dump(self) -> list[dict]:
        """The job's output rows, read with its `dump` command (a Spark batch job on the cluster)."""
        result = self.cluster.submit(self.JOB, "dump", "--output", f"{self.base}/out")
        assert result.rc == 0, result.stderr[-3000:]
        return [json.loads(line[4:]) for line in result.stdout.splitlines() if line.startswith("row ")]

    def remove(self) -> None:
        if self.active():
            self.stop()
        self.cluster.run(f"rm -rf {shlex.quote(self.base)}")


@dataclass
class Pipeline(JobUnit):
    """One run of spark-jobs/pipeline.py with its own topics, checkpoints and Parquet folder."""

    cluster: SparkCluster
    source: str
    sink: str
    name: str = field(default_factory=lambda: f"spark-pipeline-{uuid.uuid4().hex[:8]}")
    window: str = "10 seconds"
    watermark: str = "30 seconds"
    extra: tuple[str, ...] = ()  # spark-submit options
    job_args: tuple[str, ...] = ()  # more `pipeline.py run` options

    JOB = "pipeline.py"

    def start(self) -> None:
        args = [
            *self.extra,
            f"{JOBS}/pipeline.py",
            "run",
            "--kafka-config",
            KAFKA_CONFIG,
            "--source",
            self.source,
            "--sink",
            self.sink,
            "--output",
            f"{self.base}/out",
            "--checkpoints",
            f"{self.base}/checkpoints",
            "--window",
            self.window,
            "--watermark",
            self.watermark,
            *self.job_args,
        ]
        self.launch(args)

    QUERIES = ("aggregates-to-kafka", "aggregates-to-parquet")

    def watermarks(self) -> dict[str, int]:
        """Per query, the highest watermark (epoch ms) a finished micro-batch ran with: windows
        ending at or before it are emitted and committed."""
        out: dict[str, int] = {}
        for p in self.progress():
            if p.get("watermark"):
                ms = int(datetime.fromisoformat(p["watermark"]).timestamp() * 1000)
                out[p["query"]] = max(out.get(p["query"], 0), ms)
        return out

    def wait_watermark(self, at_least_ms: int, timeout: float = 300) -> None:
        """Until both queries have run a batch with a watermark of at least `at_least_ms`."""
        deadline = time.monotonic() + timeout
        while True:
            marks = self.watermarks()
            if all(marks.get(q, 0) >= at_least_ms for q in self.QUERIES):
                return
            assert self.active(), f"pipeline stopped:\n{self.journal()}"
            assert time.monotonic() < deadline, (
                f"watermarks {marks} < {at_least_ms} after {timeout} s:\n{self.journal()}"
            )
            time.sleep(2)


@dataclass
class CdcJob(JobUnit):
    """One run of spark-jobs/cdc.py on a connector's topic, with its own checkpoints and output, and
    its samples in the master's CDC metrics file (the spark role links it into the node exporter's
    textfile folder)."""

    cluster: SparkCluster
    source: str
    name: str = field(default_factory=lambda: f"spark-cdc-{uuid.uuid4().hex[:8]}")
    JOB = "cdc.py"
    METRICS_FILE = "/var/lib/spark-metrics/kafkakit-cdc.prom"  # the spark role's spark_metrics_file

    @property
    def output(self) -> str:
        return f"{self.base}/out"

    def start(self) -> None:
        args = [f"{JOBS}/cdc.py", "run", "--kafka-config", KAFKA_CONFIG, "--source", self.source]
        args += ["--output", self.output, "--checkpoints", f"{self.base}/checkpoints"]
        self.launch(args + ["--metrics-file", self.METRICS_FILE])

    def remove(self) -> None:
        super().remove()
        # Samples left behind would read as a stalled job (SparkCdcStalled). As the spark user, as
        # the drivers write the file; the other runs' samples stay.
        forget = ["forget", "--metrics-file", self.METRICS_FILE, "--source", self.source, "--output", self.output]
        done = self.cluster.run(
            f"cd {JOBS} && setpriv --reuid=spark --regid=spark --init-groups -- python3 -m kafkakit_jobs.cdc_metrics "
            + " ".join(shlex.quote(a) for a in forget)
        )
        assert done.rc == 0, done.stdout + done.stderr

    def read_up_to(self) -> dict[int, int]:
        """Partition -> the offset the last finished micro-batch read up to (its output has it)."""
        found: dict[int, int] = {}
        progress = self.progress()
        ends = progress[-1]["ends"] if progress else {}
        for offsets in ends.values():
            for partition, offset in (
                (json.loads(offsets) if isinstance(offsets, str) else offsets or {}).get(self.source, {}).items()
            ):
                found[int(partition)] = int(offset)
        return found


# --- events and the aggregates they must give --------------------------------------------------

WINDOW_MS = 10_000
WATERMARK_MS = 30_000
# Event time of the first window; aligned to the window size like Spark's tumbling windows.
BASE_MS = 1_700_000_000_000


@dataclass(frozen=True)
class Event:
    id: str
    sensor: str
    ts: int
    value: int

    def json(self) -> str:
        return json.dumps({"id": self.id, "sensor": self.sensor, "ts": self.ts, "value": self.value})


def events_in(windows: Iterable[int], sensors: Iterable[str], per_window: int, rng: random.Random) -> list[Event]:
    """`per_window` events per sensor in each window (index from BASE_MS), at random times inside it."""
    out = []
    for w in windows:
        for s in sensors:
            for _ in range(per_window):
                ts = BASE_MS + w * WINDOW_MS + rng.randrange(WINDOW_MS)
                out.append(Event(uuid.uuid4().hex, s, ts, rng.randrange(1, 100)))
    return out


def expected_aggregates(events: Iterable[Event]) -> dict[tuple[int, str], tuple[int, int]]:
    """(window_start, sensor) -> (count, sum), computed independently of the job."""
    out: dict[tuple[int, str], tuple[int, int]] = {}
    for e in events:
        start = e.ts - (e.ts - BASE_MS) % WINDOW_MS
        count, total = out.get((start, e.sensor), (0, 0))
        out[(start, e.sensor)] = (count + 1, total + e.value)
    return out


def as_aggregates(rows: Iterable[dict]) -> dict[tuple[int, str], tuple[int, int]]:
    return {(r["window_start"], r["sensor"]): (r["events"], r["total"]) for r in rows}


def produce(conf: dict[str, str], topic: str, events: Iterable[Event]) -> int:
    """Send and wait until every event is acknowledged (acks=all): Spark sees all or none of a phase."""
    producer = durable_producer(conf)
    sent = 0
    for e in events:
        while True:
            try:
                producer.produce(topic, key=e.sensor, value=e.json())
                break
            except BufferError:  # local queue full: let deliveries drain
                producer.poll(0.1)
        sent += 1
        producer.poll(0)
    assert producer.flush(120) == 0, "events still in flight"
    return sent


class SinkReader:
    """Reads the pipeline's Kafka sink from the beginning, keeping every record (duplicates too)."""

    def __init__(self, conf: dict[str, str], admin: AdminClient, topic: str) -> None:
        self.consumer: Consumer = consumer(conf)
        parts = admin.list_topics(topic=topic, timeout=10).topics[topic].partitions
        assert parts, f"{topic} has no partitions in the metadata"
        self.consumer.assign([TopicPartition(topic, p, 0) for p in parts])
        self.records: list[dict] = []

    def poll(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            msg = self.consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                self.records.append(json.loads(msg.value()))

    def wait_for(self, keys: set[tuple[int, str]], timeout: float = 60) -> None:
        """Until a record for each (window_start, sensor) in `keys` arrived; then a little longer
        so that repeats, if any, are read too."""
        deadline = time.monotonic() + timeout
        while not keys <= set(as_aggregates(self.records)):
            missing = sorted(keys - set(as_aggregates(self.records)))
            assert time.monotonic() < deadline, f"no aggregates for {missing} after {timeout} s"
            self.poll(1)
        self.poll(2)

    def close(self) -> None:
        self.consumer.close()
