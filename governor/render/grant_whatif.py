"""Rendering a what-if of a history's grants (``governor replay --without-grants`` /
``--grants K=V,…``): one text block, or one JSON object per history."""

from __future__ import annotations

from typing import Any

from governor.analysis.grant_whatif import GrantsWhatIf, Request
from governor.render.records import Record, decision_record
from governor.render.text import format_decision


def settings_text(result: GrantsWhatIf) -> str:
    """The settings asked about, in words."""
    s = result.settings
    if s is None:
        return "without any grant"
    expires = f", expires_s={s.expires_s:g}" if s.expires_s is not None else ""
    return f"under grants auto_usd={s.auto_usd:g}, auto_attempts={s.auto_attempts}{expires}"


def format_grants_whatif(history: str, result: GrantsWhatIf) -> str:
    """The requests, how each was answered and would be, and where the story parts."""
    lines = [f"what-if {history} {settings_text(result)}:"]
    if not result.requests:
        lines.append("  no request for more budget in this history: nothing changes")
    for r in result.requests:
        would = "granted by policy" if r.auto else "waits for a person"
        if result.settings is None:
            would = "no grant"
        lines.append(
            f"  seq {r.seq} {r.event.budget} asked {_amount(r)}: {_answered(r)}; would be: {would}"
        )
    lines.append(_outcome(result))
    lines.append(f"  recorded final: {format_decision(result.recorded_final)}")
    return "\n".join(lines)


def _outcome(result: GrantsWhatIf) -> str:
    if result.outcome == "same":
        return "  same: every request would have been answered as recorded"
    if result.kind == "granted by policy":
        saved = f"{result.saved_s:.0f} s" if result.saved_s is not None else "?"
        return (
            f"  censored at seq {result.at_seq}: granted by policy at once, not waiting "
            f"{saved} for a person; what follows was never observed"
        )
    assert result.decision is not None
    assert result.bought is not None
    b = result.bought
    head = "known" if result.outcome == "known" else "censored (its pool renews)"
    accepted = ", ".join(b.accepted) or "none"
    return (
        f"  {head}: without the grant at seq {result.at_seq} the goal would have stood at "
        f"{format_decision(result.decision)}\n"
        f"  the grant bought: {b.attempts_charged} charged attempts, {b.replans_charged} "
        f"charged replans, ${b.cost_usd:.4f}; items accepted after it: {accepted}"
    )


def grants_whatif_record(history: str, result: GrantsWhatIf) -> Record:
    """``replay --without-grants|--grants … --json``: one object per history."""
    b = result.bought
    return {
        "history": history,
        "goal_id": result.goal_id,
        "grants": None if result.settings is None else result.settings.model_dump(mode="json"),
        "outcome": result.outcome,
        "divergence": None
        if result.divergence is None
        else {"seq": result.at_seq, "kind": result.kind, "request_seq": result.divergence.seq},
        "decision": None if result.decision is None else decision_record(result.decision),
        "bought": None
        if b is None
        else {
            "attempts_charged": b.attempts_charged,
            "replans_charged": b.replans_charged,
            "cost_usd": b.cost_usd,
            "accepted": list(b.accepted),
        },
        "saved_s": result.saved_s,
        "requests": [_request_record(r) for r in result.requests],
        "recorded_final": decision_record(result.recorded_final),
    }


def _request_record(r: Request) -> dict[str, Any]:
    return {
        "seq": r.seq,
        "budget": r.event.budget,
        "usd": r.event.usd,
        "attempts": r.event.attempts,
        "answered": r.answered,
        "by": r.answer.actor if r.answer is not None else None,
        "answer_seq": r.answer.seq if r.answer is not None else None,
        "waited_s": r.waited_s,
        "auto": r.auto,
    }


def _amount(r: Request) -> str:
    parts = []
    if r.event.usd is not None:
        parts.append(f"${r.event.usd:g}")
    if r.event.attempts is not None:
        parts.append(f"{r.event.attempts} attempts")
    return " and ".join(parts) or "nothing named"


def _answered(r: Request) -> str:
    if r.answer is None:
        return "open"
    by = "by policy" if r.answered == "policy" else f"by {r.answer.actor}"
    verb = "declined" if r.answered == "declined" else "granted"
    return f"{verb} {by} at seq {r.answer.seq}"
