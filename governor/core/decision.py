"""Decision values: what a goal or a work item should do next, why, and under which rule.

Rules:
    * A decision is a value. It names its status, its next action, a reason a person
      understands, the rule that fired (``goal.4``, ``work.8``) and, where they apply,
      what it is blocked on, when it may go on (``not_before``) and which ledger ran out.
    * ``blocked_on`` is ``operator`` while awaiting review, ``upstream`` while waiting,
      and null for ready, running, succeeded, cancelled and budget_exhausted.
    * A goal parked on a failing upstream is ``waiting`` on ``upstream`` with next action
      ``park`` (to record it) or ``wait``; ``resume`` when the upstream is back
      (``governor.core.rules.fleet``).
    * Decisions are cheap immutable records (named tuples): one is made after every
      event of a replay, and a frozen dataclass costs three times as much to make.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Final, Literal, NamedTuple

if TYPE_CHECKING:  # types only: ``list`` imports this module without the models (start-up)
    from governor.core.event_fields import PlanTrigger
    from governor.core.ledger import Ledger
    from governor.core.upstream import Outage

Status = Literal[
    "ready",
    "running",
    "waiting",
    "blocked",
    "awaiting_review",
    "in_review",
    "succeeded",
    "cancelled",
    "budget_exhausted",
]
Action = Literal[
    "plan",
    "apply",
    "run",
    "accept",
    "review",
    "review_plan",
    "review_work",
    "retry",
    "wait",
    "wait_for_dependencies",
    "park",
    "resume",
    "none",
]
BlockedOn = Literal["environment", "upstream", "decision", "work", "operator", "budget"]
Exhausted = Literal[
    "replans",
    "plan_records",
    "attempts",
    "total_attempts",
    "runtime",
    "cost",
    "outage_wait",
    "same_failures",
]
"""The ledger that ran out; ``same_failures`` only for a work item (SPEC §12.10)."""

STOPPED: Final = frozenset({"succeeded", "cancelled", "blocked", "budget_exhausted"})
"""Goal statuses after which nothing happens without an operator."""


class WorkDecision(NamedTuple):
    """What one work item should do next."""

    work_id: str
    status: Status
    next_action: Action
    reason: str
    rule: str
    blocked_on: BlockedOn | None = None
    not_before: datetime | None = None
    exhausted: Exhausted | None = None


class Decision(NamedTuple):
    """What the goal should do next, why, and the budget ledger behind it."""

    status: Status
    next_action: Action
    reason: str
    rule: str
    ledger: Ledger
    blocked_on: BlockedOn | None = None
    not_before: datetime | None = None
    exhausted: Exhausted | None = None
    trigger: PlanTrigger | None = None
    """For ``plan``: initial, replan, milestone or retry."""
    plan_id: str | None = None
    """For ``apply`` and ``review_plan``: the proposal concerned; while ``running``: the
    plan in flight."""
    work_ids: tuple[str, ...] = ()
    """For ``run``, ``accept`` and ``review_work``: the items concerned, in plan order;
    while ``running`` or ``waiting``: the items in flight or cooling down."""
    items: tuple[WorkDecision, ...] = ()
    """Decisions of the active plan's items, in plan order."""
    outage: Outage | None = None
    """For ``park``, ``resume`` and a parked wait: the upstream concerned (SPEC §11.10)."""

    @property
    def is_stopped(self) -> bool:
        return self.status in STOPPED
