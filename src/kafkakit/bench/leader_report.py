"""The report's section of the leader-failover cases (issue #47): per metadata mode, the longest
window without an acknowledgement while a partition leader's host is lost, against the 6 s aim;
the times to a new leader and back into every ISR; the producer's accounting; and the session
settings each run read from the hosts, so a before/after pair of bench runs says what it compared."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kafkakit.bench.leader_cases import (
    BROKERS,
    MIN_INSYNC,
    PARTITIONS,
    PREFIX,
    RATE,
    RESTART_AFTER,
    TARGET_S,
    case_name,
)
from kafkakit.bench.modes import MODE_TITLES, MODES
from kafkakit.bench.plan import Case
from kafkakit.bench.stats import Summary, ratio


@dataclass(frozen=True)
class Row:
    metric: str
    title: str
    unit: str = "s"


TIMES: tuple[Row, ...] = (
    Row("ack_gap_s", "longest window without an ack, the lost leader's partition"),
    Row("any_ack_gap_s", "longest window without an ack, any partition"),
    Row("elected_s", "kill until the metadata names a new leader"),
    Row("isr_back_s", "start until the broker is back in every ISR"),
    Row("restarted_s", "kill until the start"),
)
COUNTS: tuple[Row, ...] = (
    Row("sent", "records sent", ""),
    Row("acked", "acknowledged", ""),
    Row("failed", "failed (delivery errors)", ""),
    Row("duplicated", "read back more than once", ""),
    Row("lost", "acknowledged but not read back", ""),
)
# The settings each mode's runs read from the hosts (kafkakit.bench.leader_failover).
SETTINGS: dict[str, tuple[Row, ...]] = {
    "zookeeper": (
        Row("cfg_zookeeper_session_timeout_ms", "zookeeper.session.timeout.ms (as the ensemble grants it)", "ms"),
        Row("cfg_zookeeper_tick_ms", "ZooKeeper's tickTime", "ms"),
        Row("cfg_replica_lag_time_max_ms", "replica.lag.time.max.ms", "ms"),
    ),
    "kraft": (
        Row("cfg_broker_session_timeout_ms", "broker.session.timeout.ms (the controllers')", "ms"),
        Row("cfg_broker_heartbeat_interval_ms", "broker.heartbeat.interval.ms", "ms"),
        Row("cfg_replica_lag_time_max_ms", "replica.lag.time.max.ms", "ms"),
    ),
}


def _fmt(value: float, unit: str) -> str:
    from kafkakit.bench.report import fmt

    return f"{fmt(value)} {unit}".rstrip()


def _cell(s: Summary | None, unit: str) -> str:
    from kafkakit.bench.report import fmt

    return f"{_fmt(s.median, unit)} ({fmt(s.minimum)}–{fmt(s.maximum)}, {s.n} runs)" if s else "–"


def aim(mode: str, window: Summary | None) -> str:
    """One sentence: whether the mode's longest window without an ack met the aim."""
    title = MODE_TITLES[mode]
    if window is None:
        return f"{title}: no successful run, no verdict on the {TARGET_S:g} s aim."
    figures = f"{_fmt(window.median, 's')} (the median of {window.n} runs; at most {_fmt(window.maximum, 's')})"
    if window.maximum <= TARGET_S:
        verdict = "meets the aim in every run"
    elif window.median <= TARGET_S:
        verdict = "meets the aim by the median, not in every run"
    else:
        verdict = "does not meet the aim"
    return f"{title}: the lost leader's partition waited {figures} for an acknowledgement: {verdict} of {TARGET_S:g} s."


def settings_said(mode: str, per: Mapping[str, Summary]) -> str:
    """The settings a mode's runs read, said once ("varied" when the runs disagree)."""
    parts = []
    for row in SETTINGS[mode]:
        s = per.get(row.metric)
        if s is None:
            continue
        value = f"{s.median:.0f} {row.unit}" if s.minimum == s.maximum else f"varied, {s.minimum:.0f}–{s.maximum:.0f}"
        parts.append(f"{row.title} {value}")
    return f"{MODE_TITLES[mode]}: {'; '.join(parts) or 'not read (no successful run)'}."


