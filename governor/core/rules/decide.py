"""The decision: ``decide(view, now)``, the goal rules over the work item rules, then the
fleet rules and the budget stops, with the full ledger.

Rules (each set one table whose rows are the code that runs; first match wins):
    work.*     each item of the goal (``governor.core.rules.work``, SPEC §6.1)
    goal.1-12  the goal over the active plan's item decisions (``governor.core.rules.goal``,
               SPEC §6.2)
    fleet.*    the shared health of the upstreams, over the goal rule that fired
               (``governor.core.rules.fleet``, SPEC §11.10): park, wait parked, resume
    budget.*   an open request for more budget (``governor.core.rules.budget``, SPEC §13.6-13.7)

Wherever a rule says ``ready/plan``, charged replans must be below ``max_replans`` and
the raw plan count below ``max_plan_records``; otherwise ``budget_exhausted`` naming
``replans`` (first) or ``plan_records``. Replanning to go on with work (rules 6 and 11)
also needs charged goal attempts below ``max_total_attempts``, else ``budget_exhausted``
naming ``total_attempts`` before the others (SPEC §11.4). Rules 6-12 look at the active
plan's items.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from operator import attrgetter
from typing import Final

from governor.core.decision import Decision, WorkDecision
from governor.core.ledger import (
    NO_LEDGER,
    Ledger,
    attempt_ledger,
    laid_out,
    replan_ledger,
    work_ledger,
)
from governor.core.rules.budget import budget_stop
from governor.core.rules.fleet import Upstreams, fleet, refused_by_window
from governor.core.rules.goal import GOAL_RULES, Ctx
from governor.core.rules.work import decide_work
from governor.core.view import GoalView

_status: Final = attrgetter("status")
"""A ``WorkDecision``'s status."""


def decide(
    view: GoalView,
    now: datetime,
    *,
    with_ledger: bool = True,
    upstreams: Upstreams | None = None,
) -> Decision:
    """The goal's decision (SPEC §6.2), with its item decisions and the full ledger,
    taken from scratch: every item decided afresh, every ledger row laid out. This is
    the definition of the rules; ``governor.core.rules.decider.Decider`` takes the same
    decision again after each event deciding only what the event changed (a property
    test holds the two equal after every event).

    ``with_ledger=False`` skips the ledger (``NO_LEDGER``) and every item outside the
    active plan: the same status, action and reason, for callers that only act on them.
    ``upstreams`` is the shared health of the upstreams the goal's profiles reach
    (profile name -> record), an input like ``now`` (``governor.core.rules.fleet``); without
    it only a recorded park holds the goal. The view is only read.
    """
    work = view.work
    active_ids = active_item_ids(view)
    if not with_ledger:
        items = tuple(decide_work(view, work[work_id], now) for work_id in active_ids)
        return goal_decision(view, now, NO_LEDGER, items, upstreams)
    decisions = {work_id: decide_work(view, item, now) for work_id, item in work.items()}
    rows = {
        work_id: work_ledger(view, work[work_id], taken.status, taken.next_action)
        for work_id, taken in decisions.items()
    }
    ledger = Ledger(
        replans=replan_ledger(view),
        attempts=attempt_ledger(view),
        work=laid_out(rows),
        runtime_s=view.runtime_s,
        cost_usd=view.cost_usd,
    )
    items = tuple(decisions[work_id] for work_id in active_ids)
    return goal_decision(view, now, ledger, items, upstreams)


def active_item_ids(view: GoalView) -> Sequence[str]:
    """The ids of the active plan's items, in creation order (none without one)."""
    active = view.active_plan
    return view.items_by_plan.get(active.plan_id, ()) if active is not None else ()


def goal_decision(
    view: GoalView,
    now: datetime,
    ledger: Ledger,
    items: tuple[WorkDecision, ...],
    upstreams: Upstreams | None,
) -> Decision:
    """The first rule of ``GOAL_RULES`` that answers over the active plan's item decisions
    ``items``, in order; then the fleet rules and the budget stops over it."""
    statuses = frozenset(map(_status, items))
    ctx = Ctx(view, now, ledger, items, statuses)
    for rule in GOAL_RULES:  # pragma: no branch - the fallback rule always decides
        decision = rule(ctx)
        if decision is not None:
            break
    assert decision is not None, "the fallback rule always decides"
    if view.parked is not None or upstreams or refused_by_window(view):
        # something known to fail, parked, or a spent usage window
        decision = fleet(view, now, decision, upstreams)
    if view.budget_request is not None:  # a budget stop that asks (SPEC §13.6, §13.7)
        decision = budget_stop(view, now, decision)
    return decision
