"""One run of a kraft-vs-zk scenario against one data centre (kafkakit.bench.modes), ending in
a result line for the bench's runner (parsers.format_scenario):

    python -m kafkakit.bench.scenarios partitions --inventory build/lab/hosts.yml \\
        --client-conf build/lab/dc2/client.conf --dc dc2 --mode kraft --tag 1
    python -m kafkakit.bench.scenarios partitions ... --delete-after-logs /var/lib/kafka/data
                                          (the delete timed once every replica's log exists)
    python -m kafkakit.bench.scenarios failover|shutdown ...     (same options)
    python -m kafkakit.bench.scenarios leader-failover ... --restart-after 10
                                          (kafkakit.bench.leader_failover, the leader-failover cases)
    python -m kafkakit.bench.scenarios topic ... --topic T --partitions 6 --replication 2 \\
        --config min.insync.replicas=2                            (a topic on the first brokers)

Every run leaves the data centre as it found it: its topics deleted, what it stopped or killed
started again with the cluster healthy, leaders back on their preferred brokers.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import yaml
from confluent_kafka.admin import AdminClient, NewTopic

from kafkakit.bench.failover import failover
from kafkakit.bench.layout import data_brokers, led_by, spread
from kafkakit.bench.leader_cases import RESTART_AFTER
from kafkakit.bench.leader_failover import leader_failover
from kafkakit.bench.modes import MODES, PARTITION_TOPICS, PARTITIONS_PER_TOPIC, REPLICATION, SHUTDOWN_PARTITIONS
from kafkakit.bench.nodes import (
    BROKER_UNIT,
    Context,
    all_led,
    create_laid_out,
    data_centre,
    elect_preferred_leaders,
    host_runner,
    leaders,
    listed,
    start_again,
    systemctl,
    unit_result,
    wait_brokers_healthy,
    wait_for,
    zookeeper_controller,
)
from kafkakit.bench.parsers import format_scenario
from kafkakit.cluster.admin import admin_from_conf, delete_topics_retrying, failed_futures, read_client_conf

ADMIN_TIMEOUT = 150.0  # s, for one CreateTopics or DeleteTopics call of 1,000 partitions
SETTLE_TIMEOUT = 300.0


def _check(errors: list[str], what: str) -> None:
    if errors:
        raise RuntimeError(f"{what}: {'; '.join(errors[:3])}")


def replica_dirs(admin: AdminClient, topics: list[str]) -> dict[int, set[str]]:
    """Per broker id, the log directory names (`<topic>-<partition>`) its replicas of `topics` need."""
    meta = admin.list_topics(timeout=10).topics
    wanted: dict[int, set[str]] = {}
    for t in topics:
        for p in meta[t].partitions.values():
            for broker in p.replicas:
                wanted.setdefault(broker, set()).add(f"{t}-{p.id}")
    return wanted


def logs_present(ctx: Context, wanted: Mapping[int, set[str]], data_dir: str) -> bool:
    """Whether every broker has a log directory for each of its replicas in `wanted`."""
    for broker, dirs in wanted.items():
        present = set(ctx.run(ctx.dc.brokers[broker], ["ls", "-1", data_dir]).split())
        if not dirs <= present:
            return False
    return True


def partitions(ctx: Context, logs_dir: str | None = None) -> dict[str, float]:
    """One CreateTopics call for PARTITION_TOPICS topics totalling 1,000 partitions, timed until
    the metadata shows a leader for every one; then one DeleteTopics call, timed until the
    metadata lists none of them. With `logs_dir` (the brokers' data directory), the delete waits
    first until every replica's log exists on its broker (`logs_s`, from the CreateTopics call):
    whether a slow delete is the creation's work the brokers still do after the metadata names
    the leaders."""
    names = [ctx.topic("partitions", f"-{i}") for i in range(PARTITION_TOPICS)]
    # The socket must wait as long as the call may take (the kit's admin default is 10 s, and the
    # first creation of 1,000 partitions on the lab took longer).
    admin = admin_from_conf({**ctx.conf, "socket.timeout.ms": str(int((ADMIN_TIMEOUT + 10) * 1000))})
    timeouts = {"operation_timeout": ADMIN_TIMEOUT, "request_timeout": ADMIN_TIMEOUT + 10}
    try:
        start = time.monotonic()
        topics = [NewTopic(n, PARTITIONS_PER_TOPIC, REPLICATION) for n in names]
        _check(failed_futures(admin.create_topics(topics, **timeouts)), "create")
        ready = lambda: all_led(admin, names, PARTITIONS_PER_TOPIC)  # noqa: E731
        created = wait_for("a leader for every partition", ready, SETTLE_TIMEOUT) - start
        figures = {"create_s": created}
        if logs_dir is not None:
            wanted = replica_dirs(admin, names)
            present = lambda: logs_present(ctx, wanted, logs_dir)  # noqa: E731
            figures["logs_s"] = wait_for("every replica's log on its broker", present, SETTLE_TIMEOUT) - start
        start = time.monotonic()
        _check(failed_futures(admin.delete_topics(names, **timeouts)), "delete")
        gone = wait_for("the topics gone from the metadata", lambda: not listed(admin, names), SETTLE_TIMEOUT)
    finally:
        delete_topics_retrying(ctx.conf, names)  # after a failure; an unknown topic counts as deleted
    return {**figures, "delete_s": gone - start}


def shutdown(ctx: Context) -> dict[str, float]:
    """`systemctl stop kafka` of a broker that leads SHUTDOWN_PARTITIONS partitions (placed on it
    as their preferred leader), then its start until the data centre is healthy again. In
    ZooKeeper mode never the controller, whose stop would add a controller failover."""
    avoid = None if ctx.dc.controllers else zookeeper_controller(ctx.conf)
    target = data_brokers(list(ctx.dc.brokers), avoid, 1)[0]
    host = ctx.dc.brokers[target]
    topic = ctx.topic("shutdown")
    create_laid_out(ctx, topic, led_by(SHUTDOWN_PARTITIONS, target, list(ctx.dc.brokers)), {})
    admin = admin_from_conf(ctx.conf)
    down = False
    try:
        led = lambda: set(leaders(admin, [topic]).get(topic, [])) == {target}  # noqa: E731
        wait_for(f"broker {target} leading {topic}", led, 120)
        start = time.monotonic()
        down = True
        systemctl(ctx.run, host, "stop", BROKER_UNIT)
        stop_s = time.monotonic() - start
        result = unit_result(ctx.run, host, BROKER_UNIT)
        if result != "success":
            raise RuntimeError(f"{host}: {BROKER_UNIT} stopped with result {result!r}, not a clean controlled shutdown")
        start = time.monotonic()
        systemctl(ctx.run, host, "start", BROKER_UNIT)
        wait_brokers_healthy(ctx.conf, ctx.dc)
        down = False
        restart_s = time.monotonic() - start
    finally:
        if down:
            start_again(ctx, host, BROKER_UNIT)
        delete_topics_retrying(ctx.conf, [topic])
        if note := elect_preferred_leaders(ctx.conf):
            print(note, flush=True)
    return {"stop_s": stop_s, "restart_s": restart_s}


def create_topic(ctx: Context, topic: str, partitions: int, replication: int, configs: Sequence[str]) -> None:
    """A topic on the data centre's first `replication` brokers, so data centres of different
    sizes write through as many brokers each."""
    brokers = data_brokers(list(ctx.dc.brokers), None, replication)
    config = dict(c.split("=", 1) for c in configs)
    create_laid_out(ctx, topic, spread(partitions, brokers, replication), config)


SCENARIOS: dict[str, Callable[[Context], dict[str, float]]] = {
    "partitions": partitions,
    "failover": failover,
    "shutdown": shutdown,
    "leader-failover": leader_failover,
}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m kafkakit.bench.scenarios", description=__doc__.split("\n\n")[0])
    p.add_argument("scenario", choices=[*SCENARIOS, "topic"])
    p.add_argument("--inventory", type=Path, required=True, help="the lab inventory (build/lab/hosts.yml)")
    p.add_argument("--client-conf", type=Path, required=True, help="the data centre's admin client.conf")
    p.add_argument("--dc", required=True)
    p.add_argument("--mode", choices=MODES, required=True, help="the metadata mode the data centre must run")
    p.add_argument("--host-exec", default="podman exec", help="command prefix to run argv on a host (%(default)s)")
    p.add_argument("--controller-port", type=int, default=9094, help="the KRaft controllers' port (%(default)s)")
    p.add_argument("--tag", default="0", help="in the run's topic names")
    p.add_argument(
        "--restart-after", type=float, default=RESTART_AFTER, help="leader-failover: s from the kill to the start"
    )
    p.add_argument(
        "--delete-after-logs",
        metavar="DATA_DIR",
        help="partitions: before the delete, wait until every replica's log exists in the brokers' DATA_DIR",
    )
    p.add_argument("--topic", help="topic: its name")
    p.add_argument("--partitions", type=int, help="topic: its partition count")
    p.add_argument("--replication", type=int, default=REPLICATION, help="topic: replicas, on as many brokers")
    p.add_argument("--config", action="append", default=[], metavar="KEY=VALUE", help="topic: a topic config")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    dc = data_centre(yaml.safe_load(args.inventory.read_text()), args.dc)
    if dc.mode != args.mode:
        print(f"{args.dc} runs {dc.mode} mode, not {args.mode}", file=sys.stderr)
        return 2
    ctx = Context(dc, read_client_conf(args.client_conf), host_runner(args.host_exec), args.controller_port, args.tag)
    if args.scenario == "topic":
        if not args.topic or not args.partitions:
            print("topic needs --topic and --partitions", file=sys.stderr)
            return 2
        create_topic(ctx, args.topic, args.partitions, args.replication, args.config)
        return 0
    if args.scenario == "leader-failover":
        figures = leader_failover(ctx, args.restart_after)
    elif args.scenario == "partitions":
        figures = partitions(ctx, args.delete_after_logs)
    else:
        figures = SCENARIOS[args.scenario](ctx)
    print(format_scenario(args.scenario, figures), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
