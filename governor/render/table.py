"""``tune``'s report as text, fitted to the terminal's width.

Rules (issue 27):
    * With no width (a file, a pipe) every row is one line, the policy column as wide as
      its longest policy: a log keeps whole rows, greppable.
    * With a width (a terminal) that one-line table is used when it fits. Otherwise each
      candidate takes two lines — its policy, then its numbers indented — and when even
      the numbers are too wide, the columns that matter least are left out (named under
      the table; ``--json`` has them all). A line never runs past the width, so the
      terminal never wraps it.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from governor.analysis.estimate import Estimate
    from governor.analysis.tune_corpus import TuneReport


@dataclass(frozen=True, slots=True)
class Column:
    header: str
    width: int
    cell: Callable[[Estimate], str]
    keep: int
    """Left out first when the lowest (the success rate and the basis stay longest)."""


COLUMNS: Final[tuple[Column, ...]] = (
    Column("success", 7, lambda e: f"{e.success_rate:.1%}", 9),
    Column("95% interval", 15, lambda e: f"[{e.success_ci[0]:5.1%}, {e.success_ci[1]:5.1%}]", 6),
    Column(
        "plans ch/unch", 13, lambda e: f"{e.planner_calls[0]:5.2f} / {e.planner_calls[1]:4.2f}", 4
    ),
    Column("attempts ch/unch", 16, lambda e: f"{e.attempts[0]:6.2f} / {e.attempts[1]:4.2f}", 3),
    Column("wall min", 8, lambda e: f"{e.wall_s / 60:.1f}", 2),
    Column("cost $", 7, lambda e: f"{e.cost_usd:.2f}", 8),
    Column("censored", 8, lambda e: f"{e.censored_share:.1%}", 1),
    Column("basis", 12, lambda e: e.basis, 7),
)
"""The numbers of a candidate, in order."""
GAP: Final = "  "
INDENT: Final = "    "


def _policy(e: Estimate) -> str:
    return ", ".join(f"{k}={v}" for k, v in e.overrides.items())


def _line(columns: Sequence[Column], cells: Sequence[str]) -> str:
    return GAP.join(
        cell.ljust(c.width) if c.header == "basis" else cell.rjust(c.width)
        for c, cell in zip(columns, cells, strict=True)
    ).rstrip()


def _span(columns: Sequence[Column]) -> int:
    return sum(c.width for c in columns) + len(GAP) * max(len(columns) - 1, 0)


def _fitting(width: int) -> list[Column]:
    """The columns whose numbers fit within ``width`` after the indent, dropping the least kept."""
    shown = list(COLUMNS)
    while len(shown) > 1 and len(INDENT) + _span(shown) >= width:
        shown.remove(min(shown, key=lambda c: c.keep))
    return shown


def format_table(estimates: Sequence[Estimate], width: int | None = None) -> list[str]:
    """The candidates' table: one line each, or two when ``width`` is too narrow for one."""
    policies = [_policy(e) for e in estimates]
    policy_w = max([len("policy"), *map(len, policies)])
    if width is None or policy_w + len(GAP) + _span(COLUMNS) < width:
        lines = [f"{'policy':<{policy_w}}{GAP}" + _line(COLUMNS, [c.header for c in COLUMNS])]
        for policy, e in zip(policies, estimates, strict=True):
            lines.append(
                f"{policy:<{policy_w}}{GAP}" + _line(COLUMNS, [c.cell(e) for c in COLUMNS])
            )
        return lines
    shown = _fitting(width)
    lines = ["policy", INDENT + _line(shown, [c.header for c in shown])]
    for policy, e in zip(policies, estimates, strict=True):
        lines += textwrap.wrap(policy, max(width - 1, 10), subsequent_indent="  ") or [""]
        lines.append(INDENT + _line(shown, [c.cell(e) for c in shown])[: width - len(INDENT)])
    hidden = [c.header for c in COLUMNS if c not in shown]
    if hidden:
        note = f"(left out to fit {width} columns: {', '.join(hidden)}; --json has them all)"
        lines += fitted(note, width)
    return lines


def format_report(report: TuneReport, *, every: bool, width: int | None = None) -> str:
    """``tune``'s text: the frontier (or ``every`` candidate), the recommendation, the checks."""
    shown = (
        report.estimates
        if every
        else sorted((e for e in report.estimates if e.pareto), key=lambda e: e.cost_usd)
    )
    wrap: Callable[[str], list[str]] = lambda text: fitted(text, width)  # noqa: E731 - a short name
    lines = [
        f"corpus: {report.histories} histories, {report.events} events",
        "",
        "every candidate:"
        if every
        else "the Pareto frontier (success against cost, cheapest first):",
        *format_table(shown, width),
        *(  # SPEC §12.1: listed, never estimated
            line
            for policy, why in report.infeasible
            for line in wrap(
                f"{', '.join(f'{k}={v}' for k, v in policy.items())}  infeasible: {why}"
            )
        ),
        "",
        *wrap(
            "recommended: " + ", ".join(f"{k}={v}" for k, v in report.recommended.overrides.items())
        ),
        *wrap(f"  why: {report.why}"),
        *(line for check in _checks(report) for line in wrap(check)),
    ]
    return "\n".join(lines)


def fitted(text: str, width: int | None) -> list[str]:
    """``text`` as lines of at most ``width - 1`` columns (a terminal's last column wraps on
    some terminals), continued indented; one line when there is no width."""
    if width is None:
        return [text]
    return textwrap.wrap(text, max(width - 1, 20), subsequent_indent="      ") or [text]


def _checks(report: TuneReport) -> list[str]:
    """The model checks, one line each, and what a poor one did to the intervals."""
    if not report.checks:
        return []
    intervals = (
        f"bootstrap over goals, {report.bootstrap} replicates"
        if report.bootstrap
        else "Wilson over goals (no bootstrap)"
    )
    lines = ["", f"model checks (the fitted model against the corpus; intervals: {intervals}):"]
    for c in report.checks:
        verdict = "POOR" if c.poor else "ok"
        lines.append(
            f"  {verdict:<4}  {c.name:<18} distance {c.distance:.3f}  p {c.p_value:.2g}  "
            f"({c.count} seen): {c.statistic}"
        )
    if report.misfit:
        lines.append(
            "  the model fits the corpus poorly: extrapolated rows rest on it, and their "
            "intervals are widened"
        )
    error = report.holdout.per_completed.get("success", 0.0)
    if report.holdout.cut_share:
        lines.append(
            f"  past the record (its own tail held out): the model's success is off by "
            f"{error:.3f} per goal it completes; each row's interval is widened by its "
            "censored share times that"
        )
    return lines
