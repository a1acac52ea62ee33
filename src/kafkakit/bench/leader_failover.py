"""leader-failover, one run against one data centre (kafkakit.bench.leader_cases): the host of a
partition's leader lost under an idempotent acks=all producer, and back RESTART_AFTER s later.

"Host" in the lab: a podman container booting systemd (one per lab host), which in a ZooKeeper
data centre also runs one of the ensemble's servers. What is lost is the broker process on it:
`systemctl kill --signal=SIGKILL kafka`, as the kraft-vs-zk failover kills its controller, then
`systemctl stop kafka` at once so that systemd's own restart (Restart=on-failure, RestartSec=5)
does not bring it back early; `systemctl start kafka` RESTART_AFTER s after the kill. The container,
its kernel and its ZooKeeper server stay up: the kernel closes the dead JVM's connections, so clients
and ZooKeeper see them closed at once, where a host that vanishes (power, a network partition)
leaves them half-open until a timeout of their own (docs/benchmark.md says what that adds).

The topic: PARTITIONS partitions, RF 3, min.insync.replicas 2, on three brokers, each leading one
(an explicit assignment: the first replica leads), partition 0 the lost host's. In ZooKeeper mode
that broker is not the controller (its loss would add a controller failover); KRaft brokers never
are. The producer numbers its records and sends RATE a second, round-robin over the partitions.

Figures of a run:
  ack_gap_s      the longest stretch without an acknowledgement of partition 0, from the kill until
                 a few seconds of acks after the broker is back in every ISR
  any_ack_gap_s  the same for acknowledgements of any partition: the lost broker followed the other
                 two, and acks=all waits for every ISR member until the ISR drops it
  elected_s      from the kill until a Metadata response names another leader of partition 0
  isr_back_s     from the start until a Metadata response has the broker in every partition's ISR
                 again (after it had left)
  restarted_s    when the start was issued, after the kill
  sent, acked, failed: the producer's records; duplicated, lost: the topic read back, records
                 found more than once and acknowledged ones missing (idempotence: none of either)
  cfg_*          the settings in effect, read from the hosts' files (Kafka's or ZooKeeper's default
                 where a file does not set one): what the window is measured with
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from confluent_kafka import Consumer, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient

from kafkakit.bench.acks import PartitionAcks, longest_ack_gap, produce_round_robin
from kafkakit.bench.layout import data_brokers, spread
from kafkakit.bench.leader_cases import (
    BROKERS,
    MIN_INSYNC,
    PARTITIONS,
    RATE,
    RESTART_AFTER,
    VICTIM_PARTITION,
    topic_name,
)
from kafkakit.bench.nodes import (
    BROKER_UNIT,
    Context,
    create_laid_out,
    elect_preferred_leaders,
    start_again,
    systemctl,
    wait_for,
    zookeeper_controller,
)
from kafkakit.cluster.admin import admin_from_conf, delete_topics_retrying
from kafkakit.rules.sessions import granted, zookeeper_bounds

WARMUP_SECONDS = 2  # of acks before the kill
TAIL_SECONDS = 2  # of partition 0's acks after the broker is back in every ISR
TIMEOUT = 240.0  # s from the kill until the broker is back in every ISR
CONTROLLER_WAIT = 60.0
LEAD_WAIT = 30.0  # s for the metadata to show the laid-out leader before the kill
METADATA_TIMEOUT = 2.0  # s, one Metadata request while a broker is gone
WATCH_EVERY = 0.1  # s between two Metadata requests: the resolution of elected_s and isr_back_s
READ_TIMEOUT = 60.0

# Where the roles write the files (kafka_common's kafka_conf_dir, the zookeeper role's conf dir),
# and what applies where they set nothing (Kafka 3.9/4.x and ZooKeeper 3.8 defaults).
SERVER_PROPERTIES = "/etc/kafka/server.properties"
CONTROLLER_PROPERTIES = "/etc/kafka/controller.properties"
ZOO_CFG = "/etc/zookeeper/zoo.cfg"
KAFKA_DEFAULTS = {
    "zookeeper.session.timeout.ms": 18000,
    "broker.session.timeout.ms": 9000,
    "broker.heartbeat.interval.ms": 2000,
    "replica.lag.time.max.ms": 30000,
}
ZOOKEEPER_DEFAULTS = {"tickTime": 2000, "minSessionTimeout": -1, "maxSessionTimeout": -1}

# partition -> (leader, ISR), from one Metadata response
States = Mapping[int, tuple[int, Sequence[int]]]


def layout(brokers: Sequence[int], avoid: int | None) -> tuple[int, list[list[int]]]:
    """The broker whose host is lost (the lowest id but `avoid`, the ZooKeeper-mode controller)
    and the topic's assignment: BROKERS brokers, it and the next ones by id, each leading one
    partition, partition 0 led by it."""
    victim = data_brokers(brokers, avoid, 1)[0]
    others = [b for b in sorted(brokers) if b != victim][: BROKERS - 1]
    if len(others) < BROKERS - 1:
        raise ValueError(f"{BROKERS} brokers needed, got {sorted(brokers)}")
    return victim, spread(PARTITIONS, [victim, *others], BROKERS)


@dataclass
class Watch:
    """What the metadata showed after the kill: when partition 0 got another leader, and when
    the lost broker was back in every partition's ISR, after it had left and after the start."""

    victim: int
    partitions: int = PARTITIONS
    elected_at: float | None = None
    left_isr: bool = False
    back_at: float | None = None

    def see(self, now: float, states: States, started_at: float | None) -> None:
        if len(states) != self.partitions:
            return  # a partial answer (a topic error): not an observation
        leader, _ = states[VICTIM_PARTITION]
        if self.elected_at is None and leader not in (self.victim, -1):
            self.elected_at = now
        # Leadership moving off a dead broker takes it out of the ISR too (both modes).
        if self.elected_at is not None or any(self.victim not in isr for _, isr in states.values()):
            self.left_isr = True
        back = all(self.victim in isr for _, isr in states.values())
        if self.back_at is None and started_at is not None and self.left_isr and back:
            self.back_at = now

    @property
    def done(self) -> bool:
        return self.elected_at is not None and self.back_at is not None

    def state(self) -> str:
        return f"new leader seen: {self.elected_at is not None}, left the ISR: {self.left_isr}, back: {self.back_at}"


