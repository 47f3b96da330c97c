"""What a history asked of each budget: the demands that tell two policies apart on it.

Rules (SPEC §9):
    * Above the most a history ever asked of a budget, its limit changes nothing: two
      policies of the same ``Demands.key`` re-fold the history identically (tested).
    * ``first_difference``: the first event before which two policies might decide
      differently (before it, every limit they differ in was out of reach).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final, cast

from governor.analysis.divergence import differing
from governor.core.budgets import BUDGETS, BY_FIELD, BY_NAME, Budget
from governor.core.events import EVENT_CLASSES, Event
from governor.core.policy import Policy
from governor.core.view import GoalView, WorkState


@dataclass(slots=True)
class Demands:
    """The most a history ever asked of each budget: above it, a limit changes nothing.

    A limit of a budget that the history never came close to cannot change any recorded
    decision, nor the last one: every value above ``most`` behaves like ``most + 1``
    (``Budget.bucket``). So two policies with the same *key* re-fold a history
    identically (tested). The key covers every policy field: each budget of
    ``governor.core.budgets`` by its bucket, every other field by its value.
    """

    most: dict[str, float] = field(default_factory=lambda: dict.fromkeys(BY_NAME, 0))
    """Budget name -> the largest value its counter took."""
    refused: bool = False
    """Whether any run was refused upstream (only then does the back-off matter)."""

    def note(self, view: GoalView, event: Event) -> list[str]:
        """Take in the counters after ``event``; returns the budgets whose demand grew."""
        most, grown = self.most, []
        for name, get in _GOAL_GETS:  # the counters that are one attribute of the view
            value = get(view)
            if value > most[name]:
                most[name] = value
                grown.append(name)
        for name, used in _GOAL_CALLS:
            value = used(view, None)
            if value > most[name]:
                most[name] = value
                grown.append(name)
        # read only off the events that carry them (a missing attribute is slow to ask for)
        work_id = getattr(event, "work_id") if event.type in _NAMES_ITEM else None  # noqa: B009
        item = view.work.get(work_id) if work_id is not None else None
        if item is not None:
            self._note_item(view, item, grown)
        if not self.refused and event.type in _CLASSED:
            self.refused = getattr(event, "failure_class") == "upstream"  # noqa: B009
        return grown

    def _note_item(self, view: GoalView, item: WorkState, grown: list[str]) -> None:
        """Take in the counters of the item an event names (and of its run in flight)."""
        most = self.most
        for name, get in _ITEM_GETS:  # the counters that are one attribute of the item
            value = get(item)
            if value > most[name]:
                most[name] = value
                if name not in grown:
                    grown.append(name)
        for name, used in _ITEM_CALLS:
            value = used(view, item)
            if value > most[name]:
                most[name] = value
                if name not in grown:
                    grown.append(name)

    def key(self, policy: Policy, names: Iterable[str] | None = None) -> tuple[object, ...]:
        """The policy as far as this history can tell it apart from others (``names``: only
        these fields, for policies alike in every other)."""
        parts: list[object] = []
        for name in Policy.model_fields if names is None else names:
            value = getattr(policy, name)
            budget = BY_FIELD.get(name)
            if budget is not None:
                parts.append(budget.bucket(value, self.most[budget.name]))
            elif name == "upstream_backoff":
                parts.append(value if self.refused else None)
            else:
                parts.append(value)
        return tuple(parts)

    def keys(
        self, policies: Sequence[Policy], names: Iterable[str] | None = None
    ) -> list[tuple[object, ...]]:
        """``key`` of each policy, a field at a time (a grid repeats a few values per field)."""
        columns: list[list[object]] = []
        for name in Policy.model_fields if names is None else names:
            values = _column(policies, name)
            budget = BY_FIELD.get(name)
            if budget is not None:
                most, buckets = self.most[budget.name], {}
                for value in values:
                    if value not in buckets:
                        buckets[value] = budget.bucket(cast("float | None", value), most)
                columns.append([buckets[value] for value in values])
            elif name == "upstream_backoff" and not self.refused:
                columns.append([None] * len(values))
            else:
                columns.append(values)
        if not columns:
            return [() for _ in policies]
        return list(zip(*columns, strict=True))


def _readers(
    budgets: Iterable[Budget], on_item: bool
) -> tuple[
    tuple[tuple[str, Callable[[object], float]], ...], tuple[tuple[str, Callable[..., float]], ...]
]:
    """How ``Demands.note`` reads these budgets' counters: (name, getter) of those that are
    one attribute (of the item, ``on_item``, else of the view: read without a call of ours),
    and (name, counter) of the others."""
    gets, calls = [], []
    for budget in budgets:
        get = budget.getter(on_item)
        if get is not None:
            gets.append((budget.name, get))
        else:
            calls.append((budget.name, budget.used))
    return tuple(gets), tuple(calls)


_GOAL_GETS, _GOAL_CALLS = _readers([b for b in BUDGETS if b.scope != "item"], on_item=False)
"""Budgets read on the goal after every event (a per-run one: on the plan in flight)."""
_ITEM_GETS, _ITEM_CALLS = _readers([b for b in BUDGETS if b.scope != "goal"], on_item=True)
"""Budgets read on the item an event names (a per-run one: on its attempt in flight)."""
_NAMES_ITEM: Final = frozenset(t for t, c in EVENT_CLASSES.items() if "work_id" in c.model_fields)
_CLASSED: Final = frozenset(
    t for t, c in EVENT_CLASSES.items() if "failure_class" in c.model_fields
)


def first_difference(
    rises: dict[str, list[tuple[int, float]]],
    refused_at: int | None,
    end: int,
    policy: Policy,
    other: Policy,
    *,
    fields: Sequence[str] | None = None,
) -> int:
    """The first event (index) before which two policies might decide differently, given
    when each budget's demand grew (``rises``) and the first refusal (``end``: never);
    ``fields``: those they differ in, if known."""
    first = end
    for name in differing(policy, other) if fields is None else fields:
        mine, theirs = getattr(policy, name), getattr(other, name)
        budget = BY_FIELD.get(name)
        if budget is None:
            if name != "upstream_backoff":
                return 0
            first = min(first, end if refused_at is None else refused_at)
            continue
        if mine is None or theirs is None:
            return 0
        bound = min(mine, theirs)
        for index, most in rises.get(budget.name, ()):
            if (most > bound) if budget.over else (most >= bound):
                first = min(first, index)  # time budgets count up to the event itself
                break
    return first


_COLUMNS: dict[int, tuple[tuple[Policy, ...], dict[str, list[object]]]] = {}
"""id(policies) -> (the policies, field -> each one's value): a tune keys the same tuple of
candidates (``governor.analysis.tune.candidate_policies``) for every history."""


def _column(policies: Sequence[Policy], name: str) -> list[object]:
    """Each policy's value of a field (kept for a tuple of policies while it is the same one)."""
    if not isinstance(policies, tuple):
        return [getattr(policy, name) for policy in policies]
    cached = _COLUMNS.get(id(policies))
    if cached is None or cached[0] is not policies:  # another tuple (this one holds it alive)
        if len(_COLUMNS) > 64:
            _COLUMNS.clear()
        cached = _COLUMNS[id(policies)] = (policies, {})
    column = cached[1].get(name)
    if column is None:
        column = cached[1][name] = [getattr(policy, name) for policy in policies]
    return column
