"""Cluster state through confluent-kafka's AdminClient: used by the Ansible modules (which run
on the controller) and by the tests, so both read health the same way."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient


def client_conf(bootstrap_servers: str, client_config: Mapping[str, Any] | None = None) -> dict[str, str]:
    """librdkafka settings: the bootstrap list plus the principal's settings, as strings."""
    return {"bootstrap.servers": bootstrap_servers, **{k: str(v) for k, v in (client_config or {}).items()}}


def read_client_conf(path: Path) -> dict[str, str]:
    """A librdkafka/kcat .conf file (what kafka_access writes for each data centre and user)."""
    conf = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            conf[key.strip()] = value.strip()
    return conf


def admin_client(bootstrap_servers: str, client_config: Mapping[str, Any] | None = None) -> AdminClient:
    return AdminClient({"socket.timeout.ms": "10000", **client_conf(bootstrap_servers, client_config)})


def failed_futures(futures: Mapping[Any, Any], describe: Callable[[Any], str] = str) -> list[str]:
    """Wait for every future of a batched admin call; one line per failure ("<what>: <error>")."""
    failed = []
    for key, future in futures.items():
        try:
            future.result()
        except KafkaException as exc:
            failed.append(f"{describe(key)}: {exc}")
    return failed


@dataclass
class ClusterHealth:
    brokers: list[int] = field(default_factory=list)
    controller: int = -1
    under_replicated: list[str] = field(default_factory=list)
    offline: list[str] = field(default_factory=list)
    error: str = ""

    def healthy(self, expect_brokers: list[int] | None = None) -> bool:
        missing = set(expect_brokers or []) - set(self.brokers)
        return not (self.error or missing or self.under_replicated or self.offline) and self.controller >= 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "brokers": self.brokers,
            "controller": self.controller,
            "under_replicated": self.under_replicated,
            "offline": self.offline,
            "error": self.error,
        }


def cluster_health(admin: AdminClient, timeout: float = 10.0) -> ClusterHealth:
    """Registered brokers, the active controller and partitions short of their replicas.

    The metadata comes from a broker's view of ZooKeeper (or KRaft), so a broker listed here
    has registered with the cluster, not merely opened a port."""
    try:
        cluster = admin.describe_cluster(request_timeout=timeout).result(timeout=timeout + 5)
        meta = admin.list_topics(timeout=timeout)
    except Exception as exc:  # noqa: BLE001 - any client error means "not healthy yet"
        return ClusterHealth(error=str(exc))
    health = ClusterHealth(
        brokers=sorted(n.id for n in cluster.nodes),
        controller=cluster.controller.id if cluster.controller else -1,
    )
    for topic in meta.topics.values():
        for p in topic.partitions.values():
            name = f"{topic.topic}-{p.id}"
            if p.leader < 0:
                health.offline.append(name)
            elif len(p.isrs) < len(p.replicas):
                health.under_replicated.append(name)
    return health


def topic_ready(admin: AdminClient, topic: str, partitions: int | None = None, timeout: float = 10.0) -> bool:
    """The metadata lists the topic's partitions (exactly `partitions` when given), each with a
    leader. Right after creation a broker whose metadata cache lags answers with none at all."""
    meta = admin.list_topics(topic=topic, timeout=timeout).topics[topic]
    leaders = [p.leader for p in meta.partitions.values()]
    count_ok = len(leaders) == partitions if partitions is not None else len(leaders) > 0
    return meta.error is None and count_ok and min(leaders, default=-1) >= 0


def wait_healthy(
    admin: AdminClient, expect_brokers: list[int] | None, timeout: float, interval: float = 2.0
) -> ClusterHealth:
    """Poll until every expected broker is registered and no partition is under-replicated."""
    deadline = time.monotonic() + timeout
    while True:
        health = cluster_health(admin)
        if health.healthy(expect_brokers) or time.monotonic() >= deadline:
            return health
        time.sleep(interval)
