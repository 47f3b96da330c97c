"""``governor reclassify``'s output: its text and its ``--json`` object (issue 25 §4)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from governor.render.records import whatif_record
from governor.render.text import format_ledger, format_whatif

if TYPE_CHECKING:  # types only
    from governor.analysis.reclassified import Judged, Reclassification, Verdict

NOTHING_WRITTEN: Final = (
    "nothing was written: keeping a reclassified history would be a separate, explicit "
    "`governor import` of it (reclassify never writes)"
)
PROJECTION: Final = ("outcome", "known", "divergence", "final", "recorded_final")
"""The what-if's fields (``replay --policy --json``) a reclassification prints."""
READINGS: Final = {
    "recorded": "from its recorded observation",
    "inferred": "inferred: no observation was recorded with it; read from its evidence and text",
    "not recorded": "not recorded: kept as recorded",
}


def _verdict(v: Verdict) -> str:
    what = v.failure_class or "no class"
    return f"{what} ({v.rule or 'no rule'}), {'charged' if v.charged else 'uncharged'}"


def _failure_lines(j: Judged) -> list[str]:
    mark = "changed" if j.changed else "same"
    lines = [
        f"  seq {j.seq:<5} {j.event_type:<16} {j.run}  [{mark}; {READINGS[j.reading]}]",
        f"    recorded: {_verdict(j.recorded)}",
        f"    today:    {_verdict(j.today)}",
    ]
    if j.read:
        lines.append("    read: " + "; ".join(j.read))
    lines += [f"    assumed: {a}" for a in j.assumed]
    return lines


def format_reclassification(r: Reclassification) -> str:
    """Each failure then and today, the re-projection, and that nothing was written."""
    changed = sum(j.changed for j in r.failures)
    lines = [
        f"goal {r.goal_id}: {len(r.failures)} recorded failures judged again by today's "
        f"classifier, {changed} changed"
    ]
    for judged in r.failures:
        lines += _failure_lines(judged)
    header = "re-projected under today's charges (the recorded policy and outcomes):"
    lines.append(format_whatif(r.whatif, {}, header=header))
    lines += ["  ledger today:", format_ledger(r.whatif.final.ledger)]
    lines.append(NOTHING_WRITTEN)
    return "\n".join(lines)


def _verdict_record(v: Verdict) -> dict[str, Any]:
    return {"class": v.failure_class, "rule": v.rule, "charged": v.charged}


def reclassification_record(history: str, r: Reclassification) -> dict[str, Any]:
    """``reclassify --json``: one object per history."""
    projected = whatif_record(history, {}, r.whatif)
    return {
        "history": history,
        "goal_id": r.goal_id,
        "failures": [
            {
                "seq": j.seq,
                "type": j.event_type,
                "run": j.run,
                "reading": j.reading,
                "changed": j.changed,
                "recorded": _verdict_record(j.recorded),
                "today": _verdict_record(j.today),
                "read": list(j.read),
                "assumed": list(j.assumed),
            }
            for j in r.failures
        ],
        "changed": sum(j.changed for j in r.failures),
        **{key: projected[key] for key in PROJECTION},
        "written": False,
    }
