"""Entry point of the ``governor`` command.

Each command parses its arguments, calls one library function, renders the result with
a pure ``format_*`` function (or prints the same facts as JSON with ``--json``), and
maps the outcome to an exit code from ``governor.cli.exit_codes``.

Start-up (issue 12): the commands, their modules and one-line helps are a static table
(``COMMANDS``), so ``governor --help`` imports no command module and a command imports
only its own (``tests/test_cli_startup.py`` holds the table to the modules).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Callable, Iterable, Sequence
from typing import Final

from governor._version import __version__
from governor.cli.exit_codes import ExitCode, exit_code_for
from governor.cli.io import Parser, err, one_line
from governor.errors import GovernorError

Command = Callable[[argparse.Namespace], int]

COMMANDS: Final[dict[str, tuple[str, str]]] = {
    "new": ("goals", "create a goal from a goal file (TOML, JSON or YAML); prints its id"),
    "run": ("goals", "drive a goal until it stops (or must wait longer than --max-wait)"),
    "tick": ("goals", "drive a goal one step"),
    "status": ("goals", "a goal's decision and ledger (every goal without GOAL)"),
    "list": ("goals", "every goal in the store, one line each"),
    "events": ("goals", "a goal's events, in order"),
    "export": ("goals", "write a goal's history as JSON Lines (stdout, or -o FILE)"),
    "import": ("goals", "validate history files (or folders of them) and store each as a new goal"),
    "resume": (
        "operator",
        "clear a planner stop (environment, decision, upstream bound); budget intact",
    ),
    "cancel": ("operator", "stop a goal for good"),
    "raise": ("operator", "raise a budget past its limit (the only way past an exhausted budget)"),
    "plan": ("operator", "review a proposal: approve or reject"),
    "work": ("operator", "govern a work item: accept, retry, cancel, reopen, abandon"),
    "validate": ("history", "check history files (JSONL) against the history format"),
    "replay": ("history", "step through a history: the decision after each event (or a what-if)"),
    "explain": ("history", "why a goal stopped, and the smallest policy change that lets it go on"),
    "reclassify": (
        "history",
        "today's classifier over a history's failures, and the goal re-projected",
    ),
    "simulate": ("tuning", "write synthetic goal histories from a stated generative model"),
    "tune": ("tuning", "estimate candidate policies on a corpus of histories; recommend one"),
    "forecast": (
        "forecasting",
        "before a goal starts: its attempts, planner calls, cost and run time, from similar goals",
    ),
    "probe": ("agents", "run one agent call through a harness; show its class, evidence and rule"),
    "doctor": (
        "agents",
        "check that the binaries goal files need are on PATH (codex and claude answer "
        "--version, within the releases governor supports) and that python agents import",
    ),
    "demo": (
        "demo",
        "run the demo goal end to end (SQLite + the scripted harness, in a temp folder)",
    ),
    "serve": ("service", "tick every due goal of the store with N workers until stopped"),
    "service": ("service", "the service's state: governor service status"),
    "upstreams": (
        "service",
        "each upstream's shared health: state, outage, next probe, parked goals",
    ),
    "pool": ("pools", "budgets shared by goals: set, list, show, delete"),
    "grant": ("pools", "grant more budget to a goal's open request, or to a pool"),
    "decline": ("pools", "decline a goal's open request for more budget (or a pool's)"),
    "ui": (
        "ui",
        "serve a web view of goals, timelines and ledgers (read-only unless --allow-actions)",
    ),
    "store": (
        "storecheck",
        "verify the store: checksums, seqs, summaries against events (--repair)",
    ),
    "temporal": (
        "temporal",
        "drive goals as Temporal workflows: worker, start (the temporal extra)",
    ),
    "completion": ("shell", "print a shell completion script: source <(governor completion bash)"),
    "schema": ("shell", "print the JSON Schema of goal files (for editors): governor schema goal"),
}
"""Command -> (its module under ``governor.cli``, its one-line help), in help order."""

_VALUED_OPTIONS: Final = frozenset({"--store", "--actor"})
"""The options before a command that take a separate value."""


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


def build_parser(commands: Iterable[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser: every command's full parser, or only those of ``commands``
    (their modules' commands) and a name and help for each other command."""
    parser = Parser(
        prog="governor",
        description="Drive AI-agent goals to completion under honest budgets; replay and tune them.",
    )
    parser.add_argument("--version", action="version", version=f"governor {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    wanted = COMMANDS if commands is None else [c for c in commands if c in COMMANDS]
    for module in dict.fromkeys(COMMANDS[c][0] for c in wanted):
        importlib.import_module(f"governor.cli.{module}").register(sub)
    for name, (_, text) in COMMANDS.items():
        if name not in sub.choices:
            sub.add_parser(name, help=text)
    _add_common(parser)
    return parser


def command_of(argv: Sequence[str]) -> str | None:
    """The command an argument list names: its first word that is neither an option nor
    the value of ``--store`` or ``--actor`` (``None``: none, e.g. ``--help``)."""
    words = iter(argv)
    for word in words:
        if word in _VALUED_OPTIONS:
            next(words, None)
        elif word == "--":
            return next(words, None)
        elif not word.startswith("-"):
            return word
    return None


def _parse(argv: Sequence[str]) -> argparse.Namespace:
    command = command_of(argv)
    args = build_parser([command] if command else []).parse_args(argv)
    if not hasattr(args, "func"):  # argparse read another command than ours: parse fully
        args = build_parser().parse_args(argv)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    code = _main(argv)
    if argv is None:  # the governor command itself: no process outlives its work
        _exit_after_temporal(code)
    return code


def _exit_after_temporal(code: int) -> None:
    """End the process now when it used the Temporal client: the SDK's native threads can
    abort the interpreter's teardown (temporalio/sdk-python#300), which would turn a
    finished command into a crash."""
    temporal = sys.modules.get("governor.cli.temporal")
    if temporal is not None and getattr(temporal, "client_used", False):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _main(argv: Sequence[str] | None) -> int:
    args = _parse(sys.argv[1:] if argv is None else argv)
    from governor.drive.identity import default_actor  # noqa: PLC0415 - start-up (see above)
    from governor.drive.spans import instrument_from  # noqa: PLC0415 - start-up (see above)

    args.store = getattr(args, "store", None)
    args.actor = getattr(args, "actor", None) or default_actor()
    func: Command = args.func
    try:
        instrument_from(os.environ)
        return int(func(args))
    except GovernorError as exc:
        err(one_line(f"error: {exc}", args.store))
        return int(exit_code_for(exc))
    except BrokenPipeError:
        return int(ExitCode.OK)
    except KeyboardInterrupt:
        err("interrupted")
        return int(ExitCode.INTERRUPTED)
    except Exception as exc:
        refused = _refused_value(exc)
        if refused is not None:  # a value the event models refuse: nothing was written
            err(one_line(f"error: {refused}", args.store))
            return int(ExitCode.INVALID_INPUT)
        return _internal(exc, args.store)


def _refused_value(exc: Exception) -> str | None:
    """What is wrong, when ``exc`` is pydantic's ``ValidationError`` (else None).

    pydantic is looked up, not imported: a command that never imported it (``list``)
    cannot have raised its error, and need not import it to tell (start-up).
    """
    pydantic_core = sys.modules.get("pydantic_core")
    if pydantic_core is None or not isinstance(exc, pydantic_core.ValidationError):
        return None
    from governor.core.wire.codec import describe  # noqa: PLC0415 - only for that error

    return describe(exc)


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
