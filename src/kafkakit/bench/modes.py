"""ZooKeeper mode vs KRaft on the same lab (issue #14): the kraft-vs-zk cases of the plan.

Each scenario has one case per data centre, the ZooKeeper one first, so a round runs the two
modes one after the other like every other pair of the bench (plan.interleave):

    kraft-vs-zk/partitions/<mode>  one CreateTopics call for 1,000 partitions, RF 2, until every
                                   partition has a leader; then one DeleteTopics call
    kraft-vs-zk/failover/<mode>    SIGKILL of the active controller under an acks=all producer
    kraft-vs-zk/shutdown/<mode>    `systemctl stop kafka` of a broker leading 300 partitions
    kraft-vs-zk/throughput/<mode>  ProducerPerformance, RF 2, acks=all, min.insync.replicas=2

The first three run `python -m kafkakit.bench.scenarios`, one operation per run, ending in a
result line; the last is a producer case of the bench whose per-run topic that module places
on two brokers, so both data centres write through the same number of brokers.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass

from kafkakit.bench.plan import (
    PRODUCER_TOPIC_CONFIGS,
    RUN,
    Case,
    Endpoint,
    Tool,
    ToolSettings,
    _admin,
    _producer_args,
)

PREFIX = "kraft-vs-zk"
MODES = ("zookeeper", "kraft")
MODE_TITLES = {"zookeeper": "ZooKeeper", "kraft": "KRaft"}
SCENARIOS: tuple[Tool, ...] = ("partitions", "failover", "shutdown")
# Report order: the three scenarios, then the producer case.
CASE_KINDS = (*SCENARIOS, "throughput")

# Sizes, shared by the scenarios and the report's text. RF 2 everywhere: dc2 has two brokers.
REPLICATION = 2
PARTITION_TOPICS = 10
PARTITIONS_PER_TOPIC = 100
TOTAL_PARTITIONS = PARTITION_TOPICS * PARTITIONS_PER_TOPIC
FAILOVER_PARTITIONS = 6
FAILOVER_RATE = 200  # records/s: an ack every 5 ms, the resolution of the longest gap
SHUTDOWN_PARTITIONS = 300
THROUGHPUT_PARTITIONS = 6
THROUGHPUT_RECORD_SIZE = 1024
THROUGHPUT_CONFIGS = ("min.insync.replicas=2", *PRODUCER_TOPIC_CONFIGS)


@dataclass(frozen=True)
class ModeTarget:
    """One data centre of the comparison: its metadata mode and its admin's client settings
    (paths as the runner sees them)."""

    mode: str
    dc: str
    client_conf: str  # librdkafka .conf: the scenarios
    client_properties: str  # Java .properties: ProducerPerformance and TopicCommand
    bootstrap: str


@dataclass(frozen=True)
class ScenarioSettings:
    """How the runner starts kafkakit.bench.scenarios, and what it needs to reach the hosts."""

    inventory: str = "build/lab/hosts.yml"
    python: str = sys.executable
    # A command on a lab host is `<host_exec> <host> argv...`: the containers carry the host names.
    host_exec: str = "podman exec"
    controller_port: int = 9094

    def command(self, scenario: str, target: ModeTarget, *extra: str) -> list[str]:
        return [
            self.python, "-m", "kafkakit.bench.scenarios", scenario,
            "--inventory", self.inventory, "--client-conf", target.client_conf,
            "--dc", target.dc, "--mode", target.mode,
            "--host-exec", self.host_exec, "--controller-port", str(self.controller_port),
            *extra,
        ]  # fmt: skip


def case_name(kind: str, mode: str) -> str:
    return f"{PREFIX}/{kind}/{mode}"


def _topic(kind: str, mode: str) -> str:
    # Topic names cannot hold "/", and the bench- prefix keeps them with the bench's others.
    return f"bench-kvz-{kind}-{mode}"


def scenario_case(scenario: Tool, target: ModeTarget, settings: ScenarioSettings) -> Case:
    args = settings.command(scenario, target, "--tag", RUN)
    name = case_name(scenario, target.mode)
    return Case(name, scenario, tuple(args), topic=_topic(scenario, target.mode), mode=target.mode)


def throughput_case(target: ModeTarget, tools: ToolSettings, settings: ScenarioSettings) -> Case:
    """The tuned producer case of the bench, on a fresh topic per run laid out on two brokers."""
    ep = Endpoint("SASL_SSL", target.bootstrap, target.client_properties)
    topic = _topic("throughput", target.mode)
    run_topic = f"{topic}-{RUN}"
    configs = [a for c in THROUGHPUT_CONFIGS for a in ("--config", c)]
    create = settings.command(
        "topic", target, "--topic", run_topic,
        "--partitions", str(THROUGHPUT_PARTITIONS), "--replication", str(REPLICATION), *configs,
    )  # fmt: skip
    delete = [*_admin(tools, ep), "--delete", "--if-exists", "--topic", run_topic]
    args = _producer_args(tools, ep, run_topic, "tuned", "none", THROUGHPUT_RECORD_SIZE)
    return Case(
        name=case_name("throughput", target.mode),
        tool="producer",
        args=tuple(args),
        record_size=THROUGHPUT_RECORD_SIZE,
        before_run=(tuple(create),),
        after_run=(tuple(delete),),
        topic=topic,
        mode=target.mode,
    )


def mode_cases(
    targets: Sequence[ModeTarget], *, tools: ToolSettings | None = None, settings: ScenarioSettings | None = None
) -> list[Case]:
    """Every kraft-vs-zk case: one ZooKeeper and one KRaft data centre, in that order per kind."""
    if sorted(t.mode for t in targets) != sorted(MODES):
        raise ValueError(f"kraft-vs-zk needs one data centre of each mode {MODES}, got {[t.mode for t in targets]}")
    ordered = sorted(targets, key=lambda t: MODES.index(t.mode))
    tools, settings = tools or ToolSettings(), settings or ScenarioSettings()
    cases = [scenario_case(s, t, settings) for s in SCENARIOS for t in ordered]
    return cases + [throughput_case(t, tools, settings) for t in ordered]
