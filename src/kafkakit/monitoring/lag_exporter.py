"""Consumer-group lag for Prometheus: committed offsets vs. log-end offsets, per data centre,
group, topic and partition, served at /metrics as `kafkakit_consumergroup_lag`.

Runs on the monitoring hosts as a systemd service (roles/monitoring/tasks/lag-exporter.yml) in a
virtualenv of its own holding confluent-kafka; otherwise it keeps to the standard library.

  python3 lag_exporter.py /etc/kafkakit-lag-exporter/config.json
  config: {"listen": "10.0.0.5:9308", "interval_s": 10,
           "clusters": {"dc1": {"bootstrap.servers": "...", "security.protocol": "SASL_SSL", ...}},
           "web": {"cert_file": "...", "key_file": "...", "user": "prometheus", "password": "..."}}
With "web", /metrics is served over TLS (1.2 or later) and only to that basic-auth login.
"""

from __future__ import annotations

import base64
import hmac
import json
import ssl
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

METRIC = "kafkakit_consumergroup_lag"
Offsets = Mapping[tuple[str, int], int]


@dataclass(frozen=True)
class Lag:
    dc: str
    group: str
    topic: str
    partition: int
    records: int


def lags(dc: str, group: str, committed: Offsets, ends: Offsets) -> list[Lag]:
    """One Lag per partition the group has committed on. A committed offset past the end (the
    log was truncated or the topic recreated) counts as no lag rather than a negative one."""
    return [
        Lag(dc, group, topic, partition, max(ends[(topic, partition)] - offset, 0))
        for (topic, partition), offset in sorted(committed.items())
        if offset >= 0 and (topic, partition) in ends
    ]


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def exposition(samples: Iterable[Lag], up: Mapping[str, bool], took_s: Mapping[str, float]) -> str:
    """The Prometheus text format of one collection round."""
    lines = [
        f"# HELP {METRIC} Records a consumer group is behind the log end, per partition.",
        f"# TYPE {METRIC} gauge",
    ]
    lines += [
        f'{METRIC}{{dc="{_label(s.dc)}",group="{_label(s.group)}",topic="{_label(s.topic)}",'
        f'partition="{s.partition}"}} {s.records}'
        for s in samples
    ]
    lines += [
        "# HELP kafkakit_lag_exporter_up 1 when the last collection from the data centre succeeded.",
        "# TYPE kafkakit_lag_exporter_up gauge",
    ]
    lines += [f'kafkakit_lag_exporter_up{{dc="{_label(dc)}"}} {int(ok)}' for dc, ok in sorted(up.items())]
    lines += [
        "# HELP kafkakit_lag_exporter_collect_seconds Seconds the last collection took.",
        "# TYPE kafkakit_lag_exporter_collect_seconds gauge",
    ]
    lines += [f'kafkakit_lag_exporter_collect_seconds{{dc="{_label(dc)}"}} {t:.3f}' for dc, t in sorted(took_s.items())]
    return "\n".join(lines) + "\n"


class ClusterReader:
    """Reads one data centre's groups and offsets; keeps one consumer per group between rounds
    (committed() answers for the consumer's own group.id; it never joins the group)."""

    def __init__(self, dc: str, conf: Mapping[str, str], timeout_s: float = 10.0) -> None:
        from confluent_kafka import Consumer
        from confluent_kafka.admin import AdminClient

        self.dc = dc
        self.conf = dict(conf)
        self.timeout = timeout_s
        self.admin = AdminClient(self.conf)
        self._consumer_class = Consumer
        self.ends_reader: Any = None
        self.readers: dict[str, Any] = {}

    def _reader(self, group: str) -> Any:
        if group not in self.readers:
            self.readers[group] = self._consumer_class({**self.conf, "group.id": group, "enable.auto.commit": False})
        return self.readers[group]

    def collect(self) -> list[Lag]:
        from confluent_kafka import TopicPartition

        groups = sorted(g.id for g in self.admin.list_groups(timeout=self.timeout) if g.id)
        meta = self.admin.list_topics(timeout=self.timeout)
        partitions = [
            TopicPartition(name, p)
            for name, t in sorted(meta.topics.items())
            if not name.startswith("__")
            for p in sorted(t.partitions)
        ]
        # A fresh reader each round: a long-lived one can keep asking a partition's old leader
        # after leadership moved (NOT_LEADER_FOR_PARTITION on every round).
        old, self.ends_reader = (
            self.ends_reader,
            self._consumer_class({**self.conf, "group.id": "kafkakit-lag-exporter", "enable.auto.commit": False}),
        )
        _close_quietly(old)
        ends: dict[tuple[str, int], int] = {}
        out: list[Lag] = []
        for group in groups:
            try:
                offsets = self._reader(group).committed(partitions, timeout=self.timeout)
            except Exception as exc:  # noqa: BLE001 - one group must not hide the others
                print(f"{self.dc}: group {group}: {exc!r}", file=sys.stderr, flush=True)
                _close_quietly(self.readers.pop(group))
                continue
            committed = {(tp.topic, tp.partition): tp.offset for tp in offsets if tp.error is None and tp.offset >= 0}
            for key in committed:
                if key not in ends:
                    try:
                        low_high = self.ends_reader.get_watermark_offsets(
                            TopicPartition(*key), timeout=self.timeout, cached=False
                        )
                    except Exception as exc:  # noqa: BLE001 - a partition in a leader move: skip it this round
                        print(f"{self.dc}: {key[0]}-{key[1]}: {exc!r}", file=sys.stderr, flush=True)
                        continue
                    if low_high is not None:
                        ends[key] = low_high[1]
            out += lags(self.dc, group, committed, ends)
        for gone in set(self.readers) - set(groups):
            _close_quietly(self.readers.pop(gone))
        return out

    def close(self) -> None:
        for handle in [self.ends_reader, *self.readers.values()]:
            _close_quietly(handle)
        self.ends_reader = None
        self.readers.clear()


