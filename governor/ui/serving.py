"""Serving the web view: binding the address, TLS, uvicorn, and stopping on a signal.

Rules:
    * Bound to 127.0.0.1 unless told otherwise. A loopback address is one only this
      machine reaches; every other address is *exposed*, and a server that allows
      actions refuses to start exposed without TLS unless told it may (the CLI checks
      ``is_loopback``).
    * uvicorn writes no access log (an address may carry the access token once) and its
      own messages are one line each: no traceback reaches the terminal.
    * A stop signal (SIGINT, SIGTERM) ends the server cleanly, exit 0.
    * Starlette and uvicorn are the ``ui`` extra: only this module and ``server.py``
      import them.
"""

from __future__ import annotations

import errno
import ipaddress
import logging
import signal
import socket
import ssl
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import uvicorn

from governor.errors import InputError, UnavailableError
from governor.store.base import EventStore
from governor.ui.server import make_app
from governor.ui.settings import LOOPBACK_NAMES, UiSettings


def is_loopback(host: str) -> bool:
    """Whether an address to listen on is reached only from this machine."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def allowed_hosts_for(host: str) -> frozenset[str] | None:
    """The Host names to accept for a bind address (None: any, for every interface)."""
    try:
        if ipaddress.ip_address(host).is_unspecified:
            return None
    except ValueError:
        pass
    return LOOPBACK_NAMES | {host.lower().strip("[]")}


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (port 0: any free port).

    Raises:
        UnavailableError: when the port is taken or may not be used.
        InputError: when the host cannot be resolved.
    """
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except socket.gaierror as exc:
        raise InputError(
            f"--host {host}: not an address this machine has ({exc.strerror})"
        ) from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise UnavailableError(
                f"port {port} on {host} is taken by another program; choose another with "
                "--port N (or --port 0 for any free port)",
                what=f"port {port}",
            ) from None
        raise UnavailableError(
            f"cannot listen on {host} port {port}: {exc.strerror}", what=f"port {port}"
        ) from None
    return sock


def url_of(sock: socket.socket, *, tls: bool = False) -> str:
    """The address a person types to reach the bound socket."""
    host, port = sock.getsockname()[:2]
    if ipaddress.ip_address(host).is_unspecified:
        host = "127.0.0.1" if sock.family == socket.AF_INET else "::1"
    shown = f"[{host}]" if ":" in host else host
    return f"{'https' if tls else 'http'}://{shown}:{port}/"


@dataclass(frozen=True, slots=True)
class Tls:
    """The certificate chain and private key the server presents (PEM files)."""

    cert: Path
    key: Path

    def check(self) -> None:
        """Load the pair once, so a bad file is one clear line before anything listens.

        Raises:
            InputError: naming the files and what is wrong with them.
        """
        try:
            ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(self.cert, self.key)
        except (OSError, ssl.SSLError) as exc:
            reason = getattr(exc, "strerror", None) or getattr(exc, "reason", None) or exc
            raise InputError(
                f"--tls-cert {self.cert} --tls-key {self.key}: not a usable certificate and "
                f"key ({reason})"
            ) from None


class _OneLine(logging.Formatter):
    """uvicorn's own messages as one line each: no traceback reaches the terminal."""

    def format(self, record: logging.LogRecord) -> str:
        detail = f": {record.exc_info[1]}" if record.exc_info and record.exc_info[1] else ""
        return f"governor ui: {record.getMessage()}{detail}"


def _quiet_uvicorn() -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneLine())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        logger.handlers, logger.propagate = [handler], False
        logger.setLevel(logging.WARNING)


class _Server(uvicorn.Server):
    """uvicorn's server, but a stop signal ends it cleanly (exit 0) instead of being raised
    again after the graceful shutdown."""

    @contextmanager
    def capture_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        stops = (signal.SIGINT, signal.SIGTERM)
        previous = {sig: signal.signal(sig, self.handle_exit) for sig in stops}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def serve(
    store: EventStore, settings: UiSettings, sock: socket.socket, tls: Tls | None = None
) -> None:
    """Serve the view on a bound socket until SIGINT or SIGTERM."""
    _quiet_uvicorn()
    config = uvicorn.Config(
        make_app(store, settings),
        log_config=None,
        access_log=False,  # an address may carry the access token (the token link)
        server_header=False,
        proxy_headers=False,
        lifespan="off",
        timeout_graceful_shutdown=2,
        ssl_certfile=str(tls.cert) if tls else None,
        ssl_keyfile=str(tls.key) if tls else None,
    )
    _Server(config).run(sockets=[sock])
