"""Budget stops that ask: what an open request for more budget does to a goal's decision
(SPEC §13.6 parking on a spent pool, §13.7 grants).

Rules (a layer over the goal rules and the fleet rules; first match wins):
    budget.0 no open request (``budget.requested`` not yet granted), or a stop that is not
             the request's (succeeded, cancelled, another budget spent): the decision stands.
    budget.1 the request is a pool's, and the pool has renewed since (``now`` at or past
             ``renews_at``): the request lapses and the decision stands — the goal goes on
             by itself, and its next call reserves in the new period.
    budget.2 the request is a pool's that renews, and the goal's next step would call an
             agent: ``waiting`` on ``budget`` until the renewal, uncharged; calls already
             running finish (their decisions stand).
    budget.3 the request cannot be met by time (a ``total`` pool, the goal's own budget):
             ``blocked`` on ``operator``, the request as the question — a person grants
             (``governor grant``) or declines it.

A history without ``budget.requested`` never reaches this layer, so it decides as before.
"""

from __future__ import annotations

from datetime import datetime
from typing import Final

from governor.core.decision import Decision
from governor.core.text import stamp
from governor.core.view import BudgetRequest, GoalView

PARKS: Final = "budget.2"
"""The rule of a goal parked on a spent pool until it renews (a grant moves it sooner)."""
ASKS: Final = "budget.3"
"""The rule of a goal that only a person's grant moves."""


def budget_stop(view: GoalView, now: datetime, decision: Decision) -> Decision:
    """``decision`` with the goal's open budget request applied (rules above)."""
    request = view.budget_request
    if request is None or decision.status in ("succeeded", "cancelled"):
        return decision
    if not request.budget.startswith("pool:"):  # the goal's own ledger: only its stop
        mine = decision.status == "budget_exhausted" and decision.exhausted == request.budget
        return _ask(view, decision, request) if mine else decision
    lapsed = request.renews_at is not None and now >= request.renews_at  # budget.1
    calls = decision.next_action in ("plan", "run") and decision.status != "budget_exhausted"
    if lapsed or not calls:
        return decision
    if request.renews_at is None:
        return _ask(view, decision, request)
    return decision._replace(  # budget.2
        status="waiting",
        next_action="wait",
        reason=f"{request.reason}; goes on by itself at {stamp(request.renews_at)}"
        + (
            " (the request was declined)"
            if request.declined
            else f", or now with {grant_command(view, request)}"
        ),
        rule=PARKS,
        blocked_on="budget",
        not_before=request.renews_at,
        exhausted=None,
    )


def _ask(view: GoalView, decision: Decision, request: BudgetRequest) -> Decision:
    declined = " (declined; a later grant still lets it go on)" if request.declined else ""
    answer = (
        f"; {grant_command(view, request)} grants it, "
        f"`governor decline {view.goal_id} --reason REASON` declines it"
    )
    return decision._replace(
        status="blocked",
        next_action="none",
        reason=f"waiting for a person to grant more budget: {request.reason}{declined}{answer}",
        rule=ASKS,
        blocked_on="operator",
        not_before=None,
        exhausted=None,
    )


def asked_amount(request: BudgetRequest) -> str:
    """The amount a request asks for, as the options of ``governor grant``."""
    return " ".join(amount_words(request.usd, request.attempts))


def amount_words(usd: float | None, attempts: int | None) -> tuple[str, ...]:
    """``--usd X`` and/or ``--attempts N`` for ``governor grant``, each figure exact."""
    words: tuple[str, ...] = ()
    if usd is not None:
        words += ("--usd", str(int(usd)) if float(usd).is_integer() else repr(float(usd)))
    if attempts is not None:
        words += ("--attempts", str(attempts))
    return words


def grant_command(view: GoalView, request: BudgetRequest) -> str:
    """The runnable command that grants the request."""
    return f"`governor grant {view.goal_id} {asked_amount(request)} --reason REASON`"
