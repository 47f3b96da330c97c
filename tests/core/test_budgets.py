"""The budget table is the one owner of every budget: each row is covered everywhere.

Adding a budget is a change to ``governor.core.budgets.BUDGETS`` plus its semantics (the
policy field and its counter). These tests enumerate the table and fail when a row is
missing from the policy, the ``budget.raised`` ledgers, ``raise``, the fold, the
what-if key, explain's search or the ledger of ``replay --json``.
"""

from __future__ import annotations

from typing import get_args

import pytest

from governor.analysis.demands import Demands
from governor.analysis.explain import DIRECT, NEVER_ADVISED, SEARCHED
from governor.core.budgets import (
    BUDGETS,
    BY_FIELD,
    BY_NAME,
    Budget,
)
from governor.core.decision import Exhausted
from governor.core.policy import LedgerName, Policy, new_goal_policy
from governor.core.policy_input import with_overrides
from governor.render.records import ledger_record
from tests.story import Story

IDS = [b.name for b in BUDGETS]


def test_names_and_fields_are_unique() -> None:
    assert len(BY_NAME) == len(BY_FIELD) == len(BUDGETS)


@pytest.mark.parametrize("budget", BUDGETS, ids=IDS)
def test_every_budget_is_a_policy_field_of_its_kind(budget: Budget) -> None:
    assert budget.field in Policy.model_fields
    value = getattr(new_goal_policy(Policy()), budget.field)  # as a new goal records it
    if budget.whole:
        assert isinstance(value, int)
        assert not isinstance(value, bool)
    else:
        assert value is None or isinstance(value, float)


def test_the_raisable_budgets_are_exactly_the_ledgers_of_budget_raised() -> None:
    assert sorted(b.name for b in BUDGETS if b.raisable) == sorted(get_args(LedgerName))


def _raised(budget: Budget) -> tuple[Story, str | None, float]:
    story = Story()
    story.plan("a")
    work_id = "p1-a" if budget.scope == "item" else None
    item = story.view.work[work_id] if work_id else None
    current = budget.limit(story.view, item)
    to = (current or 0) + (1 if budget.whole else 0.5)
    story.op("raise_budget", ledger=budget.name, to=to, reason="more", work_id=work_id)
    return story, work_id, to


@pytest.mark.parametrize("budget", [b for b in BUDGETS if b.raisable], ids=lambda b: b.name)
def test_raise_lifts_every_raisable_budget_and_the_fold_applies_it(budget: Budget) -> None:
    story, work_id, to = _raised(budget)
    item = story.view.work[work_id] if work_id else None
    assert budget.limit(story.view, item) == to
    assert story.events[-1].type == "budget.raised"


@pytest.mark.parametrize("budget", BUDGETS, ids=IDS)
def test_the_whatif_key_buckets_every_budget(budget: Budget) -> None:
    demands = Demands()
    demands.most[budget.name] = 5
    low, high, higher = (4.0, 50.0, 60.0) if not budget.whole else (2, 20, 30)
    base = Policy(max_replans=100)  # room for max_milestones, kept at or below it

    def key(limit: float) -> tuple[object, ...]:
        return demands.key(with_overrides(base, {budget.field: limit}))

    assert key(high) == key(higher), "limits the history never reached tell nothing apart"
    assert key(low) != key(high), "a limit the history reached changes the key"


@pytest.mark.parametrize("name", list(Policy.model_fields))
def test_the_whatif_key_covers_every_policy_field(name: str) -> None:
    demands = Demands(refused=True)
    for budget in BUDGETS:
        demands.most[budget.name] = 10**9
    base = Policy(max_replans=100)
    value = getattr(base, name)
    other: object
    if isinstance(value, bool):
        other = not value
    elif name == "upstream_backoff":
        other = {"initial_s": 1.0, "factor": 1.0, "max_s": 1.0}
    elif name == "grants":
        other = {"auto_usd": 1.0}
    elif value is None:
        other = 1.0
    else:
        other = value + 1 if name != "max_milestones" else value - 1
    assert demands.key(with_overrides(base, {name: other})) != demands.key(base)


@pytest.mark.parametrize("budget", BUDGETS, ids=IDS)
def test_explain_searches_every_budget(budget: Budget) -> None:
    if budget.field in NEVER_ADVISED:  # SPEC §12.10: more of the same failure never helps
        assert budget.field not in SEARCHED
        return
    assert budget.field in SEARCHED
    assert budget.field in DIRECT[budget.stop]
    limit = getattr(Policy(max_cost_usd=1.0), budget.field)
    assert budget.candidates(limit, 3, (1, 2)), "explain has a raise to try"


def test_every_exhausted_ledger_a_decision_names_is_a_budget_stop() -> None:
    assert set(get_args(Exhausted)) <= {b.stop for b in BUDGETS}


@pytest.mark.parametrize(
    "budget",
    [b for b in BUDGETS if b.counter.split(".")[0] in ("replans", "attempts", "work")]
    + [b for b in BUDGETS if b.counter in ("runtime_s", "cost_usd")],
    ids=lambda b: b.name,
)
def test_the_ledger_shows_the_counter_of_every_budget_it_names(budget: Budget) -> None:
    story = Story()
    story.plan("a")
    record = ledger_record(story.decision().ledger)
    head, _, tail = budget.counter.partition(".")
    if head == "work":
        assert tail in record["work"]["p1-a"]
    elif tail:
        assert tail in record[head]
    else:
        assert head in record


@pytest.mark.parametrize("budget", BUDGETS, ids=lambda b: b.name)
def test_a_budgets_getter_reads_its_counter(budget: Budget) -> None:
    story = Story()
    story.plan_fails("upstream", retry_after_s=5)
    story.plan("a")
    story.start("p2-a")
    story.finish("p2-a", "failed", run_s=3, cost_usd=0.25)
    item = story.view.work["p2-a"]
    on_view, on_item = budget.getter(on_item=False), budget.getter(on_item=True)
    # counted where it is kept: a goal's on the view, an item's on the item, a run's on both
    assert (on_view is not None) == (budget.scope != "item")
    assert (on_item is not None) == (budget.scope != "goal")
    if on_view is not None:
        assert on_view(story.view) == budget.used(story.view, None)
    if on_item is not None:
        assert on_item(item) == budget.used(story.view, item)
