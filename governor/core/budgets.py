"""Budgets: every limit a goal spends, the counter it bounds and the stop it names, in one table.

Rules (SPEC §5, §6):
    * ``BUDGETS`` is the one list of budgets. Each row names the policy field that sets
      its limit, whether it is kept per goal, per work item or per run, whether it
      counts whole numbers, the counter it bounds and the stop spending it causes. The
      ``budget.raised`` ledgers, what ``raise`` accepts, the what-if key and explain's
      search are all derived from it.
    * A budget is spent when its counter *reaches* its limit, except runtime and cost,
      which are spent only when *over* it ("over its limit" is strictly greater). A
      limit of ``None`` (no cost limit) is never spent.
    * ``charged = raw - uncharged``; ``remaining = max(0, limit - charged)``. A work
      item's limits are its own (frozen from the policy when it was created, raised per
      item); a goal's come from the policy.
    * The named predicates at the end (``replans_left``, ``uncharged_window_full``, …)
      are the only comparisons of a counter with its limit: the decision rules, the
      recorders, the operator verbs, the prompts and the analysis all call them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from operator import attrgetter
from typing import TYPE_CHECKING, Final, Literal

if TYPE_CHECKING:
    from datetime import datetime

    from governor.core.policy import Policy
    from governor.core.view import GoalView, WorkState

Scope = Literal["goal", "item", "run"]
"""Where a budget is kept: the goal's policy, each work item, or each planner or worker run."""
Counter = Callable[["GoalView", "WorkState | None"], float]
"""A budget's counter: the view, and the work item for per-item and per-run budgets
(``None`` for a per-run budget means the goal's latest plan)."""


class _Read:
    """A counter that is one attribute: of the work item (``on_item``), else of the view.

    The budget predicates read it without calling it (``Budget.spent``, ``remaining``:
    a few are taken after every event of a replay); called, it is an ordinary counter.
    """

    __slots__ = ("attr", "get", "on_item")

    def __init__(self, attr: str, *, on_item: bool = False) -> None:
        self.attr, self.on_item = attr, on_item
        self.get: Callable[[object], float] = attrgetter(attr)

    def __call__(self, view: GoalView, item: WorkState | None) -> float:
        return self.get(_item(item) if self.on_item else view)


def charged_replans(view: GoalView, _item: WorkState | None = None) -> int:
    """Planner invocations that count: every plan but those that failed uncharged."""
    return view.plans_used - view.plans_uncharged


def charged_attempts(view: GoalView, _item: WorkState | None = None) -> int:
    """Worker attempts across the goal that count: every attempt but the uncharged failures."""
    return view.attempts_used - view.attempts_uncharged


def _item(item: WorkState | None) -> WorkState:
    assert item is not None, "a per-item budget is counted on a work item"
    return item


def _continuations(view: GoalView, item: WorkState | None) -> int:
    if item is not None:
        return item.continuations
    return view.latest_plan.continuations if view.latest_plan is not None else 0


def _same_failures(view: GoalView, item: WorkState | None) -> int:
    """The item's charged failures in a row with one signature, else the planner's."""
    return item.same_failures if item is not None else view.same_plan_failures


