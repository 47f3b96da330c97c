"""A goal's view and its decision, read from a store: what the read commands need of the drive.

Rules:
    * Read only: nothing here appends, takes a lease or acts, so ``status`` imports none of
      what does (start-up, issue 36). ``governor.drive.goals`` offers the same functions
      beside the ones that drive.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from governor.clock import utc_now
from governor.core.decision import Decision
from governor.core.fold import project
from governor.core.rules.decide import decide
from governor.core.view import GoalView
from governor.errors import NotFoundError

if TYPE_CHECKING:
    from governor.store.base import EventStore


def load(store: EventStore, goal_id: str) -> GoalView:
    """The goal's view, folded from the store."""
    return project(store.load(goal_id))


def status(
    store: EventStore, goal_id: str, *, now: datetime | None = None
) -> tuple[GoalView, Decision]:
    """The goal's view and its decision now."""
    view = load(store, goal_id)
    return view, decide(view, now or utc_now())


def exists(store: EventStore, goal_id: str) -> None:
    if store.last_seq(goal_id) == 0:
        raise NotFoundError(f"no goal '{goal_id}' in this store (governor list shows the goals)")
