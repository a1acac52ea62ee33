"""Change data capture into Parquet: a Debezium topic (JSON converter, one change event per
committed row change, keyed by the row's primary key) applied per key in order, so that the
output holds each row as it is now in the database: an insert or update writes the row, a delete
removes it. See README.md for the guarantee.

    kafkakit-spark-submit cdc.py run --kafka-config ... --source shop.public.orders \\
        --output /srv/spark/cdc/orders --checkpoints /srv/spark/cdc/orders-checkpoint \\
        --metrics-file /var/lib/spark-metrics/kafkakit-cdc.prom
    kafkakit-spark-submit cdc.py dump --output /srv/spark/cdc/orders   # the current rows as JSON lines
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from kafkakit_jobs.cdc_metrics import MetricsFile
from kafkakit_jobs.kafka_config import spark_kafka_options
from kafkakit_jobs.session import run_command
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

# The envelope of Debezium's events through Connect's JsonConverter (schemas.enable=true): the row
# before and after the change as JSON, the operation (c, u, d, r for a snapshot read), the
# change's position in the database's log (source.lsn for PostgreSQL) and its commit time there
# (source.ts_ms; for a snapshot read, the snapshot's time).
ENVELOPE = T.StructType(
    [
        T.StructField(
            "payload",
            T.StructType(
                [
                    T.StructField("op", T.StringType()),
                    T.StructField("ts_ms", T.LongType()),
                    T.StructField(
                        "source",
                        T.StructType([T.StructField("lsn", T.LongType()), T.StructField("ts_ms", T.LongType())]),
                    ),
                ]
            ),
        )
    ]
)
# Each version of the table is a folder version=<batch id>; COMMITTED marks one written whole.
COMMITTED = "_COMMITTED"
KEEP_VERSIONS = 2


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="apply the changes until stopped")
    run.add_argument("--kafka-config", required=True, help="Kafka client .properties of the Spark principal")
    run.add_argument("--source", required=True, help="the connector's topic")
    run.add_argument("--output", required=True, help="Parquet folder of the current rows (shared)")
    run.add_argument("--checkpoints", required=True, help="checkpoint folder (shared)")
    run.add_argument("--trigger", default="2 seconds", help="micro-batch interval")
    run.add_argument(
        "--metrics-file",
        help="Prometheus text file of how far behind the database the output is, shared by the host's CDC jobs "
        "(the spark role's spark_metrics_dir/kafkakit-cdc.prom, linked into node exporter's textfile folder)",
    )
    dump = sub.add_parser("dump", help="print the current rows as JSON lines")
    dump.add_argument("--output", required=True)
    return parser.parse_args(argv)


def changes(records: DataFrame) -> DataFrame:
    """Kafka records as (key, op, lsn, source_ms, row, partition, offset), source_ms the change's
    commit time in the database; a tombstone (null value, written after a delete for compaction)
    is no change of its own."""
    events = records.where(F.col("value").isNotNull()).select(
        F.col("key").cast("string").alias("key"),
        F.col("value").cast("string").alias("value"),
        "partition",
        "offset",
    )
    parsed = events.withColumn("e", F.from_json("value", ENVELOPE))
    return parsed.select(
        "key",
        F.col("e.payload.op").alias("op"),
        F.col("e.payload.source.lsn").alias("lsn"),
        F.col("e.payload.source.ts_ms").alias("source_ms"),
        F.get_json_object("value", "$.payload.after").alias("row"),
        "partition",
        "offset",
    ).where(F.col("op").isin("c", "u", "d", "r"))


def latest_per_key(batch: DataFrame) -> DataFrame:
    """The last change of each key in the batch: a key's changes share one partition (the
    connector keys by primary key), so the highest offset is the latest."""
    last = Window.partitionBy("key").orderBy(F.col("offset").desc())
    return batch.withColumn("n", F.row_number().over(last)).where(F.col("n") == 1).drop("n")


def apply(current: DataFrame, latest: DataFrame) -> DataFrame:
    """current (key, row, lsn) with the batch's latest change per key applied. A change older than
    the row held (a lower lsn: a record delivered again) is ignored, so applying a batch twice, or
    an older duplicate after a newer change, leaves the same rows."""
    incoming = latest.select("key", "op", F.col("lsn").alias("in_lsn"), F.col("row").alias("in_row"))
    joined = current.join(incoming, "key", "full_outer")
    newer = F.col("in_lsn").isNotNull() & (F.col("lsn").isNull() | (F.col("in_lsn") >= F.col("lsn")))
    applied = joined.where(~(newer & (F.col("op") == "d"))).select(
        "key",
        F.when(newer, F.col("in_row")).otherwise(F.col("row")).alias("row"),
        F.when(newer, F.col("in_lsn")).otherwise(F.col("lsn")).alias("lsn"),
    )
    return applied.where(F.col("row").isNotNull())


def _fs(spark: SparkSession, path: str):  # noqa: ANN202 - a py4j Hadoop FileSystem
    jvm = spark.sparkContext._jvm  # noqa: SLF001 - Hadoop's FileSystem is reached through py4j
    hpath = jvm.org.apache.hadoop.fs.Path(path)
    return hpath.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()), jvm  # noqa: SLF001


def versions(spark: SparkSession, output: str) -> list[int]:
    """The batch ids of the versions written whole, oldest first."""
    fs, jvm = _fs(spark, output)
    root = jvm.org.apache.hadoop.fs.Path(output)
    if not fs.exists(root):
        return []
    found = []
    for status in fs.listStatus(root):
        name = status.getPath().getName()
        if name.startswith("version=") and fs.exists(jvm.org.apache.hadoop.fs.Path(status.getPath(), COMMITTED)):
            found.append(int(name.split("=", 1)[1]))
    return sorted(found)


EMPTY = T.StructType(
    [T.StructField("key", T.StringType()), T.StructField("row", T.StringType()), T.StructField("lsn", T.LongType())]
)


def current_rows(spark: SparkSession, output: str, before: int | None = None) -> DataFrame:
    """The newest version written whole (older than batch `before` when given)."""
    done = [v for v in versions(spark, output) if before is None or v < before]
    if not done:
        return spark.createDataFrame([], EMPTY)
    return spark.read.schema(EMPTY).parquet(f"{output}/version={done[-1]}")


def apply_batch(
    spark: SparkSession, output: str, batch: DataFrame, batch_id: int, metrics: MetricsFile | None = None
) -> None:
    """One micro-batch: the version before it, the batch applied, written as version=<batch id>.
    A batch Spark runs again after a failure rewrites the same version from the same input.
    With `metrics`, its file is written once the version is committed."""
    fs, jvm = _fs(spark, output)
    target = f"{output}/version={batch_id}"
    found = changes(batch)
    # The database commit times the batch spans (nulls when it had no change); a second read of
    # the batch, so only when asked for.
    span = found.agg(F.min("source_ms"), F.max("source_ms")).first() if metrics is not None else None
    result = apply(current_rows(spark, output, before=batch_id), latest_per_key(found))
    fs.delete(jvm.org.apache.hadoop.fs.Path(target, COMMITTED), False)
    result.write.mode("overwrite").parquet(target)
    fs.create(jvm.org.apache.hadoop.fs.Path(target, COMMITTED), True).close()
    if metrics is not None and span is not None:
        metrics.batch(time.time(), span[0], span[1])
    for old in versions(spark, output)[:-KEEP_VERSIONS]:
        fs.delete(jvm.org.apache.hadoop.fs.Path(f"{output}/version={old}"), True)


def run(spark: SparkSession, args: argparse.Namespace) -> None:
    options = spark_kafka_options(args.kafka_config)
    metrics = MetricsFile(args.metrics_file, args.source, args.output, time.time()) if args.metrics_file else None
    records = (
        spark.readStream.format("kafka")
        .options(**options)
        .option("subscribe", args.source)
        .option("startingOffsets", "earliest")
        # Only what the connector's transactions committed (it writes with exactly-once support).
        .option("kafka.isolation.level", "read_committed")
        .option("failOnDataLoss", "true")
        .load()
    )
    query = (
        records.writeStream.queryName("cdc-to-parquet")
        .foreachBatch(lambda batch, batch_id: apply_batch(spark, args.output, batch, batch_id, metrics))
        .option("checkpointLocation", args.checkpoints)
        .trigger(processingTime=args.trigger)
        .start()
    )
    print(f"cdc: started {query.id}", flush=True)
    last = -1
    while not query.awaitTermination(5):
        found = query.lastProgress
        # PySpark 4 answers a StreamingQueryProgress, whose JSON is the plain form.
        progress = json.loads(found.json) if hasattr(found, "json") else found
        if metrics is not None and progress:
            # Spark runs no batch while the topic has nothing new: an idle job is not a stalled one.
            status = query.status
            if not status["isDataAvailable"] and not status["isTriggerActive"]:
                metrics.idle(time.time())
        if progress and progress["batchId"] > last:
            last = progress["batchId"]
            # The offsets the batch read up to: what the output now reflects.
            ends = {s["description"]: s["endOffset"] for s in progress.get("sources", [])}
            line = {"batch": last, "rows": progress["numInputRows"], "timestamp": progress["timestamp"], "ends": ends}
            print(f"progress {json.dumps(line)}", flush=True)


def dump(spark: SparkSession, args: argparse.Namespace) -> None:
    for (line,) in current_rows(spark, args.output).select("row").collect():
        print(f"row {line}")


def main(argv: list[str]) -> int:
    return run_command("kafkakit-cdc", parse_args(argv), {"run": run, "dump": dump})


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
