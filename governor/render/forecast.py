"""How a forecast reads: the table ``governor forecast`` prints, the line ``governor new``
prints, and the JSON object of ``--json`` (the same facts)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from governor.analysis.forecast import Forecast, Quantity

LABELS: Final = {
    "charged_attempts": "charged attempts",
    "planner_calls": "planner calls",
    "cost_usd": "cost",
    "run_time_s": "run time",
}


def span(seconds: float) -> str:
    """A run time as people read it: ``45s``, ``12m``, ``1h05m``."""
    s = round(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{round(s / 60)}m"
    hours, rest = divmod(round(s / 60), 60)
    return f"{hours}h{rest:02d}m"


def _usd(x: float) -> str:
    return f"${x:,.2f}"


def _count(x: float) -> str:
    return f"{x:g}" if float(x).is_integer() else f"{x:.1f}"


SHOW: Final[dict[str, Callable[[float], str]]] = {
    "charged_attempts": _count,
    "planner_calls": _count,
    "cost_usd": _usd,
    "run_time_s": span,
}


def _where(fc: Forecast) -> str:
    kind = "similar goals (same profiles)" if fc.similar_by == "profiles" else "histories"
    return f"{fc.histories} {kind}"


def _ci(show: Callable[[float], str], ci: tuple[float, float]) -> str:
    return f"{show(ci[0])} to {show(ci[1])}"


def format_forecast(fc: Forecast, title: str) -> str:
    """The table: per quantity, the median and the 90th percentile with their intervals."""
    if not fc.histories:
        return f"no forecast for {title!r}: no similar goals recorded"
    lines = [
        f"forecast for {title!r} under its policy, from {_where(fc)}: basis {fc.basis} "
        f"({fc.censored_share:.0%} of the outcomes completed by the fitted model)",
        f"  {'':<17} {'median':>9}  {'95 % interval':<22} {'90th pct':>9}  {'95 % interval':<22}",
    ]
    for name, q in fc.quantities.items():
        show = SHOW[name]
        lines.append(
            f"  {LABELS[name]:<17} {show(q.median):>9}  {_ci(show, q.median_ci):<22} "
            f"{show(q.p90):>9}  {_ci(show, q.p90_ci):<22}"
        )
    low, high = fc.success_ci
    lines.append(
        f"  succeeds: {fc.success_rate:.0%} of such goals (95 % interval {low:.0%} to {high:.0%})"
    )
    return "\n".join(lines)


def format_forecast_line(fc: Forecast) -> str:
    """One line: the median and 90th percentile of cost, charged attempts and run time."""
    q = fc.quantities

    def pair(name: str) -> str:
        show = SHOW[name]
        return f"{show(q[name].median)} (90 %: {show(q[name].p90)})"

    return (
        f"forecast: cost {pair('cost_usd')}, {pair('charged_attempts')} charged attempts, "
        f"run time {pair('run_time_s')}; from {_where(fc)}, {fc.basis}"
    )


def _quantity(q: Quantity) -> dict[str, Any]:
    return {
        "median": q.median,
        "median_ci": list(q.median_ci),
        "p90": q.p90,
        "p90_ci": list(q.p90_ci),
    }


def forecast_record(fc: Forecast, title: str) -> dict[str, Any]:
    """``governor forecast --json``: one object."""
    return {
        "title": title,
        "policy": fc.policy.model_dump(mode="json"),
        "histories": fc.histories,
        "similar_by": fc.similar_by,
        "basis": fc.basis if fc.histories else None,
        "censored_share": fc.censored_share,
        "success_rate": fc.success_rate if fc.histories else None,
        "success_ci": list(fc.success_ci) if fc.histories else None,
        **{name: _quantity(q) for name, q in fc.quantities.items()},
        "bootstrap": fc.bootstrap,
        "holdout": {"cut_share": fc.holdout.cut_share, "per_completed": fc.holdout.per_completed},
    }
