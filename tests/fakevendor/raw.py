"""Loopback servers that misbehave on purpose, for the relay's tests: raw sockets, a proxy.

``RawServer`` hands each accepted connection to a function of the test (after reading the
request head), so a test can send exactly the bytes it means: a chunk and then wait,
enormous headers, invalid UTF-8, a close mid-chunk, a never-ending stream. ``HttpProxy`` is
a small forwarding HTTP proxy (absolute-form requests and ``CONNECT``) that records the
request lines and ``Proxy-Authorization`` it saw.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

Handler = Callable[[socket.socket, bytes], None]
"""Serves one connection, given the request head it sent (through the blank line)."""


def read_head(conn: socket.socket) -> bytes:
    """The bytes of a request head (through ``\\r\\n\\r\\n``); b'' when the peer closed."""
    data = b""
    while b"\r\n\r\n" not in data:
        piece = conn.recv(65536)
        if not piece:
            return b""
        data += piece
    return data


def read_body(conn: socket.socket, head: bytes) -> bytes:
    """The rest of a request with a ``Content-Length`` (after ``read_head``)."""
    top, _, rest = head.partition(b"\r\n\r\n")
    length = 0
    for line in top.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    body = rest
    while len(body) < length:
        piece = conn.recv(1 << 20)
        if not piece:
            break
        body += piece
    return body


@dataclass
class RawServer:
    """A loopback server whose every connection is served by ``handler`` in a thread."""

    handler: Handler
    sock: socket.socket = field(default_factory=socket.socket)
    closed: threading.Event = field(default_factory=threading.Event)
    """Set when a handler saw its peer close (``peer_closed``)."""
    head: bool = True
    """Read the request head before the handler (False: the handler gets b'' at once)."""

    def __post_init__(self) -> None:
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self._thread = threading.Thread(target=self._accept, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError):
            if not self.head:
                self.handler(conn, b"")
                return
            head = read_head(conn)
            if head:
                self.handler(conn, head)

    def peer_closed(self, conn: socket.socket) -> None:
        """Block until the peer closes ``conn`` (or resets it), then set ``closed``."""
        conn.settimeout(60)
        with contextlib.suppress(OSError):
            while conn.recv(65536):
                pass
        self.closed.set()

    def __enter__(self) -> RawServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.sock.close()


def _pipe(source: socket.socket, target: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := source.recv(65536):
            target.sendall(data)
    with contextlib.suppress(OSError):
        target.shutdown(socket.SHUT_WR)


@dataclass
class HttpProxy:
    """A forwarding HTTP proxy that records each request line and its credentials."""

    lines: list[str] = field(default_factory=list)
    auth: list[str | None] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.server = RawServer(self._handle)

    @property
    def url(self) -> str:
        return self.server.url

    def _handle(self, conn: socket.socket, head: bytes) -> None:
        top, _, rest = head.partition(b"\r\n\r\n")
        lines = top.decode("latin-1").split("\r\n")
        method, target, _ = lines[0].split(" ", 2)
        self.lines.append(f"{method} {target}")
        headers = {
            k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in lines[1:])
        }
        self.auth.append(headers.get("proxy-authorization"))
        if method == "CONNECT":
            host, _, port = target.rpartition(":")
            upstream = socket.create_connection((host, int(port)))
            conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        else:
            parts = urlsplit(target)
            upstream = socket.create_connection((parts.hostname or "", parts.port or 80))
            path = parts.path + (f"?{parts.query}" if parts.query else "")
            kept = [h for h in lines[1:] if not h.lower().startswith("proxy-")]
            upstream.sendall(
                f"{method} {path} HTTP/1.1\r\n".encode()
                + "\r\n".join(kept).encode()
                + b"\r\n\r\n"
                + rest
            )
        with upstream:
            back = threading.Thread(target=_pipe, args=(upstream, conn), daemon=True)
            back.start()
            _pipe(conn, upstream)
            back.join(60)

    def __enter__(self) -> HttpProxy:
        self.server.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.__exit__()
