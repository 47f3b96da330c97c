"""What ``governor store check`` prints: a line per finding and a closing tally, as text or
as JSON Lines (one object per finding, then the tally)."""

from __future__ import annotations

from typing import Any

from governor.store.findings import CheckTally, Finding

TABLE_NAMES = {
    "upstreams": "upstream health records",
    "workers": "worker rows",
    "service_errors": "service errors",
    "agents": "agent rows",
}


def finding_record(finding: Finding) -> dict[str, Any]:
    """One finding: where, what, and what a repair does (``fix`` null: nothing can)."""
    return {
        "table": finding.table,
        "key": finding.key,
        "problem": finding.detail,
        "fix": finding.fix,
        "repaired": finding.repaired,
    }


def tally_record(tally: CheckTally) -> dict[str, Any]:
    """The closing object: what was checked, and how many differences remain."""
    return {
        "checked": {"goals": tally.goals, "events": tally.events, **tally.rows},
        "differences": tally.findings,
        "repaired": tally.repaired,
        "busy": tally.busy,
        "ok": tally.findings == tally.repaired,
    }


def format_tally(tally: CheckTally) -> str:
    """``checked 12 goals (340 events), 2 upstream health records, ...: 1 difference``."""
    rows = ", ".join(f"{n:,} {TABLE_NAMES.get(t, t)}" for t, n in tally.rows.items())
    found = f"{tally.findings:,} difference{'' if tally.findings == 1 else 's'}"
    if tally.repaired:
        found += f" ({tally.repaired:,} repaired)"
    goals = f"{tally.goals:,} goal{'' if tally.goals == 1 else 's'} ({tally.events:,} events)"
    busy = f"; {tally.busy:,} being written were not compared (check again)" if tally.busy else ""
    return f"checked {goals}{', ' + rows if rows else ''}: {found}{busy}"


def format_progress(tally: CheckTally) -> str:
    """The progress line of a long check."""
    of = f" of about {tally.expected_goals:,}" if tally.expected_goals > tally.goals else ""
    return f"checked {tally.goals:,}{of} goals ({tally.events:,} events)"
