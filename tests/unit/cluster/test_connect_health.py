"""kafkakit.cluster.connect: the REST client's mutual TLS against a real HTTPS server on loopback, and the
health judgement on answers shaped as Connect 4.3 gives them."""

from __future__ import annotations

import json
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from kafkakit.cluster.connect import (
    ClusterView,
    ConnectorStatus,
    LostStatusRepair,
    RestError,
    TlsFiles,
    cluster_problems,
    lost_task_statuses,
    read_cluster,
    request,
    settled,
    wait_cluster,
)
from kafkakit.cluster.connectors import restart_failed, restart_task
from tests.unit.support.pki import Ca

# GET / and GET /connectors?expand=status as a Connect 4.3 worker answers them.
ROOT = {"version": "4.3.1", "commit": "e2d3f6b5e1a8b71c", "kafka_cluster_id": "Qm9vdHN0cmFwQ2x1c3Rlcg"}
LISTING = {
    "orders-cdc": {
        "status": {
            "name": "orders-cdc",
            "connector": {"state": "RUNNING", "worker_id": "10.213.7.44:8083"},
            "tasks": [{"id": 0, "state": "RUNNING", "worker_id": "10.213.7.45:8083"}],
            "type": "source",
        }
    },
    "audit-sink": {
        "status": {
            "name": "audit-sink",
            "connector": {"state": "RUNNING", "worker_id": "10.213.7.45:8083"},
            "tasks": [
                {
                    "id": 0,
                    "state": "FAILED",
                    "worker_id": "10.213.7.44:8083",
                    "trace": "org.apache.kafka.connect.errors.ConnectException: boom\n\tat x",
                },
                {"id": 1, "state": "RUNNING", "worker_id": "10.213.7.45:8083"},
            ],
            "type": "sink",
        }
    },
}


def view(listing: dict, workers: dict | None = None, health: dict | None = None) -> ClusterView:
    workers = workers if workers is not None else {"w1": ROOT, "w2": ROOT}
    return ClusterView(
        workers=workers,
        health=health if health is not None else dict.fromkeys(workers, "healthy"),
        connectors=[ConnectorStatus.from_rest(n, e["status"]) for n, e in sorted(listing.items())],
    )


def test_a_healthy_cluster_has_no_problem() -> None:
    healthy = {"orders-cdc": LISTING["orders-cdc"]}
    assert cluster_problems(view(healthy), ["w1", "w2"], ["orders-cdc"], True) == []


def test_a_failed_task_is_named_with_its_worker_and_trace() -> None:
    problems = cluster_problems(view(LISTING), ["w1", "w2"])
    assert problems == [
        "task audit-sink-0 FAILED on 10.213.7.44:8083: org.apache.kafka.connect.errors.ConnectException: boom"
    ]


def test_a_missing_worker_one_not_ready_and_a_missing_connector_are_problems() -> None:
    starting = "not ready (HTTP 503: Worker is still starting up.)"
    two = view({}, workers={"w1": ROOT, "w3": ROOT}, health={"w1": "healthy", "w3": starting})
    two.errors["w2"] = "HTTP 0: connection refused"
    problems = cluster_problems(two, ["w1", "w2", "w3"], ["orders-cdc"])
    assert problems == [
        "worker w2 does not answer: HTTP 0: connection refused",
        f"worker w3 is {starting}, not healthy",
        "connector orders-cdc is not in the cluster",
    ]


def test_workers_on_two_kafka_clusters_are_a_problem() -> None:
    other = {**ROOT, "kafka_cluster_id": "another"}
    assert cluster_problems(view({}, workers={"w1": ROOT, "w2": other}), ["w1", "w2"]) == [
        "workers report different Kafka clusters: ['Qm9vdHN0cmFwQ2x1c3Rlcg', 'another']"
    ]


