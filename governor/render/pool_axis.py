"""What a shared pool would have done, as ``--json`` and text: tune's pool axis
(``governor.analysis.pool_axis``) and the pool of a simulated fleet
(``governor.analysis.fleet``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from governor.core.text import count, stamp

if TYPE_CHECKING:  # types only
    from governor.analysis.fleet import PoolTally
    from governor.analysis.pool_axis import PoolAxis, PoolRow
    from governor.analysis.shared_pool import Parked, Period
    from governor.core.pools import PoolLimits

Record = dict[str, Any]


def limits_record(limits: PoolLimits) -> Record:
    """The limits a row was replayed under."""
    return {
        "usd": limits.usd,
        "attempts": limits.attempts,
        "run_time_s": limits.run_time_s,
        "period": limits.period,
        "every_s": limits.every_s,
        "tz": limits.tz,
    }


def periods_record(periods: Sequence[Period]) -> list[Record]:
    """Each period's spend (``start`` null: a ``total`` pool)."""
    return [
        {
            "start": stamp(p.start) if p.start else None,
            **{k: round(v, 9) for k, v in p.spent.items()},
        }
        for p in periods
    ]


def parked_record(park: Parked, stopped: bool) -> Record:
    r = park.refusal
    return {
        "goal": park.goal,
        "at": stamp(park.at),
        "unit": r.unit,
        "spent": r.spent,
        "reserved": r.reserved,
        "limit": r.limit,
        "renews_at": stamp(r.renews_at) if r.renews_at else None,
        "for_good": stopped,
    }


def _amount(unit: str, value: float) -> str:
    return {"usd": f"${value:g}", "attempts": f"{value:g} attempts"}.get(unit, f"{value:g}s")


def _rate(n: int, of: int) -> float:
    return n / of if of else 0.0


def row_record(row: PoolRow) -> Record:
    gone = set(row.stopped)
    return {
        "limit": limits_record(row.limits),
        "parked_goals": len(row.parked),
        "parks": row.parks,
        "stopped_goals": len(row.stopped),
        "parked_s": round(row.parked_s, 6),
        "finished_in_period": row.finished_in_period,
        "success_rate": _rate(row.succeeded, row.goals),
        "success_rate_in_period": _rate(row.succeeded_in_period, row.goals),
        "cost_per_goal": row.cost_usd / row.goals if row.goals else 0.0,
        "spend_per_period": periods_record(row.periods),
        "parked": [parked_record(p, p.goal in gone) for p in row.parked],
    }


def pool_axis_record(axis: PoolAxis) -> Record:
    """``tune --json``'s ``pools``: the corpus as recorded, then one row per pool limit."""
    return {
        "replayed": "recorded",
        "goals": axis.goals,
        "success_rate": _rate(axis.succeeded, axis.goals),
        "cost_per_goal": axis.cost_usd / axis.goals if axis.goals else 0.0,
        "rows": [row_record(r) for r in axis.rows],
    }


def limit_text(limits: PoolLimits) -> str:
    parts = []
    if limits.usd is not None:
        parts.append(f"${limits.usd:g}")
    if limits.attempts is not None:
        parts.append(count(limits.attempts, "attempt"))
    if limits.run_time_s is not None:
        parts.append(f"{limits.run_time_s:g}s run time")
    if limits.period == "total":
        per = "in total"
    elif limits.every_s is not None:
        per = f"per {limits.every_s:g}s"
    else:
        per = f"per {limits.period} ({limits.tz})"
    return " and ".join(parts) + " " + per


def format_pool_axis(axis: PoolAxis, *, shown: int = 3) -> str:
    """Tune's pool rows: the recorded goals through one shared pool per limit."""
    n = axis.goals
    lines = [
        f"pool limits (the {count(n, 'recorded goal')} in their start order through one pool; "
        f"as recorded: success {_rate(axis.succeeded, n):.1%}, "
        f"${axis.cost_usd / n if n else 0:.4g} per goal)"
    ]
    for row in axis.rows:
        gone = set(row.stopped)
        lines.append(
            f"  {limit_text(row.limits)}: {count(len(row.parked), 'goal')} parked "
            f"({len(row.stopped)} for good), {row.finished_in_period} finished within their period, "
            f"success {_rate(row.succeeded, n):.1%} ({_rate(row.succeeded_in_period, n):.1%} "
            f"within the period), ${row.cost_usd / n if n else 0:.4g} per goal, "
            f"{row.parked_s / 3600:.1f} goal-hours parked"
        )
        for park in row.parked[:shown]:
            r = park.refusal
            lines.append(
                f"    {park.goal} parked at {stamp(park.at)} with {_amount(r.unit, r.spent)} spent "
                f"and {_amount(r.unit, r.reserved)} reserved of {_amount(r.unit, r.limit)}"
                + (
                    f"; renews {stamp(r.renews_at)}"
                    if r.renews_at and park.goal not in gone
                    else "; for good"
                )
            )
        if len(row.parked) > shown:
            lines.append(f"    … and {len(row.parked) - shown} more (--json lists every one)")
    return "\n".join(lines)


def fleet_pool_record(tally: PoolTally) -> Record:
    """``simulate --fleet --json``'s ``fleet.pool``: the pool the fleet's goals shared."""
    pool = tally.pool
    return {
        "limit": limits_record(pool.limits),
        "grants": limits_record_grants(pool.limits),
        "spend_per_period": periods_record(tally.periods),
        "parks": len(pool.parks),
        "parked_goals": len(tally.parked_goals),
        "parked_s": round(tally.parked_s, 6),
        "stopped_goals": len(tally.stopped),
        "granted": tally.grants,
        "events": len(pool.events),
    }


def limits_record_grants(limits: PoolLimits) -> Record | None:
    g = limits.grants
    return None if g is None else {
        "auto_usd": g.auto_usd, "auto_attempts": g.auto_attempts, "expires_s": g.expires_s
    }  # fmt: skip


def format_fleet_pool(tally: PoolTally) -> str:
    """The fleet's pool in lines: its limit, the goals it parked, its spend per period."""
    pool = tally.pool
    lines = [
        f"pool {pool.name} ({limit_text(pool.limits)}): {count(len(tally.parked_goals), 'goal')} "
        f"parked ({count(len(pool.parks), 'refused call')}, {tally.parked_s / 3600:.1f} "
        f"goal-hours), {len(tally.stopped)} stopped waiting for a person, "
        f"{count(tally.grants, 'grant')} by its rule"
    ]
    for period in tally.periods:
        when = stamp(period.start) if period.start else "in total"
        spent = period.spent
        lines.append(
            f"  {when}: ${spent['usd']:.4g}, {spent['attempts']:g} attempts, "
            f"{spent['run_time_s'] / 60:.1f} min of run time"
        )
    return "\n".join(lines)
