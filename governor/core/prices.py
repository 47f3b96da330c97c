"""Pricing an agent call's token usage: a price per million tokens, and the arithmetic.

Rules (SPEC §13.5; docs/harnesses.md "What a call costs"):
    * A ``Price`` is what one model costs per million tokens: input, output, and cached
      input (input tokens served from the vendor's cache; when not stated, they cost what
      input costs). Every figure is a finite number >= 0.
    * ``price_usd`` prices a ``Usage``: cached input tokens are part of the input tokens
      (as codex and the OpenAI API report them), so the uncached input is
      ``input - cached``; a field the vendor did not report counts as 0.
    * A call's cost is counted once: the figure the agent (or its CLI) reported when it
      gave one, else its usage priced (``call_cost``). A call with neither has no cost.
    * Which price applies — the profile's own ``price``, else the shipped table's entry for
      the model — is the shell's to find (``governor.exec.prices``); this module reads no
      file.
"""

from __future__ import annotations

from typing import Final

from pydantic import BaseModel, ConfigDict

from governor.core.numbers import Usd
from governor.core.observation import Usage

PER: Final = 1_000_000
"""Prices are per this many tokens."""


class Price(BaseModel):
    """What one model costs, in US dollars per million tokens."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    input_per_mtok: Usd
    """Input tokens not served from the vendor's cache."""
    output_per_mtok: Usd
    """Output tokens (reasoning tokens included, as vendors bill them)."""
    cached_input_per_mtok: Usd | None = None
    """Input tokens served from the vendor's cache; None: what input costs."""


def price_usd(usage: Usage, price: Price) -> float:
    """What ``usage`` costs at ``price`` (see the module rules)."""
    total_input = usage.input_tokens or 0
    cached = min(usage.cached_input_tokens or 0, total_input)
    cached_rate = (
        price.input_per_mtok if price.cached_input_per_mtok is None else price.cached_input_per_mtok
    )
    return (
        (total_input - cached) * price.input_per_mtok
        + cached * cached_rate
        + (usage.output_tokens or 0) * price.output_per_mtok
    ) / PER


def call_cost(cost_usd: float | None, usage: Usage | None, price: Price | None) -> float | None:
    """A call's cost, counted once: its own figure, else its usage priced, else None."""
    if cost_usd is not None:
        return cost_usd
    if usage is None or price is None:
        return None
    return price_usd(usage, price)
