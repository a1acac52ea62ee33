"""Change data capture at a fixed commit rate (issue #48): the cdc-<rate> case of the plan.

One run (`python -m kafkakit.bench.cdc_run`, the lab side) commits rows to the lab's PostgreSQL
table public.orders at a fixed rate for a fixed time, from one psql session on the database host;
Debezium's connector orders-cdc (Kafka Connect, JsonConverter with schemas) writes each insert
to shop.public.orders; a read_committed consumer on the controller and, unless --no-spark, a run
of the Spark CDC job (spark-jobs/cdc.py) read them. The run ends in a result line
(parsers.format_scenario) with these figures, each interval starting at the row's commit in
PostgreSQL as Debezium reports it (`source.ts_ms`: the transaction's commit timestamp):

    rows_per_sec                 rows read from Kafka / s, from the first commit to the last arrival
    commit_rows_per_sec          rows committed / s (did the database keep the rate)
    kafka_p50_ms, kafka_p99_ms   commit → the consumer on the controller receives the record
    record_p50_ms, record_p99_ms commit → the record's timestamp (CreateTime: the Connect task's send)
    capture_p50_ms, ..._p99_ms   commit → Debezium's envelope `ts_ms` (the connector handled it)
    spark_p50_ms, spark_p99_ms   commit → the Spark micro-batch that read the record committed
    rows, duplicated, spark_rows

The lab's containers share the host's clock (one kernel), so the database's, the Connect
worker's, the Spark master's and the controller's timestamps are comparable there; on separate
machines the intervals carry their clock offsets.

This module holds what is computed (the pacing, the SQL, the envelope fields, percentiles, the
figures, the case, the report section); cdc_run talks to the lab.
"""

from __future__ import annotations

import json
import math
import re
import shlex
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from kafkakit.bench.plan import RUN, Case, Tool
from kafkakit.bench.stats import Summary

PREFIX = "cdc"
TOOL: Tool = "cdc"
TOPIC = "shop.public.orders"
TABLE = "public.orders"
DEFAULT_RATE = 500  # rows/s
DEFAULT_SECONDS = 60
# At most this many transactions a second: above it a transaction holds several rows. Each commit
# waits for its WAL flush, and the lab's database shares 2 cores with everything else.
MAX_TRANSACTIONS_PER_SECOND = 50
# The Spark CDC job's micro-batch interval in the bench (spark-jobs/cdc.py's default).
SPARK_TRIGGER = "2 seconds"
# A run's rows carry its tag in `customer`; it goes into SQL as a literal, so it is checked.
_TAG = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")


def case_name(rate: int) -> str:
    return f"{PREFIX}-{rate}"


# --- the commit-rate driver -----------------------------------------------------------------


@dataclass(frozen=True)
class WriterPlan:
    """`transactions` commits of `rows_per_transaction` rows each, one every `interval_s`."""

    rows_per_transaction: int
    interval_s: float
    transactions: int

    @property
    def rows(self) -> int:
        return self.rows_per_transaction * self.transactions

    @property
    def rate(self) -> float:
        return self.rows_per_transaction / self.interval_s


def pacing(rate: int, seconds: float, max_per_second: int = MAX_TRANSACTIONS_PER_SECOND) -> WriterPlan:
    """The fewest rows per transaction that keep to `max_per_second` commits, the interval that
    gives `rate` rows/s with them, and as many transactions as fill `seconds`."""
    if rate <= 0 or seconds <= 0 or max_per_second <= 0:
        raise ValueError(f"rate, seconds and commits per second must be > 0, got {rate}, {seconds}, {max_per_second}")
    per = math.ceil(rate / max_per_second)
    interval = per / rate
    return WriterPlan(per, interval, max(1, round(seconds / interval)))


def check_tag(tag: str) -> str:
    if not _TAG.match(tag):
        raise ValueError(f"tag {tag!r}: lower-case letters, digits and '-' only, at most 63")
    return tag


