"""The report's ZooKeeper vs KRaft section: per kraft-vs-zk case the median of each mode, the
ratio KRaft/ZooKeeper and one sentence saying which mode wins and by how much."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kafkakit.bench.modes import (
    CASE_KINDS,
    FAILOVER_PARTITIONS,
    FAILOVER_RATE,
    MODE_TITLES,
    PARTITION_TOPICS,
    PARTITIONS_PER_TOPIC,
    PREFIX,
    REPLICATION,
    SHUTDOWN_PARTITIONS,
    THROUGHPUT_CONFIGS,
    THROUGHPUT_PARTITIONS,
    THROUGHPUT_RECORD_SIZE,
    TOTAL_PARTITIONS,
    case_name,
)
from kafkakit.bench.plan import Case
from kafkakit.bench.stats import Summary, ratio

# Within this fraction of each other, neither mode wins.
DRAW = 0.05


@dataclass(frozen=True)
class ModeMetric:
    kind: str  # partitions, failover, shutdown or throughput
    metric: str
    title: str
    unit: str
    higher_is_better: bool = False
    # The case's sentence is about its first metric, in these words.
    subject: str = ""
    better: str = "faster"


MODE_METRICS: tuple[ModeMetric, ...] = (
    ModeMetric("partitions", "create_s", f"create {TOTAL_PARTITIONS:,} partitions until all have a leader", "s",
               subject=f"Creating {TOTAL_PARTITIONS:,} partitions"),
    ModeMetric("partitions", "delete_s", "delete them until the metadata lists none", "s"),
    ModeMetric("failover", "ack_gap_s", "longest wait for an ack across the failover", "s",
               subject="The longest wait for an acknowledgement while the active controller fails over",
               better="shorter"),
    ModeMetric("failover", "metadata_write_s", "kill until a topic can be created", "s"),
    ModeMetric("failover", "failed_sends", "failed sends", ""),
    ModeMetric("shutdown", "stop_s", f"`systemctl stop kafka`, broker leading {SHUTDOWN_PARTITIONS} partitions", "s",
               subject=f"Controlled shutdown of a broker leading {SHUTDOWN_PARTITIONS} partitions"),
    ModeMetric("shutdown", "restart_s", "start until the data centre is healthy", "s"),
    ModeMetric("throughput", "records_per_sec", "producer records/s", "records/s", higher_is_better=True,
               subject="Producer throughput at equal durability", better="more records/s"),
    ModeMetric("throughput", "p99_ms", "producer p99 latency", "ms"),
)  # fmt: skip


def _fmt(value: float, unit: str) -> str:
    from kafkakit.bench.report import fmt

    return f"{fmt(value)} {unit}".rstrip()


def verdict(m: ModeMetric, zookeeper: Summary | None, kraft: Summary | None) -> str:
    """One sentence: which mode wins on the case's headline metric, and by how much."""
    subject = m.subject or m.title
    if zookeeper is None or kraft is None:
        missing = " and ".join(MODE_TITLES[k] for k, s in (("zookeeper", zookeeper), ("kraft", kraft)) if s is None)
        return f"{subject}: no verdict, {missing} has no successful run."
    z, k = zookeeper.median, kraft.median
    figures = f"{_fmt(k, m.unit)} with KRaft against {_fmt(z, m.unit)} with ZooKeeper"
    if math.isclose(z, k, rel_tol=DRAW):
        return f"{subject}: neither mode wins, {figures} (within {DRAW:.0%})."
    kraft_wins = k > z if m.higher_is_better else k < z
    winner, loser = (kraft, zookeeper) if kraft_wins else (zookeeper, kraft)
    high, low = max(z, k), min(z, k)
    by = f" by {high / low:.2f}× ({m.better})" if low > 0 else ""
    sentence = f"{subject}: {MODE_TITLES['kraft' if kraft_wins else 'zookeeper']} wins{by}, {figures}"
    if winner.minimum <= loser.maximum and loser.minimum <= winner.maximum:
        sentence += "; the min–max ranges overlap, so the lead is within the run-to-run spread"
    return sentence + "."