def test_after_a_restart_unassigned_tasks_are_waited_for_only_when_running_is_required() -> None:
    starting = {"orders-cdc": json.loads(json.dumps(LISTING["orders-cdc"]))}
    starting["orders-cdc"]["status"]["tasks"][0]["state"] = "UNASSIGNED"
    assert cluster_problems(view(starting), ["w1", "w2"], ["orders-cdc"]) == []
    assert cluster_problems(view(starting), ["w1", "w2"], ["orders-cdc"], require_running=True) == [
        "task orders-cdc-0 is UNASSIGNED, not RUNNING"
    ]


def each_worker(listings: dict[str, dict]) -> ClusterView:
    """A read where each worker (w1, w2, ...) answered its own listing, w1's first."""
    v = view(next(iter(listings.values())), workers=dict.fromkeys(listings, ROOT))
    v.views = {
        host: [ConnectorStatus.from_rest(n, e["status"]) for n, e in sorted(listing.items())]
        for host, listing in listings.items()
    }
    return v


ORDERS = {"orders-cdc": LISTING["orders-cdc"]}
# What dc1-connect-1 answered after the CA retire's roll, for 20 minutes, while dc1-connect-2 ran
# the task and answered it RUNNING.
NO_TASK = {"orders-cdc": {"status": {**LISTING["orders-cdc"]["status"], "tasks": []}}}
LOST_LINE = "worker w1 has no status for task orders-cdc-0 (RUNNING on 10.213.7.45:8083)"


def test_a_task_status_one_worker_lost_is_named_only_when_tasks_must_run() -> None:
    lost = each_worker({"w1": NO_TASK, "w2": ORDERS})
    assert [s.line() for s in lost_task_statuses(lost)] == [LOST_LINE]
    assert cluster_problems(lost, ["w1", "w2"], ["orders-cdc"], require_running=True) == [
        "connector orders-cdc has no task yet",
        LOST_LINE,
    ]
    # The same worker second: the first view has the task, the lost status is still named.
    assert cluster_problems(each_worker({"w2": ORDERS, "w1": NO_TASK}), ["w1", "w2"], ["orders-cdc"], True) == [
        LOST_LINE
    ]
    assert cluster_problems(lost, ["w1", "w2"], ["orders-cdc"]) == []
    # Controls: workers that agree, and a connector one worker does not list yet (being created).
    agree = each_worker({"w1": ORDERS, "w2": ORDERS})
    assert lost_task_statuses(agree) == []
    assert cluster_problems(agree, ["w1", "w2"], ["orders-cdc"], True) == []
    assert lost_task_statuses(each_worker({"w1": {}, "w2": ORDERS})) == []


def test_every_worker_is_asked_for_the_statuses_it_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    answers = {
        ("https://w1:8083", "/connectors?expand=status"): NO_TASK,
        ("https://w2:8083", "/connectors?expand=status"): ORDERS,
        ("https://w1:8083", "/health"): {"status": "healthy"},
        ("https://w2:8083", "/health"): {"status": "healthy"},
    }

    def answer(url: str, method: str, path: str, *args: object, **kwargs: object) -> tuple[int, object]:
        return 200, ROOT if path == "/" else answers[url, path]

    monkeypatch.setattr("kafkakit.cluster.connect.request", answer)
    got = read_cluster({"w1": "https://w1:8083", "w2": "https://w2:8083"}, TlsFiles("ca", "cert", "key"))
    assert [c.tasks for c in got.views["w1"]] == [()] and [len(c.tasks) for c in got.views["w2"]] == [1]
    assert got.connectors == got.views["w1"]
    assert [s.line() for s in lost_task_statuses(got)] == [LOST_LINE]


def test_a_lost_task_status_is_restarted_once_after_its_grace_and_not_before() -> None:
    now = [0.0]
    restarts: list[tuple[str, int]] = []
    repair = LostStatusRepair(lambda name, task: restarts.append((name, task)), grace=60, clock=lambda: now[0])
    lost, agree = each_worker({"w1": NO_TASK, "w2": ORDERS}), each_worker({"w1": ORDERS, "w2": ORDERS})
    for t in (0, 30, 59):
        now[0] = t
        repair(lost)
    assert restarts == []
    # A read where the workers agree (statuses caught up) starts the count again.
    now[0] = 61
    repair(agree)
    for t in (62, 100):
        now[0] = t
        repair(lost)
    assert restarts == []
    for t in (122, 130, 400):
        now[0] = t
        repair(lost)
    assert restarts == [("orders-cdc", 0)] and repair.restarted == ["orders-cdc-0"]


