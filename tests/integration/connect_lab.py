"""The lab's Kafka Connect cluster as the tests reach it: its workers, and the REST API's admin
client certificate from build/lab/<dc>/connect.env."""

from __future__ import annotations

import json

from kafkakit.cluster.connect import ConnectorStatus, RestError, TlsFiles, request, settled
from tests.integration.lab import CLIENT_DIR, Host, Lab, properties

DC = "dc1"
WORKERS = Lab().members("kafka_connect", DC)
PORT = 8083
# A request asked again while the workers' group rebalances, as the kit's modules ask.
rest = settled(request)
# The connectors alone (their tag), on the Connect hosts.
CONNECTORS_ONLY = ("--limit", "kafka_connect:localhost", "--tags", "connectors")


def declaring(name: str, **changes: object) -> list[str]:
    """-e arguments declaring the lab's connectors (as written, Jinja left for the run to render)
    with the entry `name` changed: its keys replaced, its `config` merged."""
    entries = []
    for e in Lab().group_vars(DC)["kafka_connectors"]:
        if e["name"] == name:
            e = {**e, **{k: v for k, v in changes.items() if k != "config"}}
            e["config"] = {**e["config"], **changes.get("config", {})}  # type: ignore[dict-item]
        entries.append(e)
    return ["-e", json.dumps({"kafka_connectors": entries})]


def env(dc: str = DC) -> dict[str, str]:
    """build/lab/<dc>/connect.env, what kafka_connect writes for people."""
    return properties((CLIENT_DIR / dc / "connect.env").read_text())


def admin_tls() -> TlsFiles:
    e = env()
    return TlsFiles(e["CONNECT_CA"], e["CONNECT_CERT"], e["CONNECT_KEY"])


def url(worker: Host) -> str:
    return f"https://{worker.ip}:{PORT}"


def connector_status(name: str) -> dict:
    """Connect's status of a connector and its tasks (RestError 404 while Connect does not know it)."""
    return rest(url(WORKERS[0]), "GET", f"/connectors/{name}/status", admin_tls())[1]


def connector_running(name: str) -> bool:
    """The connector and every one of its tasks RUNNING (False while Connect does not know it yet)."""
    try:
        s = connector_status(name)
    except RestError:
        return False
    tasks = s["tasks"]
    return s["connector"]["state"] == "RUNNING" and bool(tasks) and all(t["state"] == "RUNNING" for t in tasks)


def failed_parts() -> list[str]:
    """What is FAILED in the Connect cluster, one line per connector or task (kafkakit's own reading)."""
    listing = rest(url(WORKERS[0]), "GET", "/connectors?expand=status", admin_tls())[1] or {}
    return [line for n, e in sorted(listing.items()) for line in ConnectorStatus.from_rest(n, e["status"]).failed()]
