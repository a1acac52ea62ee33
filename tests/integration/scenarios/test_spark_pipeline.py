"""The streaming pipeline (spark-jobs/pipeline.py) on the Spark cluster: exact event-time windows
across a stop and a restart from its checkpoint and a SIGKILLed worker. And the change data capture
job (spark-jobs/cdc.py) under steady commits with a worker SIGKILLed mid-batch: every committed row
in its output once."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterator

import pytest

from tests.integration.accounting import account, step
from tests.integration.cdc_lab import (
    TOPIC,
    Changes,
    RowWriter,
    connector_running,
    psql,
    superuser,
    topic_ends,
    wait_job_past,
)
from tests.integration.conftest import fresh_admin, wait_until
from tests.integration.lab import Host, Lab
from tests.integration.spark_lab import (
    BASE_MS,
    CdcJob,
    Event,
    Pipeline,
    SinkReader,
    SparkCluster,
    as_aggregates,
    events_in,
    expected_aggregates,
    produce,
)

SENSORS = ("s1", "s2", "s3")


@pytest.fixture
def pipeline(spark: SparkCluster, spark_topic: Callable[[], str]) -> Iterator[Pipeline]:
    run = Pipeline(spark, source=spark_topic(), sink=spark_topic())
    yield run
    run.remove()


class Scenario:
    """Events in phases whose outcome does not depend on how Spark cuts micro-batches.

    Window 10 s, watermark 30 s. Phase 1: windows 0-2 (the watermark stays below window 0's end);
    phase 2: windows 3-5 with one event at 59 s, so the watermark reaches 29 s and windows 0-1
    close. Late events then: window 2 (still open) counts, windows 0-1 (closed) are dropped.
    A final event at 200 s closes windows 2-5; its own window stays open and never appears.
    """

    def __init__(self, seed: int) -> None:
        rng = random.Random(seed)
        self.phase1 = events_in(range(0, 3), SENSORS, 20, rng)
        self.phase2 = events_in(range(3, 6), SENSORS, 20, rng)
        self.phase2.append(Event("max", "s1", BASE_MS + 59_000, 1))
        self.late_within = events_in([2], SENSORS, 7, rng)
        self.late_beyond = events_in([0, 1], SENSORS, 5, rng)
        self.closing = [Event("close", "flush", BASE_MS + 200_000, 0)]
        # Watermarks (max event time - 30 s) once phase 2, and then the closing event, are in.
        self.after_phase2 = BASE_MS + 29_000
        self.after_closing = BASE_MS + 170_000

    def expected(self) -> dict[tuple[int, str], tuple[int, int]]:
        return expected_aggregates(self.phase1 + self.phase2 + self.late_within)


def check_results(pipeline: Pipeline, sink: SinkReader, scenario: Scenario) -> None:
    expected = scenario.expected()
    # Parquet: exactly once, so exactly the expected rows, each once.
    rows = pipeline.dump()
    assert len(rows) == len(expected), sorted((r["window_start"], r["sensor"]) for r in rows)
    assert as_aggregates(rows) == expected
    # Kafka: at least once, so every expected row, and any repeat identical to it.
    sink.wait_for(set(expected))
    got = as_aggregates(sink.records)
    assert got == expected
    assert all(as_aggregates([r]).items() <= expected.items() for r in sink.records)


def executor_host(spark: SparkCluster, what: str) -> Host:
    """The worker the one running application's executor was placed on, once it is."""
    busy: list[dict] = []

    def placed() -> bool:
        busy[:] = [w for w in spark.alive_workers() if w["coresused"] > 0]
        return len(busy) == 1

    wait_until(what, placed, 120)
    return next(w for w in spark.workers if w.ip == busy[0]["host"])


@pytest.mark.faults
def test_pipeline_keeps_exact_windows_across_a_restart_and_a_killed_worker(
    spark: SparkCluster, pipeline: Pipeline, client_conf: dict[str, str]
) -> None:
    """One run through everything the pipeline promises: event-time windows with a watermark (late
    events inside it counted, beyond it dropped); a stop and a restart from the checkpoint (input
    that arrived while it was down picked up, the open windows' state restored); then a SIGKILLed
    worker (the driver carries on on the other one). Parquet exactly once, Kafka at least once."""
    scenario = Scenario(seed=7)
    sink = SinkReader(client_conf, fresh_admin(client_conf), pipeline.sink)
    pipeline.start()
    try:
        produce(client_conf, pipeline.source, scenario.phase1 + scenario.phase2)
        pipeline.wait_watermark(scenario.after_phase2)
        pipeline.stop()
        produce(client_conf, pipeline.source, scenario.late_within + scenario.late_beyond)
        pipeline.start()
        victim = executor_host(spark, "the restarted pipeline's executor")
        # SIGKILL to the worker daemon and its executor (one control group): a crashed machine's view.
        killed = spark.run("systemctl kill --signal=SIGKILL spark-worker", host=victim)
        assert killed.rc == 0, killed.stderr
        produce(client_conf, pipeline.source, scenario.closing)
        pipeline.wait_watermark(scenario.after_closing)
        assert pipeline.active(), "the driver did not survive the worker loss"
        pipeline.stop()
        check_results(pipeline, sink, scenario)
        # The dropped events really were late ones: without them the windows would differ.
        with_late = expected_aggregates(scenario.phase1 + scenario.phase2 + scenario.late_beyond)
        assert with_late != scenario.expected()
    finally:
        sink.close()
        spark.wait_workers_alive()


BURST = 20000  # rows in one transaction: a micro-batch that takes a while to apply


@pytest.mark.faults
def test_a_spark_worker_killed_mid_batch_loses_no_committed_change(lab: Lab, spark: SparkCluster) -> None:
    """spark-jobs/cdc.py under rows committed at a steady rate, and a burst committed in one
    transaction: once the topic holds the burst and no finished micro-batch has read it, the worker
    running the job's executor is SIGKILLed (daemon and executor). The driver carries on with an
    executor on the other worker; every committed row is in the topic once and in Spark's output once."""
    wait_until("orders-cdc and its task to run", connector_running, timeout=180)
    job = CdcJob(spark, TOPIC)
    writer = RowWriter()
    burst_tag = f"{writer.tag}-burst"
    changes = Changes.from_now(lab, writer.tag)
    try:
        job.start()
        writer.start()
        wait_until("rows flowing", lambda: len(writer.committed()) >= 50, timeout=60)
        with step("the job caught up with the topic"):
            wait_job_past(job, changes, timeout=600)
        victim = executor_host(spark, "the job's executor")
        rc, out = psql(
            f"INSERT INTO orders (customer, amount) SELECT '{burst_tag}', n FROM generate_series(1, {BURST}) AS n"
        )
        assert rc == 0, out
        burst = {int(i) for i in superuser(f"SELECT id FROM orders WHERE customer = '{burst_tag}'").split()}
        changes.wait_created(burst)
        ends = {tp.partition: tp.offset for tp in topic_ends(changes.consumer)}
        read = job.read_up_to()
        with step(f"{victim.name} SIGKILLed, until the job is past the burst"):
            killed = spark.run("systemctl kill --signal=SIGKILL spark-worker", host=victim)
            assert killed.rc == 0, killed.stderr
            in_flight = any(read.get(p, -1) < end for p, end in ends.items())
            settled = len(writer.committed())
            wait_until("rows after the kill", lambda: len(writer.committed()) >= settled + 50, timeout=60)
            ids = writer.stop() | burst
            changes.wait_created(ids)
            wait_job_past(job, changes, timeout=600)
        assert job.active(), "the driver did not survive the worker loss"
        job.stop()
        in_spark = Counter(row["id"] for row in job.dump() if row.get("customer") in (writer.tag, burst_tag))
    finally:
        changes.close()
        job.remove()
        spark.wait_workers_alive()
    in_kafka, duplicated = changes.created(ids)
    account(
        f"Spark worker {victim.name} SIGKILLed with the burst unread by any finished batch ({in_flight}):"
        f" rows committed {len(ids)}, in Kafka {len(in_kafka & ids)} (duplicated {duplicated}),"
        f" in Spark {len(set(in_spark) & ids)} (twice or more {sum(1 for n in in_spark.values() if n > 1)}),"
        f" missing in Kafka {len(ids - in_kafka)}, missing in Spark {len(ids - set(in_spark))}"
    )
    assert in_flight, f"the job had read past the burst before the kill: {read} >= {ends}"
    assert ids - in_kafka == set() and duplicated == 0
    assert set(in_spark) == ids and max(in_spark.values()) == 1
