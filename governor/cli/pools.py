"""Pool commands: ``governor pool set|list|show|delete`` (SPEC §13.6).

Bad input (a negative, NaN, infinite or absurd limit, an unknown time zone, a pool that
does not exist, a pool still named by a goal that has not ended) is one line and exit 3,
4 or 5; nothing is recorded.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from governor.cli.exit_codes import ExitCode
from governor.cli.io import json_line, out, store_from
from governor.clock import utc_now
from governor.core.durations import parse_duration
from governor.errors import InputError

if TYPE_CHECKING:
    from governor.core.commands import OperatorVerb
    from governor.store.base import EventStore


def _duration(option: str, text: str) -> float:
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise InputError(f"{option}: {exc}") from None


def period_fields(option: str, per: str) -> dict[str, Any]:
    """A pool's ``period`` and ``every_s`` from ``--per``: a calendar period, ``total``, or
    a duration (``InputError`` naming ``option`` for anything else)."""
    if per in ("day", "week", "month", "total"):
        return {"period": per, "every_s": None}
    return {"period": "every", "every_s": _duration(option, per)}


def _fields(args: argparse.Namespace, old: dict[str, Any]) -> dict[str, Any]:
    """The pool's limits from the options given, over its current ones (``old``)."""
    fields = dict(old)
    for option, key in (("usd", "usd"), ("attempts", "attempts"), ("tz", "tz")):
        value = getattr(args, option)
        if value is not None:
            fields[key] = value
    if args.run_time is not None:
        fields["run_time_s"] = _duration("--run-time", args.run_time)
    if args.per is not None:
        fields.update(period_fields("--per", args.per))
    grants = dict(fields.get("grants") or {})
    if args.auto_usd is not None:
        grants["auto_usd"] = args.auto_usd
    if args.auto_attempts is not None:
        grants["auto_attempts"] = args.auto_attempts
    if args.grant_expires is not None:
        grants["expires_s"] = _duration("--grant-expires", args.grant_expires)
    if grants:
        fields["grants"] = grants
    return fields


def cmd_pool_set(args: argparse.Namespace) -> int:
    from governor.drive import pools  # noqa: PLC0415 - start-up: the models load here

    with store_from(args.store) as store:
        old = store.pool_state(args.name)
        current = (
            old.limits.model_dump(exclude_none=True)
            if old is not None and old.limits is not None and not old.deleted
            else {}
        )
        limits = pools.limits_of(_fields(args, current))
        state = pools.set_pool(
            store, args.name, limits, at=utc_now(), actor=args.actor, reason=args.reason
        )
        return _show(args, store, state.name)


def cmd_pool_list(args: argparse.Namespace) -> int:
    from governor.drive import pools  # noqa: PLC0415
    from governor.render.pools import format_pool_line, pool_record  # noqa: PLC0415

    now = utc_now()
    with store_from(args.store, read_only=True) as store:
        states = [s for s in store.pool_states() if not s.deleted and s.limits is not None]
    for state in states:
        assert state.limits is not None
        record = pool_record(state, pools.zone(state.limits.tz), now)
        json_line(record) if args.json else out(format_pool_line(record))
    if not states and not args.json:
        out("no pools: `governor pool set NAME --usd 200 --per day` makes one")
    return ExitCode.OK


def cmd_pool_show(args: argparse.Namespace) -> int:
    with store_from(args.store, read_only=True) as store:
        if args.events:
            from governor.store.pools import encode_pool_event  # noqa: PLC0415

            events = store.pool_events(args.name)
            if not events:
                from governor.drive.pools import pool_or_error  # noqa: PLC0415

                pool_or_error(store, args.name)
            for event in events:
                out(encode_pool_event(event))
            return ExitCode.OK
        return _show(args, store, args.name)


def _show(args: argparse.Namespace, store: Any, name: str) -> int:
    from governor.drive import pools  # noqa: PLC0415
    from governor.render.pools import format_pool, pool_record  # noqa: PLC0415

    state = pools.pool_or_error(store, name)
    assert state.limits is not None
    record = pool_record(
        state, pools.zone(state.limits.tz), utc_now(), pools.goals_naming(store, name)
    )
    json_line(record) if args.json else out(format_pool(record))
    return ExitCode.OK


def cmd_pool_delete(args: argparse.Namespace) -> int:
    from governor.drive import pools  # noqa: PLC0415

    with store_from(args.store) as store:
        users = pools.goals_naming(store, args.name, ended=False)
        pools.delete_pool(store, args.name, users, at=utc_now(), actor=args.actor)
    if args.json:
        json_line({"pool": args.name, "deleted": True})
    else:
        out(
            f"pool {args.name} deleted (its history stays: governor pool show {args.name} --events)"
        )
    return ExitCode.OK


