"""``governor ui``: serve a web view of the store's goals, read-only unless ``--allow-actions``
(the ``ui`` extra)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING, Final

from governor.cli.exit_codes import ExitCode
from governor.cli.io import err
from governor.cli.values import port, wait_seconds, whole_in
from governor.errors import UnavailableError
from governor.store.url import DEFAULT_PATH, ENV_VAR, POSTGRES_SCHEMES, open_store, sqlite_path

if TYPE_CHECKING:  # the ui extra is imported by the command, never at start-up
    from governor.ui.settings import UiSettings

MAX_PAGE: Final = 10_000
"""The most goals one page of the list shows."""
UI_PACKAGES: Final = frozenset({"starlette", "uvicorn", "anyio", "h11", "click"})
"""Imports that fail when the ``ui`` extra is not installed."""

DESCRIPTION: Final = """\
Serve a web page of the store's goals: the list, those that wait on a person first
(then the stopped ones, the moving ones, the ended ones, each the latest first), with
each goal's status, what it is blocked on, the rule that fired, its next wake-up and
its replans and attempts (filter by status or by "needs a person", search ids and
titles, in pages; it refreshes itself), and a page per goal with its start, last
update, duration and cost, its timeline of plans and attempts (who ran, how long, the
class, charged or not and why), its budget ledger as bars, the question it waits on
with the command that answers it, and explain's advice.

Read-only by default: every route is GET, the store is opened read-only, and a missing
store is an error (a read never creates one). With --allow-actions a person may also
act from a goal's page -- answer its question, review a plan or work, retry, abandon
or give up an item, raise a budget, cancel the goal -- each the same verb the CLI
runs, recorded as ui:NAME (--actor NAME, default your login name). Acting needs the
access token printed at start (open the printed token link once) and a form from the
server's own page. It listens on 127.0.0.1 unless --host says otherwise; with
--allow-actions on any other address it needs TLS (--tls-cert, --tls-key) or
--insecure-actions.
"""

EPILOG: Final = """\
examples:
  governor ui                                      the default store, on http://127.0.0.1:8765/
  governor ui --store /srv/governor.db --port 0    any free port (the address is printed)
  governor ui --allow-actions --actor alice        act from the pages, as ui:alice
  governor ui --store postgresql://gov@db/governor --host 0.0.0.0 --allow-actions \\
      --tls-cert cert.pem --tls-key key.pem        every interface, over HTTPS

