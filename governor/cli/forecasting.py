"""``governor forecast``: what a goal will take before it starts; and ``new``'s one line."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Final

from governor.cli.exit_codes import ExitCode
from governor.cli.io import err, json_line, out
from governor.cli.values import natural, whole_in
from governor.clock import utc_now
from governor.errors import GovernorError, NotFoundError

if TYPE_CHECKING:
    from governor.analysis.forecast import Forecast
    from governor.core.events import GoalCreated

NEW_HISTORIES: Final = 100
"""``new``'s line reads at most this many similar goals (the most recent ones)."""
LOOK_AT: Final = 3
"""``new`` looks for them among the store's ``LOOK_AT * NEW_HISTORIES`` most recent goals."""


def _created(path: str, actor: str) -> GoalCreated:
    from governor.core.events import GoalCreated  # noqa: PLC0415 - start-up
    from governor.drive.goalfile import goal_from_file  # noqa: PLC0415 - start-up

    first = goal_from_file(Path(path), at=utc_now(), actor=actor)[0]
    assert isinstance(first, GoalCreated)
    return first


def forecast_of(
    created: GoalCreated,
    *,
    corpus: list[str] | None,
    store: str | None,
    bootstrap: int,
    workers: int,
    seed: int,
    exclude: str | None = None,
) -> Forecast:
    """The forecast of a goal: from ``corpus`` taken whole, else from the store's similar goals
    (no store: no data)."""
    from governor.analysis.corpus import corpus_of  # noqa: PLC0415 - start-up
    from governor.analysis.forecast import (  # noqa: PLC0415 - start-up
        Forecast,
        forecast,
        similar_corpus,
    )

    if corpus:
        chosen, by = corpus_of(corpus), "corpus"
    else:
        try:
            everything = corpus_of([], store_url=store)
        except NotFoundError:
            return Forecast(created.policy, 0, "profiles")
        chosen = similar_corpus(everything, created, workers=workers, exclude=exclude)
        by = "profiles"
    if not len(chosen):
        return Forecast(created.policy, 0, by)
    return forecast(
        chosen, created.policy, similar_by=by, bootstrap=bootstrap, workers=workers, seed=seed
    )


def cmd_forecast(args: argparse.Namespace) -> int:
    from governor.render.forecast import forecast_record, format_forecast  # noqa: PLC0415

    created = _created(args.goal_file, args.actor)
    fc = forecast_of(
        created,
        corpus=args.corpus,
        store=args.store,
        bootstrap=args.bootstrap,
        workers=args.workers,
        seed=args.seed,
    )
    if args.json:
        json_line(forecast_record(fc, created.title))
    else:
        out(format_forecast(fc, created.title))
    return ExitCode.OK


def _recent(store_url: str | None, goal_id: str) -> tuple[str, ...]:
    """The ids of the store's ``LOOK_AT * NEW_HISTORIES`` most recently updated goals but
    ``goal_id`` (none: no store, or no other goal)."""
    from governor.store.url import open_store  # noqa: PLC0415 - start-up

    try:
        store = open_store(store_url, read_only=True)
    except GovernorError:
        return ()
    try:
        rows = [s for s in store.goals() if s.goal_id != goal_id]
    finally:
        store.close()
    rows.sort(key=lambda s: s.updated_at)
    return tuple(s.goal_id for s in rows[-LOOK_AT * NEW_HISTORIES :])


def forecast_line(created: GoalCreated, store: str | None) -> None:
    """``governor new``'s one line on stderr: the forecast from the store's similar goals
    (the ``NEW_HISTORIES`` most recent among its ``LOOK_AT * NEW_HISTORIES`` most recently
    updated goals), or nothing when there are none or they cannot be read (the goal is
    created all the same)."""
    try:
        recent = _recent(store, created.goal_id)
        if not recent:  # the store's first goal: nothing to forecast from, nothing to import
            return
        from governor.analysis.corpus import Corpus  # noqa: PLC0415 - start-up
        from governor.analysis.forecast import (  # noqa: PLC0415
            forecast,
            similar_corpus,
            subset,
        )

        chosen = similar_corpus(Corpus(store_url=store, goal_ids=recent), created)
        if len(chosen) > NEW_HISTORIES:
            chosen = subset(chosen, range(len(chosen) - NEW_HISTORIES, len(chosen)))
        if not len(chosen):
            return
        fc = forecast(chosen, created.policy, similar_by="profiles", bootstrap=0)
    except GovernorError:
        return
    from governor.render.forecast import format_forecast_line  # noqa: PLC0415

    sys.stdout.flush()  # after the goal's id
    err(format_forecast_line(fc))


def _replicates(text: str) -> int:
    value = whole_in(0, 1000)(text)
    if value == 1:
        raise argparse.ArgumentTypeError("must be 0 (off) or 2 to 1000 replicates, not 1")
    return value


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from governor.analysis.tune_corpus import BOOTSTRAP  # noqa: PLC0415 - start-up

    p = sub.add_parser(
        "forecast",
        help="before a goal starts: its attempts, planner calls, cost and run time, from similar goals",
    )
    p.add_argument("goal_file", metavar="GOALFILE", help="the goal file (TOML, JSON or YAML)")
    p.add_argument(
        "--corpus",
        action="append",
        metavar="DIR",
        help="history files or folders to forecast from, taken whole "
        "(default: the store's goals with the same profiles; repeatable)",
    )
    p.add_argument(
        "--bootstrap",
        type=_replicates,
        default=BOOTSTRAP,
        metavar="N",
        help=f"bootstrap replicates (0: off; default {BOOTSTRAP})",
    )
    p.add_argument("--workers", type=whole_in(1, 256), default=1, help="processes (default 1)")
    p.add_argument("--seed", type=natural, default=0)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_forecast)
