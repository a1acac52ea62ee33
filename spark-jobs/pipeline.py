"""Streaming pipeline: JSON events from a Kafka topic (SASL_SSL), counted and summed per sensor in
event-time tumbling windows with a watermark, written to a Kafka topic and to Parquet, each with
its own checkpoint. See README.md for the event format and each sink's delivery guarantee.

    kafkakit-spark-submit pipeline.py run --kafka-config ... --source spark-events \\
        --sink spark-aggregates --output /srv/spark/pipeline/out --checkpoints /srv/spark/pipeline/chk
    kafkakit-spark-submit pipeline.py dump --output /srv/spark/pipeline/out   # Parquet rows as JSON lines
"""

from __future__ import annotations

import argparse
import json
import sys

from kafkakit_jobs.kafka_config import spark_kafka_options
from kafkakit_jobs.session import run_command
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

# {"id": "e-1", "sensor": "s1", "ts": 1700000000123, "value": 5}: ts in epoch milliseconds.
# Event times Spark's timestamps hold (years 1 to 9999, UTC). Beyond them timestamp_millis or,
# with Spark 4's ANSI SQL mode, the window bounds overflow: an error that would fail the
# micro-batch again on every restart, so such events are skipped like those without a time.
MIN_TS_MS = -62_135_596_800_000
MAX_TS_MS = 253_402_300_799_999
EVENT_SCHEMA = T.StructType(
    [
        T.StructField("id", T.StringType()),
        T.StructField("sensor", T.StringType()),
        T.StructField("ts", T.LongType()),
        T.StructField("value", T.LongType()),
    ]
)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run the streaming queries until stopped")
    run.add_argument("--kafka-config", required=True, help="Kafka client .properties of the Spark principal")
    run.add_argument("--source", required=True, help="topic of JSON events")
    run.add_argument("--sink", required=True, help="topic of the window aggregates")
    run.add_argument("--output", required=True, help="Parquet folder (shared by driver and executors)")
    run.add_argument("--checkpoints", required=True, help="checkpoint folder (shared by driver and executors)")
    run.add_argument("--window", default="10 seconds")
    run.add_argument("--watermark", default="30 seconds", help="how late an event may be and still count")
    run.add_argument("--trigger", default="2 seconds", help="micro-batch interval")
    run.add_argument("--max-offsets-per-trigger", type=int, default=0, help="0: no limit")
    run.add_argument("--progress-interval", type=float, default=5.0, help="seconds between progress reports")
    dump = sub.add_parser("dump", help="print the Parquet sink's committed rows as JSON lines")
    dump.add_argument("--output", required=True)
    return parser.parse_args(argv)


def events(spark: SparkSession, args: argparse.Namespace, options: dict[str, str]) -> DataFrame:
    reader = (
        spark.readStream.format("kafka")
        .options(**options)
        .option("subscribe", args.source)
        .option("startingOffsets", "earliest")
        # Deleted input (retention) is a data loss the job must not hide.
        .option("failOnDataLoss", "true")
    )
    if args.max_offsets_per_trigger > 0:
        reader = reader.option("maxOffsetsPerTrigger", str(args.max_offsets_per_trigger))
    return parse_events(reader.load())


def parse_events(records: DataFrame) -> DataFrame:
    """Kafka records (binary `value`) as events with an `event_time`."""
    parsed = records.select(F.from_json(F.col("value").cast("string"), EVENT_SCHEMA).alias("e")).select("e.*")
    # Malformed events (no sensor, no time or a time out of range) cannot be placed in a window.
    return parsed.where(F.col("sensor").isNotNull() & F.col("ts").between(MIN_TS_MS, MAX_TS_MS)).withColumn(
        "event_time", F.expr("timestamp_millis(ts)")
    )


def aggregates(stream: DataFrame, window: str, watermark: str) -> DataFrame:
    """Append mode: a window is emitted once, when the watermark passes its end; events for a
    window that has already been closed are dropped.

    `total` is a 64-bit sum. Spark 4 runs with ANSI SQL mode (spark.sql.ansi.enabled=true): a window
    whose sum overflows fails the query with ARITHMETIC_OVERFLOW, where Spark 3 wrapped around to a
    wrong total; like failOnDataLoss, the job stops rather than emit a wrong result. try_sum would
    give null instead, but it adds a field to the window state, and checkpoints written by the
    Spark 3.5 job could no longer be resumed."""
    return (
        stream.withWatermark("event_time", watermark)
        .groupBy(F.window("event_time", window).alias("w"), F.col("sensor"))
        .agg(F.count(F.lit(1)).alias("events"), F.sum("value").alias("total"))
        .select(
            F.expr("unix_millis(w.start)").alias("window_start"),
            F.expr("unix_millis(w.end)").alias("window_end"),
            "sensor",
            "events",
            "total",
        )
    )


def run(spark: SparkSession, args: argparse.Namespace) -> None:
    options = spark_kafka_options(args.kafka_config)
    result = aggregates(events(spark, args, options), args.window, args.watermark)
    to_kafka = (
        result.select(
            F.concat_ws("|", "sensor", F.col("window_start").cast("string")).alias("key"),
            F.to_json(F.struct(*result.columns)).alias("value"),
        )
        .writeStream.queryName("aggregates-to-kafka")
        .format("kafka")
        .options(**options)
        .option("topic", args.sink)
        .option("checkpointLocation", f"{args.checkpoints}/kafka")
        .outputMode("append")
        .trigger(processingTime=args.trigger)
        .start()
    )
    to_parquet = (
        result.writeStream.queryName("aggregates-to-parquet")
        .format("parquet")
        .option("path", args.output)
        .option("checkpointLocation", f"{args.checkpoints}/parquet")
        .outputMode("append")
        .trigger(processingTime=args.trigger)
        .start()
    )
    print(f"pipeline: started {to_kafka.id} (kafka) and {to_parquet.id} (parquet)", flush=True)
    # Until stopped (SIGTERM) or a query fails: a failure raises here and ends the driver with an error.
    printed: dict[str, int] = {}
    while not spark.streams.awaitAnyTermination(args.progress_interval):
        for query in spark.streams.active:
            print_progress(query.name, query.recentProgress, printed)


def print_progress(name: str, progress: list[dict], printed: dict[str, int]) -> None:
    """One JSON line per finished micro-batch (for operators and the benchmark)."""
    for p in progress:
        if p["batchId"] > printed.get(name, -1):
            printed[name] = p["batchId"]
            line = {
                "query": name,
                "batch": p["batchId"],
                "timestamp": p["timestamp"],
                "rows": p["numInputRows"],
                "ms": p["durationMs"].get("triggerExecution", 0),
                "watermark": p.get("eventTime", {}).get("watermark"),
            }
            print(f"progress {json.dumps(line)}", flush=True)


def dump(spark: SparkSession, args: argparse.Namespace) -> None:
    # Reading the folder goes through the sink's _spark_metadata log: committed files only.
    # to_json rather than DataFrame.toJSON, whose return type PySpark 4 is changing.
    rows = spark.read.parquet(args.output)
    for (line,) in rows.select(F.to_json(F.struct(*rows.columns))).collect():
        print(f"row {line}")


def main(argv: list[str]) -> int:
    return run_command("kafkakit-pipeline", parse_args(argv), {"run": run, "dump": dump})


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
