"""The lab as the kraft-vs-zk scenarios see it: who is who in a data centre (from the
inventory), commands on a host (`podman exec <host> ...`: the lab's containers carry the host
names, and the tests start their faults the same way), the active controller in either mode,
partition leaders, and waiting for health after a restart."""

from __future__ import annotations

import shlex
import subprocess
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from confluent_kafka import ElectionType, KafkaException
from confluent_kafka.admin import AdminClient, NewTopic

from kafkakit.bench.lab import _groups_and_hostvars
from kafkakit.cluster.admin import admin_from_conf, create_topics_retrying, wait_healthy
from kafkakit.cluster.kraft import parse_status, quorum_health

# What the kafka_broker and kafka_controller roles install.
BROKER_UNIT = "kafka"
CONTROLLER_UNIT = "kafka-controller"
TOOL_RUNNER = "/usr/local/bin/kafkakit-run"
QUORUM_TOOL = "org.apache.kafka.tools.MetadataQuorumCommand"
CONTROLLER_CLIENT = "/etc/kafka/controller-client.properties"
MAX_QUORUM_LAG = 20  # kafka_controller_max_lag
HEALTH_TIMEOUT = 300.0
POLL = 0.2

HostRun = Callable[[str, list[str]], str]


@dataclass(frozen=True)
class DataCentre:
    name: str
    brokers: dict[int, str]  # broker id -> host, by id
    controllers: dict[int, str]  # KRaft controller id -> host; none in ZooKeeper mode
    ips: dict[str, str]  # host -> private_ip
    zookeepers: tuple[str, ...] = ()  # the ZooKeeper servers' hosts; none in KRaft mode

    @property
    def mode(self) -> str:
        return "kraft" if self.controllers else "zookeeper"


def data_centre(inventory: Mapping[str, Any], dc: str) -> DataCentre:
    """The brokers and controllers of `dc` in a lab inventory (build/lab/hosts.yml)."""
    groups, hostvars = _groups_and_hostvars(inventory)
    members = groups.get(dc, [])

    def ids(group: str, key: str) -> dict[int, str]:
        return dict(sorted((int(hostvars[h][key]), h) for h in groups.get(group, []) if h in members))

    brokers = ids("kafka_broker", "broker_id")
    if not brokers:
        raise ValueError(f"no kafka_broker host in data centre {dc!r}")
    ips = {h: str(hostvars[h]["private_ip"]) for h in members}
    zookeepers = tuple(h for h in groups.get("zookeeper", []) if h in members)
    return DataCentre(dc, brokers, ids("kafka_controller", "controller_id"), ips, zookeepers)


@dataclass(frozen=True)
class Context:
    """What a scenario run works with: the data centre, its admin's librdkafka settings, commands
    on its hosts, the controllers' port and the run's tag (in its topic names)."""

    dc: DataCentre
    conf: dict[str, str]
    run: HostRun
    controller_port: int
    tag: str

    def topic(self, kind: str, suffix: str = "") -> str:
        return f"bench-kvz-{kind}-{self.dc.mode}-{self.tag}{suffix}"


def host_runner(prefix: str = "podman exec") -> HostRun:
    """run(host, argv) -> stdout, through `<prefix> <host> argv...`; raises when it fails."""
    base = shlex.split(prefix)

    def run(host: str, argv: list[str]) -> str:
        command = [*base, host, *argv]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"exit {done.returncode}: {shlex.join(command)}\n{done.stderr[-1000:]}")
        return done.stdout

    return run


def wait_for(what: str, check: Callable[[], bool], timeout: float) -> float:
    """Poll check() until it holds; the monotonic time at which it did."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not within {timeout:.0f}s")
        time.sleep(POLL)
    return time.monotonic()


def leaders(admin: AdminClient, topics: list[str]) -> dict[str, list[int]]:
    """The partition leaders (-1: none yet) of those of `topics` the answering broker's
    metadata lists without an error."""
    meta = admin.list_topics(timeout=10).topics
    return {t: [p.leader for p in meta[t].partitions.values()] for t in topics if t in meta and meta[t].error is None}


def listed(admin: AdminClient, topics: list[str]) -> list[str]:
    """Those of `topics` the answering broker's metadata still lists, with an error or not."""
    meta = admin.list_topics(timeout=10).topics
    return [t for t in topics if t in meta]


def all_led(admin: AdminClient, topics: list[str], partitions: int) -> bool:
    found = leaders(admin, topics)
    return len(found) == len(topics) and all(len(ls) == partitions and min(ls) >= 0 for ls in found.values())


def laid_out_topic(topic: str, assignment: list[list[int]], config: Mapping[str, str]) -> NewTopic:
    """A NewTopic with an explicit replica assignment. confluent-kafka 2.16 wants the partition
    count to match it (its -1 default reads as "the broker's default", refused beside one) and no
    replication factor."""
    return NewTopic(topic, num_partitions=len(assignment), replica_assignment=assignment, config=dict(config))


