"""Budgets: every limit a goal spends, the counter it bounds and the stop it names, in one table.

Rules (SPEC §5, §6):
    * ``BUDGETS`` is the one list of budgets. Each row names the policy field that sets
      its limit, whether it is kept per goal, per work item or per run, whether it
      counts whole numbers, the counter it bounds and the stop spending it causes. The
      ``budget.raised`` ledgers, what ``raise`` accepts, the what-if key and explain's
      search are all derived from it.
    * Data only: every counter is one attribute the fold keeps, of the work item
      (``on_item``) or of the goal view (``on_view``); a per-run budget names both (the
      item's attempt in flight, else the planner's run). No core module is imported.
    * A budget is spent when its counter *reaches* its limit, except runtime and cost,
      which are spent only when *over* it ("over its limit" is strictly greater). A
      limit of ``None`` (no cost limit) is never spent.
    * ``charged = raw - uncharged``; ``remaining = max(0, limit - charged)``. A work
      item's limits are its own (frozen from the policy when it was created, raised per
      item); a goal's come from the policy.
    * The named predicates (``replans_left``, ``uncharged_window_full``, …) are the only
      comparisons of a counter with its limit: ``governor.core.headroom``, above the view.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from operator import attrgetter
from typing import TYPE_CHECKING, Final, Literal, Protocol, TypeVar

if TYPE_CHECKING:
    from governor.core.policy import Policy

Scope = Literal["goal", "item", "run"]
"""Where a budget is kept: the goal's policy, each work item, or each planner or worker run."""


class Counted(Protocol):
    """What a budget reads off the goal view (``GoalView``): its policy, and attributes."""

    @property
    def policy(self) -> Policy: ...


_T_co = TypeVar("_T_co", covariant=True)


class _Read(Protocol[_T_co]):
    """A budget's read of the view (and the work item, where it is counted there)."""

    def __call__(self, view: Counted, item: object | None = None, /) -> _T_co: ...


