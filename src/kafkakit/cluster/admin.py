"""Cluster state through confluent-kafka's AdminClient: used by the Ansible modules (which run
on the controller) and by the tests, so both read health the same way."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from confluent_kafka import KafkaError, KafkaException, TopicCollection
from confluent_kafka.admin import AdminClient, NewTopic


def client_conf(bootstrap_servers: str, client_config: Mapping[str, Any] | None = None) -> dict[str, str]:
    """librdkafka settings: the bootstrap list plus the principal's settings, as strings."""
    return {"bootstrap.servers": bootstrap_servers, **{k: str(v) for k, v in (client_config or {}).items()}}


def read_client_conf(path: Path) -> dict[str, str]:
    """A librdkafka/kcat .conf file (what kafka_resources writes for each data centre and user)."""
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
    # KRaft: the brokers name a random live broker as "controller" (clients never reach the
    # quorum), so there is no active controller to require; the quorum has its own check.
    kraft: bool = False

    def healthy(self, expect_brokers: list[int] | None = None) -> bool:
        missing = set(expect_brokers or []) - set(self.brokers)
        has_controller = self.kraft or self.controller >= 0
        return not (self.error or missing or self.under_replicated or self.offline) and has_controller

    def as_dict(self) -> dict[str, Any]:
        return {
            "brokers": self.brokers,
            "controller": self.controller,
            "under_replicated": self.under_replicated,
            "offline": self.offline,
            "error": self.error,
            "kraft": self.kraft,
        }


def cluster_health(admin: AdminClient, timeout: float = 10.0, kraft: bool = False) -> ClusterHealth:
    """Registered brokers, the active controller and partitions short of their replicas.

    The metadata comes from a broker's view of ZooKeeper (or KRaft), so a broker listed here
    has registered with the cluster, not merely opened a port. In KRaft a broker's metadata
    lists only unfenced brokers: listed means registered and unfenced.
    One Metadata request, not the admin API's DescribeCluster: polled while a broker of the
    bootstrap list refuses connections (every roll), librdkafka's admin path can abort the whole
    process (rd_kafka_admin_response_parse: Assertion `rko_result' failed), seen in a CA rotation."""
    try:
        meta = admin.list_topics(timeout=timeout)
    except Exception as exc:  # noqa: BLE001 - any client error means "not healthy yet"
        return ClusterHealth(error=str(exc), kraft=kraft)
    health = ClusterHealth(
        brokers=sorted(meta.brokers),
        controller=meta.controller_id if meta.controller_id is not None and not kraft else -1,
        kraft=kraft,
    )
    for topic in meta.topics.values():
        for p in topic.partitions.values():
            name = f"{topic.topic}-{p.id}"
            if p.leader < 0:
                health.offline.append(name)
            elif len(p.isrs) < len(p.replicas):
                health.under_replicated.append(name)
    return health


def topic_ids(admin: AdminClient, timeout: float = 30.0) -> dict[str, str]:
    """Every topic of the cluster, internal ones too, with its id as Kafka writes it in each
    partition directory's partition.metadata. A topic deleted between the two reads is left out;
    any other error raises: an incomplete answer must not pass for a cluster without the topic."""
    names = list(admin.list_topics(timeout=timeout).topics)
    if not names:
        return {}
    ids = {}
    for name, future in admin.describe_topics(TopicCollection(names), request_timeout=timeout).items():
        try:
            # Kafka's own form (URL-safe base64, as in partition.metadata); the client prints
            # the standard alphabet.
            ids[name] = str(future.result(timeout=timeout).topic_id).translate(str.maketrans("+/", "-_"))
        except KafkaException as exc:
            if exc.args[0].code() != KafkaError.UNKNOWN_TOPIC_OR_PART:
                raise
    return ids