def test_the_wait_restarts_a_lost_task_status_and_ends_once_the_workers_agree() -> None:
    lost, agree = each_worker({"w1": NO_TASK, "w2": ORDERS}), each_worker({"w1": ORDERS, "w2": ORDERS})
    restarts: list[tuple[str, int]] = []
    now = [0.0]
    reads = iter([lost] * 40 + [agree])

    def read() -> ClusterView:
        return agree if restarts else next(reads)

    repair = LostStatusRepair(lambda name, task: restarts.append((name, task)), grace=60, clock=lambda: now[0])
    got, problems = wait_cluster(
        read,
        lambda v: cluster_problems(v, ["w1", "w2"], ["orders-cdc"], True),
        300,
        clock=lambda: now[0],
        sleep=lambda s: now.__setitem__(0, now[0] + s),
        repair=repair,
    )
    assert problems == [] and restarts == [("orders-cdc", 0)] and got is agree
    assert 60 <= now[0] <= 64
    # Control: without the repair the same reads end at the timeout, naming the lost status.
    reads = iter([lost] * 200)
    _, problems = wait_cluster(
        lambda: next(reads),
        lambda v: cluster_problems(v, ["w1", "w2"], ["orders-cdc"], True),
        300,
        clock=lambda: now[0],
        sleep=lambda s: now.__setitem__(0, now[0] + s),
    )
    assert LOST_LINE in problems


# What Connect 4.3's workers answer while their group rebalances, and a conflict that is not one.
REBALANCE_EXPECTED = RestError(500, "Request cannot be completed because a rebalance is expected")
STALE = RestError(
    409,
    "Cannot complete request momentarily due to stale configuration (typically caused by a concurrent config change)",
)
NO_LEADER = RestError(
    409, "Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway."
)
EXISTS = RestError(409, "Connector orders-cdc already exists")


def answering(*answers: RestError | tuple[int, object]) -> tuple[list[tuple], object]:
    """A call that gives `answers` in turn (raising the errors), and the list of its calls."""
    calls: list[tuple] = []
    left = iter(answers)

    def call(*args: object, **kwargs: object) -> tuple[int, object]:
        calls.append(args)
        answer = next(left)
        if isinstance(answer, RestError):
            raise answer
        return answer

    return calls, call


def test_a_request_refused_during_a_rebalance_is_asked_again_until_it_is_answered() -> None:
    calls, call = answering(REBALANCE_EXPECTED, STALE, NO_LEADER, (200, {"name": "orders-cdc"}))
    now = [0.0]
    rest = settled(call, 60, clock=lambda: now[0], sleep=lambda s: now.__setitem__(0, now[0] + s))
    assert rest("https://w1:8083", "GET", "/connectors/orders-cdc", None) == (200, {"name": "orders-cdc"})
    assert calls == [("https://w1:8083", "GET", "/connectors/orders-cdc", None)] * 4
    assert now[0] == 0.5 + 1 + 2


def test_any_other_error_is_raised_at_once_and_a_rebalance_only_until_the_time_is_up() -> None:
    for other in (EXISTS, RestError(404, "Connector orders-cdc not found"), RestError(0, "timed out")):
        calls, call = answering(other, (200, {}))
        with pytest.raises(RestError) as exc:
            settled(call, 60, clock=lambda: 0.0, sleep=lambda s: None)("u", "GET", "/")
        assert exc.value is other and len(calls) == 1
    now = [0.0]
    calls, call = answering(*[REBALANCE_EXPECTED] * 20)
    with pytest.raises(RestError) as exc:
        settled(call, 10, clock=lambda: now[0], sleep=lambda s: now.__setitem__(0, now[0] + s))("u", "GET", "/")
    assert exc.value is REBALANCE_EXPECTED
    assert now[0] >= 10 and len(calls) == 6  # 0.5 + 1 + 2 + 4 + 4 s of pauses, then one past the deadline


