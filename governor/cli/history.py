"""History commands: ``validate``, ``replay`` (timeline, ``--json``, what-if) and ``explain``."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from governor.analysis.corpus import Corpus, corpus_of
from governor.analysis.replay import ReplayStep, replay
from governor.cli.exit_codes import ExitCode
from governor.cli.io import err, json_line, out, write_lines, write_text
from governor.cli.values import positive_whole
from governor.clock import utc_now
from governor.core.history import check_history
from governor.core.policy import Grants, recorded_policy_notes
from governor.core.rules.decide import decide
from governor.core.wire.codec import LineDecoder
from governor.errors import HistoryError, InputError, PolicyError
from governor.render import records
from governor.render.text import (
    format_explanation,
    format_ledger,
    format_step,
    format_timeline,
    format_validation,
    format_whatif,
)
from governor.store.jsonl import history_files, read_history

if TYPE_CHECKING:
    from governor.analysis.divergence import WhatIf

# Start-up (issue 36): what only the what-ifs, ``explain`` and ``replay --json`` use is
# imported by them, so that ``replay FILE`` imports only what replays it.


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
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise InputError(f"--now: '{text}' is outside the years 1 to 9999 in UTC") from None


def cmd_validate(args: argparse.Namespace) -> int:
    """Check history files; print one line per file."""
    worst = ExitCode.OK
    for path in [f for p in args.paths for f in history_files(p)]:
        decoder = LineDecoder(str(path))
        count, view, first = 0, None, 1
        try:  # check every line, decide once at the end (validation needs no per-event decision)
            for line, _, after in check_history(
                read_history(path, decoder=decoder), source=str(path)
            ):
                count, view, first = count + 1, after, first if count else line
        except HistoryError as exc:
            worst = ExitCode.INVALID_INPUT
            if args.json:
                json_line(records.invalid_record(str(path), exc.line, exc.detail))
            else:
                err(f"error: {exc}")  # as every other command's error (docs/cli.md)
            continue
        assert view is not None
        assert view.last_at is not None
        assert view.created is not None
        final = decide(view, view.last_at)
        notes = [*decoder.notes, *recorded_policy_notes(view.created.policy, first)]
        if args.json:
            json_line(records.valid_record(str(path), count, view.goal_id, notes, final))
        else:
            out(format_validation(str(path), count, view.goal_id, final, notes))
    return worst


def _key(step: ReplayStep) -> tuple[Any, ...]:
    d = step.decision
    return (d.status, d.next_action, d.blocked_on, d.exhausted, d.rule)


def _json_steps(steps: Iterator[ReplayStep]) -> ReplayStep | None:
    """Print the steps as ``replay --json`` lines (buffered); return the last."""
    from governor.render.lines import StepLines  # noqa: PLC0415 - start-up

    lines = StepLines()
    write_lines(map(lines.line, steps))  # (it keeps the step it rendered last)
    return lines.last


class _TextSteps:
    """The text of a replay's steps: each one, or only where the decision changes; it
    keeps the step it read last."""

    def __init__(self, every: bool) -> None:
        self.every = every
        self.last: ReplayStep | None = None

    def lines(self, steps: Iterator[ReplayStep]) -> Iterator[str]:
        shown = None
        for step in steps:
            self.last = step
            if self.every:
                yield format_step(step)
            elif _key(step) != shown:
                yield format_timeline(step)
                shown = _key(step)


def _text_steps(steps: Iterator[ReplayStep], args: argparse.Namespace) -> ReplayStep | None:
    """Print the steps as text (buffered); return the last."""
    text = _TextSteps(every=args.all or args.at is not None)
    write_text(text.lines(steps))
    return text.last


def _replay_one(corpus: Corpus, index: int, args: argparse.Namespace, now: datetime | None) -> bool:
    """Print the replay of one history; whether it had a step to show."""
    name, decoder = corpus.name(index), LineDecoder(corpus.name(index), structs=True)
    if args.json and args.at is None:  # every step: ``StepLines.lines``
        from governor.render.lines import StepLines  # noqa: PLC0415 - start-up

        write_lines(StepLines().lines(corpus.lines(index, decoder), now=now, source=name))
        _notes(name, decoder)
        return True
    steps = replay(
        corpus.lines(index, decoder),
        now=now,
        at_seq=args.at,
        source=name,
        ledgers=bool(args.json),  # text shows only the last step's ledger
    )
    last = _json_steps(steps) if args.json else _text_steps(steps, args)
    _notes(name, decoder)
    if last is not None and not args.json and args.at is None:
        out("ledger after the last event:\n" + format_ledger(last.decision.ledger))
    return last is not None


def _notes(name: str, decoder: LineDecoder) -> None:
    for note in decoder.notes:
        err(f"note: {name}: {note}")
    if decoder.torn_line is not None:
        err(
            f"warning: {name}: line {decoder.torn_line}: torn final line (no trailing newline) ignored"
        )


def _whatif_one(
    corpus: Corpus, index: int, args: argparse.Namespace, now: datetime | None
) -> WhatIf:
    from governor.analysis.tries import parse_profiles, under_profiles  # noqa: PLC0415 - start-up
    from governor.analysis.whatif import Trace  # noqa: PLC0415 - start-up
    from governor.core.policy_input import parse_assignments, with_overrides  # noqa: PLC0415

    overrides = parse_assignments(args.policy or "")
    if args.profile:  # the recorded in-agent tries, cut (one held pass: histories are short)
        profiles = parse_profiles(args.profile)
        result = under_profiles(
            corpus.events(index), profiles, overrides, now=now, source=corpus.name(index)
        )
        overrides = {**overrides, **{f"{n}.max_attempts": v for n, v in profiles.items()}}
    else:
        # two streamed passes, nothing held; the first checks the history
        trace = Trace.of(
            corpus.events(index, checked=False), now=now, keep=False, source=corpus.name(index)
        )
        policy = with_overrides(trace.policy, overrides)
        result = trace.under(policy, now=now, events=corpus.events(index))
        result = trace.named(result, events=corpus.events(index, checked=False))
    if args.json:
        json_line(records.whatif_record(corpus.name(index), overrides, result))
    else:
        out(format_whatif(result, overrides))
    return result


def _grants_whatif(args: argparse.Namespace, now: datetime | None) -> int:
    """``replay --without-grants`` / ``--grants K=V,…``: each history's grants re-decided."""
    from governor.analysis.grant_whatif import grants_whatif  # noqa: PLC0415 - start-up
    from governor.render.grant_whatif import (  # noqa: PLC0415 - start-up
        format_grants_whatif,
        grants_whatif_record,
    )

    if args.policy is not None or args.profile or args.at is not None:
        raise InputError(
            "--grants/--without-grants stand alone: not with --policy, --profile, --at"
        )
    settings = None if args.without_grants else grants_settings(args.grants)
    corpus = corpus_of([args.history], store_url=args.store, allow_torn=True)
    for index in range(len(corpus)):
        result = grants_whatif(list(corpus.events(index)), settings, now=now)
        if args.json:
            json_line(grants_whatif_record(corpus.name(index), result))
        else:
            out(format_grants_whatif(corpus.name(index), result))
    return ExitCode.OK