def topic_ready(admin: AdminClient, topic: str, partitions: int | None = None, timeout: float = 10.0) -> bool:
    """The metadata lists the topic's partitions (exactly `partitions` when given), each with a
    leader. Right after creation a broker whose metadata cache lags answers with none at all."""
    meta = admin.list_topics(topic=topic, timeout=timeout).topics[topic]
    leaders = [p.leader for p in meta.partitions.values()]
    count_ok = len(leaders) == partitions if partitions is not None else len(leaders) > 0
    return meta.error is None and count_ok and min(leaders, default=-1) >= 0


def wait_healthy(
    admin: AdminClient, expect_brokers: list[int] | None, timeout: float, interval: float = 2.0, kraft: bool = False
) -> ClusterHealth:
    """Poll until every expected broker is registered and no partition is under-replicated."""
    deadline = time.monotonic() + timeout
    while True:
        health = cluster_health(admin, kraft=kraft)
        if health.healthy(expect_brokers) or time.monotonic() >= deadline:
            return health
        time.sleep(interval)


# Worth another attempt with a fresh client: the controller moved (a roll, a fault) or a broker
# did not answer in time. librdkafka marks few admin errors retriable(), so these are named.
RETRY_CODES = frozenset(
    {
        KafkaError.NOT_CONTROLLER,
        KafkaError.REQUEST_TIMED_OUT,
        KafkaError.NETWORK_EXCEPTION,
        KafkaError.BROKER_NOT_AVAILABLE,
        KafkaError._TIMED_OUT,
        KafkaError._TRANSPORT,
        KafkaError._ALL_BROKERS_DOWN,
    }
)


def kafka_error(err: object) -> KafkaError | None:
    """The KafkaError an admin call's future failed with: the binding hands it wrapped in a
    KafkaException, or bare (an election's per-partition answer, say); None for anything else."""
    if isinstance(err, KafkaException) and err.args:
        err = err.args[0]
    return err if isinstance(err, KafkaError) else None


def worth_retrying(err: object) -> bool:
    """A KafkaError another attempt may cure: librdkafka's retriable() or one of RETRY_CODES."""
    return isinstance(err, KafkaError) and (err.retriable() or err.code() in RETRY_CODES)


class AdminRetryError(RuntimeError):
    """A retried admin call still failing at its deadline; the message carries the last error."""


def admin_from_conf(conf: Mapping[str, Any]) -> AdminClient:
    """An admin client from one librdkafka settings dict (bootstrap.servers included)."""
    rest = dict(conf)
    return admin_client(rest.pop("bootstrap.servers"), rest)


def _retrying(
    what: str,
    names: Sequence[str],
    call: Callable[[AdminClient, list[str]], Mapping[str, Any]],
    done_code: int,
    conf: Mapping[str, Any],
    timeout: float,
    interval: float,
    make_admin: Callable[[Mapping[str, Any]], AdminClient],
) -> None:
    """Run a batched admin call until every name succeeded or ended with `done_code`: a fresh
    client per attempt (one made before a controller move keeps asking the old controller),
    another attempt after a RETRY_CODES error or a future that timed out, any other error
    raised at once, AdminRetryError with the last error once `timeout` has passed."""
    pending = list(dict.fromkeys(names))
    deadline = time.monotonic() + timeout
    last = ""
    while True:
        admin = make_admin(conf)
        futures = call(admin, pending)
        remaining = max(1.0, min(30.0, deadline - time.monotonic()))
        still: list[str] = []
        for name in pending:
            try:
                futures[name].result(timeout=remaining)
            except KafkaException as exc:
                err = kafka_error(exc)
                if err is not None and err.code() == done_code:
                    continue
                if not worth_retrying(err):
                    raise
                still.append(name)
                last = f"{name}: {err}"
            except TimeoutError:  # the future's own timeout (concurrent.futures.TimeoutError)
                still.append(name)
                last = f"{name}: no answer within {remaining:.0f}s"
        pending = still
        if not pending:
            return
        if time.monotonic() + interval > deadline:
            raise AdminRetryError(f"{what} {pending}: still failing after {timeout:.0f}s, last error {last}")
        time.sleep(interval)


