"""The web server of ``governor ui``: a Starlette app of GET routes, and with
``--allow-actions`` one POST route per goal that runs an operator verb.

Rules:
    * Read only by default: every route is GET (and so HEAD); any other method is 405,
      any other path 404. The store behind it is opened read-only besides, so even a
      bug here could not write.
    * With actions allowed (docs/decisions/0019-acting-from-the-web-view.md), a goal's
      forms POST to ``/goals/GOAL/act``; the verb runs as the CLI runs it
      (``governor.drive.goals.govern``), recorded as ``ui:NAME``. A POST is refused, and
      nothing recorded, unless it comes from this server's own page (``Origin`` names
      this server, and the browser does not call it cross-site), carries the access
      token's cookie, and spends a form token of that goal's page (``keys.ActionKeys``).
    * Every response carries a strict Content-Security-Policy (scripts, styles and
      images from this server only; no inline code; forms post only here; nothing may
      frame the page) and ``nosniff``, a referrer policy, ``no-store``.
    * Requests must name this server in their ``Host`` header (the bound address or a
      loopback name), so a web page elsewhere cannot read the view through DNS
      rebinding. Bound to every interface, any host is accepted: the person asked.
    * No traceback reaches the terminal: an error in a request is one line on stderr
      and a 500 page; a store error is a page saying so.
    * Starlette and uvicorn are the ``ui`` extra; only ``governor ui`` imports this module.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Final
from urllib.parse import parse_qsl, urlencode

from starlette.applications import Starlette
from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from governor.core.event_fields import ID_PATTERN
from governor.errors import GovernorError, InputError, NotFoundError
from governor.store.base import EventStore
from governor.temporal.names import driving, workflow_id_of, workflow_url
from governor.ui import acts
from governor.ui.data import Explanations, goal_list, goal_page, upstream_rows
from governor.ui.forms import Acting
from governor.ui.goal_page import goal_main
from governor.ui.layout import document, link
from governor.ui.list_page import Bulk, list_main
from governor.ui.markup import Html, el, join
from governor.ui.pool_data import pool_list, pool_page
from governor.ui.pool_page import pool_main, pools_main
from governor.ui.settings import HEADERS, UiSettings

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
Asgi = Callable[[Scope, Receive, Send], Awaitable[None]]

_GOAL_ID: Final = re.compile(ID_PATTERN)


def page(settings: UiSettings, title: str, main: Html, status_code: int = 200) -> HTMLResponse:
    """A whole page of the view around ``main``."""
    body = document(
        title,
        main,
        subtitle=settings.store_label,
        refresh_s=settings.refresh_s,
        mode=f"acting as {settings.actor}" if settings.actor else "read-only",
        referrer=settings.headers["referrer-policy"],
    )
    return HTMLResponse(body, status_code=status_code)


def error_page(settings: UiSettings, exc: GovernorError) -> HTMLResponse:
    code = 404 if isinstance(exc, NotFoundError) else 400 if isinstance(exc, InputError) else 503
    main = join(
        [
            el("h1", "Nothing to show" if code == 404 else "Cannot show this"),
            el("p", str(exc), class_="error"),
        ]
    )
    return page(settings, "error", main, code)


def _number(text: str | None, default: int) -> int:
    return int(text) if text and text.isdigit() and len(text) < 10 else default


def workflow_link(ui: str, store: EventStore, goal_id: str) -> Html:
    """A link to the goal's workflow in Temporal's Web UI, when Temporal drives the goal
    (its lease says so); nothing otherwise."""
    driver = driving(store, goal_id)
    if driver is None:
        return Html("")
    url = workflow_url(ui, driver.namespace, workflow_id_of(store, goal_id))
    return el(
        "p",
        f"Driven by Temporal ({driver.describe()}): ",
        link(url, "its workflow"),
        class_="temporal",
    )


def make_app(store: EventStore, settings: UiSettings) -> Asgi:
    """The ASGI app of the view over an open store (read-only unless actions are allowed)."""

    def goals(request: Request) -> Response:
        query = request.query_params
        try:
            found = goal_list(
                store,
                status=query.get("status") or None,
                page=_number(query.get("page"), 1),
                per_page=settings.per_page,
                needs_person=query.get("needs") == "person",
                search=query.get("q"),
            )
            main = list_main(found, upstream_rows(store), settings.clock(), _bulk(request))
        except GovernorError as exc:
            return error_page(settings, exc)
        return page(settings, "goals", main)

    def _bulk(request: Request) -> Bulk | None:
        csrf = acts.bulk_token(request, settings)
        if csrf is None:
            return None
        query = request.query_params
        done = query.get("done")
        return Bulk(
            csrf,
            acts.actor_of(request, settings) or "",
            done=done if done in acts.BULK_VERBS else None,
            count=_number(query.get("n"), 0),
            error=query.get("error") or None,
        )

    explanations = Explanations(wait_s=settings.advice_wait_s)

    def goal_response(request: Request, acting: Acting | None, status_code: int = 200) -> Response:
        goal_id = request.path_params["goal_id"]
        try:
            if not _GOAL_ID.match(goal_id):
                raise NotFoundError(f"{goal_id!r} is not a goal id")
            now = settings.clock()
            found = goal_page(
                store, goal_id, now, store_arg=settings.store_arg, explanations=explanations
            )
            main = goal_main(found, now, acting)
            if settings.temporal_ui:
                main = join([main, workflow_link(settings.temporal_ui, store, goal_id)])
        except GovernorError as exc:
            return error_page(settings, exc)
        return page(settings, goal_id, main, status_code)

    def goal(request: Request) -> Response:
        return goal_response(request, acts.acting(request, settings))

    def pools(request: Request) -> Response:
        try:
            main = pools_main(pool_list(store, settings.clock()), settings.clock())
        except GovernorError as exc:
            return error_page(settings, exc)
        return page(settings, "pools", main)

    def pool_response(request: Request, acting: Acting | None, status_code: int = 200) -> Response:
        name = request.path_params["name"]
        try:
            now = settings.clock()
            found = pool_page(store, name, now, store_arg=settings.store_arg)
            main = pool_main(found, now, acting)
        except GovernorError as exc:
            return error_page(settings, exc)
        return page(settings, f"pool {name}", main, status_code)

    def pool(request: Request) -> Response:
        return pool_response(request, acts.acting(request, settings, acts.BUDGET_VERBS))

    routes = [
        Route("/", goals, methods=["GET"]),
        Route("/goals/{goal_id}", goal, methods=["GET"]),
        Route("/pools", pools, methods=["GET"]),
        Route("/pools/{name}", pool, methods=["GET"]),
        Mount("/static", StaticFiles(packages=[("governor.ui", "static")]), name="static"),
    ]
    app: Asgi = Starlette(routes=routes)
    if settings.actor is not None and settings.keys is not None:
        act = acts.endpoint(store, settings, goal_response)
        routes.insert(2, Route("/goals/{goal_id}/act", act, methods=["POST"]))
        routes.insert(3, Route("/bulk", acts.bulk_endpoint(store, settings), methods=["POST"]))
        pool_act = acts.pool_endpoint(store, settings, pool_response)
        routes.insert(4, Route("/pools/{name}/act", pool_act, methods=["POST"]))
        app = TokenLink(Starlette(routes=routes), settings)
    return Guard(app, settings.allowed_hosts, settings.headers)


class TokenLink:
    """The token link (``/?token=…``): a good token becomes the access cookie and the
    address is given again without it (so it stays out of history and referrers); a
    wrong one is refused. Nothing here writes the address anywhere."""

    def __init__(self, app: Asgi, settings: UiSettings) -> None:
        self.app, self.settings = app, settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        raw = scope.get("query_string", b"").decode("latin-1")
        pairs = parse_qsl(raw, keep_blank_values=True)
        tokens = [v for k, v in pairs if k == "token"]
        if scope["type"] != "http" or not tokens or scope["method"] not in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        keys = self.settings.keys
        if keys is None or len(tokens) != 1 or not keys.admits(tokens[0]):
            refused = PlainTextResponse("wrong access token: nothing was changed\n", 403)
            await refused(scope, receive, send)
            return
        rest = urlencode([(k, v) for k, v in pairs if k != "token"])
        target = scope["path"] + (f"?{rest}" if rest else "")
        response = RedirectResponse(target, status_code=303)
        response.set_cookie(
            self.settings.cookie,
            tokens[0],  # admitted: the one token, or this person's
            path="/",
            httponly=True,
            samesite="strict",
            secure=self.settings.tls,
        )
        await response(scope, receive, send)


def _host_of(header: str) -> str:
    """The host name of a ``Host`` header, without its port (IPv6 in brackets too)."""
    if header.startswith("["):
        return header[1 : header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


class Guard:
    """The outermost layer: the Host check, the security headers, and no traceback."""

    def __init__(
        self, app: Asgi, allowed_hosts: frozenset[str] | None, headers: dict[str, str] = HEADERS
    ) -> None:
        self.app, self.allowed_hosts, self.headers = app, allowed_hosts, headers

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
                for name, value in self.headers.items():
                    headers[name] = value
            await send(message)

        hosts = [value for name, value in scope["headers"] if name == b"host"]
        if len(hosts) > 1:  # which one a proxy or a browser read is anyone's guess
            await _plain(guarded, 400, "a request names one Host, not several\n")
            return
        host = _host_of(hosts[0].decode("latin-1") if hosts else "").lower()
        if self.allowed_hosts is not None and host not in self.allowed_hosts:
            await _plain(guarded, 421, f"this server does not answer for host {host!r}\n")
            return
        try:
            await self.app(scope, receive, guarded)
        except Exception as exc:  # one line, never a traceback (and never the query string)
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
