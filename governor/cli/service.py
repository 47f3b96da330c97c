"""Service commands: ``serve`` (run the workers), ``service status`` (what they are doing) and
``upstreams`` (the shared health of the vendors they call)."""

from __future__ import annotations

import argparse
import os
import shlex
from pathlib import Path
from typing import Any, Final

from governor.cli.exit_codes import ExitCode
from governor.cli.io import err, json_line, out, store_from
from governor.cli.values import natural, port, positive_whole, seconds
from governor.clock import utc_now
from governor.errors import NotFoundError
from governor.render.records import service_record, upstream_record
from governor.render.text import format_service_status, format_upstreams
from governor.service import ErrorBackoff, ServiceSettings, service_status
from governor.service.notify import NotifySettings
from governor.store.files import writable


def _settings(args: argparse.Namespace) -> ServiceSettings:
    from governor.analysis.asking import need_in  # noqa: PLC0415 - start-up

    return ServiceSettings(
        workdir=Path.cwd(),
        env=dict(os.environ),
        store_url=args.store,
        workers=args.workers,
        poll_s=args.poll_s,
        reprobe_s=args.reprobe,
        lease_ttl_s=args.lease_ttl,
        max_goals_per_tick=args.max_goals_per_tick,
        error_backoff=ErrorBackoff(initial_s=args.error_backoff, max_s=args.error_backoff_max),
        state_dir=(Path(".governor") / "scripted").resolve(),
        log_file=Path(args.log_file) if args.log_file else None,
        log_config=Path(args.log_config) if args.log_config else None,
        metrics_file=Path(args.metrics_file) if args.metrics_file else None,
        metrics_port=args.metrics_port,
        metrics_host=args.metrics_host,
        metrics_interval_s=args.metrics_interval,
        notify=NotifySettings(
            url=args.notify_url or os.environ.get("GOVERNOR_NOTIFY_URL") or None,
            command=tuple(shlex.split(args.notify_command)) if args.notify_command else (),
            state_file=Path(args.notify_state) if args.notify_state else None,
            poll_s=args.notify_poll,
        ),
        asking=need_in,
    )


def cmd_serve(args: argparse.Namespace) -> int:
    from governor.service import serve  # noqa: PLC0415 - multiprocessing, http.server: only here

    # Checked before any worker starts: the log is opened in every worker process, and the
    # metrics are written from a thread, where a failure could only end that thread.
    if args.log_file:
        writable(args.log_file, append=True)
    if args.log_config and not Path(args.log_config).is_file():
        raise NotFoundError(f"--log-config {args.log_config}: no such file")
    if args.metrics_file:
        writable(args.metrics_file)
    if args.log_file:  # the terminal would otherwise see nothing at all (issue 35)
        err(f"serving with {args.workers} worker(s); log lines go to {args.log_file}")
    code = serve(_settings(args))
    if args.log_file:
        err(f"stopped (exit {code}); the log is {args.log_file}")
    return code


def cmd_service_status(args: argparse.Namespace) -> int:
    with store_from(args.store, read_only=True) as store:
        status = service_status(store, utc_now(), errors=args.errors)
    if args.json:
        json_line(service_record(status))
    else:
        out(format_service_status(status))
    return ExitCode.OK


def cmd_upstreams(args: argparse.Namespace) -> int:
    with store_from(args.store, read_only=True) as store:
        records = store.upstreams()
    if args.json:
        for record in records:
            json_line(upstream_record(record))
    else:
        out(format_upstreams(records))
    return ExitCode.OK


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    _register_serve(sub)
    service = sub.add_parser("service", help="the service's state: governor service status")
    verbs = service.add_subparsers(dest="service_command", required=True, metavar="VERB")
    p = verbs.add_parser("status", help="workers, goals by status, the soonest wake-up, errors")
    p.add_argument(
        "--errors", type=natural, default=10, metavar="N", help="recent errors shown (default 10)"
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_service_status)
    p = sub.add_parser(
        "upstreams",
        help="each upstream's shared health: state, outage, next probe, parked goals",
    )
    p.add_argument("--json", action="store_true", help="one JSON object per upstream")
    p.set_defaults(func=cmd_upstreams)


def _register_serve(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "serve", help="tick every due goal of the store with N workers until stopped"
    )
    for flag, options in SERVE_OPTIONS:
        p.add_argument(flag, **options)
    p.set_defaults(func=cmd_serve)


SERVE_OPTIONS: Final[tuple[tuple[str, dict[str, Any]], ...]] = (
    ("--workers", {"type": positive_whole, "default": 1, "metavar": "N",
                   "help": "worker processes (default 1: the worker runs in this process)"}),
    ("--poll-s", {"type": seconds, "default": 1.0, "metavar": "SECONDS",
                  "help": "longest idle sleep between looks at the store (default 1)"}),
    ("--reprobe", {"type": seconds, "default": 30.0, "metavar": "SECONDS",
                   "help": "how often goals stopped on a missing binary are looked at again (default 30)"}),
    ("--notify-url", {"metavar": "URL",
                      "help": "POST a JSON notice here when a goal starts or stops waiting on a person "
                              "(or GOVERNOR_NOTIFY_URL, kept out of the process list)"}),
    ("--notify-command", {"metavar": "COMMAND",
                          "help": "run this command (split like a shell would, never run by one) "
                                  "with the notice on stdin"}),
    ("--notify-state", {"metavar": "PATH",
                        "help": "where the goals last told of are kept (default .governor/notified.json)"}),
    ("--notify-poll", {"type": seconds, "default": 2.0, "metavar": "SECONDS",
                       "help": "how often the notifier looks at the store (default 2)"}),
    ("--lease-ttl", {"type": seconds, "default": 60.0, "metavar": "SECONDS",
                     "help": "how long a goal's lease outlives a worker that died (default 60)"}),
    ("--max-goals-per-tick", {"type": positive_whole, "default": 50, "metavar": "N",
                              "help": "due goals fetched and stepped per look at the store (default 50)"}),
    ("--error-backoff", {"type": seconds, "default": 1.0, "metavar": "SECONDS",
                         "help": "first rest of a goal whose step raised; doubles per failure (default 1)"}),
    ("--error-backoff-max", {"type": seconds, "default": 300.0, "metavar": "SECONDS",
                             "help": "longest such rest (default 300)"}),
    ("--log-file", {"metavar": "PATH", "help": "append JSON log lines here (default: stderr)"}),
    ("--log-config", {"metavar": "PATH",
                      "help": "route the log records with this logging dictConfig (JSON or TOML)"}),
    ("--metrics-file", {"metavar": "PATH",
                        "help": "rewrite this Prometheus text file every --metrics-interval seconds"}),
    ("--metrics-port", {"type": port, "metavar": "PORT",
                        "help": "serve the metrics at http://HOST:PORT/metrics"}),
    ("--metrics-host", {"default": "127.0.0.1", "metavar": "HOST",
                        "help": "the address the metrics endpoint binds (default 127.0.0.1)"}),
    ("--metrics-interval", {"type": seconds, "default": 5.0, "metavar": "SECONDS",
                            "help": "how often the metrics are refreshed (default 5)"}),
)  # fmt: skip
"""``governor serve``'s options, one row each (documented in ``docs/cli.md``)."""