def create_topics_retrying(
    conf: Mapping[str, Any],
    topics: Sequence[NewTopic],
    timeout: float = 120.0,
    interval: float = 1.0,
    make_admin: Callable[[Mapping[str, Any]], AdminClient] = admin_from_conf,
) -> None:
    """Create `topics` (conf: librdkafka settings with bootstrap.servers), retried while a
    controller move settles; a topic that already exists counts as created (an attempt that
    timed out may have created it)."""
    by_name = {t.topic: t for t in topics}
    _retrying(
        "create topics",
        list(by_name),
        lambda admin, names: admin.create_topics([by_name[n] for n in names]),
        KafkaError.TOPIC_ALREADY_EXISTS,
        conf,
        timeout,
        interval,
        make_admin,
    )


def delete_topics_retrying(
    conf: Mapping[str, Any],
    topics: Sequence[str],
    timeout: float = 120.0,
    interval: float = 1.0,
    make_admin: Callable[[Mapping[str, Any]], AdminClient] = admin_from_conf,
) -> None:
    """Delete `topics`, retried while a controller move settles; an unknown topic counts as
    deleted (gone already, or deleted by an attempt that timed out)."""
    _retrying(
        "delete topics",
        list(topics),
        lambda admin, names: admin.delete_topics(names),
        KafkaError.UNKNOWN_TOPIC_OR_PART,
        conf,
        timeout,
        interval,
        make_admin,
    )


def _host_port(server: str) -> tuple[str, int]:
    host, _, port = server.strip().rpartition(":")
    return host.strip("[]"), int(port)


def wait_serving(server: str, client_config: Mapping[str, Any] | None, timeout: float, interval: float = 1.0) -> float:
    """Poll until the broker at `server` (host:port) answers a metadata request itself; the
    seconds it took. TimeoutError after `timeout`.

    A broker serves requests only once it has registered with the cluster, so this tells that a
    restarted broker is back; the other brokers' metadata may not say so yet (or still list it)."""
    start = time.monotonic()
    waited = wait_ports_open(server, timeout, interval)
    admin = admin_client(server, client_config)
    while True:
        try:
            admin.list_topics(timeout=min(10.0, max(timeout - waited, 1.0)))
            return time.monotonic() - start
        except Exception as exc:  # noqa: BLE001 - any client error means "not serving yet"
            waited = time.monotonic() - start
            if waited + interval > timeout:
                raise TimeoutError(f"{server} answered no metadata request in {timeout:.0f}s: {exc}") from exc
        time.sleep(interval)


def wait_ports_open(
    bootstrap_servers: str, timeout: float, interval: float = 1.0, connect_timeout: float = 3.0
) -> float:
    """Poll until every host:port of a bootstrap list accepts a TCP connection; the seconds it
    took. TimeoutError naming the closed ones after `timeout`.

    For a data centre whose brokers were just (re)started: an admin client made while every
    broker still refuses connections has aborted the whole process inside librdkafka
    (rd_kafka_admin_response_parse: Assertion 'rko_result' failed), so wait for the ports first."""
    servers = [_host_port(s) for s in bootstrap_servers.split(",") if s.strip()]
    start = time.monotonic()
    deadline = start + timeout
    while True:
        closed: dict[str, str] = {}
        for host, port in servers:
            try:
                with socket.create_connection((host, port), timeout=connect_timeout):
                    pass
            except OSError as exc:
                closed[f"{host}:{port}"] = exc.strerror or str(exc) or type(exc).__name__
        if not closed:
            return time.monotonic() - start
        if time.monotonic() + interval > deadline:
            listed = ", ".join(f"{server} ({why})" for server, why in closed.items())
            raise TimeoutError(f"not accepting connections after {timeout:.0f}s: {listed}")
        time.sleep(interval)
