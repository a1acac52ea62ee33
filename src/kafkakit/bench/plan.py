"""What the benchmark measures: the cases, the command line of each, and which pairs to compare.

Commands are argv lists with two placeholders filled in at run time: RECORDS (the record count,
fixed by --records or sized from a calibration run by --seconds) and RUN (a per-run tag, so
each consumer run joins a fresh group and reads from the start).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

Tool = Literal["producer", "consumer", "latency", "partitions", "failover", "shutdown", "leader-failover", "cdc"]

RECORDS = "{records}"
RUN = "{run}"

MAIN_CLASSES: dict[str, str] = {
    "producer": "org.apache.kafka.tools.ProducerPerformance",
    "consumer": "org.apache.kafka.tools.ConsumerPerformance",
    "latency": "org.apache.kafka.tools.EndToEndLatency",
    "topics": "org.apache.kafka.tools.TopicCommand",
    "configs": "kafka.admin.ConfigCommand",
}
SCRIPTS: dict[str, tuple[str, ...]] = {
    "producer": ("kafka-producer-perf-test.sh",),
    "consumer": ("kafka-consumer-perf-test.sh",),
    "latency": ("kafka-run-class.sh", MAIN_CLASSES["latency"]),
    "topics": ("kafka-topics.sh",),
    "configs": ("kafka-configs.sh",),
}

# Client-side tuning, the only kind that can be measured side by side in one run against one
# cluster. 3.9's producer defaults are linger.ms=0 and batch.size=16384.
TUNED_PRODUCER_PROPS: tuple[str, ...] = ("linger.ms=20", "batch.size=262144")
TUNED_CONSUMER_ARGS: tuple[str, ...] = ("--fetch-size", "4194304")
# Each producer run writes into a topic of its own, deleted right after it, so runs start alike
# and the lab's small data volumes never hold more than about one run's data.
PRODUCER_TOPIC_CONFIGS: tuple[str, ...] = ("segment.bytes=33554432",)
# Broker-side variants, measured side by side with the kit's brokers by setting them as dynamic
# cluster-wide defaults for the length of one run (the kit's brokers keep Kafka's thread counts).
BROKER_VARIANTS: dict[str, tuple[str, ...]] = {
    "fetchers2": ("num.replica.fetchers=2",),
    "fewthreads": ("num.io.threads=4", "num.network.threads=2"),
}
# ConsumerPerformance gives up after this long without a record (its default is 10 s).
CONSUMER_TIMEOUT_MS = 30000

COMPRESSIONS = ("none", "lz4", "zstd")
RECORD_SIZES = (100, 1024)


@dataclass(frozen=True)
class ToolSettings:
    """How to start Kafka's tools where the runner executes them."""

    kafka_home: str = "/opt/kafka"
    java: str = "java"
    jvm_options: tuple[str, ...] = ("-Xmx512m",)
    # The kit's archives carry libs/ only (no bin/), so the default starts the main classes with
    # java directly; set this where an install has the Apache bin/*.sh scripts.
    scripts_dir: str | None = None

    def launcher(self, tool: str) -> list[str]:
        if self.scripts_dir:
            first, *rest = SCRIPTS[tool]
            return [f"{self.scripts_dir}/{first}", *rest]
        # java expands the libs/* wildcard itself, so no shell is needed between runner and JVM.
        return [self.java, *self.jvm_options, "-cp", f"{self.kafka_home}/libs/*", MAIN_CLASSES[tool]]


@dataclass(frozen=True)
class Endpoint:
    """A listener to benchmark: its security protocol, bootstrap list and client config file
    (a path as the runner sees it; None for a listener that needs no client settings)."""

    protocol: str
    bootstrap: str
    config: str | None = None


@dataclass(frozen=True)
class Case:
    name: str
    tool: Tool
    args: tuple[str, ...]
    tuning: str = "tuned"
    protocol: str = "SASL_SSL"
    compression: str = "none"
    record_size: int = 1024
    # Run once before the first repetition (topic creation), and once after the last one.
    setup: tuple[tuple[str, ...], ...] = ()
    teardown: tuple[tuple[str, ...], ...] = ()
    # Run before and after every run of the tool (RUN filled in); the "after" ones even when it fails.
    before_run: tuple[tuple[str, ...], ...] = ()
    after_run: tuple[tuple[str, ...], ...] = ()
    # A consumer case reads what this producer command wrote beforehand (same size and codec).
    fill: tuple[str, ...] | None = None
    topic: str = ""
    # The metadata mode of the data centre a kraft-vs-zk case runs against (kafkakit.bench.modes):
    # "zookeeper" or "kraft"; empty for the client cases.
    mode: str = ""
    # Cases of another group than the default ("") run in a plan of their own after it, so what
    # their set-up adds to the lab (a spare broker) and their teardown removes frames only their
    # own rounds, and the other cases never see it (runner.run_plan).
    group: str = ""

    def command(self, records: int, run: str = "0") -> list[str]:
        return _fill_in(self.args, records, run)

    def fill_command(self, records: int) -> list[str] | None:
        return _fill_in(self.fill, records, "fill") if self.fill else None

    def before(self, run: str) -> list[list[str]]:
        return [_fill_in(c, 0, run) for c in self.before_run]

    def after(self, run: str) -> list[list[str]]:
        return [_fill_in(c, 0, run) for c in self.after_run]


