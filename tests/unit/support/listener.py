"""A stand-in for a cluster that must not be contacted: a TCP socket listening on 127.0.0.1, on a
port of its own, that counts the connections made to it and answers none (a Kafka client pointed
at it gets no further than connecting)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager


class Listener:
    def __init__(self, server: socket.socket) -> None:
        self._server = server
        self._server.setblocking(False)
        self._connections = 0

    @property
    def address(self) -> str:
        """host:port, as a bootstrap_servers list names it."""
        host, port = self._server.getsockname()[:2]
        return f"{host}:{port}"

    def connections(self) -> int:
        """Connections made so far. The kernel queues each one as soon as the client's connect
        completes, whether or not anyone accepts it, so once the client has exited every
        connection it made is counted here."""
        while True:
            try:
                conn, _ = self._server.accept()
            except BlockingIOError:
                return self._connections
            conn.close()
            self._connections += 1


@contextmanager
def loopback_listener() -> Iterator[Listener]:
    with socket.create_server(("127.0.0.1", 0), backlog=64) as server:
        yield Listener(server)
