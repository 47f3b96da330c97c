"""Recording, shared: the head of every event a recorder returns, and the checks before it.

Rules (SPEC §6.3, §8, §11.2, §12.10):
    * Every recorder takes the view, the time and the ids it needs, and returns the events
      to append, numbered after ``view.seq`` (``event_head``). None of them reads a clock;
      a recorder whose clock runs behind the last event's never writes time backwards.
    * Nothing is recorded once the goal has ended (``ensure_open``).
    * The budget is checked before anything is created: a refused plan or attempt
      creates no event (``refuse_unless``: ``BudgetExhaustedError``).
    * A recorded failure's signature is its class, the rule that classed it and its error.
    * The recorders: ``record`` (a goal and its plans), ``record_work`` (attempts),
      ``record_park`` (parks on a failing upstream and their end); the operator's are
      ``verbs``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from governor.core.evidence import Evidence, FailureClass
from governor.core.signature import signature
from governor.core.view import GoalView
from governor.errors import BudgetExhaustedError, CommandRefusedError


def ensure_open(view: GoalView) -> None:
    """Refuse to record anything once the goal has ended (SPEC §11.2)."""
    if view.ended == "goal.cancelled":
        raise CommandRefusedError("the goal is cancelled", goal_id=view.goal_id)
    if view.ended == "plan.completed":
        raise CommandRefusedError("the goal has succeeded", goal_id=view.goal_id)


def event_head(
    view: GoalView, at: datetime, actor: str, offset: int = 1, reason: str | None = None
) -> dict[str, Any]:
    """The common fields of the next event (``offset`` numbers events of one batch).

    Raises:
        CommandRefusedError: when the goal has ended: nothing may follow its end.
    """
    if view.created is None:
        raise CommandRefusedError("the goal has no goal.created event")
    ensure_open(view)
    # a recorder whose clock runs behind the last event's never writes time backwards
    if view.last_at is not None and at < view.last_at:
        at = view.last_at
    return {
        "goal_id": view.goal_id,
        "seq": view.seq + offset,
        "at": at,
        "actor": actor,
        "reason": reason,
    }


def refuse_unless(left: bool, view: GoalView, ledger: str, spent: str) -> None:
    """The budget check before anything is created: nothing is, when ``ledger`` is spent."""
    if not left:
        raise BudgetExhaustedError(spent, ledger=ledger, goal_id=view.goal_id)


def failure_signature(
    failure_class: FailureClass | None, evidence: Evidence | None, error: str | None
) -> str:
    """The recorded failure's signature: its class, the rule that classed it, its error."""
    return signature(failure_class, evidence.rule if evidence else None, error)
