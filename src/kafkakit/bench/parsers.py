"""Parsers for the output of Kafka 3.9's perf tools, and of the kraft-vs-zk scenarios
(kafkakit.bench.scenarios), which print one result line of their own.

The runner may hand back stdout mixed with stderr (log4j warnings, topic-creation notes), so each
parser looks for its own line shape anywhere in the text and ignores everything else.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

_NUM = r"([0-9]+(?:\.[0-9]+)?)"

# ProducerPerformance prints a progress line every 5 s without percentiles; only the final
# summary has the 50th..99.9th fields, which is what identifies it.
_PRODUCER_FINAL = re.compile(
    rf"^{_NUM} records sent, {_NUM} records/sec \({_NUM} MB/sec\), {_NUM} ms avg latency, "
    rf"{_NUM} ms max latency, {_NUM} ms 50th, {_NUM} ms 95th, {_NUM} ms 99th, {_NUM} ms 99\.9th\.\s*$",
    re.MULTILINE,
)

# ConsumerPerformance without --show-detailed-stats: one CSV row of ten fields, the first two
# timestamps in its default --date-format (yyyy-MM-dd HH:mm:ss:SSS).
_CONSUMER_ROW = re.compile(
    r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3}), (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3}), "
    + ", ".join([_NUM] * 8)
    + r"\s*$",
    re.MULTILINE,
)
_CONSUMER_TIMEOUT = "Exiting before consuming the expected number of messages"

_E2E_AVG = re.compile(rf"^Avg latency: {_NUM} ms\s*$", re.MULTILINE)
_E2E_PERCENTILES = re.compile(rf"^Percentiles: 50th = {_NUM}, 99th = {_NUM}, 99\.9th = {_NUM}\s*$", re.MULTILINE)

# A scenario's last word: "kafkakit-bench-result <scenario> key=value ...", values in seconds,
# milliseconds or counts. A sign is allowed: an interval between two hosts' clocks can come out
# below zero, and the line must still parse.
SCENARIO_MARK = "kafkakit-bench-result"
_SCENARIO = re.compile(rf"^{SCENARIO_MARK} ([a-z-]+)((?: [a-z0-9_]+=-?[0-9]+(?:\.[0-9]+)?)+)\s*$", re.MULTILINE)


class ParseError(ValueError):
    """The tool's output has no result line (the tool failed, or printed something unexpected)."""


def _fail(tool: str, text: str) -> ParseError:
    tail = "\n".join(text.strip().splitlines()[-5:])
    return ParseError(f"no {tool} result in the output; its last lines:\n{tail}")


@dataclass(frozen=True)
class ProducerResult:
    records: int
    records_per_sec: float
    mb_per_sec: float
    avg_latency_ms: float
    max_latency_ms: float
    p50_ms: float
    p95_ms: float
    p99_ms: float
    p999_ms: float

    def metrics(self) -> dict[str, float]:
        return {k: float(v) for k, v in asdict(self).items()}


@dataclass(frozen=True)
class ConsumerResult:
    start: str
    end: str
    mb: float
    mb_per_sec: float
    records: int
    records_per_sec: float
    rebalance_ms: float
    fetch_ms: float
    fetch_mb_per_sec: float
    fetch_records_per_sec: float
    # False when the tool gave up at --timeout before reading --messages records: the rates
    # then include the idle wait and must not be compared with complete runs.
    complete: bool

    def metrics(self) -> dict[str, float]:
        return {k: float(v) for k, v in asdict(self).items() if k not in ("start", "end", "complete")}


@dataclass(frozen=True)
class LatencyResult:
    avg_ms: float
    p50_ms: float
    p99_ms: float
    p999_ms: float

    def metrics(self) -> dict[str, float]:
        return asdict(self)


def parse_producer(text: str) -> ProducerResult:
    """The final summary line of ProducerPerformance (kafka-producer-perf-test)."""
    matches = _PRODUCER_FINAL.findall(text)
    if not matches:
        raise _fail("ProducerPerformance", text)
    f = [float(x) for x in matches[-1]]
    return ProducerResult(int(f[0]), *f[1:])


def parse_consumer(text: str) -> ConsumerResult:
    """The CSV row of ConsumerPerformance (kafka-consumer-perf-test), with or without --hide-header."""
    matches = _CONSUMER_ROW.findall(text)
    if not matches:
        raise _fail("ConsumerPerformance", text)
    start, end, *rest = matches[-1]
    n = [float(x) for x in rest]
    return ConsumerResult(
        start, end, n[0], n[1], int(n[2]), n[3], n[4], n[5], n[6], n[7], complete=_CONSUMER_TIMEOUT not in text
    )


def parse_end_to_end(text: str) -> LatencyResult:
    """The closing 'Avg latency' and 'Percentiles' lines of EndToEndLatency."""
    avg = _E2E_AVG.findall(text)
    pct = _E2E_PERCENTILES.findall(text)
    if not avg or not pct:
        raise _fail("EndToEndLatency", text)
    p50, p99, p999 = (float(x) for x in pct[-1])
    return LatencyResult(float(avg[-1]), p50, p99, p999)


@dataclass(frozen=True)
class ScenarioResult:
    scenario: str
    values: dict[str, float]

    def metrics(self) -> dict[str, float]:
        return dict(self.values)


def format_scenario(scenario: str, metrics: dict[str, float]) -> str:
    """The result line a scenario prints (parse_scenario reads it back)."""
    return " ".join([SCENARIO_MARK, scenario, *(f"{k}={v:.6f}" for k, v in metrics.items())])


def parse_scenario(text: str) -> ScenarioResult:
    """The last result line of a kraft-vs-zk scenario run."""
    matches = _SCENARIO.findall(text)
    if not matches:
        raise _fail("scenario", text)
    scenario, pairs = matches[-1][0], matches[-1][1]
    values = {k: float(v) for k, v in (pair.split("=", 1) for pair in pairs.split())}
    return ScenarioResult(scenario, values)
