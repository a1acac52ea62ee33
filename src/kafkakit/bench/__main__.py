"""make bench: Kafka's perf tools against the lab, interleaved repetitions, a Markdown report
and a chart.

    python -m kafkakit.bench --bootstrap dc1-kafka1:9093 --client-config /etc/kafka/client.properties \
        --repetitions 5 --seconds 20 --out build/bench [--only 'producer-*-1024' ...]
    python -m kafkakit.bench --list ...        # the cases and their command lines, nothing run

    # make bench: the tools on the controller against the lab, plus MM2 figures and playbook timings,
    # the kraft-vs-zk cases (ZooKeeper-mode dc1 vs KRaft dc2, kafkakit.bench.modes), the
    # leader-failover cases (a partition leader's host lost, in both modes, kafkakit.bench.leader_cases)
    # and the cdc case (rows committed in PostgreSQL at a fixed rate, into Kafka and Spark, kafkakit.bench.cdc)
    python -m kafkakit.bench --bootstrap <SASL_SSL list> --client-config build/lab/dc1/client.properties \
        --plaintext-bootstrap <BENCH list> --client-dir build/lab --zk-dc dc1 --kraft-dc dc2 ...

The tools run on this machine (`local_runner`): the controller reaches the lab's brokers directly
with build/lab's client configs. The exit status is 1 when any case failed (a failed run or
preparation), even if others were measured; the report still holds every result.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import yaml

from kafkakit.bench import lab
from kafkakit.bench.cdc import CdcTarget, cdc_case, render_cdc_section
from kafkakit.bench.leader_cases import LAB_CONFIG, SpareSettings, leader_cases
from kafkakit.bench.leader_report import render_leader_section
from kafkakit.bench.mode_report import render_mode_section
from kafkakit.bench.modes import ModeTarget, ScenarioSettings, mode_cases
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
    sections: Sequence[str] = (),
    mode_labels: Mapping[str, str] | None = None,
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
        sections=sections,
        mode_labels=mode_labels,
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
    sections: Sequence[str] = (),
    mode_labels: Mapping[str, str] | None = None,
) -> BenchOutcome:
    """`mode_labels`: what each metadata mode's data centre is ("dc1, Kafka 3.9.2"), for the
    ZooKeeper vs KRaft section, which comes first among the sections when there are such cases;
    the leader-failover section and the change data capture section follow it."""
    summaries = summarize_measurements(measurements)
    labels = mode_labels or {}
    own = [
        render_mode_section(cases, summaries, labels),
        render_leader_section(cases, summaries, labels),
        render_cdc_section(cases, summaries),
    ]
    sections = [*(s for s in own if s), *sections]
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
    text = render_report(
        cases, measurements, summaries, ratios, machine, settings, chart_path and chart_path.name, sections
    )
    report = write_report(out / "report.md", text)
    return BenchOutcome(list(measurements), summaries, ratios, report, chart_path, results)


def local_runner(command: list[str]) -> str:
    """Runs on this machine (a Kafka install here, or a debugging session); stderr is kept with
    stdout because some tools print their notes there."""
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"exit {done.returncode}: {shlex.join(command)}\n{done.stdout[-2000:]}")
    return done.stdout


def failed_cases(cases: Sequence[Case], measurements: Sequence[Measurement]) -> list[str]:
    """The cases, in plan order, with a failed measurement or no measurement at all."""
    ok = {m.case for m in measurements if m.ok}
    bad = {m.case for m in measurements if not m.ok}
    return [c.name for c in cases if c.name in bad or c.name not in ok]


def _client_runs_on_lab(
    args: argparse.Namespace, cases: Sequence[Case], run: Runner, say: Progress
) -> list[Measurement]:
    """The client cases; with a PLAINTEXT endpoint, inside the anonymous principal's ACLs."""
    from kafkakit.cluster.acls import AdminAclStore
    from kafkakit.cluster.admin import admin_client, read_client_conf

    def client_runs() -> list[Measurement]:
        return run_plan(
            cases, run, repetitions=args.repetitions, records=args.records, seconds=args.seconds, progress=say
        )

    if not args.plaintext_bootstrap:
        return client_runs()
    conf = read_client_conf(args.client_dir / args.dc / "client.conf")
    principal = {k: v for k, v in conf.items() if k != "bootstrap.servers"}
    store = AdminAclStore(admin_client(conf["bootstrap.servers"], principal))
    with lab.granted(store, lab.bench_acl_keys(), say):
        return client_runs()


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
    lab = p.add_argument_group("the lab (make bench)")
    lab.add_argument("--client-dir", type=Path, help="build/lab: admin client.conf per DC; enables the sections below")
    lab.add_argument("--dc", default="dc1", help="data centre benchmarked (%(default)s)")
    lab.add_argument("--mirror-target", default="dc2", help="MM2 target data centre (%(default)s)")
    lab.add_argument("--ansible-dir", type=Path, default=Path("ansible"), help="playbooks for the timings")
    lab.add_argument("--ansible-playbook", default="ansible-playbook", help="its command (%(default)s)")
    lab.add_argument("--timing-runs", type=int, default=1, help="runs of each timed playbook; 0 skips (%(default)s)")
    lab.add_argument("--cold-lab-seconds", type=float, help="a cold `make lab` time measured beforehand")
    lab.add_argument("--mm2-runs", type=int, default=1, help="MirrorMaker 2 runs; 0 skips (%(default)s)")
    lab.add_argument("--mm2-rate", type=int, default=1000, help="records/s offered to MM2 (%(default)s)")
    lab.add_argument("--mm2-seconds", type=int, default=30, help="seconds of load per MM2 run (%(default)s)")
    lab.add_argument("--mm2-prefix", default="mirror-bench-", help="a topic prefix the MM2 flow mirrors (%(default)s)")
    modes = p.add_argument_group("ZooKeeper vs KRaft: the kraft-vs-zk cases, planned with --client-dir")
    modes.add_argument("--zk-dc", default="dc1", help="the ZooKeeper-mode data centre (%(default)s)")
    modes.add_argument("--kraft-dc", default="dc2", help="the KRaft data centre (%(default)s)")
    modes.add_argument("--zk-version", default="", help="its Kafka version, for the report")
    modes.add_argument("--kraft-version", default="", help="its Kafka version, for the report")
    modes.add_argument("--inventory", type=Path, help="the lab inventory (default: <client-dir>/hosts.yml)")
    modes.add_argument("--host-exec", default="podman exec", help="runs argv on a lab host: <this> <host> argv")
    modes.add_argument("--controller-port", type=int, default=9094, help="KRaft controllers' port (%(default)s)")
    modes.add_argument(
        "--lab-config", type=Path, default=LAB_CONFIG, help="the lab's hosts and spares (leader-failover)"
    )
    modes.add_argument("--image-tag-file", type=Path, default=Path("build/lab-image.tag"), help="the lab image's tag")
    modes.add_argument(
        "--lab-vars", type=Path, help="extra variables the lab was deployed with (a spare gets them too)"
    )
    cdc = p.add_argument_group("change data capture: the cdc-<rate> case, planned with --client-dir")
    cdc.add_argument("--cdc-dc", default="dc1", help="the data centre of the connector orders-cdc (%(default)s)")
    cdc.add_argument("--cdc-rate", type=int, default=CdcTarget.rate, help="rows committed per second (%(default)s)")
    cdc.add_argument("--cdc-seconds", type=int, default=CdcTarget.seconds, help="seconds of commits (%(default)s)")
    cdc.add_argument("--cdc-no-spark", action="store_true", help="commit → Kafka only, no Spark job")
    return p


