"""End-to-end MirrorMaker 2 replication latency under a steady load: produce in the source, read
the mirrored copy in the target, and print percentiles of (arrival in target - creation in source).

MM2 keeps each record's CreateTime, so the latency is measured per record on one clock (this
machine). Also samples the flow's lag in records while the load runs.

    python -m kafkakit.mirror.latency --rate 500 --seconds 60      # against the lab (build/lab)
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
import uuid
from collections.abc import Mapping
from pathlib import Path

from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import NewTopic

from kafkakit.cluster.admin import admin_client, read_client_conf
from kafkakit.mirror.lag import mirror_state


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def measure(
    source: Mapping[str, str], target: Mapping[str, str], source_alias: str, prefix: str, rate: int, seconds: int
) -> dict[str, float]:
    topic = f"{prefix}latency-{uuid.uuid4().hex[:8]}"
    src_conf, tgt_conf = dict(source), dict(target)
    # The admin principal's settings without the bootstrap list, for the admin and lag clients.
    principal = {k: v for k, v in src_conf.items() if k != "bootstrap.servers"}
    admin = admin_client(src_conf["bootstrap.servers"], principal)
    admin.create_topics([NewTopic(topic, 6, 3)])[topic].result(timeout=30)
    remote = f"{source_alias}.{topic}"
    total = rate * seconds
    latencies: list[float] = []
    # Monotonic time of the last mirrored record's arrival: the end of the throughput window.
    last_arrival = [0.0]
    lags: list[int] = []
    done = threading.Event()

    def consume() -> None:
        c = Consumer({**tgt_conf, "group.id": f"latency-{uuid.uuid4().hex[:6]}", "auto.offset.reset": "earliest"})
        c.subscribe([remote])
        deadline = time.monotonic() + seconds + 180
        while len(latencies) < total and time.monotonic() < deadline:
            msg = c.poll(0.5)
            if msg is None or msg.error():
                continue
            latencies.append(time.time() * 1000 - msg.timestamp()[1])
            last_arrival[0] = time.monotonic()
        c.close()
        done.set()

    def sample_lag() -> None:
        while not done.is_set():
            state = mirror_state(
                source_alias,
                src_conf["bootstrap.servers"],
                tgt_conf["bootstrap.servers"],
                principal,
                [{"name": topic}],
                [],
            )
            if not state.error:
                lags.append(state.total_lag)
            done.wait(2)

    # The mirrored topic appears within MM2's refresh interval; the consumer waits for it.
    reader = threading.Thread(target=consume)
    reader.start()
    sampler = threading.Thread(target=sample_lag)
    sampler.start()
    producer = Producer({**src_conf, "acks": "all", "enable.idempotence": "true", "linger.ms": "5"})
    start = time.monotonic()
    for i in range(total):
        producer.produce(topic, key=str(i % 64), value=b"x" * 100)
        producer.poll(0)
        ahead = start + (i + 1) / rate - time.monotonic()
        if ahead > 0:
            producer.poll(ahead)
    producer.flush(60)
    reader.join()
    done.set()
    sampler.join()
    admin.delete_topics([topic])[topic].result(timeout=30)
    # The first records wait for MM2 to discover the topic; steady state is the second half.
    steady = latencies[len(latencies) // 2 :]
    return {
        "records": float(total),
        "received": float(len(latencies)),
        "p50_ms": statistics.median(steady) if steady else float("nan"),
        "p95_ms": percentile(steady, 0.95),
        "p99_ms": percentile(steady, 0.99),
        "max_ms": max(steady, default=float("nan")),
        "lag_max_records": float(max(lags, default=-1)),
        "lag_median_records": float(statistics.median(lags)) if lags else -1.0,
        # From the first record produced to the last one mirrored: MM2's topic discovery included.
        "span_s": max(0.0, last_arrival[0] - start) if latencies else float("nan"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--client-dir", type=Path, default=Path("build/lab"))
    parser.add_argument("--source", default="dc1")
    parser.add_argument("--target", default="dc2")
    parser.add_argument("--prefix", default="mirror-", help="a topic prefix the flow mirrors")
    parser.add_argument("--rate", type=int, default=500, help="records per second")
    parser.add_argument("--seconds", type=int, default=60)
    args = parser.parse_args()
    figures = measure(
        read_client_conf(args.client_dir / args.source / "client.conf"),
        read_client_conf(args.client_dir / args.target / "client.conf"),
        args.source,
        args.prefix,
        args.rate,
        args.seconds,
    )
    print(f"{args.source} -> {args.target} at {args.rate} rec/s for {args.seconds}s (100-byte records, acks=all):")
    for key, value in figures.items():
        print(f"  {key:20} {value:10.1f}")


if __name__ == "__main__":
    main()
