"""Recording requests for more budget and their answers (SPEC §13.7).

Rules:
    * ``budget.requested`` is recorded once per stop: not while a request on the same
      budget is open (unless the pool renewed since it was made).
    * ``budget.granted`` / ``budget.declined`` answer the open request; a grant for a goal
      with no open request is refused (``CommandRefusedError``), nothing recorded.
    * A grant by ``policy`` is made only at or under the rule's ``auto_usd`` /
      ``auto_attempts`` and names the rule; anything larger waits for a person.
    * A grant on the goal's own ledger that expires is ended by ``budget.expired`` when
      its time has come (``expire_grants``); what it bought stays counted.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from governor.core.budget_events import (
    BudgetDeclined,
    BudgetExpired,
    BudgetGranted,
    BudgetRequested,
)
from governor.core.events import Event
from governor.core.policy import Grants
from governor.core.record_head import event_head
from governor.core.view import BudgetRequest, GoalView
from governor.errors import CommandRefusedError


def request_budget(
    view: GoalView,
    *,
    budget: str,
    usd: float | None,
    attempts: int | None,
    renews_at: datetime | None,
    reason: str,
    at: datetime,
) -> list[Event]:
    """``budget.requested``, unless the same request is open already."""
    open_ = view.budget_request
    if open_ is not None and open_.budget == budget:
        lapsed = open_.renews_at is not None and at >= open_.renews_at
        if not lapsed:
            return []
    head = event_head(view, at, "governor", reason=reason)
    return [BudgetRequested(**head, budget=budget, usd=usd, attempts=attempts, renews_at=renews_at)]


def auto_grant_rule(grants: Grants | None, usd: float | None, attempts: int | None) -> str | None:
    """The rule that lets governor grant this amount by itself, or None (a person must)."""
    if grants is None:
        return None
    if usd is not None and usd > grants.auto_usd:
        return None
    if attempts is not None and attempts > grants.auto_attempts:
        return None
    if usd is None and attempts is None:
        return None
    return "grants.auto_usd" if usd is not None else "grants.auto_attempts"


def grant_budget(
    view: GoalView,
    *,
    usd: float | None,
    attempts: int | None,
    expires_s: float | None,
    reason: str,
    at: datetime,
    actor: str,
    rule: str | None = None,
) -> list[Event]:
    """``budget.granted`` answering the goal's open request (its budget)."""
    request = _open(view)
    if usd is None and attempts is None:
        usd, attempts = request.usd, request.attempts
    expires_at = at + timedelta(seconds=expires_s) if expires_s else None
    head = event_head(view, at, actor, reason=reason)
    return [
        BudgetGranted(
            **head,
            budget=request.budget,
            usd=usd,
            attempts=attempts,
            expires_at=expires_at,
            rule=rule,
        )
    ]


def decline_budget(view: GoalView, *, reason: str, at: datetime, actor: str) -> list[Event]:
    """``budget.declined`` answering the goal's open request."""
    request = _open(view)
    if request.declined:
        raise CommandRefusedError(
            "its request for more budget was declined already", goal_id=view.goal_id
        )
    return [BudgetDeclined(**event_head(view, at, actor, reason=reason), budget=request.budget)]


def expire_grants(view: GoalView, *, at: datetime) -> list[Event]:
    """``budget.expired`` for each grant on the goal's own ledger whose time has come."""
    events: list[Event] = []
    for grant in view.open_grants:
        if grant.expires_at <= at:
            head = event_head(view, at, "governor", offset=len(events) + 1)
            events.append(
                BudgetExpired(**head, budget=grant.budget, usd=grant.usd, attempts=grant.attempts)
            )
    return events


def _open(view: GoalView) -> BudgetRequest:
    request = view.budget_request
    if request is None:
        raise CommandRefusedError(
            "it is not waiting for more budget (no open budget.requested): nothing to grant "
            "or decline; `governor raise` lifts a limit at any time",
            goal_id=view.goal_id,
        )
    return request