@dataclass(frozen=True, slots=True)
class Budget:
    """One budget: its limit, its counter and what spending it stops."""

    name: str
    """Its one name: the ``budget.raised`` ledger for the raisable ones."""
    field: str
    """The policy field holding its limit (a work item holds its own copy of per-item ones)."""
    scope: Scope
    whole: bool
    """Counts whole numbers (a raise must be an integer)."""
    counter: str
    """What it bounds, in words (as the ledger of ``replay --json`` names it)."""
    used: Counter
    stop: str
    """What a decision names when it is spent: the ``exhausted`` ledger, ``upstream``
    (``blocked_on``), ``lost`` (the run is finished as lost), ``complete`` (the planner
    may only say ``complete``) or ``same_failures`` (an item exhausted, the planner's goal
    blocked on ``work``: SPEC §12.10)."""
    raisable: bool = True
    """``budget.raised`` may lift it (its name is then a ledger)."""
    over: bool = False
    """Spent only when strictly over the limit (runtime, cost), not when it reaches it."""
    per: int = 1
    """For a budget that is not whole: the resolution a suggested limit is rounded up to
    (1: whole seconds; 100: cents)."""

    _limit_of: Callable[[object], float | None] = dataclass_field(
        init=False, repr=False, compare=False, hash=False
    )
    """Reads the limit off its holder (the policy, or the work item): one is read per
    budget predicate, and a decision is taken after every event of a replay."""
    _per_item: bool = dataclass_field(init=False, repr=False, compare=False, hash=False)
    _read: _Read | None = dataclass_field(init=False, repr=False, compare=False, hash=False)
    """The counter when it is one attribute (``_Read``): read without a call."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "_limit_of", attrgetter(self.field))
        object.__setattr__(self, "_per_item", self.scope == "item")
        object.__setattr__(self, "_read", self.used if isinstance(self.used, _Read) else None)

    def _holder(self, view: GoalView, item: WorkState | None) -> object:
        if not self._per_item:
            return view.policy
        assert item is not None, "a per-item budget is counted on a work item"
        return item

    def getter(self, on_item: bool) -> Callable[[object], float] | None:
        """Its counter's getter when the counter is one attribute of the work item
        (``on_item``) or of the view (else None: call ``used``)."""
        read = self._read
        return read.get if read is not None and read.on_item == on_item else None

    def limit(self, view: GoalView, item: WorkState | None = None) -> float | None:
        """Its limit now: the item's own for a per-item budget, else the policy's."""
        return self._limit_of(self._holder(view, item))

    def is_spent(self, used: float, limit: float | None) -> bool:
        """Whether ``used`` spends ``limit`` (reached, or for runtime and cost: over it)."""
        if limit is None:
            return False
        return used > limit if self.over else used >= limit

    def spent(self, view: GoalView, item: WorkState | None = None) -> bool:
        # ``limit`` and ``is_spent`` inline (a few of these per decision)
        if self._per_item:
            assert item is not None, "a per-item budget is counted on a work item"
            limit = self._limit_of(item)
        else:
            limit = self._limit_of(view.policy)
        if limit is None:
            return False
        read = self._read  # the counter's attribute read inline, when it is one
        used = self.used(view, item) if read is None else read.get(item if read.on_item else view)
        return used > limit if self.over else used >= limit

    def remaining(self, view: GoalView, item: WorkState | None = None) -> float:
        if self._per_item:
            assert item is not None, "a per-item budget is counted on a work item"
            limit = self._limit_of(item)
        else:
            limit = self._limit_of(view.policy)
        if limit is None:
            return math.inf
        read = self._read
        used = self.used(view, item) if read is None else read.get(item if read.on_item else view)
        return max(0, limit - used)

    def bucket(self, limit: float | None, demand: float) -> object:
        """The limit as far as a history that asked at most ``demand`` of it can tell.

        Every limit above the demand behaves alike: it is never spent.
        """
        if self.over:
            return limit if limit is not None and limit < demand else None
        return limit if limit is None else min(limit, demand + 1)

    def candidates(self, limit: float | None, demand: float, steps: tuple[int, ...]) -> list[float]:
        """Raised limits to try, smallest first (none for a budget without a limit)."""
        if limit is None:
            return []
        if self.whole:
            return [limit + step for step in steps]
        return [math.ceil(demand * self.per + 1) / self.per]


REPLANS: Final = Budget(
    "replans", "max_replans", "goal", True, "replans.charged", charged_replans, "replans"
)
UNCHARGED_REPLANS: Final = Budget(
    "uncharged_replans",
    "max_uncharged_replans",
    "goal",
    True,
    "replans.consecutive_uncharged",
    _Read("consecutive_uncharged_plans"),
    "upstream",
)
PLAN_RECORDS: Final = Budget(
    "plan_records",
    "max_plan_records",
    "goal",
    True,
    "replans.used",
    _Read("plans_used"),
    "plan_records",
)
TOTAL_ATTEMPTS: Final = Budget(
    "total_attempts",
    "max_total_attempts",
    "goal",
    True,
    "attempts.charged",
    charged_attempts,
    "total_attempts",
)
ATTEMPTS: Final = Budget(
    "attempts",
    "max_attempts",
    "item",
    True,
    "work.charged_attempts",
    _Read("charged_attempts", on_item=True),
    "attempts",
)
UNCHARGED_ATTEMPTS: Final = Budget(
    "uncharged_attempts",
    "max_uncharged_attempts",
    "item",
    True,
    "work.consecutive_uncharged",
    _Read("consecutive_uncharged", on_item=True),
    "upstream",
)
RUNTIME: Final = Budget(
    "runtime",
    "max_runtime_s",
    "goal",
    False,
    "runtime_s",
    _Read("runtime_s"),
    "runtime",
    over=True,
)
COST: Final = Budget(
    "cost",
    "max_cost_usd",
    "goal",
    False,
    "cost_usd",
    _Read("cost_usd"),
    "cost",
    over=True,
    per=100,
)
OUTAGE_WAIT: Final = Budget(
    "outage_wait",
    "max_outage_wait_s",
    "goal",
    False,
    "outage_wait_s",
    _Read("outage_wait_s"),
    "outage_wait",
    over=True,
)
"""Time parked on failing upstreams (SPEC §11.10). Its counter holds the parks that ended;
``outage_wait_over`` adds the one still open at ``now``."""
CONTINUATIONS: Final = Budget(
    "continuations",
    "max_continuations",
    "run",
    True,
    "work.continuations",
    _continuations,
    "lost",
    raisable=False,
)
MILESTONES: Final = Budget(
    "milestones",
    "max_milestones",
    "goal",
    True,
    "applied plans that completed (items all settled, one accepted)",
    _Read("milestones"),
    "complete",
    raisable=False,
)

SAME_FAILURES: Final = Budget(
    "same_failures",
    "max_same_failures",
    "run",
    True,
    "charged failures in a row with one signature (of an item, or of the planner)",
    _same_failures,
    "same_failures",
    raisable=False,
)
"""The same failure again (SPEC §12.10): its limit is the policy's (``None``: no limit), its
counter the item's run or, without an item, the planner's. Not raisable: ``raise`` does not
clear the stop; ``work retry`` or ``resume`` with a reason does."""

BUDGETS: Final[tuple[Budget, ...]] = (
    REPLANS,
    UNCHARGED_REPLANS,
    PLAN_RECORDS,
    ATTEMPTS,
    UNCHARGED_ATTEMPTS,
    TOTAL_ATTEMPTS,
    CONTINUATIONS,
    RUNTIME,
    COST,
    OUTAGE_WAIT,
    MILESTONES,
    SAME_FAILURES,
)
"""Every budget; explain tries them in this order (the first of equally small changes wins)."""

BY_NAME: Final[dict[str, Budget]] = {b.name: b for b in BUDGETS}
BY_FIELD: Final[dict[str, Budget]] = {b.field: b for b in BUDGETS}
LEDGERS: Final[tuple[str, ...]] = tuple(b.name for b in BUDGETS if b.raisable)
"""The ledgers ``budget.raised`` may name (``governor.core.policy.LedgerName``)."""


def item_limits(policy: Policy) -> dict[str, int]:
    """The per-item limits a new work item takes from the policy (``work.created`` freezes them)."""
    return {b.field: getattr(policy, b.field) for b in BUDGETS if b.scope == "item"}


def ledger(name: str) -> Budget:
    """The raisable budget a ``budget.raised`` ledger names."""
    budget = BY_NAME[name]
    assert budget.raisable, f"{name} is not raised by budget.raised"
    return budget


# --- the named predicates: the only comparisons of a counter with its limit -------------


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


def _left_of_goal(
    budget: Budget, charged: tuple[str, str] | None = None
) -> Callable[[GoalView], bool]:
    """``not budget.spent(view)`` for a budget of the goal, in one call (its limit and
    counter read as ``Budget.spent`` reads them): a few of these predicates are taken
    after every event of a replay (``tests/core/test_budgets.py`` holds them equal).
    ``charged`` names the view's raw count and its uncharged part when the budget's
    counter is their difference (``charged_attempts``): read inline."""
    limit_of, over, used, read = budget._limit_of, budget.over, budget.used, budget._read
    assert not budget._per_item, f"{budget.name} is kept per item"
    if charged is not None:
        raw, less = attrgetter(charged[0]), attrgetter(charged[1])

        def charged_left(view: GoalView) -> bool:
            limit = limit_of(view.policy)
            if limit is None:
                return True
            count = raw(view) - less(view)
            return not (count > limit if over else count >= limit)

        return charged_left
    if read is not None:
        get = read.get

        def left(view: GoalView) -> bool:
            limit = limit_of(view.policy)
            if limit is None:
                return True
            count = get(view)
            return not (count > limit if over else count >= limit)

        return left

    def counted_left(view: GoalView) -> bool:
        limit = limit_of(view.policy)
        if limit is None:
            return True
        count = used(view, None)
        return not (count > limit if over else count >= limit)

    return counted_left


def _remaining_of_goal(budget: Budget, charged: tuple[str, str]) -> Callable[[GoalView], int]:
    """``int(budget.remaining(view))`` for a budget of the goal whose counter is the
    difference ``charged`` names (see ``_left_of_goal``), in one call."""
    limit_of, raw, less = budget._limit_of, attrgetter(charged[0]), attrgetter(charged[1])
    assert not budget._per_item, f"{budget.name} is kept per item"

    def remaining(view: GoalView) -> int:
        limit = limit_of(view.policy)
        if limit is None:
            return int(math.inf)  # OverflowError, as ``int(Budget.remaining)``
        return int(max(0, limit - (raw(view) - less(view))))

    return remaining


def _item_counter(budget: Budget) -> Callable[[object], float]:
    """The getter of a budget counted on one attribute of the item (the one-call predicates')."""
    read = budget._read
    assert budget._per_item, f"{budget.name} is kept per goal"
    assert read is not None, f"{budget.name} is not counted on one attribute"
    assert read.on_item, f"{budget.name} is not counted on the item"
    return read.get


def _item_left(budget: Budget) -> Callable[[GoalView, WorkState], bool]:
    """``not budget.spent(view, item)`` for a budget counted on the item, in one call."""
    limit_of, over, get = budget._limit_of, budget.over, _item_counter(budget)

    def left(view: GoalView, item: WorkState) -> bool:
        limit = limit_of(item)
        if limit is None:
            return True
        count = get(item)
        return not (count > limit if over else count >= limit)

    return left


def _item_remaining_of(budget: Budget) -> Callable[[GoalView, WorkState], int]:
    """``int(budget.remaining(view, item))`` for a budget counted on the item, in one call."""
    limit_of, get = budget._limit_of, _item_counter(budget)

    def remaining(view: GoalView, item: WorkState) -> int:
        limit = limit_of(item)
        if limit is None:
            return int(math.inf)  # OverflowError, as ``int(Budget.remaining)``
        return int(max(0, limit - get(item)))

    return remaining


_CHARGED_ATTEMPTS: Final = ("attempts_used", "attempts_uncharged")
"""``charged_attempts``: the view's attempts less its uncharged ones."""
total_attempts_left: Final = _left_of_goal(TOTAL_ATTEMPTS, _CHARGED_ATTEMPTS)
"""Charged attempts across the goal are below ``max_total_attempts``."""
total_attempts_remaining: Final = _remaining_of_goal(TOTAL_ATTEMPTS, _CHARGED_ATTEMPTS)
item_attempts_left: Final = _item_left(ATTEMPTS)
"""The item's charged attempts are below its own ``max_attempts``."""
item_remaining: Final = _item_remaining_of(ATTEMPTS)
runtime_within: Final = _left_of_goal(RUNTIME)
"""Cumulative runtime is not over ``max_runtime_s`` (``not runtime_over``)."""
cost_within: Final = _left_of_goal(COST)
"""Cumulative cost is not over ``max_cost_usd`` (``not cost_over``)."""


def item_uncharged_window_full(view: GoalView, item: WorkState) -> bool:
    """The item's consecutive uncharged attempts reached its ``max_uncharged_attempts``."""
    return UNCHARGED_ATTEMPTS.spent(view, item)


def runtime_over(view: GoalView) -> bool:
    return not runtime_within(view)


def cost_over(view: GoalView) -> bool:
    return not cost_within(view)


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
