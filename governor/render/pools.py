"""Pools for people and scripts: ``governor pool list|show`` as text and as JSON records."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from governor.core.pools import UNITS, PoolState, period_end, period_start, spent_now
from governor.core.text import stamp


def pool_record(
    state: PoolState, zone: Any, now: datetime, goals: list[str] | None = None
) -> dict[str, Any]:
    """A pool as ``--json`` prints it: limits, the current period, spend and reservations."""
    limits = state.limits
    assert limits is not None
    start, end = period_start(limits, zone, now), period_end(limits, zone, now)
    spent = spent_now(state, zone, now)
    record: dict[str, Any] = {
        "pool": state.name,
        "limits": limits.model_dump(exclude_none=True),
        "period": {
            "start": stamp(start) if start else None,
            "renews_at": stamp(end) if end else None,
        },
        "spent": spent,
        "reserved": {u: state.reserved(u) for u in UNITS},
        "granted": {u: state.granted(u, now) for u in UNITS},
        "in_flight": len(state.in_flight),
        "grants": dict(state.grants_by),
        "deleted": state.deleted,
        "seq": state.seq,
    }
    if goals is not None:
        record["goals"] = goals
    return record


def _amount(unit: str, value: float) -> str:
    if unit == "usd":
        return f"${value:.4g}"
    if unit == "attempts":
        return f"{value:g} attempts"
    return f"{value:g}s run time"


def format_pool_line(record: dict[str, Any]) -> str:
    """One line of ``governor pool list``."""
    limits = record["limits"]
    parts = []
    for unit, key in (("usd", "usd"), ("attempts", "attempts"), ("run_time_s", "run_time_s")):
        if key in limits:
            parts.append(
                f"{_amount(unit, record['spent'][unit])} of {_amount(unit, limits[key])}"
                + (
                    f" (+{_amount(unit, record['reserved'][unit])} reserved)"
                    if record["reserved"][unit]
                    else ""
                )
            )
    period = limits.get("period", "total")
    if period == "every":
        period = f"every {limits['every_s']:g}s"
    renews = record["period"]["renews_at"]
    tail = f", renews {renews}" if renews else ""
    return f"{record['pool']}  {period} ({limits.get('tz', 'UTC')}): " + "; ".join(parts) + tail


def format_pool(record: dict[str, Any]) -> str:
    """``governor pool show``: the list line, the grants, the calls in flight, its goals."""
    lines = [format_pool_line(record)]
    granted = [f"{_amount(u, v)}" for u, v in record["granted"].items() if v]
    if granted:
        lines.append("  granted (open): " + ", ".join(granted))
    lines.append(f"  calls in flight: {record['in_flight']}")
    grants = record["limits"].get("grants")
    if grants:
        lines.append(
            f"  grants by itself up to ${grants.get('auto_usd', 0):g} and "
            f"{grants.get('auto_attempts', 0)} attempts"
        )
    if "goals" in record:
        lines.append("  goals: " + (", ".join(record["goals"]) or "none"))
    return "\n".join(lines)
