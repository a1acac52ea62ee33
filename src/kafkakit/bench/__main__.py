"""make bench: Kafka's perf tools against the lab, interleaved repetitions, a Markdown report
and a chart.

    python -m kafkakit.bench --bootstrap dc1-kafka1:9093 --client-config /etc/kafka/client.properties \
        --repetitions 5 --seconds 20 --out build/bench [--only 'producer-*-1024' ...]
    python -m kafkakit.bench --list ...        # the cases and their command lines, nothing run

Each command runs through a runner callable; `lab_runner()` is where the lab supplies one.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from kafkakit.bench.plan import Case, Endpoint, ToolSettings, build_plan, comparisons, select
from kafkakit.bench.report import Machine, machine_description, render_report, write_report
from kafkakit.bench.runner import Measurement, Progress, Runner, run_plan
from kafkakit.bench.stats import Ratio, Summary, compare, summarize_measurements


@dataclass(frozen=True)
class BenchOutcome:
    measurements: list[Measurement]
    summaries: dict[str, dict[str, Summary]]
    ratios: list[Ratio]
    report: Path
    chart: Path | None
    results: Path


def run_bench(
    run: Runner,
    cases: Sequence[Case],
    *,
    out: Path,
    repetitions: int = 3,
    records: int | None = None,
    seconds: float | None = None,
    machine: Machine | None = None,
    chart: bool = True,
    progress: Progress | None = None,
) -> BenchOutcome:
    """Measure `cases` through `run`, then write out/report.md, out/throughput.png and
    out/results.json (every run's metrics, errors and raw output)."""
    say = progress or (lambda msg: print(msg, file=sys.stderr, flush=True))
    measurements = run_plan(cases, run, repetitions=repetitions, records=records, seconds=seconds, progress=say)
    return write_outputs(
        cases,
        measurements,
        out=out,
        repetitions=repetitions,
        records=records,
        seconds=seconds,
        machine=machine or machine_description(run),
        chart=chart,
    )


def write_outputs(
    cases: Sequence[Case],
    measurements: Sequence[Measurement],
    *,
    out: Path,
    repetitions: int,
    records: int | None,
    seconds: float | None,
    machine: Machine,
    chart: bool = True,
) -> BenchOutcome:
    summaries = summarize_measurements(measurements)
    ratios = compare(summaries, comparisons(cases))
    out.mkdir(parents=True, exist_ok=True)
    results = out / "results.json"
    results.write_text(json.dumps([asdict(m) for m in measurements], indent=1) + "\n")
    chart_path: Path | None = None
    if chart:
        from kafkakit.bench.chart import write_chart

        chart_path = write_chart(cases, summaries, out / "throughput.png")
    size = f"about {seconds:g} s per run (sized by a calibration run)" if seconds else f"{records} records per run"
    settings = {"Repetitions (interleaved rounds)": str(repetitions), "Run length": size}
    text = render_report(cases, measurements, summaries, ratios, machine, settings, chart_path and chart_path.name)
    report = write_report(out / "report.md", text)
    return BenchOutcome(list(measurements), summaries, ratios, report, chart_path, results)


def local_runner(command: list[str]) -> str:
    """Runs on this machine (a Kafka install here, or a debugging session); stderr is kept with
    stdout because some tools print their notes there."""
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"exit {done.returncode}: {shlex.join(command)}\n{done.stdout[-2000:]}")
    return done.stdout


def lab_runner() -> Runner:
    """The runner for the lab: to be wired to `podman exec <client container> ...`."""
    raise NotImplementedError("the lab runner is not wired yet: use --local, or call run_bench() with a runner")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m kafkakit.bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--bootstrap", help="SASL_SSL bootstrap servers, as seen where the tools run")
    p.add_argument("--client-config", help="client .properties for --bootstrap (a path where the tools run)")
    p.add_argument("--plaintext-bootstrap", help="a PLAINTEXT listener too: adds the protocol comparison")
    p.add_argument("--kafka-home", default=ToolSettings.kafka_home, help="Kafka install with libs/ (%(default)s)")
    p.add_argument("--scripts-dir", help="use this bin/ directory's *.sh scripts instead of java -cp")
    p.add_argument("--replication", type=int, default=3, help="replication factor of the bench topics (%(default)s)")
    p.add_argument("--repetitions", type=int, default=3, help="interleaved rounds (%(default)s)")
    size = p.add_mutually_exclusive_group()
    size.add_argument("--records", type=int, help="records per run (default 200000)")
    size.add_argument("--seconds", type=float, help="size each case's runs to about this many seconds")
    p.add_argument("--out", type=Path, default=Path("build/bench"), help="output folder (%(default)s)")
    p.add_argument("--only", nargs="+", metavar="CASE", help="case names or globs, e.g. 'producer-*-1024'")
    p.add_argument("--no-chart", action="store_true", help="skip the PNG (no matplotlib needed)")
    p.add_argument("--list", action="store_true", help="print the cases and their command lines, run nothing")
    p.add_argument("--local", action="store_true", help="run the tools on this machine instead of the lab")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if not args.bootstrap and not args.list:
        print("--bootstrap is needed to run (or --list to see the plan)", file=sys.stderr)
        return 2
    endpoints = [Endpoint("SASL_SSL", args.bootstrap or "<bootstrap>", args.client_config)]
    if args.plaintext_bootstrap:
        endpoints.append(Endpoint("PLAINTEXT", args.plaintext_bootstrap))
    tools = ToolSettings(kafka_home=args.kafka_home, scripts_dir=args.scripts_dir)
    try:
        cases = select(build_plan(endpoints, tools=tools, replication=args.replication), args.only)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    if args.list:
        for case in cases:
            print(f"{case.name}\n  run:      {shlex.join(case.args)}")
            for command in case.setup:
                print(f"  setup:    {shlex.join(command)}")
            if case.fill:
                print(f"  fill:     {shlex.join(case.fill)}")
            for command in case.teardown:
                print(f"  teardown: {shlex.join(command)}")
        return 0
    run = local_runner if args.local else lab_runner()
    outcome = run_bench(
        run,
        cases,
        out=args.out,
        repetitions=args.repetitions,
        records=args.records,
        seconds=args.seconds,
        chart=not args.no_chart,
    )
    print(f"report: {outcome.report}")
    return 0 if any(m.ok for m in outcome.measurements) else 1


if __name__ == "__main__":
    sys.exit(main())
