"""The Spark cluster against the lab's Kafka: the smoke job, its ACLs, and the streaming
pipeline's results, restart and worker-loss behaviour (spark-jobs/, roles/spark)."""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator

import pytest

from kafkakit.acls import AclKey, to_binding, to_exact_filter
from kafkakit.spark_ui import bearer_token, ui_key
from tests.integration.conftest import fresh_admin, wait_until
from tests.integration.lab import Lab
from tests.integration.spark_lab import (
    BASE_MS,
    KAFKA_CONFIG,
    TOPIC_PREFIX,
    WEBUI_PORT,
    WORKER_WEBUI_PORT,
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


@pytest.fixture(scope="module")
def spark(lab: Lab) -> SparkCluster:
    cluster = SparkCluster(lab)
    cluster.wait_workers_alive()
    return cluster


@pytest.fixture
def spark_topic(new_topic: Callable[..., str]) -> Callable[[], str]:
    """Topics under the spark principal's prefix, deleted afterwards."""
    return lambda: new_topic(partitions=3, replication_factor=3, prefix=f"{TOPIC_PREFIX}test-")


@pytest.fixture
def pipeline(spark: SparkCluster, spark_topic: Callable[[], str]) -> Iterator[Pipeline]:
    run = Pipeline(spark, source=spark_topic(), sink=spark_topic())
    yield run
    run.remove()


def test_smoke_job_passes_on_the_cluster(spark: SparkCluster, spark_topic: Callable[[], str]) -> None:
    topic = spark_topic()
    result = spark.submit("smoke.py", "--kafka-config", KAFKA_CONFIG, "--topic", topic, "--records", "500")
    assert result.rc == 0, result.stderr[-3000:]
    assert "smoke: OK" in result.stdout
    # It ran on the cluster, not in local mode: the master saw the application finish.
    apps = [a["name"] for a in spark.status()["completedapps"]]
    assert any(name.startswith("kafkakit-smoke-") for name in apps), apps


def test_the_web_uis_answer_only_a_signed_token_on_the_private_address(spark: SparkCluster) -> None:
    # A token signed with another key: well formed, wrong signature.
    forged = bearer_token(ui_key("not-the-cluster-secret"))
    for node, port in [(spark.master, WEBUI_PORT)] + [(w, WORKER_WEBUI_PORT) for w in spark.workers]:
        url = f"http://{node.ip}:{port}/json/"
        # Positive control first: the UI is up and the kit's token opens it.
        assert spark.ui_get(url, spark.ui_token)[0] == 200, f"{node.name}: the signed token was refused"
        assert spark.ui_get(url)[0] == 403, f"{node.name}: answered without a token"
        assert spark.ui_get(url, forged)[0] == 403, f"{node.name}: answered a token signed with another key"
        # Bound to the private address only: the same port on loopback refuses the connection.
        probe = "python3 -c 'import socket,sys; socket.create_connection((sys.argv[1], {port}), 3)' {addr}"
        assert spark.run(probe.format(port=port, addr=node.ip), node).rc == 0, f"{node.name}: private address"
        assert spark.run(probe.format(port=port, addr="127.0.0.1"), node).rc != 0, f"{node.name}: UI on loopback"


# The spark principal's WRITE grant on its prefix, as kafka_spark_acls declares it.
WRITE_KEY = AclKey("User:spark", "topic", TOPIC_PREFIX, "prefixed", "WRITE", "ALLOW", "*")
WRITE_ACL = to_binding(WRITE_KEY)
WRITE_ACL_FILTER = to_exact_filter(WRITE_KEY)


def test_smoke_job_fails_without_its_acl(
    spark: SparkCluster, spark_topic: Callable[[], str], client_conf: dict[str, str]
) -> None:
    topic = spark_topic()
    admin = fresh_admin(client_conf)
    removed = admin.delete_acls([WRITE_ACL_FILTER])[WRITE_ACL_FILTER].result(timeout=30)
    assert removed, "the spark principal had no WRITE ACL on its prefix to remove"
    try:
        result = spark.submit("smoke.py", "--kafka-config", KAFKA_CONFIG, "--topic", topic, "--records", "10")
        assert result.rc != 0, "the smoke job passed although its principal may not write"
        # The broker refused the writes (not a crash for another reason).
        assert re.search(r"AuthorizationException|authorization failed|Not authorized", result.stderr), result.stderr[
            -3000:
        ]
    finally:
        admin.create_acls([WRITE_ACL])[WRITE_ACL].result(timeout=30)
    back = admin.describe_acls(WRITE_ACL_FILTER).result(timeout=30)
    assert back == [WRITE_ACL]


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
        busy: list[dict] = []

        def executor_placed() -> bool:
            busy[:] = [w for w in spark.alive_workers() if w["coresused"] > 0]
            return len(busy) == 1

        wait_until("the restarted pipeline's executor", executor_placed, 120)
        victim = next(w for w in spark.workers if w.ip == busy[0]["host"])
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