def mode_targets(args: argparse.Namespace) -> list[ModeTarget]:
    """Both data centres of the kraft-vs-zk cases, from --client-dir's files (a placeholder
    bootstrap while they are missing: check_mode_files() refuses to run without them)."""
    targets = []
    for mode, dc in (("zookeeper", args.zk_dc), ("kraft", args.kraft_dc)):
        folder = args.client_dir.resolve() / dc
        props = folder / "client.properties"
        bootstrap = lab.read_property(props, "bootstrap.servers") if props.exists() else f"<{dc} bootstrap>"
        targets.append(ModeTarget(mode, dc, str(folder / "client.conf"), str(props), bootstrap))
    return targets


def check_mode_files(targets: Sequence[ModeTarget], inventory: Path) -> None:
    for path in [inventory, *(Path(p) for t in targets for p in (t.client_conf, t.client_properties))]:
        if not path.exists():
            raise FileNotFoundError(f"{path} is missing: the kraft-vs-zk cases need it (run `make lab` first)")


def spare_settings(args: argparse.Namespace, inventory: Path) -> SpareSettings:
    return SpareSettings(
        inventory=str(inventory),
        lab_config=str(args.lab_config.resolve()),
        image_tag_file=str(args.image_tag_file.resolve()),
        ansible_dir=str(args.ansible_dir.resolve()),
        ansible_playbook=args.ansible_playbook,
        lab_vars=str(args.lab_vars.resolve()) if args.lab_vars else "",
        host_exec=args.host_exec,
        controller_port=args.controller_port,
    )


def check_spare_files(spare: SpareSettings, lab_vars: Path | None) -> None:
    for path in (Path(spare.image_tag_file), *([lab_vars] if lab_vars else [])):
        if not path.exists():
            raise FileNotFoundError(f"{path} is missing: the leader-failover case's spare broker needs it")


def cdc_target(args: argparse.Namespace, inventory: Path) -> CdcTarget:
    return CdcTarget(
        inventory=str(inventory),
        client_dir=str(args.client_dir.resolve()),
        dc=args.cdc_dc,
        rate=args.cdc_rate,
        seconds=args.cdc_seconds,
        spark=not args.cdc_no_spark,
        host_exec=args.host_exec,
    )


def check_cdc_files(target: CdcTarget) -> None:
    folder = Path(target.client_dir) / target.dc
    for path in (Path(target.inventory), folder / "client.conf", folder / "source-db.env"):
        if not path.exists():
            raise FileNotFoundError(f"{path} is missing: the cdc case needs it (run `make lab` first)")