def grants_settings(text: str) -> Grants:
    """``--grants auto_usd=X,auto_attempts=N[,expires_s=S]`` as checked settings.

    Raises:
        PolicyError: no field, an unknown field or a bad value (named).
    """
    from governor.core.policy_input import parse_assignments  # noqa: PLC0415 - start-up

    given = parse_assignments(text)
    if not given:
        raise PolicyError("--grants: give at least one field=value, e.g. auto_usd=0.5")
    try:
        return Grants.model_validate(given)
    except ValidationError as exc:
        first = exc.errors()[0]
        name = ".".join(str(part) for part in first["loc"])
        raise PolicyError(f"--grants: {name}: {first['msg']}", field=name) from None


def cmd_replay(args: argparse.Namespace) -> int:
    """Step through histories (or re-fold them under another policy)."""
    now = parse_time(args.now) if args.now else None
    if args.without_grants or args.grants is not None:
        return _grants_whatif(args, now)
    if args.profile:
        from governor.analysis.tries import parse_profiles  # noqa: PLC0415 - start-up

        parse_profiles(args.profile)  # named before any history is read
        if args.at is not None:
            raise InputError(
                "--at does not apply to a what-if (--profile); replay without it for --at"
            )
    if args.policy is not None:
        from governor.core.policy_input import parse_assignments  # noqa: PLC0415 - start-up

        if not parse_assignments(args.policy):
            raise PolicyError("--policy: give at least one field=value, e.g. max_replans=8")
        if args.at is not None:
            raise InputError(
                "--at does not apply to a what-if (--policy): it reports the first "
                "divergence and both final decisions; replay without --policy for --at"
            )
    corpus = corpus_of([args.history], store_url=args.store, allow_torn=True)
    for index in range(len(corpus)):
        if args.policy is not None or args.profile:
            _whatif_one(corpus, index, args, now)
            continue
        if not args.json and len(corpus) > 1:
            out(f"== {corpus.name(index)}")
        if not _replay_one(corpus, index, args, now):
            name = corpus.name(index)
            raise InputError(
                f"{name}: no event with seq {args.at}" if args.at else f"{name}: empty"
            )
    return ExitCode.OK