def _fill_in(args: Iterable[str], records: int, run: str) -> list[str]:
    return [a.replace(RECORDS, str(records)).replace(RUN, run) for a in args]


def case_name(tool: Tool, protocol: str, tuning: str, compression: str, record_size: int) -> str:
    if tool == "latency":
        # EndToEndLatency sends one record at a time with its own settings: no tuning or codec.
        return f"latency-{protocol.lower()}-{record_size}"
    return f"{tool}-{protocol.lower()}-{tuning}-{compression}-{record_size}"


def _admin(tools: ToolSettings, ep: Endpoint, tool: str = "topics") -> list[str]:
    config = ["--command-config", ep.config] if ep.config else []
    return [*tools.launcher(tool), "--bootstrap-server", ep.bootstrap, *config]


def _broker_defaults(tools: ToolSettings, ep: Endpoint, configs: Sequence[str]) -> tuple[list[str], list[str]]:
    """ConfigCommand lines that set `configs` as dynamic defaults of every broker, and remove them."""
    base = [*_admin(tools, ep, "configs"), "--alter", "--entity-type", "brokers", "--entity-default"]
    keys = ",".join(c.split("=", 1)[0] for c in configs)
    return [*base, "--add-config", ",".join(configs)], [*base, "--delete-config", keys]


def _producer_args(
    tools: ToolSettings, ep: Endpoint, topic: str, tuning: str, compression: str, size: int
) -> list[str]:
    props = [f"bootstrap.servers={ep.bootstrap}", "acks=all", f"compression.type={compression}"]
    if tuning == "tuned":
        props += TUNED_PRODUCER_PROPS
    cmd = [*tools.launcher("producer"), "--topic", topic, "--num-records", RECORDS, "--record-size", str(size)]
    cmd += ["--throughput", "-1", "--producer-props", *props]
    # --producer-props wins over the file, so the endpoint's bootstrap list is the one used.
    return cmd + (["--producer.config", ep.config] if ep.config else [])


def make_case(
    tool: Tool,
    endpoint: Endpoint,
    *,
    tuning: str = "tuned",
    compression: str = "none",
    record_size: int = 1024,
    tools: ToolSettings | None = None,
    partitions: int = 3,
    replication: int = 3,
    topic_prefix: str = "bench-",
) -> Case:
    tools = tools or ToolSettings()
    ep = endpoint
    if tool == "latency":
        tuning, compression = "stock", "none"
    if tuning in BROKER_VARIANTS and tool != "producer":
        raise ValueError(f"broker variant {tuning!r} is measured with the producer only")
    name = case_name(tool, ep.protocol, tuning, compression, record_size)
    topic = f"{topic_prefix}{name}"

    def create_command(name: str) -> list[str]:
        create = [*_admin(tools, ep), "--create", "--if-not-exists", "--topic", name]
        return create + ["--partitions", str(partitions), "--replication-factor", str(replication)]

    create = create_command(topic)
    delete = [*_admin(tools, ep), "--delete", "--if-exists", "--topic", topic]
    fill: list[str] | None = None
    setup: tuple[tuple[str, ...], ...] = (tuple(create),)
    teardown: tuple[tuple[str, ...], ...] = (tuple(delete),)
    before: list[tuple[str, ...]] = []
    after: list[tuple[str, ...]] = []
    if tool == "producer":
        run_topic = f"{topic}-{RUN}"
        run_create = create_command(run_topic)
        for c in PRODUCER_TOPIC_CONFIGS:
            run_create += ["--config", c]
        before.append(tuple(run_create))
        after.append(tuple([*_admin(tools, ep), "--delete", "--if-exists", "--topic", run_topic]))
        setup = teardown = ()
        if tuning in BROKER_VARIANTS:
            on, off = _broker_defaults(tools, ep, BROKER_VARIANTS[tuning])
            before.insert(0, tuple(on))
            after.append(tuple(off))
        client_tuning = "tuned" if tuning in BROKER_VARIANTS else tuning
        args = _producer_args(tools, ep, run_topic, client_tuning, compression, record_size)
    elif tool == "consumer":
        fill = _producer_args(tools, ep, topic, "tuned", compression, record_size)
        args = [*tools.launcher("consumer"), "--bootstrap-server", ep.bootstrap, "--topic", topic]
        args += ["--messages", RECORDS, "--timeout", str(CONSUMER_TIMEOUT_MS), "--hide-header"]
        args += ["--group", f"{topic_prefix}{name}-{RUN}"]
        args += list(TUNED_CONSUMER_ARGS) if tuning == "tuned" else []
        args += ["--consumer.config", ep.config] if ep.config else []
    else:
        # Pre-created above: EndToEndLatency would otherwise create its topic with one replica,
        # which acks=all cannot write to under min.insync.replicas=2.
        args = [*tools.launcher("latency"), ep.bootstrap, topic, RECORDS, "all", str(record_size)]
        args += [ep.config] if ep.config else []
    return Case(
        name=name,
        tool=tool,
        args=tuple(args),
        tuning=tuning,
        protocol=ep.protocol,
        compression=compression,
        record_size=record_size,
        setup=setup,
        teardown=teardown,
        before_run=tuple(before),
        after_run=tuple(after),
        fill=tuple(fill) if fill else None,
        topic=topic,
    )


