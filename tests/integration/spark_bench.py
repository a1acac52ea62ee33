"""Events per second the streaming pipeline sustains on the lab's Spark cluster.

    python -m tests.integration.spark_bench [--events 200000] [--per-trigger 40000]

Produces a backlog of events to a fresh topic, runs spark-jobs/pipeline.py over it (both sinks,
Kafka and Parquet, as deployed) with at most --per-trigger events per micro-batch, and reports
events / second from the first to the last micro-batch that read input, per query and overall."""

from __future__ import annotations

import argparse
import random
import time
import uuid
from datetime import datetime

from confluent_kafka.admin import NewTopic

from kafkakit.cluster.admin import admin_client
from tests.integration.lab import Lab
from tests.integration.spark_lab import TOPIC_PREFIX, Pipeline, SparkCluster, events_in, produce


def measure(pipeline: Pipeline, events: int, timeout: float) -> dict[str, tuple[float, float, int]]:
    """Per query: (first batch start, last batch end, rows) once every query has read `events`."""
    deadline = time.monotonic() + timeout
    while True:
        spans: dict[str, tuple[float, float, int]] = {}
        for p in pipeline.progress():
            if p["rows"] == 0:
                continue
            start = datetime.fromisoformat(p["timestamp"]).timestamp()
            first, last, rows = spans.get(p["query"], (start, 0.0, 0))
            spans[p["query"]] = (min(first, start), max(last, start + p["ms"] / 1000), rows + p["rows"])
        if len(spans) == len(Pipeline.QUERIES) and all(r >= events for _, _, r in spans.values()):
            return spans
        assert pipeline.active(), pipeline.journal()
        assert time.monotonic() < deadline, f"not done after {timeout} s: {spans}"
        time.sleep(5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--per-trigger", type=int, default=40_000)
    parser.add_argument("--timeout", type=float, default=1200)
    args = parser.parse_args()

    lab = Lab()
    conf = lab.client_conf("dc1")
    admin = admin_client(conf.pop("bootstrap.servers"), dict(conf))
    conf = lab.client_conf("dc1")
    source, sink = (f"{TOPIC_PREFIX}bench-{uuid.uuid4().hex[:8]}-{kind}" for kind in ("in", "out"))
    for f in admin.create_topics([NewTopic(source, 3, 3), NewTopic(sink, 3, 3)]).values():
        f.result(timeout=30)
    pipeline = Pipeline(SparkCluster(lab), source, sink, job_args=("--max-offsets-per-trigger", str(args.per_trigger)))
    try:
        # 100 sensors, events spread over windows in time order, as a steady feed would be.
        rng = random.Random(1)
        per_window = 50
        windows = range(args.events // (100 * per_window))
        sent = produce(conf, source, events_in(windows, [f"s{i}" for i in range(100)], per_window, rng))
        print(f"bench: {sent} events in {source}; starting the pipeline")
        pipeline.start()
        spans = measure(pipeline, sent, args.timeout)
        for query, (first, last, rows) in sorted(spans.items()):
            print(f"bench: {query}: {rows} events in {last - first:.1f} s = {rows / (last - first):.0f} events/s")
        first = min(s[0] for s in spans.values())
        last = max(s[1] for s in spans.values())
        print(f"bench: pipeline (both sinks): {sent / (last - first):.0f} events/s sustained")
    finally:
        pipeline.remove()
        for f in admin.delete_topics([source, sink]).values():
            f.result(timeout=30)


if __name__ == "__main__":
    main()