def accounting(acked: Iterable[int], read: Iterable[int]) -> tuple[int, int]:
    """(duplicated, lost): records read more than once (each extra copy), and acknowledged
    records that were not read at all."""
    counts = Counter(read)
    return sum(c - 1 for c in counts.values() if c > 1), len(set(acked) - set(counts))


def figures(
    log: PartitionAcks,
    killed_at: float,
    started_at: float,
    watch: Watch,
    end: float,
    read: Iterable[int],
) -> dict[str, float]:
    assert watch.elected_at is not None and watch.back_at is not None
    duplicated, lost = accounting(log.numbers, read)
    return {
        "ack_gap_s": longest_ack_gap(log.times(VICTIM_PARTITION), killed_at, end),
        "any_ack_gap_s": longest_ack_gap(log.times(), killed_at, end),
        "elected_s": watch.elected_at - killed_at,
        "isr_back_s": watch.back_at - started_at,
        "restarted_s": started_at - killed_at,
        "sent": float(log.sent),
        "acked": float(len(log.numbers)),
        "failed": float(len(log.failed)),
        "duplicated": float(duplicated),
        "lost": float(lost),
    }


def properties(text: str) -> dict[str, str]:
    """key=value lines of a .properties or zoo.cfg file."""
    out = {}
    for line in text.splitlines():
        key, sep, value = line.strip().partition("=")
        if sep and not key.startswith(("#", "!")):
            out[key.strip()] = value.strip()
    return out


def _int(props: Mapping[str, str], key: str, defaults: Mapping[str, int]) -> int:
    return int(props.get(key, defaults[key]))


