"""The jobs' entry point: one Spark session per command, stopped however the command ends."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from typing import Any


def run_command(
    app: str, args: argparse.Namespace, commands: Mapping[str, Callable[[Any, argparse.Namespace], None]]
) -> int:
    from pyspark.sql import SparkSession  # only on the Spark hosts: the unit tests import this package

    spark = SparkSession.builder.appName(f"{app}-{args.command}").getOrCreate()
    try:
        commands[args.command](spark, args)
    finally:
        spark.stop()
    return 0