def spares_of(case: Case) -> list[str]:
    """The spare hosts a case's set-up adds (kafkakit.bench.spare up HOST... --dc ...)."""
    for command in case.setup:
        if "kafkakit.bench.spare" in command and "up" in command:
            start = command.index("up") + 1
            return list(command[start : command.index("--dc")])
    return []


def _what(cases: Mapping[str, Case], labels: Mapping[str, str]) -> list[str]:
    spares = {m: spares_of(c) for m, c in cases.items()}
    where = []
    for mode in MODES:
        if mode in cases:
            extra = f", with the spare broker(s) {', '.join(spares[mode])} added for the case" if spares[mode] else ""
            where.append(f"{MODE_TITLES[mode]}: {labels.get(mode, '?')}{extra}")
    return [
        f"{'. '.join(where)}. An independent idempotent acks=all producer sends {RATE} records/s round-robin to "
        f"{PARTITIONS} partitions (RF {BROKERS}, min.insync.replicas={MIN_INSYNC}), one led by each of {BROKERS} "
        "brokers, while the host of partition 0's leader is lost; in ZooKeeper mode that broker is not the "
        f"controller. It is started again {RESTART_AFTER:g} s after the kill. The aim (issue #47): no window "
        f"without an acknowledgement longer than {TARGET_S:g} s.",
        "",
        "The host, in the lab: a podman container booting systemd, which in the ZooKeeper data centre also runs one of "
        "the ensemble's servers. The case SIGKILLs the broker's process (`systemctl kill --signal=SIGKILL kafka`, "
        "then `systemctl stop kafka` so that systemd's own restart, 5 s later, does not come first); the container, "
        "its kernel and its ZooKeeper server stay up. The kernel closes the dead process's connections, so the "
        "clients and ZooKeeper see them closed at once: a host that vanishes (power, a partition) leaves them "
        "half-open, and a client then also waits for its own request timeout (docs/benchmark.md).",
        "",
        "The windows run from the kill until a few seconds of acknowledgements after the broker is back in every "
        "ISR. The new leader and the return are read from Metadata responses (every 0.1 s). The settings are those "
        "each run read from the hosts' files; a before/after comparison is two bench runs.",
    ]


def render_leader_section(
    cases: Sequence[Case], summaries: Mapping[str, Mapping[str, Summary]], labels: Mapping[str, str]
) -> str:
    """The section, for the leader-failover cases among `cases`; empty when there is none."""
    ours = {m: c for m in MODES for c in cases if c.name == case_name(m)}
    if not ours:
        return ""
    zk, kr = summaries.get(case_name("zookeeper"), {}), summaries.get(case_name("kraft"), {})
    lines = [f"## A leader's host lost ({PREFIX})", "", *_what(ours, labels), ""]
    lines += [
        "| metric | ZooKeeper median (min–max) | KRaft median (min–max) | KRaft/ZooKeeper |",
        "|---|---|---|---|",
    ]
    for row in (*TIMES, *COUNTS):
        z, k = zk.get(row.metric), kr.get(row.metric)
        r = f"**{ratio(k.median, z.median):.2f}**" if row.unit and z and k and z.median else "–"
        lines.append(f"| {row.title} | {_cell(z, row.unit)} | {_cell(k, row.unit)} | {r} |")
    sentences = [f"- {aim(m, (zk, kr)[MODES.index(m)].get('ack_gap_s'))}" for m in MODES if m in ours]
    worst = [
        f"{MODE_TITLES[m]} {row.metric} up to {s.maximum:.0f}"
        for m, per in (("zookeeper", zk), ("kraft", kr))
        for row in COUNTS[3:]
        if (s := per.get(row.metric)) is not None and s.maximum > 0
    ]
    sentences.append(
        f"- Not every acknowledged record came back exactly once: {', '.join(worst)}."
        if worst
        else "- Every acknowledged record was read back, none twice, in every successful run."
    )
    sentences.append("- Settings in effect: " + " ".join(settings_said(m, (zk, kr)[MODES.index(m)]) for m in ours))
    return "\n".join([*lines, "", *sentences]) + "\n"
