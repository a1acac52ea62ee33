"""What `make bench` adds around the client benchmark on the lab: the PLAINTEXT endpoint (the
BENCH listener that ansible/lab/bench-listener.yml adds to the brokers as a dynamic overlay), the
ACLs its anonymous principal needs, MirrorMaker 2 figures and operation timings.

    python -m kafkakit.bench.lab plaintext-bootstrap build/lab/hosts.yml --dc dc1 --port 9095
    python -m kafkakit.bench.lab property build/lab/dc1/client.properties bootstrap.servers
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import yaml

from kafkakit.cluster.acls import AclKey

# The PLAINTEXT listener has no authentication: every client there is this principal.
ANONYMOUS = "User:ANONYMOUS"
# The cases' topics and ConsumerPerformance groups start with bench-; EndToEndLatency hard-codes
# its group as test-group-<millis> (and commits to it), so that prefix needs READ too.
TOPIC_OPERATIONS = ("CREATE", "DELETE", "DESCRIBE", "DESCRIBE_CONFIGS", "READ", "WRITE")
GROUP_OPERATIONS = ("READ", "DESCRIBE", "DELETE")
BENCH_GROUP_PREFIXES = ("bench-", "test-group-")


# --- endpoints ------------------------------------------------------------------------------


def _groups_and_hostvars(doc: Mapping[str, Any]) -> tuple[dict[str, list[str]], dict[str, dict[str, Any]]]:
    """Group members (children resolved) and merged host variables of a YAML inventory."""
    groups: dict[str, list[str]] = {}
    hostvars: dict[str, dict[str, Any]] = {}

    def walk(name: str, node: Mapping[str, Any] | None) -> list[str]:
        node = node or {}
        members = list(node.get("hosts") or {})
        for host, hv in (node.get("hosts") or {}).items():
            hostvars.setdefault(host, {}).update(hv or {})
        for child, sub in (node.get("children") or {}).items():
            members += walk(child, sub)
        # A group may appear under several parents; keep first-seen order, no duplicates.
        groups[name] = list(dict.fromkeys(groups.get(name, []) + members))
        return groups[name]

    for name, node in doc.items():
        walk(name, node)
    return groups, hostvars


def members(inventory: Mapping[str, Any], group: str, dc: str) -> list[str]:
    """The hosts of `group` in data centre `dc`, in inventory order; a ValueError when there are none."""
    groups, _ = _groups_and_hostvars(inventory)
    in_dc = set(groups.get(dc, []))
    hosts = [h for h in groups.get(group, []) if h in in_dc]
    if not hosts:
        raise ValueError(f"no {group} host in data centre {dc!r}")
    return hosts


def plaintext_bootstrap(inventory: Mapping[str, Any], dc: str, port: int) -> str:
    """host:port of every broker of `dc` on the BENCH listener, in inventory order."""
    if port <= 0:
        raise ValueError("the bench listener port must be > 0")
    brokers = members(inventory, "kafka_broker", dc)
    _, hostvars = _groups_and_hostvars(inventory)
    missing = [h for h in brokers if not hostvars.get(h, {}).get("private_ip")]
    if missing:
        raise ValueError(f"brokers without private_ip: {missing}")
    return ",".join(f"{hostvars[h]['private_ip']}:{port}" for h in brokers)


def read_property(path: Path, key: str) -> str:
    """One key of a Java .properties file (plain key=value lines, as kafka_resources writes them)."""
    for line in path.read_text().splitlines():
        name, sep, value = line.strip().partition("=")
        if sep and not name.startswith(("#", "!")) and name.strip() == key:
            return value.strip()
    raise KeyError(f"{key} not in {path}")


# --- ACLs for the anonymous principal -------------------------------------------------------


class AclStore(Protocol):
    def list(self) -> set[AclKey]: ...

    def create(self, keys: Sequence[AclKey]) -> None: ...

    def delete(self, keys: Sequence[AclKey]) -> None: ...


def bench_acl_keys(principal: str = ANONYMOUS, topic_prefix: str = "bench-") -> list[AclKey]:
    keys = [AclKey(principal, "topic", topic_prefix, "prefixed", op, "ALLOW", "*") for op in TOPIC_OPERATIONS]
    for group in BENCH_GROUP_PREFIXES:
        keys += [AclKey(principal, "group", group, "prefixed", op, "ALLOW", "*") for op in GROUP_OPERATIONS]
    return keys


def grant(store: AclStore, keys: Sequence[AclKey]) -> list[AclKey]:
    """Create the keys the cluster lacks; returns those only, so a revoke never removes a binding
    that was there before the bench."""
    present = store.list()
    created = [k for k in keys if k not in present]
    if created:
        store.create(created)
    return created


@contextmanager
def granted(store: AclStore, keys: Sequence[AclKey], say: Callable[[str], None] = print) -> Iterator[list[AclKey]]:
    """The bench ACLs for the duration of the block, deleted again however it ends."""
    created = grant(store, keys)
    say(f"bench ACLs: created {len(created)} of {len(keys)}")
    try:
        yield created
    finally:
        if created:
            store.delete(created)
            say(f"bench ACLs: deleted the {len(created)} created")


# --- MirrorMaker 2 --------------------------------------------------------------------------


MirrorMeasure = Callable[[Mapping[str, str], Mapping[str, str], str, str, int, int], dict[str, float]]


def mirror_runs(
    client_dir: Path,
    *,
    source: str,
    target: str,
    prefix: str,
    rate: int,
    seconds: int,
    runs: int,
    measure: MirrorMeasure | None = None,
    say: Callable[[str], None] = print,
) -> list[dict[str, float]]:
    """kafkakit.mirror.latency.measure() `runs` times, each with its throughput added:
    records mirrored / seconds from the first record produced to the last one mirrored."""
    from kafkakit.cluster.admin import read_client_conf

    if measure is None:
        from kafkakit.mirror.latency import measure as measure_latency

        measure = measure_latency
    src = read_client_conf(client_dir / source / "client.conf")
    tgt = read_client_conf(client_dir / target / "client.conf")
    out: list[dict[str, float]] = []
    for i in range(runs):
        try:
            figures = dict(measure(src, tgt, source, prefix, rate, seconds))
        except Exception as exc:  # one failed run keeps the rest of the report
            say(f"MM2 run {i + 1}: failed: {exc}")
            out.append({"error": 1.0})
            continue
        span = figures.get("span_s", float("nan"))
        figures["records_per_sec"] = figures["received"] / span if span and span == span else float("nan")
        say(f"MM2 run {i + 1}: p50 {figures['p50_ms']:.0f} ms, {figures['records_per_sec']:.0f} records/s mirrored")
        out.append(figures)
    return out


# --- operation timings ----------------------------------------------------------------------


@dataclass
class Timing:
    label: str
    seconds: list[float] = field(default_factory=list)
    changed: list[int] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


PlaybookRun = Callable[[list[str]], tuple[int, str]]


def run_ansible(argv: list[str], ansible_dir: Path) -> tuple[int, str]:
    env = {**os.environ, "ANSIBLE_CONFIG": "ansible.cfg", "ANSIBLE_NOCOLOR": "1"}
    done = subprocess.run(argv, cwd=ansible_dir, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return done.returncode, done.stdout


def recap_changed(output: str) -> int:
    """Sum of changed= over the PLAY RECAP lines; -1 when there is no recap."""
    rows = re.findall(r"^\S+\s+: ok=\d+\s+changed=(\d+)", output, re.M)
    return sum(int(n) for n in rows) if rows else -1


def time_playbooks(
    playbooks: Sequence[tuple[str, list[str]]],
    runs: int,
    run: PlaybookRun,
    *,
    ansible_playbook: str = "ansible-playbook",
    inventory: str = "../inventories/local",
    say: Callable[[str], None] = print,
) -> list[Timing]:
    """Each (label, playbook + arguments) `runs` times in a row, wall-clock seconds and the
    recap's changed count of each run."""
    out: list[Timing] = []
    for label, args in playbooks:
        timing = Timing(label)
        for i in range(runs):
            start = time.monotonic()
            code, output = run([ansible_playbook, "-i", inventory, *args])
            elapsed = time.monotonic() - start
            if code != 0:
                tail = "\n".join(output.strip().splitlines()[-3:])
                timing.errors.append(f"run {i + 1}: exit {code}: {tail}")
                say(f"{label} run {i + 1}: failed (exit {code})")
                continue
            timing.seconds.append(elapsed)
            timing.changed.append(recap_changed(output))
            say(f"{label} run {i + 1}: {elapsed:.0f} s, changed={timing.changed[-1]}")
        out.append(timing)
    return out


