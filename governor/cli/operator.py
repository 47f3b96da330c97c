"""Operator verbs: ``resume``, ``raise``, ``cancel``, ``plan approve|reject``, ``work …``.

Each verb records one event (never taking the lease), prints the goal's decision after
it, and exits 5 with one line when the rules refuse it. The verbs themselves are
``governor.core.commands``, the one table the web view's forms and a Temporal
workflow's updates use too; a goal Temporal drives gets the verb through its workflow.
"""

from __future__ import annotations

import argparse
from typing import cast, get_args

from governor.cli.exit_codes import ExitCode
from governor.cli.io import json_line, out, store_from
from governor.cli.temporal import send_verb, temporal_driver, workflow_of
from governor.core.commands import OperatorVerb, VerbName
from governor.core.policy import LedgerName
from governor.drive import goals
from governor.render.records import verb_record
from governor.render.text import format_decision


def operator_verb(args: argparse.Namespace, name: VerbName) -> OperatorVerb:
    """The verb the command line asks for, as a value."""
    return OperatorVerb(
        name,
        args.actor,
        reason=args.reason,
        plan=getattr(args, "plan", None),
        item=getattr(args, "item", None),
        ledger=getattr(args, "ledger", None),
        to=goals.new_limit(args.ledger, args.to) if name == "raise" else None,
        work=getattr(args, "work", None),
    )


def _run(args: argparse.Namespace, name: VerbName) -> int:
    verb = operator_verb(args, name)
    with store_from(args.store) as store:
        goals.exists(store, args.goal)
        driver = temporal_driver(store, args.goal)
        if driver is not None:  # its workflow is the one writer: the verb goes there
            goals.refuse_secrets_in(store, args.goal, verb)
            send_verb(driver, args.goal, workflow_of(store, args.goal), verb)
            decision = goals.status(store, args.goal)[1]
        else:
            decision = goals.govern(store, args.goal, verb)
    if args.json:
        json_line(verb_record(args.goal, decision))
    else:
        out(f"{args.goal}: {format_decision(decision)}")
    return ExitCode.OK


LEDGERS = get_args(LedgerName)


def _verb(p: argparse.ArgumentParser, name: VerbName, *, reason: bool) -> None:
    p.add_argument(
        "--reason",
        required=reason,
        default=None,
        help="why (required: it is recorded" + ("; for a decision, the answer)" if reason else ")"),
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=lambda args: _run(args, name))


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
        _verb(p, cast(VerbName, f"plan {verb}"), reason=needs)

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
        _verb(p, cast(VerbName, f"work {verb}"), reason=needs)