def build_plan(
    endpoints: Sequence[Endpoint],
    *,
    tools: ToolSettings | None = None,
    partitions: int = 3,
    replication: int = 3,
    topic_prefix: str = "bench-",
) -> list[Case]:
    """The default matrix, one factor varied at a time around the secure, tuned baseline.

    On the first SASL_SSL endpoint (else the first one): producers at both record sizes tuned
    and stock without compression, tuned with lz4 and zstd; consumers at 1024 B the same way;
    end-to-end latency at both sizes. On every other endpoint only the tuned, uncompressed
    producer and consumer and the latency cases, for the protocol comparison.
    """
    if not endpoints:
        raise ValueError("build_plan needs at least one endpoint")
    main = next((e for e in endpoints if e.protocol == "SASL_SSL"), endpoints[0])
    opts = {"tools": tools, "partitions": partitions, "replication": replication, "topic_prefix": topic_prefix}
    cases: list[Case] = []
    for size in RECORD_SIZES:
        cases.append(make_case("producer", main, tuning="tuned", record_size=size, **opts))
        cases.append(make_case("producer", main, tuning="stock", record_size=size, **opts))
        for variant in BROKER_VARIANTS:
            cases.append(make_case("producer", main, tuning=variant, record_size=size, **opts))
        for codec in COMPRESSIONS[1:]:
            cases.append(make_case("producer", main, compression=codec, record_size=size, **opts))
    cases.append(make_case("consumer", main, tuning="tuned", **opts))
    cases.append(make_case("consumer", main, tuning="stock", **opts))
    for codec in COMPRESSIONS[1:]:
        cases.append(make_case("consumer", main, compression=codec, **opts))
    cases += [make_case("latency", main, record_size=size, **opts) for size in RECORD_SIZES]
    for ep in endpoints:
        if ep is main:
            continue
        for size in RECORD_SIZES:
            cases.append(make_case("producer", ep, record_size=size, **opts))
        cases.append(make_case("consumer", ep, **opts))
        cases += [make_case("latency", ep, record_size=size, **opts) for size in RECORD_SIZES]
    names = [c.name for c in cases]
    if len(set(names)) != len(names):
        raise ValueError(f"two endpoints share a protocol, so case names clash: {sorted(names)}")
    return cases


def matches(name: str, pattern: str) -> bool:
    """An exact name or a shell glob; a pattern also names the cases under it as a path, so
    `kraft-vs-zk/partitions` selects both of its modes and `kraft-vs-zk` every such case."""
    return fnmatch.fnmatchcase(name, pattern) or fnmatch.fnmatchcase(name, f"{pattern.rstrip('/')}/*")


def select(cases: Sequence[Case], only: Sequence[str] | None) -> list[Case]:
    """Cases whose name matches one of the patterns (see matches())."""
    if not only:
        return list(cases)
    chosen = [c for c in cases if any(matches(c.name, p) for p in only)]
    unmatched = [p for p in only if not any(matches(c.name, p) for c in cases)]
    if unmatched:
        raise ValueError(f"no case matches {unmatched}; cases: {', '.join(c.name for c in cases)}")
    return chosen


@dataclass(frozen=True)
class Comparison:
    """numerator / denominator, two cases that differ in one factor only."""

    label: str
    tool: Tool
    numerator: str
    denominator: str


# (factor, value on top, value below): the ratios the issue asks for.
_DIRECTIONS: tuple[tuple[str, str, str], ...] = (
    ("tuning", "tuned", "stock"),
    *(("tuning", variant, "tuned") for variant in BROKER_VARIANTS),
    ("protocol", "SASL_SSL", "PLAINTEXT"),
    ("compression", "lz4", "none"),
    ("compression", "zstd", "none"),
)
# mode too: a kraft-vs-zk case never pairs with a client case of the same settings.
_FACTORS = ("tool", "tuning", "protocol", "compression", "record_size", "mode")


def comparisons(cases: Sequence[Case]) -> list[Comparison]:
    out: list[Comparison] = []
    for factor, top, bottom in _DIRECTIONS:
        for a in cases:
            if getattr(a, factor) != top:
                continue
            for b in cases:
                same_rest = all(getattr(a, f) == getattr(b, f) for f in _FACTORS if f != factor)
                if same_rest and getattr(b, factor) == bottom:
                    out.append(Comparison(f"{top}/{bottom}", a.tool, a.name, b.name))
    return out


def interleave(cases: Sequence[Case], repetitions: int) -> list[tuple[int, Case]]:
    """Every case once per round, round after round (ABAB...), so slow drift in the lab (page
    cache, log segments, a neighbour's load) hits both sides of a comparison alike."""
    return [(rep, case) for rep in range(repetitions) for case in cases]
