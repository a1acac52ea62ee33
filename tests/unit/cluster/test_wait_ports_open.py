"""wait_ports_open and wait_serving: poll brokers until they accept connections, or answer (loopback only)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from kafkakit.cluster.admin import wait_ports_open, wait_serving


@pytest.fixture
def listening() -> Iterator[socket.socket]:
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield server


def free_port() -> int:
    """A loopback port nothing listens on (bound, never listened, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_open_ports_return_at_once(listening: socket.socket) -> None:
    port = listening.getsockname()[1]
    assert wait_ports_open(f"127.0.0.1:{port},127.0.0.1:{port}", timeout=5) < 2


def test_a_closed_port_times_out_naming_it(listening: socket.socket) -> None:
    open_port, closed = listening.getsockname()[1], free_port()
    start = time.monotonic()
    with pytest.raises(TimeoutError) as info:
        wait_ports_open(f"127.0.0.1:{open_port}, 127.0.0.1:{closed}", timeout=0.5, interval=0.1)
    assert time.monotonic() - start < 5
    message = str(info.value)
    assert f"127.0.0.1:{closed}" in message and f"127.0.0.1:{open_port}" not in message
    assert "not accepting connections after" in message


def test_a_port_that_opens_later_is_waited_for() -> None:
    port = free_port()
    ready = threading.Event()

    def open_later() -> None:
        time.sleep(0.5)
        with socket.create_server(("127.0.0.1", port)) as server:
            ready.set()
            server.settimeout(5)
            try:
                server.accept()[0].close()
            except TimeoutError:
                pass

    opener = threading.Thread(target=open_later)
    opener.start()
    try:
        waited = wait_ports_open(f"127.0.0.1:{port}", timeout=10, interval=0.1)
    finally:
        opener.join(10)
    assert ready.is_set() and waited >= 0.4


def test_an_open_port_that_answers_no_kafka_request_is_not_serving(listening: socket.socket) -> None:
    """wait_serving needs an answer, not a connection: a restarted broker binds its port before
    it has registered (and serves requests). The positive control is the lab's rolling-restart
    test, whose last broker answers at once when the roll returns."""
    listening.listen()
    port = listening.getsockname()[1]
    start = time.monotonic()
    with pytest.raises(TimeoutError, match="answered no metadata request"):
        wait_serving(f"127.0.0.1:{port}", {}, timeout=2, interval=0.2)
    assert time.monotonic() - start < 15