def create_laid_out(ctx: Context, topic: str, assignment: list[list[int]], config: Mapping[str, str]) -> None:
    """Create a topic with an explicit replica assignment; return once every partition has a leader."""
    create_topics_retrying(ctx.conf, [laid_out_topic(topic, assignment, config)])
    admin = admin_from_conf(ctx.conf)
    wait_for(f"leaders of {topic}", lambda: all_led(admin, [topic], len(assignment)), 120)


def systemctl(run: HostRun, host: str, *argv: str) -> str:
    return run(host, ["systemctl", *argv])


def unit_result(run: HostRun, host: str, unit: str) -> str:
    """systemd's verdict on the unit's last run: "success" for a clean stop (the units count
    the JVM's exit 143 on SIGTERM as one), "timeout" when it had to be killed."""
    return systemctl(run, host, "show", "--property=Result", "--value", unit).strip()


def describe_quorum(run: HostRun, dc: DataCentre, host: str, port: int, what: str) -> str:
    """`kafka-metadata-quorum describe --<what>` on a controller host, through its own
    CONTROLLER listener, as the kafka_controller role asks it."""
    argv = [TOOL_RUNNER, QUORUM_TOOL, "--bootstrap-controller", f"{dc.ips[host]}:{port}"]
    return run(host, [*argv, "--command-config", CONTROLLER_CLIENT, "describe", f"--{what}"])


def quorum_leader(run: HostRun, dc: DataCentre, port: int) -> int:
    """The KRaft quorum's leader (the active controller), asked through each controller in turn."""
    last = ""
    for host in dc.controllers.values():
        try:
            leader = int(str(parse_status(describe_quorum(run, dc, host, port, "status")).get("LeaderId", "-1")))
        except (RuntimeError, ValueError) as exc:
            last = str(exc)
            continue
        if leader in dc.controllers:
            return leader
        last = f"{host} names leader {leader}"
    raise RuntimeError(f"no controller of {dc.name} names a quorum leader: {last}")


def zookeeper_controller(conf: Mapping[str, str]) -> int:
    """The active controller of a ZooKeeper-mode cluster (a broker id), -1 during an election.
    From a Metadata request, as the kit's health check reads it (synchronous: the describe_cluster
    future of a client dropped at once failed with _DESTROY every time on the lab)."""
    try:
        controller = admin_from_conf(conf).list_topics(timeout=15).controller_id
    except KafkaException:
        return -1
    return -1 if controller is None else controller


def active_controller(run: HostRun, dc: DataCentre, conf: Mapping[str, str], port: int) -> int:
    return quorum_leader(run, dc, port) if dc.controllers else zookeeper_controller(conf)


def wait_quorum_healthy(run: HostRun, dc: DataCentre, host: str, port: int, timeout: float = HEALTH_TIMEOUT) -> None:
    """Until `host` answers and the quorum has a leader, every controller a caught-up voter."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            status = describe_quorum(run, dc, host, port, "status")
            problems = quorum_health(
                status, describe_quorum(run, dc, host, port, "replication"), list(dc.controllers), MAX_QUORUM_LAG
            ).problems
        except RuntimeError as exc:
            problems = [str(exc).splitlines()[0]]
        if not problems:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"quorum of {dc.name} not healthy within {timeout:.0f}s: {problems}")
        time.sleep(POLL)


def wait_brokers_healthy(conf: Mapping[str, str], dc: DataCentre, timeout: float = HEALTH_TIMEOUT) -> None:
    """Every broker registered (unfenced in KRaft), no partition offline or under-replicated."""
    ids = list(dc.brokers)
    health = wait_healthy(admin_from_conf(conf), ids, timeout, interval=POLL * 5, kraft=bool(dc.controllers))
    if not health.healthy(ids):
        raise TimeoutError(f"{dc.name} not healthy within {timeout:.0f}s: {health.as_dict()}")


def preferred_election(admin: AdminClient) -> Future:
    """A preferred leader election of every partition. No timeout arguments: confluent-kafka 2.16's
    elect_leaders fails on any (SystemError in its argument parsing); the caller bounds the wait."""
    return admin.elect_leaders(ElectionType.PREFERRED, None)


def elect_preferred_leaders(conf: Mapping[str, str]) -> str:
    """Leaders back to their preferred brokers after a restart, so the cases that follow start
    balanced (the brokers would do it themselves only after leader.imbalance.check.interval);
    best effort: the error, if any, for the caller to note."""
    try:
        # Per-partition errors are expected (ELECTION_NOT_NEEDED where it leads already): not read.
        admin = admin_from_conf(conf)  # held until the future resolves: a dropped handle fails it
        preferred_election(admin).result(timeout=90)
    except (KafkaException, TimeoutError) as exc:
        return f"preferred leader election: {exc}"
    return ""


def start_again(ctx: Context, host: str, unit: str) -> None:
    """Start a stopped or killed process and wait for its data centre's health. After a kill
    systemd may have restarted it already (Restart=on-failure): start is then a no-op."""
    systemctl(ctx.run, host, "start", unit)
    if unit == CONTROLLER_UNIT:
        wait_quorum_healthy(ctx.run, ctx.dc, host, ctx.controller_port)
    wait_brokers_healthy(ctx.conf, ctx.dc)
