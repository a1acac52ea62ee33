"""Medians and spread per case over the repetitions, and ratios of medians between cases."""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from kafkakit.bench.plan import Comparison
from kafkakit.bench.runner import Measurement

# The metrics each tool's tables, ratios and chart show, the first one being the headline.
KEY_METRICS: dict[str, tuple[str, ...]] = {
    "producer": ("records_per_sec", "mb_per_sec", "avg_latency_ms", "p99_ms"),
    "consumer": ("mb_per_sec", "records_per_sec"),
    "latency": ("avg_ms", "p99_ms", "p999_ms"),
    # The kraft-vs-zk scenarios (kafkakit.bench.scenarios), in seconds.
    "partitions": ("create_s", "delete_s"),
    "failover": ("ack_gap_s", "metadata_write_s"),
    "shutdown": ("stop_s", "restart_s"),
    # A leader's host lost (kafkakit.bench.leader_failover), in seconds.
    "leader-failover": ("ack_gap_s", "any_ack_gap_s", "elected_s", "isr_back_s"),
    # Change data capture (kafkakit.bench.cdc): throughput, then commit → Kafka and → Spark.
    "cdc": ("rows_per_sec", "kafka_p50_ms", "kafka_p99_ms", "spark_p50_ms", "spark_p99_ms"),
}


@dataclass(frozen=True)
class Summary:
    n: int
    median: float
    minimum: float
    maximum: float
    q1: float
    q3: float

    @property
    def iqr(self) -> float:
        return self.q3 - self.q1


def summarize(values: Sequence[float]) -> Summary:
    if not values:
        raise ValueError("no values to summarise")
    if len(values) == 1:
        v = float(values[0])
        return Summary(1, v, v, v, v, v)
    # "inclusive" keeps the quartiles inside the observed range, which is what a reader of a
    # 3-to-10-run table expects (the default "exclusive" extrapolates past min and max).
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return Summary(len(values), float(statistics.median(values)), float(min(values)), float(max(values)), q1, q3)


def summarize_measurements(measurements: Iterable[Measurement]) -> dict[str, dict[str, Summary]]:
    """case name -> metric -> Summary, over the runs that succeeded."""
    values: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for m in measurements:
        if m.ok:
            for metric, v in m.metrics.items():
                values[m.case][metric].append(v)
    return {case: {metric: summarize(vs) for metric, vs in per.items()} for case, per in values.items()}


@dataclass(frozen=True)
class Ratio:
    comparison: Comparison
    metric: str
    numerator: Summary
    denominator: Summary

    @property
    def value(self) -> float:
        return ratio(self.numerator.median, self.denominator.median)


def ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else math.nan


def compare(
    summaries: Mapping[str, Mapping[str, Summary]],
    comparisons: Iterable[Comparison],
    metrics: Mapping[str, Sequence[str]] = KEY_METRICS,
) -> list[Ratio]:
    """Ratios of medians for each comparison whose two cases both have results."""
    out: list[Ratio] = []
    for comp in comparisons:
        top, bottom = summaries.get(comp.numerator), summaries.get(comp.denominator)
        if not top or not bottom:
            continue
        for metric in metrics.get(comp.tool, ()):
            if metric in top and metric in bottom:
                out.append(Ratio(comp, metric, top[metric], bottom[metric]))
    return out
