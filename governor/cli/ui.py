"""``governor ui``: serve a read-only web view of the store's goals (the ``ui`` extra)."""

from __future__ import annotations

import argparse
import os
from typing import Final

from governor.cli.exit_codes import ExitCode
from governor.cli.io import err
from governor.cli.values import port, wait_seconds, whole_in
from governor.errors import UnavailableError
from governor.store.url import DEFAULT_PATH, ENV_VAR, POSTGRES_SCHEMES, open_store, sqlite_path

MAX_PAGE: Final = 10_000
"""The most goals one page of the list shows."""
UI_PACKAGES: Final = frozenset({"starlette", "uvicorn", "anyio", "h11", "click"})
"""Imports that fail when the ``ui`` extra is not installed."""

DESCRIPTION: Final = """\
Serve a read-only web page of the store's goals: the list with each goal's status,
what it is blocked on, the rule that fired, its next wake-up and its replans and
attempts (filter by status, in pages; it refreshes itself), and a page per goal with
its timeline of plans and attempts (who ran, how long, the class, charged or not and
why), its budget ledger as bars, the question it waits on with the command that
answers it, and explain's advice.

Nothing can change the store from the page: every route is GET, the store is opened
read-only, and a missing store is an error (a read never creates one). It listens on
127.0.0.1 unless --host says otherwise; the page has no login, so bind to another
address only on a network you trust.
"""

EPILOG: Final = """\
examples:
  governor ui                                      the default store, on http://127.0.0.1:8765/
  governor ui --store /srv/governor.db --port 0    any free port (the address is printed)
  governor ui --store postgresql://gov@db/governor --host 0.0.0.0    every interface

needs the ui extra: pip install 'governor[ui]'
"""


def store_arg(url: str | None) -> str | None:
    """The ``--store`` value printed commands need: a SQLite file as an absolute path,
    a PostgreSQL URL without its password; None for the default store."""
    if url is None:
        return None
    if url.startswith(POSTGRES_SCHEMES):
        from governor.store.postgres import describe_url  # noqa: PLC0415 - the postgres extra

        return describe_url(url)
    path = sqlite_path(url)
    return str(path.resolve()) if path is not None else url


def cmd_ui(args: argparse.Namespace) -> int:
    try:
        from governor.ui.server import UiSettings, allowed_hosts_for, bind, serve, url_of  # noqa: PLC0415
    except ImportError as exc:
        if exc.name is None or exc.name.split(".")[0] not in UI_PACKAGES:
            raise
        raise UnavailableError(
            f"governor ui needs the ui extra: pip install 'governor[ui]' (no module {exc.name!r})",
            what="the ui extra",
        ) from None
    store = open_store(args.store, read_only=True)
    try:
        shown = store_arg(args.store)  # commands name the store only when it was named
        label = shown or store_arg(os.environ.get(ENV_VAR)) or str(DEFAULT_PATH)
        settings = UiSettings(
            store_label=label,
            store_arg=shown,
            refresh_s=args.refresh_s,
            per_page=args.page_size,
            allowed_hosts=allowed_hosts_for(args.host),
            temporal_ui=args.temporal_ui,
        )
        sock = bind(args.host, args.port)
        err(f"governor ui: serving {url_of(sock)} (read-only; Ctrl-C stops)")
        if not (args.host in ("localhost", "::1") or args.host.startswith("127.")):
            err(f"warning: listening on {args.host}: anyone who can reach it can read every goal")
        serve(store, settings, sock)
        err("governor ui: stopped")
    finally:
        store.close()
    return ExitCode.OK


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "ui",
        help="serve a read-only web view of goals, timelines and ledgers (the ui extra)",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--host",
        default="127.0.0.1",
        metavar="HOST",
        help="the address to listen on (default 127.0.0.1)",
    )
    p.add_argument(
        "--port",
        type=port,
        default=8765,
        metavar="PORT",
        help="the port (default 8765; 0: any free port)",
    )
    p.add_argument(
        "--refresh-s", type=wait_seconds, default=2.0, metavar="SECONDS",
        help="how often an open page refreshes itself (default 2; 0: never)",
    )  # fmt: skip
    p.add_argument(
        "--page-size", type=whole_in(1, MAX_PAGE), default=50, metavar="N",
        help="goals per page of the list (default 50)",
    )  # fmt: skip
    p.add_argument(
        "--temporal-ui", metavar="URL",
        help="Temporal's Web UI (e.g. http://127.0.0.1:8233): goals Temporal drives link to their workflow there",
    )  # fmt: skip
    # nothing is recorded, so no actor: hidden, and so not added by the common options
    p.add_argument("--actor", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_ui)
