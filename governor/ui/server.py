"""The web server of ``governor ui``: a Starlette app of GET routes, served by uvicorn.

Rules:
    * Read only by design: every route is GET (and so HEAD); any other method is 405,
      any other path 404. The store behind it is opened read-only besides, so even a
      bug here could not write.
    * Every response carries a strict Content-Security-Policy (scripts, styles and
      images from this server only; no inline code; nothing may frame the page) and
      ``nosniff``, ``no-referrer``, ``no-store``.
    * Requests must name this server in their ``Host`` header (the bound address or a
      loopback name), so a web page elsewhere cannot read the view through DNS
      rebinding. Bound to every interface, any host is accepted: the person asked.
    * No traceback reaches the terminal: an error in a request is one line on stderr
      and a 500 page; a store error is a page saying so.
    * Starlette and uvicorn are the ``ui`` extra; only ``governor ui`` imports this module.
"""

from __future__ import annotations

import errno
import ipaddress
import logging
import re
import signal
import socket
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

import uvicorn
from starlette.applications import Starlette
from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from governor.clock import utc_now
from governor.core.events import ID_PATTERN
from governor.errors import GovernorError, InputError, NotFoundError, UnavailableError
from governor.store.base import EventStore
from governor.temporal.names import driver_of, workflow_url
from governor.ui.data import Explanations, goal_list, goal_page, upstream_rows
from governor.ui.goal_page import goal_main
from governor.ui.layout import document, link
from governor.ui.list_page import list_main
from governor.ui.markup import Html, el, join

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
Asgi = Callable[[Scope, Receive, Send], Awaitable[None]]

CSP: Final = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
HEADERS: Final = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
    "cache-control": "no-store",
}
"""Sent with every response, errors and static files included."""

LOOPBACK_NAMES: Final = frozenset({"localhost", "127.0.0.1", "::1"})
_GOAL_ID: Final = re.compile(ID_PATTERN)


@dataclass(frozen=True, slots=True)
class UiSettings:
    """What the server needs besides the store, read once by the CLI."""

    store_label: str
    """How the header names the store (never with a password)."""
    store_arg: str | None = None
    """The ``--store`` value the printed commands need; None for the default store."""
    refresh_s: float = 2.0
    """How often an open page refreshes itself, in seconds (0: never)."""
    per_page: int = 50
    """Goals per page of the list."""
    allowed_hosts: frozenset[str] | None = field(default=LOOPBACK_NAMES)
    """Host names a request may name; None accepts any (bound to every interface)."""
    advice_wait_s: float = 0.25
    """How long a goal's page waits for ``explain``'s advice before it is shown without."""
    clock: Callable[[], datetime] = utc_now
    temporal_ui: str | None = None
    """Temporal's Web UI: a goal Temporal drives links to its workflow's page there."""


def _page(settings: UiSettings, title: str, main: Html, status_code: int = 200) -> HTMLResponse:
    body = document(title, main, subtitle=settings.store_label, refresh_s=settings.refresh_s)
    return HTMLResponse(body, status_code=status_code)


def _error(settings: UiSettings, exc: GovernorError) -> HTMLResponse:
    code = 404 if isinstance(exc, NotFoundError) else 400 if isinstance(exc, InputError) else 503
    main = join(
        [
            el("h1", "Nothing to show" if code == 404 else "Cannot show this"),
            el("p", str(exc), class_="error"),
        ]
    )
    return _page(settings, "error", main, code)


def _number(text: str | None, default: int) -> int:
    return int(text) if text and text.isdigit() and len(text) < 10 else default


def workflow_link(ui: str, store: EventStore, goal_id: str) -> Html:
    """A link to the goal's workflow in Temporal's Web UI, when Temporal drives the goal
    (its lease says so); nothing otherwise."""
    lease = store.current_lease(goal_id)
    driver = driver_of(lease.holder if lease else None)
    if driver is None:
        return Html("")
    url = workflow_url(ui, driver.namespace, goal_id)
    return el(
        "p",
        f"Driven by Temporal ({driver.describe()}): ",
        link(url, "its workflow"),
        class_="temporal",
    )


def make_app(store: EventStore, settings: UiSettings) -> Asgi:
    """The ASGI app of the view over an open (preferably read-only) store."""

    def goals(request: Request) -> Response:
        query = request.query_params
        try:
            found = goal_list(
                store,
                status=query.get("status") or None,
                page=_number(query.get("page"), 1),
                per_page=settings.per_page,
            )
            main = list_main(found, upstream_rows(store), settings.clock())
        except GovernorError as exc:
            return _error(settings, exc)
        return _page(settings, "goals", main)

    explanations = Explanations(wait_s=settings.advice_wait_s)

    def goal(request: Request) -> Response:
        goal_id = request.path_params["goal_id"]
        try:
            if not _GOAL_ID.match(goal_id):
                raise NotFoundError(f"{goal_id!r} is not a goal id")
            now = settings.clock()
            page = goal_page(
                store, goal_id, now, store_arg=settings.store_arg, explanations=explanations
            )
            main = goal_main(page, now)
            if settings.temporal_ui:
                main = join([main, workflow_link(settings.temporal_ui, store, goal_id)])
        except GovernorError as exc:
            return _error(settings, exc)
        return _page(settings, goal_id, main)

    app = Starlette(
        routes=[
            Route("/", goals, methods=["GET"]),
            Route("/goals/{goal_id}", goal, methods=["GET"]),
            Mount("/static", StaticFiles(packages=[("governor.ui", "static")]), name="static"),
        ]
    )
    return Guard(app, settings.allowed_hosts)


def _host_of(header: str) -> str:
    """The host name of a ``Host`` header, without its port (IPv6 in brackets too)."""
    if header.startswith("["):
        return header[1 : header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


class Guard:
    """The outermost layer: the Host check, the security headers, and no traceback."""

    def __init__(self, app: Asgi, allowed_hosts: frozenset[str] | None) -> None:
        self.app, self.allowed_hosts = app, allowed_hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def guarded(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                headers = MutableHeaders(scope=message)
                for name, value in HEADERS.items():
                    headers[name] = value
            await send(message)

        host = _host_of(dict(scope["headers"]).get(b"host", b"").decode("latin-1")).lower()
        if self.allowed_hosts is not None and host not in self.allowed_hosts:
            await _plain(guarded, 421, f"this server does not answer for host {host!r}\n")
            return
        try:
            await self.app(scope, receive, guarded)
        except Exception as exc:  # one line, never a traceback
            sys.stderr.write(
                f"governor ui: {scope.get('method')} {scope.get('path')}: {type(exc).__name__}: {exc}\n"
            )
            if not started:
                await _plain(guarded, 500, "internal error (see the server's terminal)\n")


async def _plain(send: Send, status: int, text: str) -> None:
    body = text.encode()
    headers = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


# --- serving -------------------------------------------------------------------------------


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


def url_of(sock: socket.socket) -> str:
    """The address a person types to reach the bound socket."""
    host, port = sock.getsockname()[:2]
    if ipaddress.ip_address(host).is_unspecified:
        host = "127.0.0.1" if sock.family == socket.AF_INET else "::1"
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


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


def serve(store: EventStore, settings: UiSettings, sock: socket.socket) -> None:
    """Serve the view on a bound socket until SIGINT or SIGTERM."""
    _quiet_uvicorn()
    config = uvicorn.Config(
        make_app(store, settings),
        log_config=None,
        access_log=False,
        server_header=False,
        lifespan="off",
        timeout_graceful_shutdown=2,
    )
    _Server(config).run(sockets=[sock])
