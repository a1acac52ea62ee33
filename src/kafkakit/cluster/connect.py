"""Kafka Connect through its own REST API, over mutual TLS: what a worker answers, and how the kit
judges a Connect cluster's health (the roll's gate and readiness wait, verify.yml, the tests)."""

from __future__ import annotations

import http.client
import json
import ssl
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

# Connect's states (AbstractStatus.State); UNASSIGNED and RESTARTING pass, FAILED does not.
RUNNING = "RUNNING"
FAILED = "FAILED"


@dataclass(frozen=True)
class TlsFiles:
    """The client side of the REST API's mutual TLS: the CA bundle and a certificate of the kit's CA."""

    ca: str
    cert: str
    key: str

    def context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(cafile=self.ca)
        ctx.load_cert_chain(self.cert, self.key)
        return ctx


class RestError(Exception):
    """A REST request that did not get a 2xx answer (status 0: no HTTP answer at all)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}" if status else message)
        self.status = status
        self.message = message


def request(
    url: str, method: str, path: str, tls: TlsFiles, body: Any = None, timeout: float = 15.0
) -> tuple[int, Any]:
    """One request to a worker (`url` = https://host:port); the decoded JSON answer, or RestError."""
    parts = urlsplit(url)
    if parts.scheme != "https":
        raise ValueError(f"{url}: the kit's Connect REST API is HTTPS only")
    conn = http.client.HTTPSConnection(parts.hostname, parts.port, timeout=timeout, context=tls.context())
    payload = json.dumps(body) if body is not None else None
    headers = {"Accept": "application/json"}
    if payload is not None:
        headers["Content-Type"] = "application/json"
    try:
        conn.request(method, path, body=payload, headers=headers)
        resp = conn.getresponse()
        raw = resp.read().decode()
    except (OSError, http.client.HTTPException) as exc:
        raise RestError(0, f"{url}: {exc}") from exc
    finally:
        conn.close()
    data = json.loads(raw) if raw.strip() else None
    if not 200 <= resp.status < 300:
        message = data.get("message", raw) if isinstance(data, dict) else raw
        raise RestError(resp.status, str(message))
    return resp.status, data


Call = Callable[..., tuple[int, Any]]
# What a worker answers while its group rebalances (Connect's HerderRequestHandler and
# DistributedHerder): the request was not carried out, and the same one succeeds once it settles.
_REBALANCING = ("rebalance", "stale configuration")


def rebalancing(exc: RestError) -> bool:
    """The answer of a worker whose group is rebalancing (409, or 500 for RebalanceNeededException)."""
    return exc.status in (409, 500) and any(word in exc.message for word in _REBALANCING)


def settled(
    call: Call = request,
    timeout: float = 60.0,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Call:
    """`call`, asked again while the workers answer that their group is rebalancing, for up to
    `timeout` seconds; every other error at once."""

    def retrying(*args: Any, **kwargs: Any) -> tuple[int, Any]:
        deadline = clock() + timeout
        pause = 0.5
        while True:
            try:
                return call(*args, **kwargs)
            except RestError as exc:
                if not rebalancing(exc) or clock() >= deadline:
                    raise
            sleep(pause)
            pause = min(pause * 2, 4.0)

    return retrying


@dataclass(frozen=True)
class Task:
    id: int
    state: str
    worker: str
    trace: str = ""


@dataclass(frozen=True)
class ConnectorStatus:
    name: str
    state: str
    worker: str
    tasks: tuple[Task, ...] = ()
    trace: str = ""

    @classmethod
    def from_rest(cls, name: str, status: Mapping[str, Any]) -> ConnectorStatus:
        """From an entry of GET /connectors?expand=status (its "status")."""
        conn = status.get("connector", {})
        tasks = tuple(
            Task(int(t["id"]), str(t["state"]), str(t.get("worker_id", "")), str(t.get("trace", "")))
            for t in status.get("tasks", [])
        )
        return cls(name, str(conn.get("state", "")), str(conn.get("worker_id", "")), tasks, str(conn.get("trace", "")))

    def failed(self) -> list[str]:
        """What of it is FAILED, one line each, with the first line of its trace."""
        lines = []
        if self.state == FAILED:
            lines.append(f"connector {self.name} FAILED on {self.worker}{_first_line(self.trace)}")
        lines += [
            f"task {self.name}-{t.id} FAILED on {t.worker}{_first_line(t.trace)}"
            for t in self.tasks
            if t.state == FAILED
        ]
        return lines


def _first_line(trace: str) -> str:
    return f": {trace.strip().splitlines()[0]}" if trace.strip() else ""


@dataclass
class ClusterView:
    """One read of a Connect cluster: each worker's GET / and GET /health (Connect's own readiness:
    in the group and caught up with the config topic), and the connectors' states: as the first
    worker that answered gives them (`connectors`) and as each worker does (`views`)."""

    workers: dict[str, dict[str, Any]] = field(default_factory=dict)
    health: dict[str, str] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    connectors: list[ConnectorStatus] = field(default_factory=list)
    views: dict[str, list[ConnectorStatus]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "workers": self.workers,
            "health": self.health,
            "errors": self.errors,
            "connectors": {
                c.name: {
                    "state": c.state,
                    "worker": c.worker,
                    "tasks": [{"id": t.id, "state": t.state, "worker": t.worker} for t in c.tasks],
                }
                for c in self.connectors
            },
        }


def read_cluster(urls: Mapping[str, str], tls: TlsFiles, timeout: float = 15.0) -> ClusterView:
    """GET / and GET /health of every worker (`urls`: host -> https URL), then the connectors'
    states from each worker that answered: each answers from its own status store."""
    view = ClusterView()
    for host, url in urls.items():
        try:
            view.workers[host] = request(url, "GET", "/", tls, timeout=timeout)[1]
        except RestError as exc:
            view.errors[host] = str(exc)
            continue
        try:
            answer = request(url, "GET", "/health", tls, timeout=timeout)[1] or {}
            view.health[host] = str(answer.get("status", ""))
        except RestError as exc:
            # Connect answers 503 while the worker starts or rejoins, 500 when it is unhealthy.
            view.health[host] = f"not ready ({exc})"
    for host in view.workers:
        try:
            listing = request(urls[host], "GET", "/connectors?expand=status", tls, timeout=timeout)[1] or {}
        except RestError as exc:
            view.errors[host] = f"GET /connectors: {exc}"
            continue
        view.views[host] = [ConnectorStatus.from_rest(n, e.get("status", {})) for n, e in sorted(listing.items())]
    view.connectors = next(iter(view.views.values()), [])
    return view


@dataclass(frozen=True)
class LostStatus:
    """Tasks of a connector whose status one worker lacks while another worker has it."""

    connector: str
    worker: str
    tasks: tuple[Task, ...]

    def line(self) -> str:
        named = ", ".join(f"{self.connector}-{t.id} ({t.state} on {t.worker})" for t in self.tasks)
        return f"worker {self.worker} has no status for task {named}"


def lost_task_statuses(view: ClusterView) -> list[LostStatus]:
    """Each worker's view against the others': the task statuses it lacks. Each worker answers from
    its own copy of the status topic, and one that applied a connector's tombstone after its
    tasks' statuses (they sit in other partitions; a restarted worker reads them again) answers a
    running task as absent until that task's status is written again."""
    known: dict[str, dict[int, Task]] = {}
    for statuses in view.views.values():
        for conn in statuses:
            for task in conn.tasks:
                known.setdefault(conn.name, {}).setdefault(task.id, task)
    lost = []
    for host, statuses in sorted(view.views.items()):
        has = {c.name: {t.id for t in c.tasks} for c in statuses}
        for name, tasks in sorted(known.items()):
            # A connector a worker does not list is being created or deleted: not a lost status.
            missing = sorted(set(tasks) - has[name]) if name in has else []
            if missing:
                lost.append(LostStatus(name, host, tuple(tasks[i] for i in missing)))
    return lost


def cluster_problems(
    view: ClusterView,
    expect_workers: Sequence[str],
    expect_connectors: Iterable[str] = (),
    require_running: bool = False,
) -> list[str]:
    """Why this Connect cluster is not healthy, one line each (empty: healthy).

    Healthy: every expected worker answers and calls itself healthy (GET /health: it has joined
    the group and read the config topic), all of them on one Kafka cluster, every declared
    connector exists and nothing is FAILED; with `require_running` (a worker just restarted) every
    declared connector and each of its tasks RUNNING too."""
    problems = [
        f"worker {h} does not answer: {view.errors.get(h, 'not read')}" for h in expect_workers if h not in view.workers
    ]
    clusters = {str(w.get("kafka_cluster_id", "")) for w in view.workers.values()}
    if len(clusters) > 1:
        problems.append(f"workers report different Kafka clusters: {sorted(clusters)}")
    problems += [
        f"worker {h} is {state}, not healthy"
        for h, state in view.health.items()
        if h in expect_workers and state != "healthy"
    ]
    by_name = {c.name: c for c in view.connectors}
    for name in expect_connectors:
        conn = by_name.get(name)
        if conn is None:
            problems.append(f"connector {name} is not in the cluster")
        elif require_running:
            if conn.state != RUNNING:
                problems.append(f"connector {name} is {conn.state or 'without a state'}, not RUNNING")
            problems += [
                f"task {name}-{t.id} is {t.state}, not RUNNING" for t in conn.tasks if t.state not in (RUNNING, FAILED)
            ]
            if not conn.tasks:
                problems.append(f"connector {name} has no task yet")
    if require_running:
        problems += [lost.line() for lost in lost_task_statuses(view)]
    for conn in view.connectors:
        problems += conn.failed()
    return problems


@dataclass
class LostStatusRepair:
    """A wait's remedy for a lost task status (lost_task_statuses): a task some worker has answered
    without a status another worker has, in every read for `grace` seconds, is restarted once.
    Connect restarts a task where it is assigned, whatever any view says, and the restart writes
    its status again for every worker to read; an exactly-once source task commits or aborts its
    open transaction and resumes from its committed offsets."""

    restart: Callable[[str, int], None]
    grace: float
    clock: Callable[[], float] = time.monotonic
    since: dict[tuple[str, int], float] = field(default_factory=dict)
    restarted: list[str] = field(default_factory=list)

    def __call__(self, view: ClusterView) -> None:
        lost = sorted({(s.connector, t.id) for s in lost_task_statuses(view) for t in s.tasks})
        now = self.clock()
        # A read where the workers agree starts the count again.
        self.since = {task: self.since.get(task, now) for task in lost}
        for name, task in lost:
            if f"{name}-{task}" not in self.restarted and now - self.since[name, task] >= self.grace:
                self.restart(name, task)
                self.restarted.append(f"{name}-{task}")


def wait_cluster(
    read: Callable[[], ClusterView],
    judge: Callable[[ClusterView], list[str]],
    timeout: float,
    interval: float = 2.0,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    repair: Callable[[ClusterView], None] | None = None,
) -> tuple[ClusterView, list[str]]:
    """Read until `judge` finds nothing wrong or `timeout` passes; the last read and its problems.
    `repair`, if given, sees each read that has problems before the next one."""
    deadline = clock() + timeout
    while True:
        view = read()
        problems = judge(view)
        if not problems or clock() >= deadline:
            return view, problems
        if repair is not None:
            repair(view)
        sleep(interval)
