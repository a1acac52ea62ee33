"""Fixtures for tests against a running deployment (the lab after `make lab`)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, NewTopic

from kafkakit.admin import admin_from_conf, create_topics_retrying, delete_topics_retrying, topic_ready, wait_healthy
from tests.integration.lab import Lab


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/integration" in str(item.fspath):
            item.add_marker(pytest.mark.lab)


@pytest.fixture(scope="session")
def lab() -> Lab:
    return Lab()


@pytest.fixture(scope="session")
def bootstrap(lab: Lab) -> str:
    return lab.client_conf("dc1")["bootstrap.servers"]


@pytest.fixture(scope="session")
def client_conf(lab: Lab) -> dict[str, str]:
    """librdkafka settings of dc1's admin principal, as written to build/lab/dc1/client.conf."""
    return lab.client_conf("dc1")


def fresh_admin(client_conf: dict[str, str]) -> AdminClient:
    """A new admin client: a client reads its CA bundle once, and the CA rotation test changes it."""
    return admin_from_conf(client_conf)


def wait_until(what: str, check: Callable[[], bool], timeout: float = 120) -> float:
    """Poll check() until it holds; the seconds it took. Fails after `timeout`."""
    start = time.monotonic()
    while not check():
        assert time.monotonic() - start < timeout, f"{what}: not within {timeout}s"
        time.sleep(0.5)
    return time.monotonic() - start


def leader_of(client_conf: dict[str, str], topic: str, partition: int = 0) -> int:
    """The partition's leader, or -1 while it has none or the answering broker does not know it yet."""
    admin = fresh_admin(client_conf)
    meta = admin.list_topics(topic=topic, timeout=10).topics.get(topic)
    found = None if meta is None else meta.partitions.get(partition)
    return -1 if found is None else found.leader


def controller_id(client_conf: dict[str, str]) -> int:
    """The active controller, or -1 while there is none (an election is running)."""
    admin = fresh_admin(client_conf)
    try:
        controller = admin.describe_cluster(request_timeout=10).result(timeout=15).controller
    except KafkaException:
        return -1
    return -1 if controller is None else controller.id


@pytest.fixture
def admin(client_conf: dict[str, str]) -> AdminClient:
    return fresh_admin(client_conf)


@pytest.fixture
def new_topic(client_conf: dict[str, str]) -> Iterator[Callable[..., str]]:
    """Create uniquely named topics for one test; deleted afterwards. Both are retried with a
    fresh client: a roll or a fault test may move the controller in between."""
    made: list[str] = []

    def make(partitions: int = 6, replication_factor: int = 3, prefix: str = "test-", **configs: str) -> str:
        name = f"{prefix}{uuid.uuid4().hex[:10]}"
        create_topics_retrying(client_conf, [NewTopic(name, partitions, replication_factor, config=configs)])
        made.append(name)
        # Until every partition has a leader, so the first produce or assign does not race creation.
        admin = fresh_admin(client_conf)
        wait_until(f"leaders for {name}", lambda: topic_ready(admin, name, partitions), 30)
        return name

    yield make
    if made:
        delete_topics_retrying(client_conf, made)


@pytest.fixture
def healthy_after(lab: Lab, client_conf: dict[str, str]) -> Iterator[None]:
    """A fault test leaves the cluster as it found it: every broker back, nothing under-replicated."""
    yield
    ids = [b.broker_id for b in lab.brokers("dc1")]
    health = wait_healthy(fresh_admin(client_conf), ids, timeout=300)
    assert health.healthy(ids), f"cluster did not recover: {health.as_dict()}"
