"""Pricing token usage (SPEC §13.5): the arithmetic and the one-count rule."""

from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from governor.core.observation import Usage
from governor.core.prices import Price, call_cost, price_usd

GPT5 = Price(input_per_mtok=1.25, output_per_mtok=10.0, cached_input_per_mtok=0.125)


def test_cached_input_is_part_of_input_and_priced_at_its_own_rate() -> None:
    usage = Usage(input_tokens=1_000_000, cached_input_tokens=400_000, output_tokens=100_000)
    assert price_usd(usage, GPT5) == pytest.approx(0.6 * 1.25 + 0.4 * 0.125 + 0.1 * 10.0)


def test_cached_input_without_its_own_price_costs_what_input_costs() -> None:
    price = Price(input_per_mtok=3.0, output_per_mtok=15.0)
    usage = Usage(input_tokens=2_000_000, cached_input_tokens=1_000_000)
    assert price_usd(usage, price) == pytest.approx(6.0)


def test_a_field_not_reported_counts_as_zero_and_cached_never_exceeds_input() -> None:
    assert price_usd(Usage(output_tokens=1_000_000), GPT5) == pytest.approx(10.0)
    assert price_usd(Usage(), GPT5) == 0.0
    odd = Usage(input_tokens=10, cached_input_tokens=1_000_000)  # a vendor's odd report
    assert price_usd(odd, GPT5) == pytest.approx(10 * 0.125 / 1_000_000)


def test_a_call_is_counted_once_its_own_figure_first() -> None:
    usage = Usage(input_tokens=1_000_000)
    assert call_cost(0.5, usage, GPT5) == 0.5  # the agent's own figure wins
    assert call_cost(None, usage, GPT5) == pytest.approx(1.25)  # else the usage priced
    assert call_cost(None, usage, None) is None  # no price: no cost
    assert call_cost(None, None, GPT5) is None
    assert call_cost(0.0, usage, GPT5) == 0.0  # a reported zero is a figure


@pytest.mark.parametrize("bad", [-0.01, math.nan, math.inf, -math.inf, 1e400])
@pytest.mark.parametrize("field", ["input_per_mtok", "output_per_mtok", "cached_input_per_mtok"])
def test_a_price_refuses_negative_and_non_finite_numbers(field: str, bad: float) -> None:
    values = {"input_per_mtok": 1.0, "output_per_mtok": 1.0, field: bad}
    with pytest.raises(ValidationError) as caught:
        Price.model_validate(values)
    assert caught.value.errors()[0]["loc"] == (field,)
