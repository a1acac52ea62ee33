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

from kafkakit.cluster.admin import (
    admin_from_conf,
    create_topics_retrying,
    delete_topics_retrying,
    topic_ready,
    wait_healthy,
)
from tests.integration import mirror, quorum
from tests.integration.accounting import ACCOUNTS
from tests.integration.lab import Lab
from tests.integration.prometheus import Prometheus, scrape_password
from tests.integration.spark_lab import TOPIC_PREFIX, SparkCluster

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


@pytest.fixture(scope="module")
def kraft_conf(lab: Lab) -> dict[str, str]:
    """The admin's client settings of the lab's KRaft data centre (quorum.KRAFT_DC)."""
    if not lab.kraft(quorum.KRAFT_DC):
        pytest.fail(f"{quorum.KRAFT_DC} is not a KRaft data centre in this lab (no kafka_controller hosts)")
    return lab.client_conf(quorum.KRAFT_DC)


@pytest.fixture
def quorum_after(lab: Lab, kraft_conf: dict[str, str]) -> Iterator[None]:
    """A quorum test leaves the KRaft DC as it found it: a whole, caught-up quorum, every broker healthy."""
    yield
    dc = quorum.KRAFT_DC
    wait_until("quorum whole again", lambda: quorum.quorum_whole(lab, dc), 180)
    ids = [b.broker_id for b in lab.brokers(dc)]
    health = wait_healthy(fresh_admin(kraft_conf), ids, timeout=300)
    assert health.healthy(ids), f"{dc} did not recover: {health.as_dict()}"


@pytest.fixture(scope="module")
def prometheus(lab: Lab) -> Prometheus:
    monitors = lab.groups.get("monitoring", [])
    assert monitors, "the lab inventory has no monitoring host"
    return Prometheus(lab.hosts[monitors[0]].ip)


@pytest.fixture(scope="module")
def scrape_login() -> tuple[str, str]:
    return "prometheus", scrape_password()


@pytest.fixture(scope="module")
def dc2_conf(lab: Lab) -> dict[str, str]:
    return lab.client_conf(mirror.TARGET)


@pytest.fixture
def mirrored_topic(client_conf: dict[str, str], dc2_conf: dict[str, str]) -> Iterator[Callable[..., str]]:
    """Topics in dc1 under the flow's mirror- prefix; both copies are deleted afterwards (retried
    with a fresh client: a test restarts a dc1 broker in between; a copy not in dc2 counts as gone)."""
    made: list[str] = []

    def make(partitions: int = 6, **configs: str) -> str:
        name = f"{mirror.MIRROR_PREFIX}{uuid.uuid4().hex[:10]}"
        create_topics_retrying(client_conf, [NewTopic(name, partitions, 3, config=configs)])
        made.append(name)
        wait_until("leaders", lambda: mirror.topic_partitions(client_conf, name) == partitions, 30)
        return name

    yield make
    for conf, names in ((client_conf, made), (dc2_conf, [mirror.remote(t) for t in made])):
        if names:
            delete_topics_retrying(conf, names)


@pytest.fixture(scope="module")
def spark(lab: Lab) -> SparkCluster:
    cluster = SparkCluster(lab)
    cluster.wait_workers_alive()
    return cluster


@pytest.fixture
def spark_topic(new_topic: Callable[..., str]) -> Callable[[], str]:
    """Topics under the spark principal's prefix, deleted afterwards."""
    return lambda: new_topic(partitions=3, replication_factor=3, prefix=f"{TOPIC_PREFIX}test-")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Each test's accounting (tests/integration/accounting.py), together after the run."""
    if not ACCOUNTS:
        return
    terminalreporter.write_sep("=", "accounting of the tests under load")
    for nodeid, lines in ACCOUNTS.items():
        terminalreporter.write_line(nodeid)
        for line in lines:
            terminalreporter.write_line(f"    {line}")