def _cell(s: Summary | None, unit: str) -> str:
    from kafkakit.bench.report import fmt

    return f"{_fmt(s.median, unit)} ({fmt(s.minimum)}–{fmt(s.maximum)}, {s.n} runs)" if s else "–"


def _what(labels: Mapping[str, str]) -> list[str]:
    """What each case measures, and what else differs between the two data centres (Markdown
    paragraphs, one line each)."""
    return [
        f"ZooKeeper mode: {labels.get('zookeeper', '?')}. KRaft: {labels.get('kraft', '?')}. The two data centres "
        "also differ in Kafka version and broker count, so these figures compare the deployments the kit makes of "
        "either mode, not the metadata mode alone. Both modes ran in the same rounds, one after the other.",
        "",
        f"- partitions: one CreateTopics call, {PARTITION_TOPICS} topics × {PARTITIONS_PER_TOPIC} partitions "
        f"({TOTAL_PARTITIONS:,}), RF {REPLICATION}, timed until the metadata shows a leader for every partition; "
        "then one DeleteTopics call, timed until the metadata lists none of them.",
        f"- failover: an idempotent acks=all producer sends {FAILOVER_RATE} records/s to {FAILOVER_PARTITIONS} "
        f"partitions (RF {REPLICATION}, min.insync.replicas={REPLICATION}) while the active controller is "
        "SIGKILLed: in ZooKeeper mode the broker that is controller, in KRaft the quorum leader (a dedicated "
        "controller). The topic sits on two brokers other than the killed one, so no partition leader dies with it "
        "and the window measures the metadata failover's effect on the data path, not a leader election. The "
        "second figure is the failover as an administrator sees it: from the kill until a CreateTopics call "
        "succeeds. ZooKeeper mode cannot elect a new controller before the dead broker's ZooKeeper session expires "
        "(zookeeper.session.timeout.ms=18000). The killed process is started again and its data centre is healthy "
        "before the next case.",
        f"- shutdown: a topic of {SHUTDOWN_PARTITIONS} partitions (RF {REPLICATION}) created with one broker as "
        "every partition's preferred leader; `systemctl stop kafka` on that broker is timed (the controlled "
        "shutdown moves its leaders away first); in ZooKeeper mode it is not the controller. Then it is started "
        "and timed until the data centre is healthy.",
        f"- throughput: ProducerPerformance, the bench's tuned producer with {THROUGHPUT_RECORD_SIZE} B records and "
        f"acks=all, on a fresh topic per run of {THROUGHPUT_PARTITIONS} partitions on two brokers of the data "
        f"centre ({', '.join(THROUGHPUT_CONFIGS)}, RF {REPLICATION}); both data centres' runs send as many records "
        "with the same client.",
    ]


def render_mode_section(
    cases: Sequence[Case], summaries: Mapping[str, Mapping[str, Summary]], labels: Mapping[str, str]
) -> str:
    """The section, for the kraft-vs-zk kinds that are among `cases`; empty when there is none."""
    names = {c.name for c in cases}
    kinds = [k for k in CASE_KINDS if case_name(k, "zookeeper") in names or case_name(k, "kraft") in names]
    if not kinds:
        return ""
    lines = ["## ZooKeeper vs KRaft (kraft-vs-zk)", "", *_what(labels), ""]
    lines += [
        "| case | metric | ZooKeeper median (min–max) | KRaft median (min–max) | KRaft/ZooKeeper |",
        "|---|---|---|---|---|",
    ]
    sentences: list[str] = []
    for kind in kinds:
        zk, kr = summaries.get(case_name(kind, "zookeeper"), {}), summaries.get(case_name(kind, "kraft"), {})
        for i, m in enumerate(x for x in MODE_METRICS if x.kind == kind):
            z, k = zk.get(m.metric), kr.get(m.metric)
            r = f"**{ratio(k.median, z.median):.2f}**" if z and k and z.median else "–"
            lines.append(f"| `{PREFIX}/{kind}` | {m.title} | {_cell(z, m.unit)} | {_cell(k, m.unit)} | {r} |")
            if i == 0:
                sentences.append(f"- {verdict(m, z, k)}")
    return "\n".join([*lines, "", *sentences]) + "\n"