def zookeeper_settings(server: Mapping[str, str], zoo: Mapping[str, str]) -> dict[str, float]:
    """The session a ZooKeeper-mode broker gets (what it asks for, within the ensemble's bounds)."""
    tick = _int(zoo, "tickTime", ZOOKEEPER_DEFAULTS)
    bounds = zookeeper_bounds(
        tick, _int(zoo, "minSessionTimeout", ZOOKEEPER_DEFAULTS), _int(zoo, "maxSessionTimeout", ZOOKEEPER_DEFAULTS)
    )
    return {
        "cfg_zookeeper_session_timeout_ms": float(
            granted(_int(server, "zookeeper.session.timeout.ms", KAFKA_DEFAULTS), bounds)
        ),
        "cfg_zookeeper_tick_ms": float(tick),
        "cfg_replica_lag_time_max_ms": float(_int(server, "replica.lag.time.max.ms", KAFKA_DEFAULTS)),
    }


def kraft_settings(server: Mapping[str, str], controller: Mapping[str, str]) -> dict[str, float]:
    """The lease the active controller gives (its file) and the broker's heartbeat (the broker's)."""
    return {
        "cfg_broker_session_timeout_ms": float(_int(controller, "broker.session.timeout.ms", KAFKA_DEFAULTS)),
        "cfg_broker_heartbeat_interval_ms": float(_int(server, "broker.heartbeat.interval.ms", KAFKA_DEFAULTS)),
        "cfg_replica_lag_time_max_ms": float(_int(server, "replica.lag.time.max.ms", KAFKA_DEFAULTS)),
    }


def settings_in_effect(ctx: Context, host: str) -> dict[str, float]:
    """The settings, read from the lost broker's host and a controller or ZooKeeper server of
    its data centre (only the keys named above are kept: the files hold passwords)."""
    server = properties(ctx.run(host, ["cat", SERVER_PROPERTIES]))
    if ctx.dc.controllers:
        controller = next(iter(ctx.dc.controllers.values()))
        return kraft_settings(server, properties(ctx.run(controller, ["cat", CONTROLLER_PROPERTIES])))
    if not ctx.dc.zookeepers:
        raise RuntimeError(f"{ctx.dc.name} runs ZooKeeper mode but the inventory names no zookeeper host in it")
    return zookeeper_settings(server, properties(ctx.run(ctx.dc.zookeepers[0], ["cat", ZOO_CFG])))


def partition_states(admin: AdminClient, topic: str) -> dict[int, tuple[int, tuple[int, ...]]]:
    """partition -> (leader, ISR) from one Metadata request; empty when it failed."""
    try:
        meta = admin.list_topics(topic=topic, timeout=METADATA_TIMEOUT).topics.get(topic)
    except KafkaException:
        return {}
    if meta is None or meta.error is not None:
        return {}
    return {p.id: (p.leader, tuple(p.isrs)) for p in meta.partitions.values()}


def read_numbers(conf: Mapping[str, str], topic: str, partitions: int, timeout: float = READ_TIMEOUT) -> list[int]:
    """Every record of the topic, from the start to the end each partition had when asked."""
    consumer = Consumer(
        {**conf, "group.id": f"{topic}-read", "enable.auto.commit": "false", "auto.offset.reset": "earliest"}
    )
    try:
        ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1] for p in range(partitions)}
        consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        seen = {p: 0 for p in range(partitions)}
        numbers: list[int] = []
        deadline = time.monotonic() + timeout
        while any(seen[p] < ends[p] for p in seen):
            if time.monotonic() > deadline:
                raise TimeoutError(f"read {len(numbers)} records of {topic} in {timeout:.0f}s, not all of {ends}")
            msg = consumer.poll(0.5)
            if msg is None or msg.error():
                continue
            seen[msg.partition()] = msg.offset() + 1
            numbers.append(int(msg.value()))
        return numbers
    finally:
        consumer.close()