def _reads(
    scope: Scope,
    view_get: Callable[[object], float] | None,
    item_get: Callable[[object], float] | None,
    limit_of: Callable[[object], float | None],
    compare: Callable[[float, float], bool],
) -> tuple[_Read[float], _Read[float | None], _Read[bool]]:
    """A budget's ``used``, ``limit`` and ``spent``, read as its scope keeps them: a goal's
    counter off the view, a work item's off the item, a run's off the item when one is
    given, else off the view; a work item's limit off the item, any other's off the policy.
    ``spent`` is ``compare`` over the two, read in the same call."""
    if scope == "item":
        assert item_get is not None, "a per-item budget is counted on the item"
        on_item = item_get

        def used(view: Counted, item: object | None = None) -> float:
            assert item is not None, "a per-item budget is counted on a work item"
            return on_item(item)

        def limit(view: Counted, item: object | None = None) -> float | None:
            assert item is not None, "a per-item budget is counted on a work item"
            return limit_of(item)

        def spent(view: Counted, item: object | None = None) -> bool:
            assert item is not None, "a per-item budget is counted on a work item"
            bound = limit_of(item)
            return bound is not None and compare(on_item(item), bound)

        return used, limit, spent
    assert view_get is not None, "a goal's or a run's budget is counted on the view"
    on_view = view_get

    def of_policy(view: Counted, item: object | None = None) -> float | None:
        return limit_of(view.policy)

    if item_get is None:  # a goal's

        def used_by_goal(view: Counted, item: object | None = None) -> float:
            return on_view(view)

        def spent_by_goal(view: Counted, item: object | None = None) -> bool:
            bound = limit_of(view.policy)
            return bound is not None and compare(on_view(view), bound)

        return used_by_goal, of_policy, spent_by_goal
    on_run = item_get  # a run's: the item's attempt in flight, else the planner's

    def used_by_run(view: Counted, item: object | None = None) -> float:
        return on_run(item) if item is not None else on_view(view)

    def spent_by_run(view: Counted, item: object | None = None) -> bool:
        bound = limit_of(view.policy)
        used = on_run(item) if item is not None else on_view(view)
        return bound is not None and compare(used, bound)

    return used_by_run, of_policy, spent_by_run


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
    stop: str
    """What a decision names when it is spent: the ``exhausted`` ledger, ``upstream``,
    ``lost``, ``complete`` or ``same_failures`` (SPEC §12.10)."""
    on_view: str | None = None
    """The view attribute holding its counter (a per-item budget has none)."""
    on_item: str | None = None
    """The work item attribute holding its counter (a per-goal budget has none)."""
    raisable: bool = True
    """``budget.raised`` may lift it (its name is then a ledger)."""
    over: bool = False
    """Spent only when strictly over the limit (runtime, cost), not when it reaches it."""
    per: int = 1
    """Not whole: what a suggested limit is rounded up to (1: seconds; 100: cents)."""

    spent: _Read[bool] = dataclass_field(init=False, repr=False, compare=False, hash=False)
    """``spent(view, item=None)``: whether its counter spends its limit (reached, or for
    runtime and cost: over it; a limit of ``None`` never is). Bound once per budget, by
    its scope, around its one comparison (``_compare``), its counter and its limit read
    in the same call: the rules take it after every event."""
    used: _Read[float] = dataclass_field(init=False, repr=False, compare=False, hash=False)
    """``used(view, item=None)``: its counter now, on the item when it is counted there and
    one is given."""
    limit: _Read[float | None] = dataclass_field(init=False, repr=False, compare=False, hash=False)
    """``limit(view, item=None)``: its limit now, the item's own for a per-item budget,
    else the policy's."""
    _compare: Callable[[float, float], bool] = dataclass_field(
        init=False, repr=False, compare=False, hash=False
    )
    """The one comparison: ``>`` when spent only over the limit (``over``), else ``>=``."""
    _limit_of: Callable[[object], float | None] = dataclass_field(
        init=False, repr=False, compare=False, hash=False
    )
    _view_get: Callable[[object], float] | None = dataclass_field(
        init=False, repr=False, compare=False, hash=False
    )
    _item_get: Callable[[object], float] | None = dataclass_field(
        init=False, repr=False, compare=False, hash=False
    )

    def __post_init__(self) -> None:
        assert (self.on_view is None) == (self.scope == "item"), f"{self.name}: on the view"
        assert (self.on_item is None) == (self.scope == "goal"), f"{self.name}: on the item"
        view_get = attrgetter(self.on_view) if self.on_view is not None else None
        item_get = attrgetter(self.on_item) if self.on_item is not None else None
        limit_of = attrgetter(self.field)
        compare = operator.gt if self.over else operator.ge
        used, limit, spent = _reads(self.scope, view_get, item_get, limit_of, compare)
        for name, value in (
            ("spent", spent),
            ("used", used),
            ("limit", limit),
            ("_compare", compare),
            ("_limit_of", limit_of),
            ("_view_get", view_get),
            ("_item_get", item_get),
        ):
            object.__setattr__(self, name, value)

    def getter(self, on_item: bool) -> Callable[[object], float] | None:
        """Its counter's getter off the work item (``on_item``) or off the view; None
        where it has no counter there."""
        return self._item_get if on_item else self._view_get

    def limit_getter(self) -> Callable[[object], float | None]:
        """Reads its limit off its holder: the policy, or the work item (per-item)."""
        return self._limit_of

    def is_spent(self, used: float, limit: float | None) -> bool:
        """Whether ``used`` spends ``limit``: the comparison ``spent`` makes, over a counter
        and a limit the caller has (a call under way, a park still open)."""
        return limit is not None and self._compare(used, limit)

    def remaining(self, view: Counted, item: object | None = None) -> float:
        limit = self.limit(view, item)
        if limit is None:
            return math.inf
        return max(0, limit - self.used(view, item))

    def bucket(self, limit: float | None, demand: float) -> object:
        """The limit as far as a history that asked at most ``demand`` of it can tell
        (every limit above the demand behaves alike: it is never spent)."""
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
    "replans",
    "max_replans",
    "goal",
    True,
    "replans.charged",
    "replans",
    on_view="charged_replans",
)
UNCHARGED_REPLANS: Final = Budget(
    "uncharged_replans",
    "max_uncharged_replans",
    "goal",
    True,
    "replans.consecutive_uncharged",
    "upstream",
    on_view="consecutive_uncharged_plans",
)
PLAN_RECORDS: Final = Budget(
    "plan_records",
    "max_plan_records",
    "goal",
    True,
    "replans.used",
    "plan_records",
    on_view="plans_used",
)
TOTAL_ATTEMPTS: Final = Budget(
    "total_attempts",
    "max_total_attempts",
    "goal",
    True,
    "attempts.charged",
    "total_attempts",
    on_view="charged_attempts",
)
ATTEMPTS: Final = Budget(
    "attempts",
    "max_attempts",
    "item",
    True,
    "work.charged_attempts",
    "attempts",
    on_item="charged_attempts",
)
UNCHARGED_ATTEMPTS: Final = Budget(
    "uncharged_attempts",
    "max_uncharged_attempts",
    "item",
    True,
    "work.consecutive_uncharged",
    "upstream",
    on_item="consecutive_uncharged",
)
RUNTIME: Final = Budget(
    "runtime",
    "max_runtime_s",
    "goal",
    False,
    "runtime_s",
    "runtime",
    on_view="runtime_s",
    over=True,
)
COST: Final = Budget(
    "cost",
    "max_cost_usd",
    "goal",
    False,
    "cost_usd",
    "cost",
    on_view="cost_usd",
    over=True,
    per=100,
)
OUTAGE_WAIT: Final = Budget(
    "outage_wait",
    "max_outage_wait_s",
    "goal",
    False,
    "outage_wait_s",
    "outage_wait",
    on_view="outage_wait_s",
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
    "lost",
    on_view="plan_continuations",
    on_item="continuations",
    raisable=False,
)
MILESTONES: Final = Budget(
    "milestones",
    "max_milestones",
    "goal",
    True,
    "applied plans that completed (items all settled, one accepted)",
    "complete",
    on_view="milestones",
    raisable=False,
)

SAME_FAILURES: Final = Budget(
    "same_failures",
    "max_same_failures",
    "run",
    True,
    "charged failures in a row with one signature (of an item, or of the planner)",
    "same_failures",
    on_view="same_plan_failures",
    on_item="same_failures",
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


def cost_spent_during(view: Counted, call_usd: float) -> bool:
    """Whether the goal's recorded cost plus ``call_usd`` (what a call under way has used so
    far, not yet recorded: counted once) spends its cost budget (the relay's gate)."""
    return COST.is_spent(COST.used(view) + call_usd, COST.limit(view))


def item_limits(policy: Policy) -> dict[str, int]:
    """The per-item limits a new work item takes from the policy (``work.created`` freezes them)."""
    return {b.field: getattr(policy, b.field) for b in BUDGETS if b.scope == "item"}


def ledger(name: str) -> Budget:
    """The raisable budget a ``budget.raised`` ledger names."""
    budget = BY_NAME[name]
    assert budget.raisable, f"{name} is not raised by budget.raised"
    return budget