def test_wait_reads_again_until_healthy_or_the_time_is_up() -> None:
    reads = iter([view(LISTING), view({}), view({})])
    now = [0.0]
    got, problems = wait_cluster(
        lambda: next(reads),
        lambda v: cluster_problems(v, ["w1", "w2"]),
        10,
        clock=lambda: now[0],
        sleep=lambda s: now.__setitem__(0, now[0] + s),
    )
    assert problems == [] and got.connectors == []
    always_failed = iter([view(LISTING)] * 10)
    _, problems = wait_cluster(
        lambda: next(always_failed),
        lambda v: cluster_problems(v, ["w1", "w2"]),
        3,
        clock=lambda: now[0],
        sleep=lambda s: now.__setitem__(0, now[0] + s),
    )
    assert problems and "FAILED" in problems[0]


# --- the REST client over mutual TLS, against a real HTTPS server on loopback --------------------


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        status, body = (
            (200, ROOT) if self.path == "/" else (404, {"error_code": 404, "message": f"Unknown path {self.path}"})
        )
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


def _write(folder: Path, name: str, text: str) -> str:
    path = folder / name
    path.write_text(text)
    return str(path)


@pytest.fixture()
def server(tmp_path: Path) -> Iterator[tuple[str, Ca, Path]]:
    ca = Ca("kit ca")
    cert, key = ca.issue_with_key("worker")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(_write(tmp_path, "w.crt", cert), _write(tmp_path, "w.key", key))
    ctx.load_verify_locations(_write(tmp_path, "ca.crt", ca.pem))
    ctx.verify_mode = ssl.CERT_REQUIRED
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.socket = ctx.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"https://127.0.0.1:{httpd.server_address[1]}", ca, tmp_path
    httpd.shutdown()
    httpd.server_close()


def _client(ca: Ca, trust: Ca, folder: Path, name: str) -> TlsFiles:
    cert, key = ca.issue_with_key(name)
    return TlsFiles(
        _write(folder, f"{name}-ca.crt", trust.pem),
        _write(folder, f"{name}.crt", cert),
        _write(folder, f"{name}.key", key),
    )


def test_a_client_certificate_of_the_ca_gets_the_answer(server: tuple[str, Ca, Path]) -> None:
    url, ca, folder = server
    assert request(url, "GET", "/", _client(ca, ca, folder, "admin")) == (200, ROOT)


def test_a_certificate_of_another_ca_gets_no_answer(server: tuple[str, Ca, Path]) -> None:
    url, ca, folder = server
    with pytest.raises(RestError) as refused:
        request(url, "GET", "/", _client(Ca("another ca"), ca, folder, "intruder"))
    assert refused.value.status == 0


def test_an_error_answer_carries_its_status_and_message(server: tuple[str, Ca, Path]) -> None:
    url, ca, folder = server
    with pytest.raises(RestError) as missing:
        request(url, "GET", "/nothing", _client(ca, ca, folder, "admin"))
    assert (missing.value.status, missing.value.message) == (404, "Unknown path /nothing")


def test_plain_http_is_not_a_url_the_client_takes(server: tuple[str, Ca, Path]) -> None:
    _, ca, folder = server
    with pytest.raises(ValueError, match="HTTPS only"):
        request("http://127.0.0.1:1", "GET", "/", _client(ca, ca, folder, "admin"))


def test_a_task_is_restarted_by_its_own_path_and_a_failed_restart_by_only_failed() -> None:
    calls, call = answering((204, None), (202, None))
    restart_task("https://w1:8083", TlsFiles("ca", "c", "k"), "orders cdc", 0, call)
    restart_failed("https://w1:8083", TlsFiles("ca", "c", "k"), ["orders-cdc"], call)
    assert [c[1:3] for c in calls] == [
        ("POST", "/connectors/orders%20cdc/tasks/0/restart"),
        ("POST", "/connectors/orders-cdc/restart?includeTasks=true&onlyFailed=true"),
    ]
