"""The consumer-lag exporter's arithmetic and its Prometheus text (the collection itself runs
against the lab in tests/integration/test_monitoring.py)."""

from __future__ import annotations

import ast
import base64
import re
import ssl
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from kafkakit.monitoring import lag_exporter
from kafkakit.monitoring.lag_exporter import Exporter, Lag, exposition, lags, serve
from tests.selfsigned import self_signed

SOURCE = Path(lag_exporter.__file__)


def test_lag_is_end_minus_committed_per_partition() -> None:
    committed = {("orders", 0): 90, ("orders", 1): 100, ("orders", 2): 120, ("payments", 0): -1001}
    ends = {("orders", 0): 100, ("orders", 1): 100, ("orders", 2): 110, ("payments", 0): 5}
    assert lags("dc1", "billing", committed, ends) == [
        Lag("dc1", "billing", "orders", 0, 10),
        Lag("dc1", "billing", "orders", 1, 0),
        Lag("dc1", "billing", "orders", 2, 0),  # committed past a truncated log: no negative lag
    ]


def test_a_partition_without_an_end_offset_is_left_out() -> None:
    assert lags("dc1", "g", {("t", 0): 5}, {}) == []


def test_exposition_is_valid_prometheus_text() -> None:
    text = exposition([Lag("dc2", 'we"ird\\group', "t", 3, 42)], {"dc1": False, "dc2": True}, {"dc2": 0.25})
    assert 'kafkakit_consumergroup_lag{dc="dc2",group="we\\"ird\\\\group",topic="t",partition="3"} 42' in text
    assert 'kafkakit_lag_exporter_up{dc="dc1"} 0' in text and 'kafkakit_lag_exporter_up{dc="dc2"} 1' in text
    sample = re.compile(r'^[a-z_]+\{(?:[a-z]+="(?:[^"\\]|\\.)*",?)*\} -?[0-9.]+$')
    for line in text.splitlines():
        assert line.startswith("# ") or sample.match(line), line


def test_the_host_side_module_needs_only_the_standard_library_and_confluent_kafka() -> None:
    # It runs on the monitoring host in a virtualenv holding only confluent-kafka, not in ours.
    tree = ast.parse(SOURCE.read_text())
    roots = {
        (node.module if isinstance(node, ast.ImportFrom) else alias.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    assert roots - set(sys.stdlib_module_names) - {"__future__"} == {"confluent_kafka"}


class _FlakyReader:
    """Fails its first collection and then stays broken, like a client left with a closed handle."""

    made: list[_FlakyReader] = []

    def __init__(self, dc: str, _conf: object) -> None:
        self.dc, self.broken, self.closed = dc, len(_FlakyReader.made) == 0, False
        _FlakyReader.made.append(self)

    def collect(self) -> list[Lag]:
        if self.broken:
            raise RuntimeError("Consumer closed")
        return [Lag(self.dc, "g", "t", 0, 7)]

    def close(self) -> None:
        self.closed = True


def test_a_failed_data_centre_gets_new_clients_and_recovers_next_round() -> None:
    _FlakyReader.made.clear()
    exporter = lag_exporter.Exporter({"clusters": {"dc1": {}}}, reader_class=_FlakyReader)
    exporter.round()
    assert 'kafkakit_lag_exporter_up{dc="dc1"} 0' in exporter.page
    assert _FlakyReader.made[0].closed
    exporter.round()
    assert 'kafkakit_lag_exporter_up{dc="dc1"} 1' in exporter.page
    assert 'kafkakit_consumergroup_lag{dc="dc1",group="g",topic="t",partition="0"} 7' in exporter.page
    assert len(_FlakyReader.made) == 2


def _get(url: str, context: ssl.SSLContext | None, login: tuple[str, str] | None = None) -> int:
    request = urllib.request.Request(url)
    if login:
        request.add_header("Authorization", "Basic " + base64.b64encode(":".join(login).encode()).decode())
    try:
        with urllib.request.urlopen(request, timeout=5, context=context) as response:  # noqa: S310 - loopback
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_with_a_web_config_metrics_need_tls_and_the_login(tmp_path: Path) -> None:
    cert_file, key_file = self_signed(tmp_path, "127.0.0.1", ip="127.0.0.1")
    web = {"cert_file": str(cert_file), "key_file": str(key_file), "user": "prometheus", "password": "s3cret"}
    server = serve(Exporter({"clusters": {}}), "127.0.0.1:0", web)
    try:
        port = server.server_address[1]
        trusted = ssl.create_default_context(cafile=str(cert_file))
        url = f"https://127.0.0.1:{port}/metrics"
        assert _get(url, trusted, ("prometheus", "s3cret")) == 200  # the positive control
        assert _get(url, trusted) == 401
        assert _get(url, trusted, ("prometheus", "wrong")) == 401
        assert _get(url, trusted, ("someone", "s3cret")) == 401
        with pytest.raises(OSError):  # plain HTTP gets no page
            _get(f"http://127.0.0.1:{port}/metrics", None, ("prometheus", "s3cret"))
        with pytest.raises(OSError):  # a client that does not trust the certificate
            _get(url, ssl.create_default_context(), ("prometheus", "s3cret"))
        old = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        old.load_verify_locations(str(cert_file))
        old.minimum_version = old.maximum_version = ssl.TLSVersion.TLSv1_1
        old.set_ciphers("DEFAULT:@SECLEVEL=0")  # let this client offer 1.1: the server must be what refuses
        with pytest.raises(OSError):  # TLS below 1.2
            _get(url, old, ("prometheus", "s3cret"))
    finally:
        server.shutdown()
