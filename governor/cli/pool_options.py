"""The pool options of ``tune`` (a pool's period limit as an axis) and ``simulate
--fleet`` (one pool the fleet's goals share): parsed and checked whole before any work.

Bad input — a negative, NaN, infinite or absurd limit, an unknown period or time zone, a
period with no limit — is one ``InputError`` line (exit 3), and nothing is written.
"""

from __future__ import annotations

import argparse
import itertools
from datetime import tzinfo
from typing import Any, Final

from governor.cli.pools import period_fields
from governor.core.pools import PoolLimits
from governor.errors import InputError

MAX_ROWS: Final = 100
"""The most pool limits one tune replays (each replays the whole corpus)."""


def _values(option: str, text: str, kind: type) -> list[Any]:
    try:
        values = [kind(v.strip()) for v in text.split(",")]
    except ValueError:
        noun = "whole numbers" if kind is int else "numbers"
        raise InputError(f"{option} {text}: give {noun} separated by commas") from None
    if len(values) > MAX_ROWS:
        raise InputError(f"{option} {text}: at most {MAX_ROWS} values")
    return values


def _limits(fields: dict[str, Any]) -> PoolLimits:
    from governor.drive.pools import limits_of  # noqa: PLC0415 - start-up: the models load here

    return limits_of(fields)


def _period(args: argparse.Namespace) -> dict[str, Any]:
    fields: dict[str, Any] = {"tz": args.pool_tz or "UTC"}
    if args.pool_per is not None:
        fields.update(period_fields("--pool-per", args.pool_per))
    return fields


def _zone(limits: PoolLimits) -> tzinfo:
    from governor.drive.pools import zone  # noqa: PLC0415

    return zone(limits.tz)


def add_tune_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--pool-usd",
        metavar="X,Y,…",
        help="replay the goals through one shared pool of each cost limit (an axis; docs/pools.md)",
    )
    p.add_argument("--pool-attempts", metavar="N,M,…", help="the same, charged attempts per period")
    _add_period(p)


def _add_period(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--pool-per",
        metavar="PERIOD",
        help="the pool's period: day, week, month (in --pool-tz), total (the default) or a duration",
    )
    p.add_argument("--pool-tz", metavar="ZONE", help="the pool's IANA time zone (default UTC)")


def tune_limits(args: argparse.Namespace) -> tuple[list[PoolLimits], tzinfo] | None:
    """The pool limits of tune's axis (every combination of ``--pool-usd`` and
    ``--pool-attempts``) and their time zone; None when no pool option is given."""
    usd, attempts = args.pool_usd, args.pool_attempts
    if usd is None and attempts is None:
        if args.pool_per is not None or args.pool_tz is not None:
            raise InputError("--pool-per and --pool-tz need --pool-usd or --pool-attempts")
        return None
    period = _period(args)
    usds = _values("--pool-usd", usd, float) if usd is not None else [None]
    counts = _values("--pool-attempts", attempts, int) if attempts is not None else [None]
    if len(usds) * len(counts) > MAX_ROWS:
        raise InputError(f"the pool axis has {len(usds) * len(counts)} limits; at most {MAX_ROWS}")
    limits = [
        _limits({**period, "usd": u, "attempts": a}) for u, a in itertools.product(usds, counts)
    ]
    return limits, _zone(limits[0])


def add_fleet_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--pool-usd",
        metavar="X",
        help="fleet: every goal names one shared pool of this cost limit (docs/pools.md)",
    )
    p.add_argument("--pool-attempts", metavar="N", help="fleet: the pool's charged attempts limit")
    _add_period(p)
    p.add_argument(
        "--pool-auto-usd", metavar="X", help="fleet: the pool grants requests up to $X by itself"
    )
    p.add_argument(
        "--pool-auto-attempts", metavar="N", help="fleet: … and up to N attempts by itself"
    )


def fleet_limits(args: argparse.Namespace) -> tuple[PoolLimits, tzinfo] | None:
    """The fleet's one pool; None when no pool option is given."""
    given = [args.pool_usd, args.pool_attempts, args.pool_per, args.pool_tz]
    grants_given = [args.pool_auto_usd, args.pool_auto_attempts]
    if all(v is None for v in given + grants_given):
        return None
    if args.fleet is None:
        raise InputError("the --pool-* options model a pool shared by a fleet: give --fleet too")
    if args.pool_usd is None and args.pool_attempts is None:
        raise InputError("a fleet's pool needs --pool-usd or --pool-attempts")
    fields = _period(args)
    if args.pool_usd is not None:
        fields["usd"] = _one("--pool-usd", args.pool_usd, float)
    if args.pool_attempts is not None:
        fields["attempts"] = _one("--pool-attempts", args.pool_attempts, int)
    grants: dict[str, Any] = {}
    if args.pool_auto_usd is not None:
        grants["auto_usd"] = _one("--pool-auto-usd", args.pool_auto_usd, float)
    if args.pool_auto_attempts is not None:
        grants["auto_attempts"] = _one("--pool-auto-attempts", args.pool_auto_attempts, int)
    if grants:
        fields["grants"] = grants
    limits = _limits(fields)
    return limits, _zone(limits)


def _one(option: str, text: str, kind: type) -> Any:
    values = _values(option, text, kind)
    if len(values) != 1:
        raise InputError(f"{option} {text}: a fleet has one pool: give one value")
    return values[0]
