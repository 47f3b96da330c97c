"""Entry point of the ``governor`` command.

Each command parses its arguments, calls one library function, renders the result with
a pure ``format_*`` function (or prints the same facts as JSON with ``--json``), and
maps the outcome to an exit code from ``governor.cli.exit_codes``.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Callable, Sequence

from pydantic import ValidationError

from governor import __version__
from governor.cli import agents, demo, goals, history, operator, service, tuning, ui
from governor.cli.exit_codes import ExitCode, exit_code_for
from governor.cli.io import Parser, default_actor, err, one_line
from governor.core.codec import describe
from governor.errors import GovernorError

Command = Callable[[argparse.Namespace], int]


def _add_common(parser: argparse.ArgumentParser) -> None:
    """``--store`` and ``--actor`` on every command, before or after its name."""
    names = {a.dest for a in parser._actions}
    if "store" not in names:
        parser.add_argument(
            "--store",
            metavar="URL",
            default=argparse.SUPPRESS,
            help="the event store (default: $GOVERNOR_STORE or .governor/governor.db)",
        )
    if "actor" not in names:
        parser.add_argument(
            "--actor",
            metavar="NAME",
            default=argparse.SUPPRESS,
            help="who is acting, recorded on operator events (default: operator:$USER)",
        )
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                _add_common(child)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every command."""
    parser = Parser(
        prog="governor",
        description="Drive AI-agent goals to completion under honest budgets; replay and tune them.",
    )
    parser.add_argument("--version", action="version", version=f"governor {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in (goals, operator, history, tuning, agents, demo, service, ui):
        module.register(sub)
    _add_common(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    args = build_parser().parse_args(argv)
    args.store = getattr(args, "store", None)
    args.actor = getattr(args, "actor", None) or default_actor()
    func: Command = args.func
    try:
        return int(func(args))
    except GovernorError as exc:
        err(one_line(f"error: {exc}", args.store))
        return int(exit_code_for(exc))
    except ValidationError as exc:  # a value the event models refuse: nothing was written
        err(one_line(f"error: {describe(exc)}", args.store))
        return int(ExitCode.INVALID_INPUT)
    except BrokenPipeError:
        return int(ExitCode.OK)
    except KeyboardInterrupt:
        err("interrupted")
        return 130
    except Exception as exc:
        return _internal(exc, args.store)


def _internal(exc: Exception, store_url: str | None) -> int:
    """A bug reached the top: one line (the traceback only with ``GOVERNOR_DEBUG=1``)."""
    if os.environ.get("GOVERNOR_DEBUG") == "1":
        traceback.print_exc()
    what = f"{type(exc).__name__}: {exc}"[:500]
    err(
        one_line(
            f"internal error: {what} (a bug: please report it; GOVERNOR_DEBUG=1 shows where)",
            store_url,
        )
    )
    return int(ExitCode.FAILURE)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
