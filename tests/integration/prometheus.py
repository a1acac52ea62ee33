"""The lab's Prometheus and HTTPS endpoints as a client reaches them: over TLS with the lab's CA
bundle, with the scrape login (generated at `make lab` time)."""

from __future__ import annotations

import base64
import json
import ssl
import urllib.error
import urllib.parse
import urllib.request

from kafkakit.monitoring.prometheus import PROMETHEUS_PORT
from tests.integration.lab import CLIENT_DIR, ROOT

SECRETS = ROOT / "build/lab/secrets"


def lab_tls() -> ssl.SSLContext:
    """Trusts the lab's CA bundle (the one clients use) and checks the address in the certificate."""
    return ssl.create_default_context(cafile=str(CLIENT_DIR / "pki" / "trusted.crt"))


def scrape_password() -> str:
    return (SECRETS / "monitoring-scrape").read_text().strip()


def http_get(
    url: str, auth: tuple[str, str] | None = None, timeout: float = 10, tls: ssl.SSLContext | None = None
) -> tuple[int, str]:
    request = urllib.request.Request(url)
    if auth:
        token = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
        request.add_header("Authorization", f"Basic {token}")
    if url.startswith("https:") and tls is None:
        tls = lab_tls()
    try:
        with urllib.request.urlopen(request, timeout=timeout, context=tls) as response:  # noqa: S310 - lab addresses
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, ""


class Prometheus:
    def __init__(self, ip: str) -> None:
        self.base = f"https://{ip}:{PROMETHEUS_PORT}/api/v1"
        self.login = ("prometheus", scrape_password())

    def get(self, path: str, **params: str) -> dict:
        status, body = http_get(f"{self.base}/{path}?{urllib.parse.urlencode(params)}", self.login)
        assert status == 200, f"{path}: HTTP {status}"
        return json.loads(body)["data"]

    def query(self, expr: str) -> list[dict]:
        return self.get("query", query=expr)["result"]

    def firing(self, alert: str, **labels: str) -> bool:
        return any(
            a["labels"]["alertname"] == alert
            and a["state"] == "firing"
            and all(a["labels"].get(k) == v for k, v in labels.items())
            for a in self.get("alerts")["alerts"]
        )