def writer_sql(plan: WriterPlan, tag: str) -> str:
    """One DO block that commits the plan's transactions on a fixed schedule: transaction i
    starts at t0 + i × interval, so a slow commit shortens the sleeps after it and the schedule,
    not the previous commit, sets the pace. psql sends it as one statement outside a transaction
    block, which is what lets the block COMMIT."""
    check_tag(tag)
    micros = round(plan.interval_s * 1_000_000)
    return (
        "DO $$\n"
        "DECLARE\n"
        "  t0 timestamptz := clock_timestamp();\n"
        "BEGIN\n"
        f"  FOR i IN 0..{plan.transactions - 1} LOOP\n"
        f"    PERFORM pg_sleep(GREATEST(0, EXTRACT(EPOCH FROM t0 + i * interval '{micros} microseconds'"
        " - clock_timestamp())));\n"
        f"    INSERT INTO {TABLE} (customer, amount)"
        f" SELECT '{tag}', 1 FROM generate_series(1, {plan.rows_per_transaction});\n"
        "    COMMIT;\n"
        "  END LOOP;\n"
        "END\n"
        "$$"
    )


def count_sql(tag: str) -> str:
    return f"SELECT count(*) FROM {TABLE} WHERE customer = '{check_tag(tag)}'"


# --- what a record says ---------------------------------------------------------------------


@dataclass(frozen=True)
class Change:
    """An insert of the run, as Debezium's envelope gives it."""

    id: int
    commit_ms: int  # source.ts_ms: the transaction's commit time in the database
    capture_ms: int  # ts_ms: when the connector handled the change


def insert_of(value: bytes | str | None, tag: str) -> Change | None:
    """The insert of a row tagged `tag` that a record of the connector's topic carries; None for
    any other record (another run's row, an update or delete, a tombstone)."""
    if value is None:
        return None
    raw = value.encode() if isinstance(value, str) else value
    if tag.encode() not in raw:  # most records of a busy topic are someone else's: skip the parse
        return None
    payload = json.loads(raw).get("payload") or {}
    after = payload.get("after") or {}
    if payload.get("op") != "c" or after.get("customer") != tag:
        return None
    return Change(int(after["id"]), int(payload["source"]["ts_ms"]), int(payload["ts_ms"]))


@dataclass(frozen=True)
class Arrival:
    change: Change
    partition: int
    offset: int
    record_ms: int  # the record's timestamp
    received_ms: float  # when the consumer on the controller had it (wall clock)


def first_arrivals(arrivals: Iterable[Arrival]) -> tuple[list[Arrival], int]:
    """The first arrival of each row, and how many arrivals repeated a row already seen."""
    seen: dict[int, Arrival] = {}
    repeats = 0
    for a in arrivals:
        if a.change.id in seen:
            repeats += 1
        else:
            seen[a.change.id] = a
    return list(seen.values()), repeats


# --- the Spark job's micro-batches ----------------------------------------------------------


@dataclass(frozen=True)
class SparkBatches:
    """From the job's checkpoint folder: each batch's end offsets of the topic (offsets/<id>,
    written when the batch is planned) and when it committed (the mtime of commits/<id>, written
    once its output version is complete)."""

    ends: dict[int, dict[int, int]]  # batch -> partition -> end offset (exclusive)
    committed_ms: dict[int, float]  # batch -> wall-clock ms


def parse_checkpoint(text: str, topic: str = TOPIC) -> SparkBatches:
    """Lines `offsets/<id> <the offset log's last line>` and `commits/<id> <mtime s>`, as
    cdc_run.checkpoint_command prints them; anything else is ignored."""
    ends: dict[int, dict[int, int]] = {}
    committed: dict[int, float] = {}
    for line in text.splitlines():
        kind, _, rest = line.strip().partition(" ")
        m = re.fullmatch(r"(offsets|commits)/(\d+)", kind)
        if not m or not rest:
            continue
        batch = int(m.group(2))
        if m.group(1) == "commits":
            committed[batch] = float(rest) * 1000
            continue
        try:
            sources = json.loads(rest)
        except json.JSONDecodeError:  # the metadata line of a file that has no offsets line yet
            continue
        if isinstance(sources, dict) and isinstance(sources.get(topic), dict):
            ends[batch] = {int(p): int(o) for p, o in sources[topic].items()}
    return SparkBatches(ends, committed)


