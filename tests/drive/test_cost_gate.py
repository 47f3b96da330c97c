"""The cost gate a goal's calls get: the recorded cost plus the call's usage so far, priced,
against ``max_cost_usd`` (the core's rule: over the limit, not at it)."""

from __future__ import annotations

from governor.core.observation import Usage
from governor.core.policy import Policy
from governor.core.prices import Price
from governor.core.view import GoalView
from governor.drive.cost_gate import cost_gate

PRICE = Price(input_per_mtok=1.0, output_per_mtok=10.0)
"""1 000 000 input tokens: $1; 100 000 output tokens: $1."""


def goal(limit: float | None, recorded: float) -> GoalView:
    return GoalView(goal_id="g", policy=Policy(max_cost_usd=limit), cost_usd=recorded)


def test_no_cost_limit_no_gate() -> None:
    view = goal(None, 5.0)
    assert cost_gate(lambda: view, PRICE) is None


def test_the_recorded_cost_and_the_call_so_far_are_counted_together() -> None:
    view = goal(2.0, 1.0)
    gate = cost_gate(lambda: view, PRICE)
    assert gate is not None
    assert gate(None) is None  # nothing used yet: $1 of $2
    assert gate(Usage(input_tokens=1_000_000)) is None  # $2 reaches the limit: not over it
    refusal = gate(Usage(input_tokens=1_000_000, output_tokens=1))
    assert refusal is not None
    assert "max_cost_usd = 2.0" in refusal


def test_the_limit_and_the_ledger_are_read_at_each_ask() -> None:
    views = [goal(2.0, 1.0)]
    gate = cost_gate(lambda: views[-1], PRICE)
    assert gate is not None
    usage = Usage(output_tokens=150_000)  # $1.50
    assert gate(usage) is not None
    views.append(goal(5.0, 1.0))  # budget.raised during the call
    assert gate(usage) is None
    views.append(goal(5.0, 4.0))  # another call recorded meanwhile
    assert gate(usage) is not None


def test_a_call_without_a_price_counts_only_the_recorded_cost() -> None:
    gate = cost_gate(lambda: goal(2.0, 1.0), None)
    assert gate is not None
    assert gate(Usage(output_tokens=10**9)) is None
    assert cost_gate(lambda: goal(2.0, 2.5), None) is not None
    spent = cost_gate(lambda: goal(2.0, 2.5), None)
    assert spent is not None
    assert spent(None) is not None