needs the ui extra: pip install 'governor[ui]'
"""


def store_arg(url: str | None) -> str | None:
    """The ``--store`` value printed commands need: a SQLite file as an absolute path,
    a PostgreSQL URL without its password; None for the default store."""
    if url is None:
        return None
    if url.startswith(POSTGRES_SCHEMES):
        from governor.store.postgres_driver import describe_url  # noqa: PLC0415 - postgres extra

        return describe_url(url)
    path = sqlite_path(url)
    return str(path.resolve()) if path is not None else url


def ui_actor(name: str) -> str:
    """Who acts from the page, as recorded: ``ui:NAME`` (``operator:alice`` -> ``ui:alice``)."""
    return "ui:" + name.removeprefix("operator:").removeprefix("ui:")


def _refusal(args: argparse.Namespace, exposed: bool) -> str | None:
    """Why the options cannot serve as given (one line for exit 2), or None."""
    if (args.tls_cert is None) != (args.tls_key is None):
        return "--tls-cert and --tls-key go together: give both files, or neither"
    if args.insecure_actions and not args.allow_actions:
        return "--insecure-actions only applies with --allow-actions"
    if args.allow_actions and exposed and args.tls_cert is None and not args.insecure_actions:
        return (
            f"--allow-actions on {args.host} needs TLS (--tls-cert FILE --tls-key FILE), or "
            "--insecure-actions to send the access token and every answer in clear text "
            "(on 127.0.0.1 neither is needed)"
        )
    if args.allow_actions and len(ui_actor(args.actor)) > 200:
        return "--actor: a name of at most 196 characters"
    return _identity_refusal(args)


def _identity_refusal(args: argparse.Namespace) -> str | None:
    """Why ``--users`` / ``--trusted-header`` cannot apply as given, or None."""
    if (args.users or args.trusted_header) and not args.allow_actions:
        return "--users and --trusted-header say who acts: they apply with --allow-actions"
    if args.users and args.trusted_header:
        return "--users and --trusted-header are two ways to say who acts: give one"
    return None


def cmd_ui(args: argparse.Namespace) -> int:
    try:
        from governor.ui import serving  # noqa: PLC0415 - the ui extra: only this command needs it
    except ImportError as exc:
        if exc.name is None or exc.name.split(".")[0] not in UI_PACKAGES:
            raise
        raise UnavailableError(
            f"governor ui needs the ui extra: pip install 'governor[ui]' (no module {exc.name!r})",
            what="the ui extra",
        ) from None
    exposed = not serving.is_loopback(args.host)
    refusal = _refusal(args, exposed)
    if refusal:
        err(f"governor ui: error: {refusal}")
        return ExitCode.USAGE
    tls = serving.Tls(Path(args.tls_cert), Path(args.tls_key)) if args.tls_cert else None
    if tls is not None:
        tls.check()
    store = open_store(args.store, read_only=True)  # a missing store is an error, with actions too
    if args.allow_actions:
        store.close()
        store = open_store(args.store)
    try:
        sock = serving.bind(args.host, args.port)
        settings = _settings(args, sock.getsockname()[1], tls is not None)
        _announce(args, settings, serving.url_of(sock, tls=tls is not None), exposed)
        serving.serve(store, settings, sock, tls)
        err("governor ui: stopped")
    finally:
        store.close()
    return ExitCode.OK


def _settings(args: argparse.Namespace, port: int, tls: bool) -> UiSettings:
    from governor.ui.keys import ActionKeys, read_users  # noqa: PLC0415 - the ui extra (see cmd_ui)
    from governor.ui.serving import allowed_hosts_for  # noqa: PLC0415 - as above
    from governor.ui.settings import UiSettings  # noqa: PLC0415 - as above

    shown = store_arg(args.store)  # commands name the store only when it was named
    people = read_users(Path(args.users)) if args.users else None
    keys = ActionKeys(people=people) if args.allow_actions else None
    return UiSettings(
        store_label=shown or store_arg(os.environ.get(ENV_VAR)) or str(DEFAULT_PATH),
        store_arg=shown,
        refresh_s=args.refresh_s,
        per_page=args.page_size,
        allowed_hosts=allowed_hosts_for(args.host),
        actor=ui_actor(args.actor) if keys else None,
        keys=keys,
        tls=tls,
        cookie=f"governor-ui-{port}",
        temporal_ui=args.temporal_ui,
        trusted_header=args.trusted_header,
    )


def _announce(args: argparse.Namespace, settings: UiSettings, url: str, exposed: bool) -> None:
    """The address on stderr, and with actions the token link: the one place it is written."""
    if settings.keys is None:
        err(f"governor ui: serving {url} (read-only; Ctrl-C stops)")
    elif settings.trusted_header is not None:
        err(
            f"governor ui: serving {url} (acting as the person the proxy in front names in "
            f"{settings.trusted_header}; Ctrl-C stops)"
        )
    elif settings.keys.people:
        err(
            f"governor ui: serving {url} (actions allowed for {len(settings.keys.people)} "
            f"people of --users {args.users}, each as ui:NAME; Ctrl-C stops)"
        )
        err(f"governor ui: to act, each opens {url}?token=THEIR_TOKEN once in their browser")
    else:
        err(f"governor ui: serving {url} (actions allowed, as {settings.actor}; Ctrl-C stops)")
        err(f"governor ui: to act, open {url}?token={settings.keys.token} once in your browser")
    if exposed:
        err(f"warning: listening on {args.host}: anyone who can reach it can read every goal")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "ui",
        help="serve a web view of goals, timelines and ledgers (read-only unless --allow-actions)",
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
        "--allow-actions", action="store_true",
        help="let a person act on goals from their pages (needs the access token printed at start)",
    )  # fmt: skip
    p.add_argument(
        "--actor", default=argparse.SUPPRESS, metavar="NAME",
        help="who acts from the pages, recorded as ui:NAME (default: your login name)",
    )  # fmt: skip
    p.add_argument(
        "--users", metavar="FILE",
        help="one 'NAME TOKEN' a line: each person acts with their own token, recorded as ui:NAME",
    )  # fmt: skip
    p.add_argument(
        "--trusted-header", metavar="HEADER",
        help="who acts is the name an authenticating proxy in front sets in this header "
        "(e.g. X-Forwarded-User; trust it only if nothing else can reach the server)",
    )  # fmt: skip
    p.add_argument("--tls-cert", metavar="FILE", help="serve HTTPS with this certificate (PEM)")
    p.add_argument("--tls-key", metavar="FILE", help="the private key of --tls-cert (PEM)")
    p.add_argument(
        "--insecure-actions", action="store_true",
        help="allow actions on an address other than loopback without TLS (not recommended)",
    )  # fmt: skip
    p.add_argument(
        "--temporal-ui", metavar="URL",
        help="Temporal's Web UI (e.g. http://127.0.0.1:8233): goals Temporal drives link to their workflow there",
    )  # fmt: skip
    p.set_defaults(func=cmd_ui)