def checkpoint_command(folder: str) -> str:
    """A shell command printing what parse_checkpoint reads from a checkpoint folder: the last line
    of each offset log file (its offsets, one source), and each commit file's mtime; nothing when
    the folder is not there yet. Spark's temporary files start with a dot, so the globs skip them."""
    return (
        f"cd {shlex.quote(folder)} 2>/dev/null || exit 0; "
        'for f in offsets/[0-9]*; do [ -f "$f" ] && printf \'%s %s\\n\' "$f" "$(tail -n 1 "$f")"; done; '
        "find commits -maxdepth 1 -type f -name '[0-9]*' -printf '%p %T@\\n' 2>/dev/null; exit 0"
    )


def covered(batches: SparkBatches, needed: Mapping[int, int]) -> bool:
    """Whether committed batches have read each partition up to `needed` (exclusive end offsets);
    a partition with nothing to read (0) needs no batch."""
    done = [e for b, e in batches.ends.items() if b in batches.committed_ms]
    return all(o <= 0 or any(e.get(p, 0) >= o for e in done) for p, o in needed.items())


def spark_visible_ms(arrival: Arrival, batches: SparkBatches) -> float | None:
    """When the first batch that read the record committed; None when that batch is unknown or
    has not committed (the record is then not counted, rather than given a later batch's time)."""
    reading = [b for b, e in batches.ends.items() if e.get(arrival.partition, 0) > arrival.offset]
    if not reading:
        return None
    return batches.committed_ms.get(min(reading))


# --- the figures ----------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank percentile: the smallest value with at least q% of the values at or below it."""
    if not values:
        raise ValueError("no values")
    if not 0 < q <= 100:
        raise ValueError(f"percentile {q} outside (0, 100]")
    ordered = sorted(values)
    return float(ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)])


def rate_since(start_ms: float, times_ms: Sequence[float]) -> float:
    """Events per second from `start_ms` to the last of `times_ms`, counting those after the start
    (events at the start itself open the interval rather than fill it); NaN for no interval."""
    after = [t for t in times_ms if t > start_ms]
    if not after:
        return math.nan
    return len(after) / ((max(after) - start_ms) / 1000)


def cdc_figures(arrivals: Sequence[Arrival], spark: SparkBatches | None = None) -> dict[str, float]:
    """The run's figures (see the module's docstring) from every arrival of its rows."""
    rows, repeats = first_arrivals(arrivals)
    if not rows:
        raise ValueError("no row of the run arrived")
    commits = [float(a.change.commit_ms) for a in rows]
    first_commit = min(commits)
    # Every arrival is after the first commit, so all rows count (1 ms at least: no division by 0).
    span_ms = max(1.0, max(a.received_ms for a in rows) - first_commit)
    figures = {"rows": float(len(rows)), "duplicated": float(repeats), "rows_per_sec": len(rows) / (span_ms / 1000)}
    commit_rate = rate_since(first_commit, commits)
    if not math.isnan(commit_rate):
        figures["commit_rows_per_sec"] = commit_rate
    intervals = {
        "kafka": [a.received_ms - a.change.commit_ms for a in rows],
        "record": [float(a.record_ms - a.change.commit_ms) for a in rows],
        "capture": [float(a.change.capture_ms - a.change.commit_ms) for a in rows],
    }
    if spark is not None:
        seen = [(a, spark_visible_ms(a, spark)) for a in rows]
        intervals["spark"] = [t - a.change.commit_ms for a, t in seen if t is not None]
        figures["spark_rows"] = float(len(intervals["spark"]))
    for name, values in intervals.items():
        if values:
            figures[f"{name}_p50_ms"] = percentile(values, 50)
            figures[f"{name}_p99_ms"] = percentile(values, 99)
    return figures


# --- the case -------------------------------------------------------------------------------


@dataclass(frozen=True)
class CdcTarget:
    """What a run needs: the lab's inventory and client folder (paths as the runner sees them),
    the data centre of the connector, the rate and length, whether Spark is measured too."""

    inventory: str
    client_dir: str
    dc: str = "dc1"
    rate: int = DEFAULT_RATE
    seconds: int = DEFAULT_SECONDS
    spark: bool = True
    python: str = sys.executable
    # A command on a lab host is `<host_exec> <host> argv...` (kafkakit.bench.nodes.host_runner).
    host_exec: str = "podman exec"