# --- report sections ------------------------------------------------------------------------


def _median(values: Sequence[float]) -> str:
    from kafkakit.bench.report import fmt

    return fmt(statistics.median(values)) if values else "n/a"


def _spread(values: Sequence[float]) -> str:
    from kafkakit.bench.report import fmt

    return f"{fmt(min(values))}–{fmt(max(values))}" if values else "–"


def render_mirror_section(
    runs: Sequence[Mapping[str, float]], *, source: str, target: str, rate: int, seconds: int
) -> str:
    ok = [r for r in runs if "error" not in r]
    lines = [
        "## MirrorMaker 2 replication",
        "",
        f"{source} → {target}, {rate} records/s of 100 B for {seconds} s (acks=all, kafkakit.mirror.latency); "
        f"{len(ok)} of {len(runs)} runs succeeded. Latency = arrival in {target} − CreateTime in {source}, over the "
        "second half of the records (steady state). Throughput = records mirrored / seconds from the first record "
        "produced to the last one mirrored, so it includes MM2 discovering the new topic and cannot exceed the "
        "offered rate by much: it shows whether MM2 keeps up, not its ceiling.",
        "",
        "| metric | median | min–max |",
        "|---|---|---|",
    ]
    titles = {
        "records_per_sec": "throughput, records/s mirrored",
        "p50_ms": "latency p50 ms",
        "p95_ms": "latency p95 ms",
        "p99_ms": "latency p99 ms",
        "max_ms": "latency max ms",
        "lag_median_records": "lag median, records",
        "lag_max_records": "lag max, records",
        "received": "records mirrored",
    }
    for key, title in titles.items():
        values = [r[key] for r in ok if key in r and r[key] == r[key]]
        lines.append(f"| {title} | {_median(values)} | {_spread(values)} |")
    return "\n".join(lines) + "\n"


