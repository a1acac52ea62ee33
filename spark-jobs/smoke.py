"""Smoke job: write a run-unique batch through Spark's Kafka sink, read it back with a batch
query, and exit non-zero unless exactly that batch came back.

    kafkakit-spark-submit smoke.py --kafka-config /etc/spark/kafka/client.properties --topic spark-smoke
"""

from __future__ import annotations

import argparse
import sys
import uuid

from kafkakit_jobs.kafka_config import spark_kafka_options
from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--kafka-config", required=True, help="Kafka client .properties of the Spark principal")
    parser.add_argument("--topic", required=True)
    parser.add_argument("--records", type=int, default=1000)
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    options = spark_kafka_options(args.kafka_config)
    run = uuid.uuid4().hex
    spark = SparkSession.builder.appName(f"kafkakit-smoke-{run[:8]}").getOrCreate()
    try:
        batch = spark.range(args.records).select(
            F.concat(F.lit(f"{run}:"), F.col("id").cast("string")).alias("key"),
            F.concat(F.lit(f"smoke {run} "), F.col("id").cast("string")).alias("value"),
        )
        batch.write.format("kafka").options(**options).option("topic", args.topic).save()

        # Everything the topic holds now, keeping only this run's records.
        back = (
            spark.read.format("kafka")
            .options(**options)
            .option("subscribe", args.topic)
            .option("startingOffsets", "earliest")
            .option("endingOffsets", "latest")
            .load()
            .select(F.col("key").cast("string").alias("key"), F.col("value").cast("string").alias("value"))
            .where(F.col("key").startswith(f"{run}:"))
        )
        rows = back.collect()
    finally:
        spark.stop()

    count = len(rows)
    got = {row.key: row.value for row in rows}
    expected = {f"{run}:{i}": f"smoke {run} {i}" for i in range(args.records)}
    wrong = [key for key in expected if got.get(key) != expected[key]]
    if count != args.records or wrong or set(got) != set(expected):
        print(
            f"smoke: FAILED run {run}: wrote {args.records}, read {count} ({len(got)} distinct), "
            f"{len(wrong)} missing or different, e.g. {wrong[:3]}",
            file=sys.stderr,
        )
        return 1
    print(f"smoke: OK run {run}: {args.records} records written to {args.topic} and read back")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
