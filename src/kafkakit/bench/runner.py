"""Runs a plan through a runner callable: set-up, warm-up or calibration, interleaved repetitions,
clean-up. The runner executes one argv and returns its output (stdout, stderr may be mixed in);
it raises when the command fails."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from kafkakit.bench.parsers import (
    ConsumerResult,
    LatencyResult,
    ProducerResult,
    ScenarioResult,
    parse_consumer,
    parse_end_to_end,
    parse_producer,
    parse_scenario,
)
from kafkakit.bench.plan import Case, interleave

Runner = Callable[[list[str]], str]
Progress = Callable[[str], None]

DEFAULT_RECORDS = 200_000
WARMUP_RECORDS = {"producer": 50_000, "consumer": 50_000, "latency": 500}
MIN_RECORDS = {"producer": 10_000, "consumer": 10_000, "latency": 200}
# --seconds sizes runs from a calibration rate; these bound a fast calibration's disk use (the
# lab's data volumes are 2 GiB, and every broker holds a replica of every partition).
MAX_RECORDS = 5_000_000
MAX_RUN_BYTES = 256 * 1024 * 1024

# The kraft-vs-zk scenarios (kafkakit.bench.scenarios) and the cdc case (kafkakit.bench.cdc_run):
# each run is a whole operation on the lab (a fault, a restart, rows committed for a fixed time),
# so they get no warm-up, no calibration and no record count.
SCENARIO_TOOLS = ("partitions", "failover", "shutdown", "leader-failover", "cdc")

Result = ProducerResult | ConsumerResult | LatencyResult | ScenarioResult
PARSERS: dict[str, Callable[[str], Result]] = {
    "producer": parse_producer,
    "consumer": parse_consumer,
    "latency": parse_end_to_end,
    **dict.fromkeys(SCENARIO_TOOLS, parse_scenario),
}


@dataclass(frozen=True)
class Measurement:
    case: str
    repetition: int
    records: int
    metrics: dict[str, float] = field(default_factory=dict)
    error: str | None = None
    elapsed_s: float = 0.0
    output: str = ""

    @property
    def ok(self) -> bool:
        return self.error is None


def rate_of(result: Result) -> float:
    """Records per second, for sizing runs to a duration. EndToEndLatency sends one record at a
    time and waits for it, so its rate is the inverse of the mean latency."""
    if isinstance(result, LatencyResult):
        return 1000.0 / result.avg_ms if result.avg_ms > 0 else 0.0
    return result.records_per_sec


def records_for(tool: str, rate: float, seconds: float, record_size: int = 1) -> int:
    most = min(MAX_RECORDS, MAX_RUN_BYTES // max(record_size, 1))
    return max(MIN_RECORDS[tool], min(most, int(rate * seconds)))


def run_once(case: Case, run: Runner, records: int, run_tag: str) -> str:
    """One run of the case's tool between its per-run commands (a topic of its own, broker
    settings); the "after" commands run even when the tool fails."""
    try:
        for command in case.before(run_tag):
            run(command)
        return run(case.command(records, run_tag))
    finally:
        for command in case.after(run_tag):
            run(command)


def measure(case: Case, run: Runner, repetition: int, records: int, tag: str) -> Measurement:
    start = time.monotonic()
    output = ""
    try:
        output = run_once(case, run, records, f"{tag}-{repetition}")
        result = PARSERS[case.tool](output)
    except Exception as exc:  # one broken run must not lose the others' results
        return Measurement(case.name, repetition, records, error=f"{type(exc).__name__}: {exc}", output=output)
    elapsed = time.monotonic() - start
    metrics = result.metrics()
    if isinstance(result, ConsumerResult) and not result.complete:
        # Its rates include the idle wait until --timeout: kept for the record, left out of stats.
        error = f"read {result.records} of {records} records before the consumer's --timeout"
        return Measurement(case.name, repetition, records, metrics, error, elapsed, output)
    return Measurement(case.name, repetition, records, metrics, None, elapsed, output)


def prepare(case: Case, run: Runner, records: int | None, seconds: float | None, tag: str, say: Progress) -> int:
    """Set-up, data for consumers, warm-up; returns the record count of each measured run."""
    for command in case.setup:
        run(list(command))
    if case.tool in SCENARIO_TOOLS:
        return 0
    warm = WARMUP_RECORDS[case.tool]
    if seconds is not None:
        # The calibration run doubles as the JVM / page-cache warm-up of a producer or latency
        # case; a consumer's is a producer run that also starts filling its topic.
        fill_calibration = case.fill_command(warm)
        if fill_calibration:
            result = PARSERS["producer"](run(fill_calibration))
        else:
            result = PARSERS[case.tool](run_once(case, run, warm, f"{tag}-calibrate"))
        n = records_for(case.tool, rate_of(result), seconds, case.record_size)
        say(f"{case.name}: {rate_of(result):.0f} records/s in calibration -> {n} records per run")
    else:
        n = records or DEFAULT_RECORDS
    fill = case.fill_command(n)
    if fill:
        PARSERS["producer"](run(fill))
    if seconds is None or case.fill:
        PARSERS[case.tool](run_once(case, run, min(warm, n), f"{tag}-warmup"))
    return n


def equal_sizes(cases: Sequence[Case], sizes: dict[str, int]) -> dict[str, int]:
    """One record count for all producer cases of a record size: the median of their calibrated
    counts. A run's rate depends on its length (start-up and ramp are amortised over it), so the
    two sides of a ratio must send as many records each. The kraft-vs-zk producers are a group
    of their own, so adding them leaves the client cases' counts as they were."""
    out = dict(sizes)
    producers = [c for c in cases if c.tool == "producer" and c.name in sizes]
    for group in {(c.record_size, bool(c.mode)) for c in producers}:
        names = [c.name for c in producers if (c.record_size, bool(c.mode)) == group]
        counts = sorted(sizes[n] for n in names)
        for n in names:
            out[n] = counts[len(counts) // 2]
    return out


def run_plan(
    cases: Sequence[Case],
    run: Runner,
    *,
    repetitions: int = 3,
    records: int | None = None,
    seconds: float | None = None,
    tag: str | None = None,
    progress: Progress | None = None,
) -> list[Measurement]:
    """Measure every case `repetitions` times, interleaved; failures become Measurements with
    an error rather than exceptions, and every case's teardown runs at the end. Cases of a group
    other than the default (Case.group) run as plans of their own after the default group's, group
    by group: set-up, rounds, teardown each."""
    if records is not None and seconds is not None:
        raise ValueError("give records or seconds, not both")
    if repetitions < 1:
        raise ValueError("repetitions must be at least 1")
    say = progress or (lambda _msg: None)
    # A fresh tag per bench run keeps consumer groups of earlier runs out of the way.
    tag = tag or time.strftime("%Y%m%d%H%M%S")
    # The default group first, then the others in the order they first appear.
    groups = sorted(dict.fromkeys(c.group for c in cases), key=lambda g: g != "")
    if len(groups) > 1:
        opts = {"repetitions": repetitions, "records": records, "seconds": seconds, "tag": tag, "progress": say}
        return [m for g in groups for m in run_plan([c for c in cases if c.group == g], run, **opts)]
    sizes: dict[str, int] = {}
    results: list[Measurement] = []
    try:
        for case in cases:
            try:
                sizes[case.name] = prepare(case, run, records, seconds, tag, say)
            except Exception as exc:
                say(f"{case.name}: preparation failed, skipping it: {exc}")
                results.append(Measurement(case.name, -1, 0, error=f"preparation: {type(exc).__name__}: {exc}"))
        if seconds is not None:
            sizes = equal_sizes(cases, sizes)
        order = [(rep, case) for rep, case in interleave(cases, repetitions) if case.name in sizes]
        for i, (rep, case) in enumerate(order, 1):
            m = measure(case, run, rep, sizes[case.name], tag)
            say(f"[{i}/{len(order)}] {case.name} #{rep + 1}: " + (m.error or _headline(case, m)))
            results.append(m)
    finally:
        for case in cases:
            for command in case.teardown:
                try:
                    run(list(command))
                except Exception as exc:  # clean-up is best effort; the results stand
                    say(f"{case.name}: teardown failed: {exc}")
    return results


def _headline(case: Case, m: Measurement) -> str:
    if case.tool in SCENARIO_TOOLS:
        return ", ".join(f"{k} {v:.2f}" for k, v in m.metrics.items())
    if case.tool == "latency":
        return f"avg {m.metrics['avg_ms']:.2f} ms, p99 {m.metrics['p99_ms']:.0f} ms"
    return f"{m.metrics['records_per_sec']:.0f} records/s, {m.metrics['mb_per_sec']:.2f} MB/s"