def render_timings_section(timings: Sequence[Timing], cold_lab_seconds: float | None) -> str:
    lines = [
        "## Operations (wall-clock seconds)",
        "",
        "| operation | runs | median s | min–max s | changed (recap) |",
        "|---|---|---|---|---|",
    ]
    if cold_lab_seconds is not None:
        cold = f"{cold_lab_seconds:.0f}"
        lines.append(f"| cold `make lab` (measured before this run, --cold-lab-seconds) | 1 | {cold} | – | – |")
    notes: list[str] = []
    for t in timings:
        changed = ", ".join(str(c) for c in t.changed) or "–"
        lines.append(f"| {t.label} | {len(t.seconds)} | {_median(t.seconds)} | {_spread(t.seconds)} | {changed} |")
        if t.label.startswith("no-op") and any(c != 0 for c in t.changed):
            notes.append(f"- {t.label}: a run reported changes, so it was not a no-op; its time is not a no-op time.")
        notes += [f"- {t.label} {e.splitlines()[0]}" for e in t.errors]
    if notes:
        lines += ["", *notes]
    return "\n".join(lines) + "\n"


# --- command line (for the Makefile) --------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m kafkakit.bench.lab", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    pb = sub.add_parser("plaintext-bootstrap", help="the BENCH listener's bootstrap list from an inventory")
    pb.add_argument("inventory", type=Path)
    pb.add_argument("--dc", default="dc1")
    pb.add_argument("--port", type=int, required=True)
    pp = sub.add_parser("property", help="one key of a .properties file")
    pp.add_argument("path", type=Path)
    pp.add_argument("key")
    args = p.parse_args(argv)
    try:
        if args.command == "plaintext-bootstrap":
            print(plaintext_bootstrap(yaml.safe_load(args.inventory.read_text()), args.dc, args.port))
        else:
            print(read_property(args.path, args.key))
    except (OSError, KeyError, ValueError) as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
