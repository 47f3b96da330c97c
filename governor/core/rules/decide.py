"""Goal decisions: SPEC §6.2 as one ordered table of named rules, with the full ledger.

Rules (first match wins; work item rules live in ``governor.core.rules.work``):
    goal.1-7   the goal's own state, its limits, its plans, milestones and reviews
               (``governor.core.rules.goal``, which words each rule)
    goal.8-12  running, waiting on and replanning around the active plan's items
               (``governor.core.rules.goal``)
    fleet.*    the shared health of the upstreams, over the rule that fired
               (``governor.core.rules.fleet``): park, wait parked, resume

Wherever a rule says ``ready/plan``, charged replans must be below ``max_replans`` and
the raw plan count below ``max_plan_records``; otherwise ``budget_exhausted`` naming
``replans`` (first) or ``plan_records``. Replanning to go on with work (rules 6 and 11)
also needs charged goal attempts below ``max_total_attempts``, else ``budget_exhausted``
naming ``total_attempts`` before the others (SPEC §11.4). Rules 6-11 look at the active
plan's items.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from operator import attrgetter
from typing import Final

from governor.core.decision import Decision, WorkDecision
from governor.core.headroom import (
    cost_within,
    runtime_within,
)
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
from governor.core.rules.goal import (
    RULES_1_TO_7,
    RULES_8_TO_12,
    SETTLED,
    Ctx,
    dispatch_on,
    running_on,
)
from governor.core.rules.work import decide_work
from governor.core.view import GoalView

_status: Final = attrgetter("status")
"""A ``WorkDecision``'s status."""


GOAL_RULES: Final[tuple[Callable[[Ctx], Decision | None], ...]] = (*RULES_1_TO_7, *RULES_8_TO_12)
"""The goal rules of SPEC §6.2, in order; the first that returns a decision wins."""

AFTER_DISPATCH: Final = GOAL_RULES[8:]
"""Rules 9-12: what ``decide`` scans once rules 1-8 passed."""

ITEM_RULES: Final = GOAL_RULES[5:]
"""Rules 6-12, on the active plan's items: all ``decide`` runs while the latest plan is
the applied one and the goal is neither over nor past a limit (``goal_rules_pass``)."""


def goal_rules_pass(view: GoalView) -> bool:
    """Rules 1-5 pass over the view (each returns ``None``), checked in one go.

    Rule 1: not cancelled, not completed. Rule 2: runtime and cost within their limits.
    Rules 3 and 4 act on a latest plan that is proposed, rejected, failed or requested:
    an applied one passes both. Rule 5: there is an active plan.
    """
    latest = view.latest_plan
    return (
        latest is not None
        and latest.status == "applied"
        and view.active_plan is not None
        and not view.cancelled
        and not view.completed
        and runtime_within(view)
        and cost_within(view)
    )


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
    """The goal rules over the active plan's item decisions ``items``, in order; then
    the fleet rules over the one that fired."""
    statuses = frozenset(map(_status, items))
    decision, rules = None, GOAL_RULES
    if goal_rules_pass(view):
        rules = ITEM_RULES
        if "in_review" not in statuses and not ("succeeded" in statuses and statuses <= SETTLED):
            # rules 6 and 7 pass too (``_milestone``, ``_review``): the usual outcomes of
            # rules 8 and 9 without the rules' context (one decision after every event)
            decision = dispatch_on(view, ledger, items, statuses)
            if decision is None and "running" in statuses:
                decision = running_on(ledger, items)
            rules = AFTER_DISPATCH
    if decision is None:
        ctx = Ctx(view=view, now=now, ledger=ledger, items=items, statuses=statuses)
        for rule in rules:  # pragma: no branch - the fallback rule always decides
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
