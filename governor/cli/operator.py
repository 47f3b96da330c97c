"""Operator verbs: ``resume``, ``raise``, ``cancel``, ``plan approve|reject``, ``work …``.

Each verb records one event (never taking the lease), prints the goal's decision after
it, and exits 5 with one line when the rules refuse it.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from datetime import datetime
from typing import get_args

from governor.cli.exit_codes import ExitCode
from governor.cli.io import json_line, out, store_from
from governor.cli.secrets import refuse_secrets
from governor.clock import utc_now
from governor.core import record, verbs
from governor.core.durations import parse_duration
from governor.core.events import Event
from governor.core.policy import LedgerName
from governor.core.view import GoalView
from governor.drive import goals
from governor.errors import InputError
from governor.render.records import verb_record
from governor.render.text import format_decision

Verb = Callable[[argparse.Namespace, GoalView, datetime], list[Event]]


def _run(args: argparse.Namespace, verb: Verb) -> int:
    with store_from(args.store) as store:
        goals.exists(store, args.goal)
        decision = goals.operate(
            store,
            args.goal,
            lambda view: refuse_secrets(verb(args, view, utc_now()), "--reason"),
        )
    if args.json:
        json_line(verb_record(args.goal, decision))
    else:
        out(f"{args.goal}: {format_decision(decision)}")
    return ExitCode.OK


VERBS: dict[str, Verb] = {
    "resume": lambda a, v, t: verbs.resume_goal(v, reason=a.reason, at=t, actor=a.actor),
    "cancel": lambda a, v, t: verbs.cancel_goal(v, reason=a.reason, at=t, actor=a.actor),
    "raise": lambda a, v, t: verbs.raise_budget(
        v, ledger=a.ledger, to=_limit(a), reason=a.reason, at=t, actor=a.actor, work_id=a.work
    ),
    "plan approve": lambda a, v, t: record.apply_plan(v, plan_id=a.plan, at=t, actor=a.actor),
    "plan reject": lambda a, v, t: verbs.reject_plan(
        v, plan_id=a.plan, reason=a.reason, at=t, actor=a.actor
    ),
    "work accept": lambda a, v, t: verbs.accept_work(
        v, work_id=a.item, at=t, actor=a.actor, reason=a.reason
    ),
    "work retry": lambda a, v, t: verbs.retry_work(
        v, work_id=a.item, reason=a.reason, at=t, actor=a.actor
    ),
    "work cancel": lambda a, v, t: verbs.cancel_work(
        v, work_id=a.item, at=t, actor=a.actor, reason=a.reason
    ),
    "work reopen": lambda a, v, t: verbs.reopen_work(
        v, work_id=a.item, at=t, actor=a.actor, reason=a.reason
    ),
    "work abandon": lambda a, v, t: verbs.abandon_attempt(
        v, work_id=a.item, reason=a.reason, at=t, actor=a.actor
    ),
}

LEDGERS = get_args(LedgerName)


def _limit(args: argparse.Namespace) -> float:
    """``raise --to``: a number, or for the runtime ledger a duration (``2h``)."""
    text: str = args.to
    try:
        return float(text)
    except ValueError:
        pass
    if args.ledger == "runtime":
        try:
            return parse_duration(text)
        except ValueError as exc:
            raise InputError(f"--to: {exc}") from None
    raise InputError(f"--to: '{text}' is not a number (a duration like 2h is for --ledger runtime)")


def _verb(p: argparse.ArgumentParser, name: str, *, reason: bool) -> None:
    p.add_argument(
        "--reason",
        required=reason,
        default=None,
        help="why (required: it is recorded" + ("; for a decision, the answer)" if reason else ")"),
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=lambda args: _run(args, VERBS[name]))


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "resume", help="clear a planner stop (environment, decision, upstream bound); budget intact"
    )
    p.add_argument("goal", metavar="GOAL")
    _verb(p, "resume", reason=True)

    p = sub.add_parser("cancel", help="stop a goal for good")
    p.add_argument("goal", metavar="GOAL")
    _verb(p, "cancel", reason=False)

    p = sub.add_parser(
        "raise", help="raise a budget past its limit (the only way past an exhausted budget)"
    )
    p.add_argument("goal", metavar="GOAL")
    p.add_argument("--ledger", required=True, choices=LEDGERS)
    p.add_argument(
        "--to",
        required=True,
        metavar="N",
        help="the new limit, above the current one (runtime: seconds or 90s, 5m, 2h)",
    )
    p.add_argument(
        "--work",
        metavar="ITEM",
        help="the work item, for the attempts and uncharged_attempts ledgers",
    )
    _verb(p, "raise", reason=True)

    plan = sub.add_parser("plan", help="review a proposal: approve or reject").add_subparsers(
        dest="plan_verb", required=True, metavar="VERB"
    )
    for verb, needs in (("approve", False), ("reject", True)):
        p = plan.add_parser(verb, help=f"{verb} a proposed plan")
        p.add_argument("goal", metavar="GOAL")
        p.add_argument("plan", metavar="PLAN")
        _verb(p, f"plan {verb}", reason=needs)

    work = sub.add_parser(
        "work", help="govern a work item: accept, retry, cancel, reopen, abandon"
    ).add_subparsers(dest="work_verb", required=True, metavar="VERB")
    for verb, needs, text in (
        ("accept", False, "accept an item"),
        ("retry", True, "force a retry of a stopped item (charged budget permitting)"),
        ("cancel", False, "cancel an item"),
        ("reopen", False, "reopen an accepted or cancelled item (its budget stays spent)"),
        ("abandon", True, "finish a running attempt as abandoned (charged)"),
    ):
        p = work.add_parser(verb, help=text)
        p.add_argument("goal", metavar="GOAL")
        p.add_argument("item", metavar="ITEM")
        _verb(p, f"work {verb}", reason=needs)
