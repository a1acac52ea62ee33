"""The lab's Kafka Connect cluster as the tests reach it: its workers, and the REST API's admin
client certificate from build/lab/<dc>/connect.env."""

from __future__ import annotations

from kafkakit.connect import TlsFiles
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