def mode_labels(args: argparse.Namespace) -> dict[str, str]:
    def label(dc: str, version: str) -> str:
        return f"{dc}, Kafka {version}" if version else dc

    return {"zookeeper": label(args.zk_dc, args.zk_version), "kraft": label(args.kraft_dc, args.kraft_version)}


def lab_sections(args: argparse.Namespace, say: Progress) -> list[str]:
    """MirrorMaker 2 figures, then the playbook timings: after the client runs, because the
    rolling restart moves leaders about, and after the bench ACLs are gone, because site.yml
    (kafka_resources, exclusive ACLs) would remove them and so would not be a no-op. The BENCH
    listener may still be on: a per-broker dynamic overlay that site.yml neither sees nor undoes."""
    sections: list[str] = []
    if args.mm2_runs > 0:
        runs = lab.mirror_runs(
            args.client_dir,
            source=args.dc,
            target=args.mirror_target,
            prefix=args.mm2_prefix,
            rate=args.mm2_rate,
            seconds=args.mm2_seconds,
            runs=args.mm2_runs,
            say=say,
        )
        sections.append(
            lab.render_mirror_section(
                runs, source=args.dc, target=args.mirror_target, rate=args.mm2_rate, seconds=args.mm2_seconds
            )
        )
    timings: list[lab.Timing] = []
    if args.timing_runs > 0:
        roll = ["ops/rolling-restart.yml", "-e", f"roll_dc={args.dc}"]
        # With the variables the lab was deployed with: a no-op, and no roll back to the defaults.
        extra = ["-e", f"@{args.lab_vars.resolve()}"] if args.lab_vars else []
        playbooks = [("no-op `site.yml`", ["site.yml", *extra]), (f"`{' '.join(roll)}`", [*roll, *extra])]
        timings = lab.time_playbooks(
            playbooks,
            args.timing_runs,
            lambda argv: lab.run_ansible(argv, args.ansible_dir),
            ansible_playbook=args.ansible_playbook,
            say=say,
        )
    if timings or args.cold_lab_seconds is not None:
        sections.append(lab.render_timings_section(timings, args.cold_lab_seconds))
    return sections


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
        cases = build_plan(endpoints, tools=tools, replication=args.replication)
        if args.client_dir:
            inventory = (args.inventory or args.client_dir / "hosts.yml").resolve()
            settings = ScenarioSettings(str(inventory), host_exec=args.host_exec, controller_port=args.controller_port)
            targets = mode_targets(args)
            cases += mode_cases(targets, tools=tools, settings=settings)
            spare = spare_settings(args, inventory)
            lab_config = yaml.safe_load(args.lab_config.read_text())
            cases += leader_cases(targets, lab_config, settings=settings, spare=spare)
            cdc = cdc_target(args, inventory)
            cases.append(cdc_case(cdc))
        cases = select(cases, args.only)
        if args.client_dir and not args.list and any(c.mode for c in cases):
            check_mode_files(targets, inventory)
        if args.client_dir and not args.list and any(c.tool == "leader-failover" and c.setup for c in cases):
            check_spare_files(spare, args.lab_vars)
        if args.client_dir and not args.list and any(c.tool == "cdc" for c in cases):
            check_cdc_files(cdc)
    except (ValueError, OSError) as exc:
        print(exc, file=sys.stderr)
        if not args.client_dir and any(
            p.startswith(("kraft-vs-zk", "leader-failover", "cdc")) for p in args.only or ()
        ):
            print(
                "the kraft-vs-zk, leader-failover and cdc cases are planned with --client-dir (the lab's files)",
                file=sys.stderr,
            )
        return 2
    if args.list:
        for case in cases:
            print(f"{case.name}\n  run:      {shlex.join(case.args)}")
            for command in case.setup:
                print(f"  setup:    {shlex.join(command)}")
            for command in case.before_run:
                print(f"  before:   {shlex.join(command)}")
            for command in case.after_run:
                print(f"  after:    {shlex.join(command)}")
            if case.fill:
                print(f"  fill:     {shlex.join(case.fill)}")
            for command in case.teardown:
                print(f"  teardown: {shlex.join(command)}")
        return 0
    run: Runner = local_runner

    def say(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    sections: list[str] = []
    if args.client_dir:
        measurements = _client_runs_on_lab(args, cases, run, say)
        sections = lab_sections(args, say)
    else:
        measurements = run_plan(
            cases, run, repetitions=args.repetitions, records=args.records, seconds=args.seconds, progress=say
        )
    outcome = write_outputs(
        cases,
        measurements,
        out=args.out,
        repetitions=args.repetitions,
        records=args.records,
        seconds=args.seconds,
        machine=machine_description(run),
        chart=not args.no_chart,
        sections=sections,
        mode_labels=mode_labels(args),
    )
    print(f"report: {outcome.report}")
    failed = failed_cases(cases, outcome.measurements)
    if failed:
        print(f"bench: {len(failed)} of {len(cases)} case(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
