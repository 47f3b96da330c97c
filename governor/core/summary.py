"""The goal summary: one row per goal, the decision at its last append, for listing and scheduling.

Rules (SPEC §8):
    * A summary is a cache of ``decide(project(events), now)`` taken when events are
      appended; the events stay the truth. Stores keep it beside the stream, written in
      the same transaction.
    * A goal is due when it is ready or running (its runner may have died), or waiting
      with its ``not_before`` passed; nothing else is ever stepped by a scheduler.
    * A goal parked on a failing upstream names it (``upstream``), so a store can move
      every goal parked on one upstream at once when its health changes.
    * Listings for people order goals by ``attention`` (what needs someone first), then
      by the most recent change: the rank is a pure function of status and blocked_on,
      kept beside the summary so a store can walk it in an index.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:  # types only: a store reads its summaries without the models (start-up)
    from governor.core.decision import Decision
    from governor.core.rules.fleet import Upstreams
    from governor.core.view import GoalView

ACTIVE_STATUSES: Final = ("ready", "waiting", "running")
"""Goal statuses a scheduler may have to act on (``due`` looks only at these)."""

NEEDS_PERSON: Final = 0
"""Attention rank of a goal that waits on a person: any of its blockers is a person's
(``governor.core.blockers``) — a question to answer, work or a plan to review, a
precondition to install, a stop to resume."""
STOPPED_RANK: Final = 1
"""Attention rank of a goal stopped by its own budget (a limit reached, not a wait)."""
ACTIVE_RANK: Final = 2
"""Attention rank of a goal that runs, waits or is ready: it moves without anyone."""
ENDED_RANK: Final = 3
"""Attention rank of a goal that ended: succeeded or cancelled."""


def attention(status: str, blocked_on: str | None) -> int:
    """How soon a person should look at a goal: 0 (waits on a person) .. 3 (ended).

    ``NEEDS_PERSON``: awaiting review, or blocked (on anything: a blocked goal moves only
    when someone answers, installs or resumes); ``STOPPED_RANK``: a budget exhausted;
    ``ACTIVE_RANK``: ready, running, waiting; ``ENDED_RANK``: succeeded, cancelled (and
    any status this code does not know). A goal that runs while one of its items waits on
    a person is ranked by ``GoalSummary.person`` instead.
    """
    if status in ("awaiting_review", "blocked"):
        return NEEDS_PERSON
    if status == "budget_exhausted":
        return STOPPED_RANK
    return ACTIVE_RANK if status in ACTIVE_STATUSES else ENDED_RANK


@dataclass(frozen=True, slots=True)
class Usage:
    """How much of one goal-wide budget is spent: raw runs, charged runs, and the limit."""

    used: int
    charged: int
    limit: int


@dataclass(frozen=True, slots=True)
class GoalSummary:
    """One denormalised row per goal, written in the transaction of the append it follows.

    The fields after ``updated_at`` are None in a row written before the store kept them
    (store schema version 2); the next append fills them in.
    """

    goal_id: str
    title: str
    seq: int
    status: str
    next_action: str
    blocked_on: str | None
    not_before: datetime | None
    updated_at: datetime
    rule: str | None = None
    """The decision rule that fired (``goal.4``)."""
    reason: str | None = None
    """The decision's reason, as ``governor status`` prints it."""
    replans: Usage | None = None
    """Planner runs: used, charged, ``max_replans``."""
    attempts: Usage | None = None
    """Worker attempts across the goal: used, charged, ``max_total_attempts``."""
    upstream: str | None = None
    """While the goal waits parked (SPEC §11.10): the failing upstream it waits on."""
    person: bool | None = field(default=None, compare=False)
    """Whether any blocker of the goal is a person's (``governor.core.blockers``), also
    while the goal itself runs; None when not known (then status and blocked_on rank it).
    Derived (a store keeps it as the row's rank), so two summaries compare without it."""

    @property
    def attention(self) -> int:
        """How soon a person should look at it (``attention``: 0 first)."""
        return NEEDS_PERSON if self.person else attention(self.status, self.blocked_on)

    @property
    def due_at(self) -> datetime:
        """When a scheduler should look at the goal: ``not_before`` while waiting."""
        if self.status == "waiting" and self.not_before is not None:
            return self.not_before
        return self.updated_at

    def is_due(self, now: datetime) -> bool:
        """Ready, running (its runner may have died), or waiting with ``not_before`` passed."""
        if self.status == "waiting":
            return self.due_at <= now
        return self.status in ACTIVE_STATUSES


def summarize(
    view: GoalView,
    now: datetime,
    upstreams: Upstreams | None = None,
    *,
    decision: Decision | None = None,
) -> GoalSummary:
    """The summary row of a goal: its view and the decision taken at ``now`` (given the
    shared health of its upstreams, when known).

    Args:
        decision: ``decide(view, now, with_ledger=False, upstreams=upstreams)`` when the
            caller has it already (a runner's ``Decider`` takes it for what changed);
            taken here otherwise.

    Raises:
        ValueError: when the view holds no ``goal.created``.
    """
    if view.created is None or view.last_at is None:
        raise ValueError("cannot summarise a goal without goal.created")
    from governor.core.blockers import blockers, waits_on_person  # noqa: PLC0415 - start-up

    if decision is None:
        from governor.core.rules.decide import decide  # noqa: PLC0415 - start-up (see the imports)

        decision = decide(view, now, with_ledger=False, upstreams=upstreams)
    person = waits_on_person(blockers(view, decision))
    return GoalSummary(
        goal_id=view.goal_id,
        title=view.created.title,
        seq=view.seq,
        status=decision.status,
        next_action=decision.next_action,
        blocked_on=decision.blocked_on,
        not_before=decision.not_before,
        updated_at=view.last_at,
        rule=decision.rule,
        reason=decision.reason,
        replans=Usage(view.plans_used, view.charged_replans, view.policy.max_replans),
        attempts=Usage(view.attempts_used, view.charged_attempts, view.policy.max_total_attempts),
        upstream=parked_on(decision),
        person=person or attention(decision.status, decision.blocked_on) == NEEDS_PERSON,
    )


def parked_on(decision: Decision) -> str | None:
    """The upstream a waiting goal is parked on, if it is parked."""
    if decision.status != "waiting" or decision.outage is None:
        return None
    return decision.outage.upstream
