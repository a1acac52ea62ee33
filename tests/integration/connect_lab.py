"""The lab's Kafka Connect cluster as the tests reach it: its workers, and the REST API's admin
client certificate from build/lab/<dc>/connect.env."""

from __future__ import annotations

from kafkakit.cluster.connect import RestError, TlsFiles, request
from tests.integration.lab import CLIENT_DIR, Host, Lab, properties

DC = "dc1"
WORKERS = Lab().members("kafka_connect", DC)
PORT = 8083


def env(dc: str = DC) -> dict[str, str]:
    """build/lab/<dc>/connect.env, what kafka_connect writes for people."""
    return properties((CLIENT_DIR / dc / "connect.env").read_text())


def admin_tls() -> TlsFiles:
    e = env()
    return TlsFiles(e["CONNECT_CA"], e["CONNECT_CERT"], e["CONNECT_KEY"])


def url(worker: Host) -> str:
    return f"https://{worker.ip}:{PORT}"


def connector_running(name: str) -> bool:
    """The connector and every one of its tasks RUNNING (False while Connect does not know it yet)."""
    try:
        s = request(url(WORKERS[0]), "GET", f"/connectors/{name}/status", admin_tls())[1]
    except RestError:
        return False
    tasks = s["tasks"]
    return s["connector"]["state"] == "RUNNING" and bool(tasks) and all(t["state"] == "RUNNING" for t in tasks)
