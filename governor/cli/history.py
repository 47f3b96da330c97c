"""History commands: ``validate`` and ``replay`` (files; no store needed)."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime

from governor.analysis.replay import decision_record, replay, step_record
from governor.cli.exit_codes import ExitCode
from governor.cli.format import format_ledger, format_step, format_validation
from governor.cli.io import err, json_line, out
from governor.core.codec import LineDecoder
from governor.errors import HistoryError, InputError
from governor.store.jsonl import history_files, read_history


def parse_time(text: str) -> datetime:
    """An RFC 3339 time given on the command line, as UTC."""
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise InputError(
            f"--now: '{text}' is not an RFC 3339 time (e.g. 2026-11-29T12:00:00Z)"
        ) from None
    if value.tzinfo is None:
        raise InputError(f"--now: '{text}' has no time zone; end it with Z")
    return value.astimezone(UTC)


def cmd_validate(args: argparse.Namespace) -> int:
    """Check history files; print one line per file."""
    worst = ExitCode.OK
    for path in [f for p in args.paths for f in history_files(p)]:
        decoder = LineDecoder(str(path))
        count, goal_id, last = 0, "", None
        try:
            for step in replay(read_history(path, decoder=decoder), source=str(path)):
                count, goal_id, last = count + 1, step.event.goal_id, step
        except HistoryError as exc:
            worst = ExitCode.INVALID_INPUT
            if args.json:
                json_line(
                    {"file": str(path), "valid": False, "line": exc.line, "error": exc.detail}
                )
            else:
                err(str(exc))
            continue
        assert last is not None
        if args.json:
            json_line(
                {
                    "file": str(path),
                    "valid": True,
                    "events": count,
                    "goal_id": goal_id,
                    "notes": decoder.notes,
                    **decision_record(last.decision),
                }
            )
        else:
            out(format_validation(str(path), count, goal_id, last.decision, decoder.notes))
    return worst


def cmd_replay(args: argparse.Namespace) -> int:
    """Step through one history, printing the decision after each event."""
    files = history_files(args.history)
    if len(files) != 1:
        raise InputError(
            f"{args.history}: replay takes one history; this folder holds {len(files)}"
        )
    path = files[0]
    decoder = LineDecoder(str(path))
    now = parse_time(args.now) if args.now else None
    last = None
    for step in replay(
        read_history(path, allow_torn=True, decoder=decoder),
        now=now,
        at_seq=args.at,
        source=str(path),
    ):
        last = step
        if args.json:
            json_line(step_record(step))
        else:
            out(format_step(step))
    for note in decoder.notes:
        err(f"note: {path}: {note}")
    if decoder.torn_line is not None:
        err(
            f"warning: {path}: line {decoder.torn_line}: torn final line (no trailing newline) ignored"
        )
    if last is None:
        raise InputError(
            f"{path}: no event with seq {args.at}" if args.at else f"{path}: the history is empty"
        )
    if not args.json and args.at is None:
        out("\nledger after the last event:\n" + format_ledger(last.decision.ledger))
    return ExitCode.OK


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("validate", help="check history files (JSONL) against the history format")
    p.add_argument("paths", nargs="+", metavar="FILE", help="history files or folders of *.jsonl")
    p.add_argument("--json", action="store_true", help="print one JSON object per file")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser(
        "replay", help="step through a history, showing the decision after each event"
    )
    p.add_argument("history", metavar="HISTORY", help="a history file (JSONL)")
    p.add_argument("--at", type=int, metavar="SEQ", help="show only the decision after this seq")
    p.add_argument(
        "--now", metavar="TIME", help="decide at this RFC 3339 time instead of each event's"
    )
    p.add_argument("--json", action="store_true", help="print JSON Lines, one object per event")
    p.set_defaults(func=cmd_replay)
