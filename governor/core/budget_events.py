"""The events of a request for more budget and its answers (SPEC §13.6, §13.7).

Rules:
    * ``budget.requested`` says a budget stopped the goal and what it asks for;
      ``budget.granted`` and ``budget.declined`` answer it; ``budget.expired`` ends a
      grant on the goal's own ledger. Their fold is ``governor.core.fold_steps``', their
      effect on the decision ``governor.core.rules.budget``'.
    * ``governor.core.events`` holds them in the union of every event.
"""

from __future__ import annotations

from typing import Literal

from governor.core.event_fields import EventBase, Name, ReasonRequired, UtcTime
from governor.core.numbers import Count, Usd


class BudgetRequested(ReasonRequired):
    """A budget stopped the goal, and the goal asks for more (SPEC §13.7).

    ``budget`` is ``pool:<name>`` for a pool, else the goal's own ledger (``cost``,
    ``total_attempts``, ``replans``); the amount asked is ``usd`` or ``attempts``; a pool
    that renews says when (``renews_at``: the goal goes on by itself then). The reason says
    why, in words (the spend and the limit).
    """

    type: Literal["budget.requested"] = "budget.requested"
    budget: Name
    usd: Usd | None = None
    attempts: Count | None = None
    renews_at: UtcTime | None = None


class BudgetGranted(ReasonRequired):
    """A request was granted: by ``policy`` (the ``grants`` rule named in ``rule``) or by a
    person. For the goal's own ledger the limit rises by the amount until ``expires_at``
    (``budget.expired``); for a pool the grant is the pool's (``pool.granted``)."""

    type: Literal["budget.granted"] = "budget.granted"
    budget: Name
    usd: Usd | None = None
    attempts: Count | None = None
    expires_at: UtcTime | None = None
    rule: Name | None = None


class BudgetDeclined(ReasonRequired):
    """A person declined the open request: the goal stays stopped (until its pool renews)."""

    type: Literal["budget.declined"] = "budget.declined"
    budget: Name


class BudgetExpired(EventBase):
    """A grant on the goal's own ledger expired: its limit falls back by the amount granted;
    what the grant bought stays counted."""

    type: Literal["budget.expired"] = "budget.expired"
    budget: Name
    usd: Usd | None = None
    attempts: Count | None = None
