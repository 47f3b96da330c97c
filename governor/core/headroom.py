"""Headroom: the named predicates, the only comparisons of a budget's counter with its limit.

Rules (SPEC §5, §6, §11.4, §11.10, §12.10):
    * Each predicate reads one budget of ``governor.core.budgets`` through
      ``Budget.spent`` or ``Budget.remaining`` (its one read path): the decision rules,
      the recorders, the operator verbs, the prompts and the analysis all call them.
    * ``left`` and ``within`` mean the budget is not spent; ``full`` and ``over`` that it
      is; ``remaining`` is what is left of it, as a whole number.
    * The goal's parked time counts the park still open at ``now`` (``outage_wait_s``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Final

from governor.core.budgets import (
    ATTEMPTS,
    CONTINUATIONS,
    COST,
    MILESTONES,
    OUTAGE_WAIT,
    PLAN_RECORDS,
    REPLANS,
    RUNTIME,
    SAME_FAILURES,
    TOTAL_ATTEMPTS,
    UNCHARGED_ATTEMPTS,
    UNCHARGED_REPLANS,
)
from governor.core.view import GoalView, WorkState

NEEDS_ATTEMPTS: Final = frozenset({"milestone", "replan"})
"""Plan triggers that go on with work, so they need goal attempts left (SPEC §11.4)."""


def attempts_left_for(view: GoalView, trigger: str) -> bool:
    """A plan that goes on with work (``milestone``, ``replan``) needs charged goal attempts
    below ``max_total_attempts``: else it would have none to run (SPEC §11.4)."""
    return trigger not in NEEDS_ATTEMPTS or total_attempts_left(view)


def replans_left(view: GoalView) -> bool:
    """Charged plans are below ``max_replans``: the planner may be asked again."""
    return not REPLANS.spent(view)


def replans_remaining(view: GoalView) -> int:
    return int(REPLANS.remaining(view))


def plan_records_left(view: GoalView) -> bool:
    """The raw plan count is below ``max_plan_records``."""
    return not PLAN_RECORDS.spent(view)


def uncharged_window_full(view: GoalView) -> bool:
    """Consecutive uncharged planner failures reached ``max_uncharged_replans``."""
    return UNCHARGED_REPLANS.spent(view)


def total_attempts_left(view: GoalView) -> bool:
    """Charged attempts across the goal are below ``max_total_attempts``."""
    return not TOTAL_ATTEMPTS.spent(view)


def total_attempts_remaining(view: GoalView) -> int:
    return int(TOTAL_ATTEMPTS.remaining(view))


def item_attempts_left(view: GoalView, item: WorkState) -> bool:
    """The item's charged attempts are below its own ``max_attempts``."""
    return not ATTEMPTS.spent(view, item)


def item_remaining(view: GoalView, item: WorkState) -> int:
    return int(ATTEMPTS.remaining(view, item))


def item_uncharged_window_full(view: GoalView, item: WorkState) -> bool:
    """The item's consecutive uncharged attempts reached its ``max_uncharged_attempts``."""
    return UNCHARGED_ATTEMPTS.spent(view, item)


def runtime_within(view: GoalView) -> bool:
    """Cumulative runtime is not over ``max_runtime_s``."""
    return not RUNTIME.spent(view)


runtime_over: Final = RUNTIME.spent
"""Cumulative runtime is over ``max_runtime_s`` (the budget's own ``spent``)."""


def cost_within(view: GoalView) -> bool:
    """Cumulative cost is not over ``max_cost_usd``."""
    return not COST.spent(view)


cost_over: Final = COST.spent
"""Cumulative cost is over ``max_cost_usd`` (the budget's own ``spent``)."""


def outage_wait_s(view: GoalView, now: datetime) -> float:
    """Seconds the goal has waited parked on failing upstreams, the open park up to ``now``."""
    parked = view.parked
    open_s = max((now - parked.at).total_seconds(), 0.0) if parked is not None else 0.0
    return view.outage_wait_s + open_s


def outage_wait_over(view: GoalView, now: datetime) -> bool:
    """The goal's parked time is over ``max_outage_wait_s``."""
    return OUTAGE_WAIT.is_spent(outage_wait_s(view, now), OUTAGE_WAIT.limit(view))


def continuations_left(view: GoalView, item: WorkState | None = None) -> bool:
    """The run in flight (the item's attempt, else the latest plan) may be continued again."""
    return not CONTINUATIONS.spent(view, item)


def repeats_itself(view: GoalView, item: WorkState | None = None) -> bool:
    """The item's (else the planner's) last ``max_same_failures`` charged failures share
    one signature: more tries will not help (SPEC §12.10)."""
    return SAME_FAILURES.spent(view, item)


def milestones_left(view: GoalView) -> bool:
    """Fewer than ``max_milestones`` plans have been worked through: the planner may
    propose another one instead of saying ``complete``."""
    return not MILESTONES.spent(view)


def must_say_complete(view: GoalView) -> bool:
    """The planner is asked at a milestone — the active plan completed: its items all
    settled, one at least accepted (goal rule 6) — and ``max_milestones`` plans have
    completed: it may only say ``complete`` (SPEC §5: "the milestone prompt allows only
    complete"). A first plan, or a replan around exhausted items, is no milestone prompt:
    it may still apply (with ``max_milestones`` 0 the first plan applies, the next one
    completes)."""
    active = view.active_plan
    at_milestone = (
        active is not None
        and active.status == "applied"
        and not active.open_items
        and active.accepted_items > 0
    )
    return at_milestone and not milestones_left(view)
