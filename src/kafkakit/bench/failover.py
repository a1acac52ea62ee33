"""kraft-vs-zk/failover: SIGKILL of the active controller under an acks=all producer.

ZooKeeper mode: the active controller is a broker (describe_cluster), killed with
`systemctl kill --signal=SIGKILL kafka`; KRaft: the quorum leader (kafka-metadata-quorum), killed
the same way through its `kafka-controller` unit. The producer writes to a topic laid out on two
brokers that are not the killed one, so no partition leader dies with it and the window is the
metadata failover's effect on the data path, not a leader election.

Figures: ack_gap_s, the longest stretch without an acknowledgement from the kill until the
producer has had a few more seconds of acks after the failover; metadata_write_s, from the kill
until a CreateTopics call succeeds (the failover as an administrator sees it); failed_sends.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from concurrent.futures import wait as wait_futures

from confluent_kafka import KafkaError
from confluent_kafka.admin import AdminClient, NewTopic

from kafkakit.bench.acks import AckLog, longest_ack_gap, produce_steadily
from kafkakit.bench.layout import data_brokers, spread
from kafkakit.bench.modes import FAILOVER_PARTITIONS, FAILOVER_RATE, REPLICATION
from kafkakit.bench.nodes import (
    BROKER_UNIT,
    CONTROLLER_UNIT,
    Context,
    active_controller,
    create_laid_out,
    elect_preferred_leaders,
    start_again,
    systemctl,
    wait_for,
    zookeeper_controller,
)
from kafkakit.cluster.admin import admin_from_conf, delete_topics_retrying, kafka_error

WARMUP_SECONDS = 2  # of acks before the kill
TAIL_SECONDS = 2  # of acks after the first successful metadata write
PROBE_EVERY = 0.5  # s between two CreateTopics attempts: the resolution of metadata_write_s
PROBE_TIMEOUT = 30.0
FAILOVER_TIMEOUT = 120.0


def _created(future: Future) -> bool:
    exc = future.exception()
    if exc is None:
        return True
    err = kafka_error(exc)
    # An attempt that timed out on the client may have been carried out all the same.
    return err is not None and err.code() == KafkaError.TOPIC_ALREADY_EXISTS


def first_metadata_write(conf: Mapping[str, str], prefix: str, made: list[str], timeout: float) -> float:
    """The monotonic time at which the first of a series of topic creations succeeded. One more
    attempt every PROBE_EVERY s, each from a fresh client (one made before the failover keeps
    asking the old controller) and each left to run, so a request that a broker holds until the
    new controller answers counts when it is answered. `made`: every name tried, to delete."""
    done: list[float] = []
    pending: list[tuple[AdminClient, Future]] = []
    deadline = time.monotonic() + timeout
    try:
        while not done:
            if time.monotonic() > deadline:
                raise TimeoutError(f"no topic could be created within {timeout:.0f}s of the kill")
            name = f"{prefix}-{len(made)}"
            made.append(name)
            admin = admin_from_conf(conf)
            topic = NewTopic(name, 1, REPLICATION)
            future = admin.create_topics([topic], request_timeout=PROBE_TIMEOUT, operation_timeout=PROBE_TIMEOUT)[name]
            future.add_done_callback(lambda f: done.append(time.monotonic()) if _created(f) else None)
            pending.append((admin, future))
            until = time.monotonic() + PROBE_EVERY
            while not done and time.monotonic() < until:
                time.sleep(0.01)
        return min(done)
    finally:
        # Let the other attempts end before their clients go (one may still create its topic).
        wait_futures([f for _, f in pending], timeout=PROBE_TIMEOUT + 5)


CONTROLLER_WAIT = 60.0  # s


def named_other(ctx: Context, victim: int) -> Callable[[], bool]:
    """ZooKeeper mode: whether the brokers' metadata names a controller other than the killed
    one. A ZooKeeper-mode client sends CreateTopics to the controller its metadata names, so
    until then every attempt waits on the dead broker; dozens of them (a new TLS + SCRAM client
    each) piled up on the lab's two cores and none got through in 120 s. KRaft brokers forward
    CreateTopics to whichever controller leads, so the attempts there start at once. Each check
    is one synchronous Metadata request, so checks do not pile up."""
    return lambda: zookeeper_controller(ctx.conf) not in (victim, -1)


def failover(ctx: Context) -> dict[str, float]:
    kraft = bool(ctx.dc.controllers)
    # Right after another scenario an election may still be going on: wait for one (bounded).
    deadline = time.monotonic() + CONTROLLER_WAIT
    while (victim := active_controller(ctx.run, ctx.dc, ctx.conf, ctx.controller_port)) < 0:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{ctx.dc.name} has no active controller after {CONTROLLER_WAIT:.0f}s")
        time.sleep(1)
    host, unit = (ctx.dc.controllers[victim], CONTROLLER_UNIT) if kraft else (ctx.dc.brokers[victim], BROKER_UNIT)
    brokers = data_brokers(list(ctx.dc.brokers), None if kraft else victim, REPLICATION)
    topic = ctx.topic("failover")
    probes: list[str] = []
    config = {"min.insync.replicas": str(REPLICATION)}
    create_laid_out(ctx, topic, spread(FAILOVER_PARTITIONS, brokers, REPLICATION), config)
    log, stop = AckLog(), threading.Event()
    load = threading.Thread(target=produce_steadily, args=(ctx.conf, topic, FAILOVER_RATE, log, stop), daemon=True)
    load.start()
    killed = False
    try:
        wait_for("acks before the kill", lambda: len(log.acked) >= FAILOVER_RATE * WARMUP_SECONDS, 60)
        # The topic was laid out around the controller found above: it must not have moved since.
        now = active_controller(ctx.run, ctx.dc, ctx.conf, ctx.controller_port)
        if now != victim:
            raise RuntimeError(f"the active controller moved from {victim} to {now} before the kill")
        killed_at = time.monotonic()
        systemctl(ctx.run, host, "kill", "--signal=SIGKILL", unit)
        killed = True
        if not kraft:
            wait_for("metadata naming a live controller", named_other(ctx, victim), FAILOVER_TIMEOUT)
        written = first_metadata_write(ctx.conf, ctx.topic("failover", "-probe"), probes, FAILOVER_TIMEOUT)
        # A tail of acks after the failover, so that a stall ending late still falls in the window.
        tail = FAILOVER_RATE * TAIL_SECONDS
        end = wait_for("acks after the failover", lambda: log.count_after(written) >= tail, FAILOVER_TIMEOUT)
    finally:
        stop.set()
        load.join(90)
        if killed:
            start_again(ctx, host, unit)
            if note := elect_preferred_leaders(ctx.conf):
                print(note, flush=True)
        delete_topics_retrying(ctx.conf, [topic, *probes])
    return {
        "ack_gap_s": longest_ack_gap(log.acked, killed_at, end),
        "metadata_write_s": written - killed_at,
        "failed_sends": float(len(log.failed)),
    }
