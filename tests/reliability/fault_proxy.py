"""A loopback TCP proxy in front of a database server that drops its connections on request.

sqlml is pointed at the proxy's port. The proxy forwards bytes both ways, one thread per
direction, and can be told to cut every connection once a client has sent some bytes (a
statement's text) and a given number of bytes more went through, or at once; after a cut
it may refuse new connections for a while, as a restarting server does. It stops itself
after ``lifetime`` seconds.
"""

from __future__ import annotations

import socket
import threading
import time
from contextlib import suppress
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit


@dataclass
class _Trigger:
    pattern: bytes  # what a client sends that arms the cut
    after: int  # bytes (both ways) let through once it was sent
    refuse_for: float  # seconds new connections are refused after the cut
    matched: bool = False
    counted: int = 0


class FaultProxy:
    """Forward ``127.0.0.1:<port>`` to ``target`` (host, port) until closed or ``lifetime``."""

    def __init__(self, target: tuple[str, int], lifetime: float = 120.0) -> None:
        self._target = target
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.1)
        self.port: int = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._sockets: set[socket.socket] = set()
        self._trigger: _Trigger | None = None
        self._refuse_until = 0.0
        self._deadline = time.monotonic() + lifetime
        self._stop = threading.Event()
        self.cut_done = threading.Event()
        self.connections = 0  # connections forwarded so far
        self.refused = 0  # connections refused while "restarting"
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    @classmethod
    def for_url(cls, url: str, lifetime: float = 120.0) -> FaultProxy:
        parts = urlsplit(url)
        return cls((parts.hostname or "127.0.0.1", parts.port or 3306), lifetime)

    def url(self, url: str) -> str:
        """``url`` with its host and port replaced by the proxy's."""
        parts = urlsplit(url)
        credentials = parts.netloc.rpartition("@")[0]
        netloc = f"{credentials}@127.0.0.1:{self.port}" if credentials else f"127.0.0.1:{self.port}"
        return urlunsplit(parts._replace(netloc=netloc))

    def cut_when(self, pattern: bytes, after: int = 0, refuse_for: float = 0.0) -> None:
        """Cut every connection once a client sent ``pattern`` and ``after`` bytes more went
        through (either way); then refuse new connections for ``refuse_for`` seconds."""
        with self._lock:
            self._trigger = _Trigger(pattern, after, refuse_for)
            self.cut_done.clear()

    def cut(self, refuse_for: float = 0.0) -> None:
        """Cut every connection now; refuse new ones for ``refuse_for`` seconds."""
        with self._lock:
            self._cut(refuse_for)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def __enter__(self) -> FaultProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _cut(self, refuse_for: float) -> None:
        self._trigger = None
        self._refuse_until = time.monotonic() + refuse_for
        for sock in self._sockets:
            _shut(sock)
        self._sockets.clear()
        self.cut_done.set()

    def _accept(self) -> None:
        try:
            while not self._stop.is_set() and time.monotonic() < self._deadline:
                try:
                    client, _ = self._listener.accept()
                except TimeoutError:
                    continue
                self._open(client)
        finally:
            self._listener.close()
            with self._lock:
                self._cut(0.0)

    def _open(self, client: socket.socket) -> None:
        with self._lock:
            refusing = time.monotonic() < self._refuse_until
        if refusing:
            self.refused += 1
            _shut(client)
            return
        try:
            server = socket.create_connection(self._target, timeout=5)
        except OSError:
            _shut(client)
            return
        server.settimeout(None)
        client.settimeout(None)
        with self._lock:
            self._sockets.update((client, server))
            self.connections += 1
        for source, sink, from_client in ((client, server, True), (server, client, False)):
            threading.Thread(
                target=self._pump, args=(source, sink, from_client), daemon=True
            ).start()

    def _pump(self, source: socket.socket, sink: socket.socket, from_client: bool) -> None:
        tail = b""  # the end of what the client sent before, for patterns cut in two
        try:
            while data := source.recv(65536):
                with self._lock:
                    send, cut, tail = self._passed(data, from_client, tail)
                    if cut is not None:
                        self._trigger = None  # fires once
                sink.sendall(send)
                if cut is not None:
                    self.cut(cut)
                    return
        except OSError:
            pass  # cut: the other direction's thread or a cut closed a socket
        finally:
            _shut(source)
            _shut(sink)

    def _passed(
        self, data: bytes, from_client: bool, tail: bytes
    ) -> tuple[bytes, float | None, bytes]:
        """What of ``data`` to forward, the refusal time if the connections are cut after it,
        and the new tail."""
        trigger = self._trigger
        if trigger is None:
            return data, None, b""
        if not trigger.matched:
            seen = tail + data
            if from_client and trigger.pattern in seen:
                trigger.matched = True
                if trigger.after == 0:
                    return data, trigger.refuse_for, b""
            return data, None, seen[-len(trigger.pattern) :] if from_client else tail
        left = trigger.after - trigger.counted
        if len(data) < left:
            trigger.counted += len(data)
            return data, None, b""
        return data[:left], trigger.refuse_for, b""


def _shut(sock: socket.socket) -> None:
    with suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()