def current_controller(conf: Mapping[str, str]) -> int:
    """The ZooKeeper-mode controller, waiting out an election left by the case before (bounded)."""
    deadline = time.monotonic() + CONTROLLER_WAIT
    while (controller := zookeeper_controller(conf)) < 0:
        if time.monotonic() > deadline:
            raise RuntimeError(f"no active controller after {CONTROLLER_WAIT:.0f}s")
        time.sleep(1)
    return controller


def watch_failover(
    ctx: Context, admin: AdminClient, topic: str, host: str, victim: int, killed_at: float, restart_after: float
) -> tuple[Watch, float]:
    """Metadata every WATCH_EVERY s from the kill until the broker is back in every ISR; the
    broker started again `restart_after` s after the kill. Returns the watch and the start's time."""
    watch = Watch(victim)
    started_at: float | None = None
    while not watch.done:
        now = time.monotonic()
        if now - killed_at > TIMEOUT:
            raise TimeoutError(f"broker {victim} not back in every ISR of {topic} in {TIMEOUT:.0f}s: {watch.state()}")
        if started_at is None and now - killed_at >= restart_after:
            started_at = time.monotonic()
            systemctl(ctx.run, host, "start", BROKER_UNIT)
        watch.see(time.monotonic(), partition_states(admin, topic), started_at)
        time.sleep(WATCH_EVERY)
    assert started_at is not None
    return watch, started_at


def leader_failover(ctx: Context, restart_after: float = RESTART_AFTER) -> dict[str, float]:
    kraft = bool(ctx.dc.controllers)
    avoid = None if kraft else current_controller(ctx.conf)
    victim, assignment = layout(list(ctx.dc.brokers), avoid)
    host = ctx.dc.brokers[victim]
    settings = settings_in_effect(ctx, host)
    topic = topic_name(ctx.dc.mode, ctx.tag)
    create_laid_out(ctx, topic, assignment, {"min.insync.replicas": str(MIN_INSYNC)})
    log, stop = PartitionAcks(), threading.Event()
    args = (ctx.conf, topic, PARTITIONS, RATE, log, stop)
    load = threading.Thread(target=produce_round_robin, args=args, daemon=True)
    admin = admin_from_conf(ctx.conf)
    killed = False
    try:
        load.start()
        try:
            wait_for("acks before the kill", lambda: len(log.numbers) >= RATE * WARMUP_SECONDS, 60)
            # The topic was laid out around the leader and the controller found above.
            leads = lambda: partition_states(admin, topic).get(VICTIM_PARTITION, (-1, ()))[0] == victim  # noqa: E731
            wait_for(f"broker {victim} leading partition {VICTIM_PARTITION} of {topic}", leads, LEAD_WAIT)
            if not kraft and zookeeper_controller(ctx.conf) == victim:
                raise RuntimeError(f"broker {victim} became the controller before the kill")
            killed_at = time.monotonic()
            systemctl(ctx.run, host, "kill", "--signal=SIGKILL", BROKER_UNIT)
            killed = True
            systemctl(ctx.run, host, "stop", BROKER_UNIT)  # no restart by systemd before the case's own
            watch, started_at = watch_failover(ctx, admin, topic, host, victim, killed_at, restart_after)
            assert watch.back_at is not None
            back = watch.back_at
            tail = RATE // PARTITIONS * TAIL_SECONDS
            end = wait_for("acks after the return", lambda: log.count_after(back, VICTIM_PARTITION) >= tail, TIMEOUT)
        finally:
            stop.set()
            load.join(90)
        result = figures(log, killed_at, started_at, watch, end, read_numbers(ctx.conf, topic, PARTITIONS))
    finally:
        if killed:
            start_again(ctx, host, BROKER_UNIT)  # a no-op start when it runs; then the data centre healthy
            if note := elect_preferred_leaders(ctx.conf):
                print(note, flush=True)
        delete_topics_retrying(ctx.conf, [topic])
    return {**result, **settings}