def cdc_case(target: CdcTarget) -> Case:
    args = [
        target.python, "-m", "kafkakit.bench.cdc_run",
        "--inventory", target.inventory, "--client-dir", target.client_dir, "--dc", target.dc,
        "--rate", str(target.rate), "--seconds", str(target.seconds),
        "--host-exec", target.host_exec, "--tag", RUN,
    ]  # fmt: skip
    if not target.spark:
        args.append("--no-spark")
    return Case(case_name(target.rate), TOOL, tuple(args), topic=TOPIC)


def _option(args: Sequence[str], name: str, default: str = "?") -> str:
    return args[args.index(name) + 1] if name in args else default


# --- the report section ---------------------------------------------------------------------

# (metric, title), in the section's order.
CDC_METRICS: tuple[tuple[str, str], ...] = (
    ("rows_per_sec", "rows/s, commit → read from Kafka (achieved)"),
    ("commit_rows_per_sec", "rows/s committed"),
    ("kafka_p50_ms", "commit → read from Kafka, p50 ms"),
    ("kafka_p99_ms", "commit → read from Kafka, p99 ms"),
    ("record_p50_ms", "commit → record timestamp (CreateTime), p50 ms"),
    ("record_p99_ms", "commit → record timestamp (CreateTime), p99 ms"),
    ("capture_p50_ms", "commit → Debezium's ts_ms, p50 ms"),
    ("capture_p99_ms", "commit → Debezium's ts_ms, p99 ms"),
    ("spark_p50_ms", "commit → Spark batch committed, p50 ms"),
    ("spark_p99_ms", "commit → Spark batch committed, p99 ms"),
    ("rows", "rows committed and read"),
    ("duplicated", "records repeating a row"),
    ("spark_rows", "rows timed in Spark"),
)


def _what(case: Case) -> str:
    rate, seconds = _option(case.args, "--rate"), _option(case.args, "--seconds")
    spark = "--no-spark" not in case.args
    text = (
        f"`{case.name}`: {rate} rows/s committed to PostgreSQL's `{TABLE}` for {seconds} s, in transactions of "
        f"as few rows as keep to {MAX_TRANSACTIONS_PER_SECOND} commits/s, from one psql session on the database host "
        f"(a DO block on a fixed schedule); Debezium's orders-cdc writes each insert to `{TOPIC}`. Every interval "
        "starts at the row's commit as Debezium reports it (`source.ts_ms`, the transaction's commit timestamp in "
        "the database) and ends: when a read_committed consumer on the controller (librdkafka defaults) received "
        "the record, i.e. once Connect's transaction holding it committed (read from Kafka); at the record's "
        "timestamp, CreateTime as the kit leaves the topic, which Connect's producer stamps when the task sends "
        "the record (Debezium sets none); at the envelope's `ts_ms`, when the connector handled the change."
    )
    if spark:
        text += (
            f" Spark: a run of spark-jobs/cdc.py (trigger {SPARK_TRIGGER}) started and caught up before the commits; "
            "a row is visible in its output when the first micro-batch that read it has committed (the mtime of the "
            "checkpoint's commits/<batch>, written right after the batch's output version is complete)."
        )
    return text + (
        " Throughput: rows read / seconds from the first commit to the last arrival, so it includes the last "
        "row's latency and cannot exceed the commit rate by much. Percentiles are nearest-rank over every row of "
        "a run; the table gives their median over the rounds. The lab's containers share the host's clock, so "
        "timestamps taken on different hosts are comparable here."
    )


def render_cdc_section(cases: Sequence[Case], summaries: Mapping[str, Mapping[str, Summary]]) -> str:
    """The section, for the cdc cases among `cases`; empty when there is none."""
    from kafkakit.bench.report import fmt

    chosen = [c for c in cases if c.tool == TOOL]
    if not chosen:
        return ""
    lines = ["## Change data capture: PostgreSQL → Kafka → Spark", ""]
    for case in chosen:
        per = summaries.get(case.name, {})
        lines += [_what(case), "", "| metric | median | min–max | runs |", "|---|---|---|---|"]
        for metric, title in CDC_METRICS:
            s = per.get(metric)
            if s:
                lines.append(f"| {title} | {fmt(s.median)} | {fmt(s.minimum)}–{fmt(s.maximum)} | {s.n} |")
        if not per:
            lines.append("| (no successful run) | – | – | 0 |")
        lines.append("")
    return "\n".join(lines)
