"""The gate that ends an agent call mid-run once its goal's cost budget is spent.

Rules (SPEC §13.1, §13.5; docs/classification.md "A budget that bites mid-run"):
    * A call of a goal with ``max_cost_usd`` gets a gate; its relay asks it before each
      model request after the first, with the call's token usage so far.
    * The gate refuses when the goal's recorded cost (the ledger's ``cost_usd``: calls
      already recorded) plus this call's usage priced at the profile's price
      (``governor.exec.prices.call_price``) spends the cost budget — the core's rule
      (``governor.core.budgets.cost_spent_during``). The call is not yet recorded, so its
      cost is counted once. A call with no price counts its own usage as 0.
    * The limit and the recorded cost are read from the goal's view at each ask (a
      ``budget.raised`` during the call is seen).
    * A refused request ends the call as the charged failure rule ``budget``
      (``governor.core.classify``); the goal then stops ``budget_exhausted`` by the
      ordinary rule once the call's cost is recorded. Nothing the agent did is undone.
"""

from __future__ import annotations

from collections.abc import Callable

from governor.core.budgets import COST, Counted, cost_spent_during
from governor.core.observation import Usage
from governor.core.prices import Price, price_usd
from governor.exec.relay import Gate


def cost_gate(view: Callable[[], Counted], price: Price | None) -> Gate | None:
    """The gate for one call of the goal ``view`` reads; None when it has no cost limit."""
    if COST.limit(view()) is None:
        return None

    def gate(usage: Usage | None) -> str | None:
        now = view()
        call_usd = price_usd(usage, price) if usage is not None and price is not None else 0.0
        if not cost_spent_during(now, call_usd):
            return None
        return f"governor: the goal's cost budget (max_cost_usd = {COST.limit(now)}) is spent"

    return gate