def cmd_explain(args: argparse.Namespace) -> int:
    """Why a goal stopped, and the smallest policy change that would have let it go on."""
    from governor.analysis.explain import explain  # noqa: PLC0415 - start-up
    from governor.cli.ui import store_arg  # noqa: PLC0415 - start-up

    corpus = corpus_of([args.goal], store_url=args.store)
    if len(corpus) != 1:
        raise InputError(f"{args.goal}: explain takes one history; this folder holds {len(corpus)}")
    now = parse_time(args.now) if args.now else None
    if now is None and not Path(args.goal).exists():
        now = utc_now()  # a goal in the store: why it stands where it does now
    # streamed: read once to analyse, once more per policy the search re-folds
    ex = explain(
        lambda: corpus.events(0, checked=False),
        now=now,
        source=corpus.name(0),
        store_arg=store_arg(args.store),  # as the web view names it (no password)
    )
    if args.json:
        json_line(records.explanation_record(ex))
    else:
        out(format_explanation(ex))
    return ExitCode.OK


def cmd_reclassify(args: argparse.Namespace) -> int:
    """Today's classifier over a history's failures, and the goal re-projected; never writes."""
    from governor.analysis.reclassified import reclassify_history  # noqa: PLC0415 - start-up
    from governor.render.reclassified import (  # noqa: PLC0415 - start-up
        format_reclassification,
        reclassification_record,
    )

    corpus = corpus_of([args.history], store_url=args.store)
    now = parse_time(args.now) if args.now else None
    for index in range(len(corpus)):
        name = corpus.name(index)
        events = partial(corpus.events, index, checked=False)
        result = reclassify_history(events, now=now, source=name)
        if args.json:
            json_line(reclassification_record(name, result))
        else:
            out(("" if index == 0 else "\n") + format_reclassification(result))
    return ExitCode.OK


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("validate", help="check history files (JSONL) against the history format")
    p.add_argument("paths", nargs="+", metavar="FILE", help="history files or folders of *.jsonl")
    p.add_argument("--json", action="store_true", help="print one JSON object per file")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser(
        "replay", help="step through a history: the decision after each event (or a what-if)"
    )
    p.add_argument(
        "history",
        metavar="HISTORY",
        help="a history file, a folder of them, or a goal id in the store",
    )
    p.add_argument(
        "--at", type=positive_whole, metavar="SEQ", help="show only the decision after this seq"
    )
    p.add_argument(
        "--now", metavar="TIME", help="decide at this RFC 3339 time instead of each event's"
    )
    p.add_argument(
        "--all", action="store_true", help="a line for every event (default: only decision changes)"
    )
    p.add_argument(
        "--policy",
        metavar="K=V,…",
        help="re-fold the recorded outcomes under this policy (what-if)",
    )
    p.add_argument(
        "--profile",
        action="append",
        metavar="NAME.max_attempts=V",
        help="what-if a profile's in-agent tries were fewer: each run is cut at its recorded "
        "tries (repeatable)",
    )
    answers = p.add_mutually_exclusive_group()
    answers.add_argument(
        "--without-grants",
        action="store_true",
        help="what-if no grant had been made: where the goal would have stopped, what each "
        "grant bought",
    )
    answers.add_argument(
        "--grants",
        metavar="K=V,…",
        help="what-if the auto-grant settings were these (auto_usd, auto_attempts, expires_s)",
    )
    p.add_argument("--json", action="store_true", help="print JSON Lines, one object per event")
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser(
        "explain", help="why a goal stopped, and the smallest policy change that lets it go on"
    )
    p.add_argument("goal", metavar="GOAL|FILE", help="a goal id in the store, or a history file")
    p.add_argument(
        "--now",
        metavar="TIME",
        help="explain at this RFC 3339 time (default: now for a goal, the last event for a file)",
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_explain)

    p = sub.add_parser("reclassify", help=RECLASSIFY_HELP)
    p.add_argument(
        "history",
        metavar="HISTORY|GOAL",
        help="a history file, a folder of them, or a goal id in the store",
    )
    p.add_argument(
        "--now", metavar="TIME", help="decide at this RFC 3339 time instead of the last event's"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object per history")
    p.set_defaults(func=cmd_reclassify)


RECLASSIFY_HELP = "today's classifier over a history's failures, and the goal re-projected"
