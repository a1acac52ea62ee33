"""The Markdown report: machine, settings, per-case medians with spread, ratios, failures and
the exact command lines."""

from __future__ import annotations

import datetime as dt
import os
import platform
import shlex
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from kafkakit.bench.plan import BROKER_VARIANTS, RECORDS, TUNED_CONSUMER_ARGS, TUNED_PRODUCER_PROPS, Case
from kafkakit.bench.runner import Measurement, Runner
from kafkakit.bench.stats import KEY_METRICS, Ratio, Summary

METRIC_TITLES = {
    "records_per_sec": "records/s",
    "mb_per_sec": "MB/s",
    "avg_latency_ms": "avg latency ms",
    "p99_ms": "p99 ms",
    "p999_ms": "p99.9 ms",
    "avg_ms": "avg ms",
}
TOOL_TITLES = {
    "producer": "Producer (ProducerPerformance)",
    "consumer": "Consumer (ConsumerPerformance)",
    "latency": "End-to-end latency (EndToEndLatency)",
}


@dataclass(frozen=True)
class Machine:
    cpus: str
    memory: str
    cpu_model: str
    date: str


def _local(command: list[str]) -> str:
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout


def machine_description(run: Runner | None = None, now: dt.datetime | None = None) -> Machine:
    """nproc, total memory and CPU model, read through `run` (e.g. inside a lab container, whose
    cgroup may show fewer CPUs than the host) or on this machine."""
    run = run or _local
    try:
        cpus = run(["nproc"]).strip()
    except Exception:
        cpus = str(os.cpu_count() or "?")
    memory = cpu_model = "unknown"
    try:
        for line in run(["cat", "/proc/meminfo"]).splitlines():
            if line.startswith("MemTotal:"):
                memory = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
                break
    except Exception:
        pass
    try:
        for line in run(["cat", "/proc/cpuinfo"]).splitlines():
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    except Exception:
        cpu_model = platform.processor() or "unknown"
    when = (now or dt.datetime.now(dt.UTC)).strftime("%Y-%m-%d %H:%M UTC")
    return Machine(cpus, memory, cpu_model, when)


def fmt(value: float) -> str:
    """Three significant figures or so, without scientific notation."""
    if value != value:  # NaN
        return "n/a"
    if abs(value) >= 100:
        return f"{value:.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def _cell(s: Summary | None) -> str:
    return f"{fmt(s.median)} ({fmt(s.minimum)}–{fmt(s.maximum)})" if s else "–"


def _case_table(cases: Sequence[Case], summaries: Mapping[str, Mapping[str, Summary]], tool: str) -> list[str]:
    metrics = KEY_METRICS[tool]
    head = ["case", "protocol", "tuning", "compression", "record B", "runs"]
    head += [f"{METRIC_TITLES[m]} median (min–max)" for m in metrics]
    head.append(f"{METRIC_TITLES[metrics[0]]} IQR")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for case in cases:
        per = summaries.get(case.name, {})
        first = per.get(metrics[0])
        row = [f"`{case.name}`", case.protocol, case.tuning, case.compression, str(case.record_size)]
        row.append(str(first.n) if first else "0")
        row += [_cell(per.get(m)) for m in metrics]
        row.append(fmt(first.iqr) if first else "–")
        lines.append("| " + " | ".join(row) + " |")
    return lines


def _ratio_table(ratios: Sequence[Ratio]) -> list[str]:
    lines = [
        "| comparison | metric | numerator | denominator | median ratio |",
        "|---|---|---|---|---|",
    ]
    for r in ratios:
        c = r.comparison
        lines.append(
            f"| {c.label} | {c.tool} {METRIC_TITLES[r.metric]} | `{c.numerator}` {fmt(r.numerator.median)} "
            f"| `{c.denominator}` {fmt(r.denominator.median)} | **{r.value:.2f}** |"
        )
    return lines


def _tuning_legend(cases: Sequence[Case]) -> list[str]:
    """What each value of the tuning column means, for the values the report has."""
    used = {c.tuning for c in cases}
    lines = ["Tuning column:", ""]
    lines.append(
        f"- tuned: producer `{' '.join(TUNED_PRODUCER_PROPS)}`, consumer `{' '.join(TUNED_CONSUMER_ARGS)}`;"
        " the brokers as the kit deploys them"
    )
    lines.append("- stock: Kafka 3.9's client defaults (linger.ms=0, batch.size=16384), same brokers")
    for variant, configs in BROKER_VARIANTS.items():
        if variant in used:
            lines.append(f"- {variant}: tuned, with the brokers' dynamic defaults `{','.join(configs)}` for its runs")
    lines.append("- every producer: acks=all, RF 3, min.insync.replicas=2, a fresh topic per run")
    return [*lines, ""]


def render_report(
    cases: Sequence[Case],
    measurements: Sequence[Measurement],
    summaries: Mapping[str, Mapping[str, Summary]],
    ratios: Sequence[Ratio],
    machine: Machine,
    settings: Mapping[str, str],
    chart: str | None = "throughput.png",
    sections: Sequence[str] = (),
) -> str:
    """`sections`: more Markdown sections (MirrorMaker 2, operation timings), placed after the
    ratios."""
    lines = ["# Kafka client benchmark", ""]
    lines += [
        f"- Date: {machine.date}",
        f"- CPUs (nproc): {machine.cpus}",
        f"- Memory: {machine.memory}",
        f"- CPU model: {machine.cpu_model}",
    ]
    lines += [f"- {k}: {v}" for k, v in settings.items()]
    lines += [
        "",
        "Each round runs every case once, round after round (interleaved), so both sides of a ratio",
        "were measured side by side. Cells are the median over the rounds, with min–max in brackets.",
        "",
    ]
    lines += _tuning_legend(cases)
    if chart:
        lines += [f"![throughput]({chart})", ""]
    for tool in ("producer", "consumer", "latency"):
        # The kraft-vs-zk cases have a section of their own (mode_report), passed in `sections`.
        chosen = [c for c in cases if c.tool == tool and not c.mode]
        if chosen:
            lines += [f"## {TOOL_TITLES[tool]}", "", *_case_table(chosen, summaries, tool), ""]
    if ratios:
        lines += ["## Ratios of medians", "", *_ratio_table(ratios), ""]
    for section in sections:
        lines += [section.rstrip("\n"), ""]
    failed = [m for m in measurements if not m.ok]
    if failed:
        lines += ["## Failed runs (left out of the statistics)", ""]
        for m in failed:
            first_line = (m.error or "").splitlines()[0] if m.error else ""
            lines.append(f"- `{m.case}` run {m.repetition + 1 if m.repetition >= 0 else 'set-up'}: {first_line}")
        lines.append("")
    lines += ["## Command lines", "", f"`{RECORDS}` is the record count of each run.", ""]
    for case in cases:
        lines += [f"- `{case.name}`:", "", "  ```", f"  {shlex.join(case.args)}", "  ```"]
    return "\n".join(lines) + "\n"


def write_report(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path
