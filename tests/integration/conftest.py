"""Fixtures for tests against a running deployment (the lab after `make lab`).

Clients talk to one data centre, the `dc` fixture: dc1 unless the test module is marked
`every_dc`, which runs each of its tests that reach a DC once per DC of the inventory (ids
dc1-zookeeper, dc2-kraft); `every_dc("kraft")` or `every_dc("zookeeper")` on a test narrows it
to the DCs of that metadata mode. Heavy dc1-only modules stay unmarked and run once."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from functools import cache

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, NewTopic

from kafkakit.admin import admin_from_conf, create_topics_retrying, delete_topics_retrying, topic_ready, wait_healthy
from tests.integration.lab import Lab

METADATA_MODES = ("kraft", "zookeeper")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/integration" in str(item.fspath):
            item.add_marker(pytest.mark.lab)


@cache
def the_lab() -> Lab:
    return Lab()


def parametrizes(metafunc: pytest.Metafunc, argname: str) -> bool:
    """Whether the test's own parametrize marks already name `argname`."""
    for mark in metafunc.definition.iter_markers("parametrize"):
        names = mark.args[0]
        names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
        if argname in names:
            return True
    return False


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    mark = metafunc.definition.get_closest_marker("every_dc")
    if mark is None or "dc" not in metafunc.fixturenames or parametrizes(metafunc, "dc"):
        return
    mode = mark.args[0] if mark.args else None
    assert mode in (None, *METADATA_MODES), f"every_dc({mode!r}): expected one of {METADATA_MODES}"
    try:
        lab = the_lab()
    except FileNotFoundError:
        return  # no deployment: collection still works, the `lab` fixture says what is missing
    dcs = [dc for dc in lab.data_centres() if mode in (None, lab.metadata_mode(dc))]
    # Module scope: a module's tests run DC by DC, and module fixtures exist once per DC.
    metafunc.parametrize("dc", dcs, indirect=True, scope="module", ids=lab.dc_id)


@pytest.fixture(scope="session")
def lab() -> Lab:
    return the_lab()


@pytest.fixture(scope="module")
def dc(request: pytest.FixtureRequest) -> str:
    """The data centre the test's clients talk to (see the module docstring)."""
    return getattr(request, "param", "dc1")


@pytest.fixture(scope="module")
def bootstrap(lab: Lab, dc: str) -> str:
    return lab.client_conf(dc)["bootstrap.servers"]


@pytest.fixture(scope="module")
def client_conf(lab: Lab, dc: str) -> dict[str, str]:
    """librdkafka settings of the DC's admin principal, as written to build/lab/<dc>/client.conf."""
    return lab.client_conf(dc)


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


def default_replication_factor(lab: Lab, dc: str) -> int:
    """3 where the DC has three brokers or more, else every broker (the lab's dc2 has two)."""
    return min(3, len(lab.brokers(dc)))


@pytest.fixture
def new_topic(lab: Lab, dc: str, client_conf: dict[str, str]) -> Iterator[Callable[..., str]]:
    """Create uniquely named topics for one test; deleted afterwards. Both are retried with a
    fresh client: a roll or a fault test may move the controller in between."""
    made: list[str] = []

    def make(partitions: int = 6, replication_factor: int | None = None, prefix: str = "test-", **configs: str) -> str:
        name = f"{prefix}{uuid.uuid4().hex[:10]}"
        if replication_factor is None:
            replication_factor = default_replication_factor(lab, dc)
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
def healthy_after(lab: Lab, dc: str, client_conf: dict[str, str]) -> Iterator[None]:
    """A fault test leaves the cluster as it found it: every broker back, nothing under-replicated."""
    yield
    ids = [b.broker_id for b in lab.brokers(dc)]
    health = wait_healthy(fresh_admin(client_conf), ids, timeout=300)
    assert health.healthy(ids), f"cluster did not recover: {health.as_dict()}"
