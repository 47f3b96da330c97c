"""The hot path's one idiom: budget predicates read in one call each.

A replay takes a decision after every event, and each decision reads a few budgets:
whether runtime and cost are within their limits (goal rules 1-5, checked in one go),
whether the goal has attempts left and how many (rule 8, the attempt ledger), and each
touched item's attempts (its rules and its ledger row). ``Budget.spent`` and
``Budget.remaining`` are the one read path; here the six predicates the decider takes on
every event read the same limit and counter inline, in one Python call instead of four
(``headroom`` binds them; ``tests/core/test_budgets.py`` holds each equal to its row,
below, at and above every limit, and without one).

The figure that keeps this module: fold + decide over the first 50,000 events of
``bench/out/replay-json-200000.jsonl`` ran at about 0.68x of main's speed with every
predicate through ``Budget.spent`` (docs/performance.md, "The readable core").
"""

from __future__ import annotations

import math
from collections.abc import Callable
from operator import attrgetter

from governor.core.budgets import Budget
from governor.core.view import GoalView, WorkState


def goal_left(budget: Budget, charged: tuple[str, str] | None = None) -> Callable[[GoalView], bool]:
    """``not budget.spent(view)`` for a budget of the goal, in one call. ``charged`` names
    the view's raw count and its uncharged part when the counter is their difference
    (``charged_attempts``): both read inline."""
    assert budget.scope == "goal", f"{budget.name} is not kept per goal"
    limit_of, over = budget.limit_getter(), budget.over
    if charged is not None:
        raw, less = attrgetter(charged[0]), attrgetter(charged[1])

        def charged_left(view: GoalView) -> bool:
            limit = limit_of(view.policy)
            if limit is None:
                return True
            count = raw(view) - less(view)
            return not (count > limit if over else count >= limit)

        return charged_left
    get = budget.getter(on_item=False)
    assert get is not None, f"{budget.name} has no counter on the view"

    def left(view: GoalView) -> bool:
        limit = limit_of(view.policy)
        if limit is None:
            return True
        count = get(view)
        return not (count > limit if over else count >= limit)

    return left


def goal_remaining(budget: Budget, charged: tuple[str, str]) -> Callable[[GoalView], int]:
    """``int(budget.remaining(view))`` for a budget of the goal whose counter is the
    difference ``charged`` names (see ``goal_left``), in one call."""
    assert budget.scope == "goal", f"{budget.name} is not kept per goal"
    limit_of, raw, less = budget.limit_getter(), attrgetter(charged[0]), attrgetter(charged[1])

    def remaining(view: GoalView) -> int:
        limit = limit_of(view.policy)
        if limit is None:
            return int(math.inf)  # OverflowError, as ``int(Budget.remaining)``
        return int(max(0, limit - (raw(view) - less(view))))

    return remaining


def _item_counter(budget: Budget) -> Callable[[object], float]:
    get = budget.getter(on_item=True)
    assert budget.scope == "item", f"{budget.name} is not kept per item"
    assert get is not None, f"{budget.name} has no counter on the item"
    return get


def item_left(budget: Budget) -> Callable[[GoalView, WorkState], bool]:
    """``not budget.spent(view, item)`` for a budget kept per item, in one call."""
    limit_of, over, get = budget.limit_getter(), budget.over, _item_counter(budget)

    def left(view: GoalView, item: WorkState) -> bool:
        limit = limit_of(item)
        if limit is None:
            return True
        count = get(item)
        return not (count > limit if over else count >= limit)

    return left


def item_remaining(budget: Budget) -> Callable[[GoalView, WorkState], int]:
    """``int(budget.remaining(view, item))`` for a budget kept per item, in one call."""
    limit_of, get = budget.limit_getter(), _item_counter(budget)

    def remaining(view: GoalView, item: WorkState) -> int:
        limit = limit_of(item)
        if limit is None:
            return int(math.inf)  # OverflowError, as ``int(Budget.remaining)``
        return int(max(0, limit - get(item)))

    return remaining
