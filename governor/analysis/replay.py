"""Replay: step through a history, deciding after every event, in bounded memory.

Rules (SPEC §9):
    * Each decision is taken with ``now`` = that event's ``at`` (replay is
      deterministic); a fixed ``now`` overrides it.
    * The stream is checked as it is read (``governor.core.history``): a replay never
      shows decisions for a history that breaks the format.
    * ``step_record`` is the ``replay --json`` contract: one object per event, these
      keys in this order. Keep it stable.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from governor.core.decide import decide
from governor.core.decision import Decision, stamp
from governor.core.events import Event
from governor.core.history import check_history
from governor.core.ledger import Ledger


@dataclass(frozen=True, slots=True)
class ReplayStep:
    """One event of a history and the decision right after it."""

    line: int
    event: Event
    decision: Decision


def replay(
    events: Iterable[tuple[int, Event]],
    *,
    now: datetime | None = None,
    at_seq: int | None = None,
    source: str | None = None,
) -> Iterator[ReplayStep]:
    """Check and fold ``(line, event)`` pairs, yielding the decision after each event.

    Args:
        events: the history, as ``(line, event)`` pairs (see ``governor.store.jsonl``).
        now: decide every step at this time instead of at each event's ``at``.
        at_seq: yield only the step of this seq (and stop reading after it).
        source: the history's name, for error messages.

    Raises:
        HistoryError: at the first line that breaks the history format.
    """
    for line, event, view in check_history(events, source=source):
        if at_seq is not None and event.seq != at_seq:
            continue
        yield ReplayStep(line, event, decide(view, now or event.at))
        if at_seq is not None:
            return


def ledger_record(ledger: Ledger) -> dict[str, Any]:
    """The ledger as plain values, in the shape SPEC §9 pins."""
    r, a = ledger.replans, ledger.attempts
    return {
        "replans": {
            "used": r.used,
            "charged": r.charged,
            "uncharged": r.uncharged,
            "consecutive_uncharged": r.consecutive_uncharged,
            "limit": r.limit,
            "remaining": r.remaining,
        },
        "attempts": {
            "used": a.used,
            "charged": a.charged,
            "limit": a.limit,
            "remaining": a.remaining,
        },
        "work": {
            work_id: {
                "status": w.status,
                "next_action": w.next_action,
                "attempts_used": w.attempts_used,
                "charged_attempts": w.charged_attempts,
                "consecutive_uncharged": w.consecutive_uncharged,
                "continuations": w.continuations,
                "limit": w.limit,
                "remaining": w.remaining,
            }
            for work_id, w in ledger.work.items()
        },
        "runtime_s": float(ledger.runtime_s),
        "cost_usd": float(ledger.cost_usd),
    }


def decision_record(decision: Decision) -> dict[str, Any]:
    """A decision's public fields, as ``replay --json`` and ``status --json`` print them."""
    return {
        "status": decision.status,
        "next_action": decision.next_action,
        "blocked_on": decision.blocked_on,
        "exhausted": decision.exhausted,
        "reason": decision.reason,
        "not_before": stamp(decision.not_before) if decision.not_before else None,
        "ledger": ledger_record(decision.ledger),
    }


def step_record(step: ReplayStep) -> dict[str, Any]:
    """One line of ``replay --json``."""
    return {"seq": step.event.seq, "type": step.event.type, **decision_record(step.decision)}