def _close_quietly(handle: Any) -> None:
    if handle is None:
        return
    try:
        handle.close()
    except Exception as exc:  # noqa: BLE001 - a handle that fails to close is dropped all the same
        print(f"closing a client: {exc!r}", file=sys.stderr, flush=True)


class Exporter:
    def __init__(
        self, config: Mapping[str, Any], reader_class: Callable[[str, Mapping[str, str]], Any] = ClusterReader
    ) -> None:
        self.interval = float(config.get("interval_s", 10))
        self.clusters: dict[str, Mapping[str, str]] = dict(config["clusters"])
        self.reader_class = reader_class
        self.readers: dict[str, Any] = {}
        self.page = exposition([], {dc: False for dc in self.clusters}, {})
        self.lock = threading.Lock()

    def round(self) -> None:
        samples: list[Lag] = []
        up: dict[str, bool] = {}
        took: dict[str, float] = {}
        for dc, conf in self.clusters.items():
            start = time.monotonic()
            try:
                if dc not in self.readers:
                    self.readers[dc] = self.reader_class(dc, conf)
                samples += self.readers[dc].collect()
                up[dc] = True
            except Exception as exc:  # noqa: BLE001 - one DC down must not stop the others
                print(f"{dc}: collection failed: {exc!r}", file=sys.stderr, flush=True)
                up[dc] = False
                # Start the next round with new clients: a failed one can stay failed (a closed
                # handle, brokers it still believes in), and every later round would fail at once.
                reader = self.readers.pop(dc, None)
                if reader is not None:
                    reader.close()
            took[dc] = time.monotonic() - start
        page = exposition(samples, up, took)
        with self.lock:
            self.page = page

    def run(self) -> None:
        while True:
            started = time.monotonic()
            self.round()
            time.sleep(max(self.interval - (time.monotonic() - started), 1.0))


def basic_auth_ok(header: str | None, user: str, password: str) -> bool:
    """Whether an Authorization header carries exactly this login (compared in constant time)."""
    expected = base64.b64encode(f"{user}:{password}".encode()).decode()
    return hmac.compare_digest((header or "").encode(), f"Basic {expected}".encode())


class _QuietServer(ThreadingHTTPServer):
    # A client that fails the TLS handshake (plain HTTP, an untrusted CA) is refused, not logged
    # with a traceback on every probe.
    def handle_error(self, request: Any, client_address: Any) -> None:
        exc = sys.exc_info()[1]
        if not isinstance(exc, ssl.SSLError | ConnectionError | TimeoutError):
            super().handle_error(request, client_address)


def serve(exporter: Exporter, listen: str, web: Mapping[str, str] | None = None) -> ThreadingHTTPServer:
    host, _, port = listen.rpartition(":")

    class Handler(BaseHTTPRequestHandler):
        timeout = 10  # a client that opens a connection and says nothing is dropped

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            if web and not basic_auth_ok(self.headers.get("Authorization"), web["user"], web["password"]):
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="kafkakit-lag-exporter"')
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if self.path.split("?")[0] != "/metrics":
                self.send_error(404)
                return
            with exporter.lock:
                body = exporter.page.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_args: Any) -> None:  # scrapes every few seconds: keep the journal quiet
            pass

    server = _QuietServer((host, int(port)), Handler)
    if web:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.load_cert_chain(web["cert_file"], web["key_file"])
        # The handshake happens in the request's thread, so a slow client cannot stall accept().
        server.socket = context.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=False)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: lag_exporter.py CONFIG.json", file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as fh:
        config = json.load(fh)
    exporter = Exporter(config)
    serve(exporter, config["listen"], config.get("web"))
    exporter.run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