def cmd_grant(args: argparse.Namespace) -> int:
    from governor.drive import grants  # noqa: PLC0415

    expires = _duration("--expires", args.expires) if args.expires else None
    with store_from(args.store) as store:
        answer = grants.Answer(
            args.reason, args.actor, usd=args.usd, attempts=args.attempts, expires_s=expires
        )
        moved = grants.grant(store, args.target, answer, clock=utc_now, govern=_govern(store))
    return _answered(args, "granted", moved)


def cmd_decline(args: argparse.Namespace) -> int:
    from governor.drive import grants  # noqa: PLC0415

    with store_from(args.store) as store:
        answer = grants.Answer(args.reason, args.actor)
        answered = grants.decline(store, args.target, answer, clock=utc_now, govern=_govern(store))
    return _answered(args, "declined", answered)


def _govern(store: EventStore) -> Callable[[str, OperatorVerb], object]:
    """Record a goal's ``grant``/``decline`` as the operator verbs are: through the goal's
    Temporal workflow when one drives it (its one writer), else in the store."""
    from governor.cli.temporal import send_verb, temporal_driver, workflow_of  # noqa: PLC0415
    from governor.drive import goals  # noqa: PLC0415

    def govern(goal_id: str, verb: OperatorVerb) -> object:
        driver = temporal_driver(store, goal_id)
        if driver is None:
            return goals.govern(store, goal_id, verb, clock=utc_now)
        goals.refuse_secrets_in(store, goal_id, verb)
        send_verb(driver, goal_id, workflow_of(store, goal_id), verb)
        return None

    return govern


def _answered(args: argparse.Namespace, what: str, goals: list[str]) -> int:
    if args.json:
        json_line({"target": args.target, what: True, "goals": goals})
    else:
        named = ", ".join(goals) if goals else "no goal was waiting on it"
        out(f"{what} for {args.target}: {named}")
    return ExitCode.OK


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    pool = sub.add_parser("pool", help="budgets shared by goals: set, list, show, delete")
    verbs = pool.add_subparsers(dest="pool_command", required=True, metavar="VERB")
    p = verbs.add_parser("set", help="create a pool or change its limits")
    p.add_argument("name", metavar="NAME")
    p.add_argument("--usd", type=float, metavar="X", help="cost limit per period, US dollars")
    p.add_argument("--attempts", type=int, metavar="N", help="charged attempts per period")
    p.add_argument("--run-time", metavar="DURATION", help="agent run time per period (8h)")
    p.add_argument(
        "--per",
        metavar="PERIOD",
        help="day, week, month (calendar, in --tz), total (never renews; the default), "
        "or a duration (90s, 1h: windows from the Unix epoch)",
    )
    p.add_argument("--tz", metavar="ZONE", help="IANA time zone of the period (default UTC)")
    p.add_argument("--auto-usd", type=float, metavar="X", help="grant requests up to $X by itself")
    p.add_argument(
        "--auto-attempts", type=int, metavar="N", help="grant requests up to N attempts by itself"
    )
    p.add_argument("--grant-expires", metavar="DURATION", help="how long a grant lasts")
    p.add_argument("--reason", help="why, recorded on the pool's event")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_pool_set)
    p = verbs.add_parser("list", help="every pool: its spend in the current period")
    p.add_argument("--json", action="store_true", help="one JSON object per pool")
    p.set_defaults(func=cmd_pool_list)
    p = verbs.add_parser("show", help="one pool: spend, reservations, grants, its goals")
    p.add_argument("name", metavar="NAME")
    p.add_argument("--events", action="store_true", help="its history, one JSON event a line")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_pool_show)
    p = verbs.add_parser("delete", help="delete a pool no goal that has not ended names")
    p.add_argument("name", metavar="NAME")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_pool_delete)
    _register_answers(sub)


def _register_answers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("grant", help="grant more budget to a goal's open request, or to a pool")
    p.add_argument("target", metavar="GOAL|POOL")
    p.add_argument("--usd", type=float, metavar="X", help="US dollars (default: what was asked)")
    p.add_argument("--attempts", type=int, metavar="N", help="charged attempts (default: asked)")
    p.add_argument("--expires", metavar="DURATION", help="the grant ends after this (2h)")
    p.add_argument("--reason", required=True, help="why, recorded on the grant")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_grant)
    p = sub.add_parser(
        "decline", help="decline a goal's open request for more budget (or a pool's)"
    )
    p.add_argument("target", metavar="GOAL|POOL")
    p.add_argument("--reason", required=True, help="why, recorded on the answer")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_decline)
