"""Numbers are finite and in range everywhere (SPEC §11.1; issue 9 items 1 and 4).

The first test walks every model an event can hold and tries each numeric field with
the values that used to get through (``inf``, ``nan``, ``1e400``, ``"1e400"``, 2^64):
a new field that forgets the shared types of ``governor.core.numbers`` fails it.
"""

from __future__ import annotations

import json
import math
import types
import typing
from typing import Annotated, Any, Union, get_args, get_origin

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, TypeAdapter, ValidationError

from governor.core.budgets import BUDGETS, Budget
from governor.core.event_fields import Profile
from governor.core.events import EVENT_CLASSES, BudgetRaised
from governor.core.numbers import (
    MAX_COUNT,
    MAX_FACTOR,
    MAX_RUNTIME_S,
    MAX_USD,
    MAX_WAIT_S,
    reported,
)
from governor.core.policy import Policy, UpstreamBackoff, check_policy_value
from governor.core.policy_input import policy_from
from governor.core.wire.codec import LineDecoder, encode
from governor.core.work_events import AttemptFinished
from governor.errors import CommandRefusedError, HistoryError, PolicyError
from tests.story import T0, Story

HOSTILE_FLOATS = [math.inf, -math.inf, math.nan, "1e400", "inf", "NaN"]
HOSTILE_INTS = [2**64, 2**63, 10**30]


def _models() -> list[type[BaseModel]]:
    """Every model reachable from the event classes, nested ones included."""
    seen: list[type[BaseModel]] = []
    todo: list[Any] = [*EVENT_CLASSES.values(), Policy, Profile]
    while todo:
        hint = todo.pop()
        if isinstance(hint, type) and issubclass(hint, BaseModel):
            if hint in seen:
                continue
            seen.append(hint)
            hints = typing.get_type_hints(hint, include_extras=True)
            todo.extend(hints[name] for name in hint.model_fields)
        elif get_origin(hint) is not None:
            todo.extend(get_args(hint))
    return seen


def _numeric_fields() -> list[tuple[str, Any]]:
    """``(Model.field, annotation)`` of every field holding a number; a number inside a
    tuple is tried as the tuple's item (``Model.field[]``)."""
    fields: list[tuple[str, Any]] = []
    for model in _models():
        hints = typing.get_type_hints(model, include_extras=True)
        for name, info in model.model_fields.items():
            annotation = Annotated[hints[name], *info.metadata] if info.metadata else hints[name]
            if _kinds(annotation) & {int, float}:
                fields.append((f"{model.__name__}.{name}", annotation))
            for item in _tuple_items(annotation):
                if _kinds(item) & {int, float}:
                    fields.append((f"{model.__name__}.{name}[]", item))
    return fields


def _kinds(hint: Any) -> set[Any]:
    origin = get_origin(hint)
    if origin is Annotated:
        return _kinds(get_args(hint)[0])
    if origin in (Union, types.UnionType):
        return set().union(*(_kinds(arg) for arg in get_args(hint)))
    return {hint}


def _tuple_items(hint: Any) -> list[Any]:
    origin = get_origin(hint)
    if origin is Annotated:
        return _tuple_items(get_args(hint)[0])
    if origin in (Union, types.UnionType):
        return [item for arg in get_args(hint) for item in _tuple_items(arg)]
    return [get_args(hint)[0]] if origin is tuple else []


NUMERIC_FIELDS = _numeric_fields()


def test_the_walk_finds_the_numeric_fields_it_must() -> None:
    names = {name for name, _ in NUMERIC_FIELDS}
    assert {"Policy.max_runtime_s", "UpstreamBackoff.factor", "Profile.timeout_s"} <= names
    assert {"AttemptFinished.cost_usd", "PlanFailed.retry_after_s", "BudgetRaised.to"} <= names
    assert {"AttemptStarted.seq", "Partial.bytes", "WorkCreated.max_attempts"} <= names
    assert {"Tries.count", "Tries.vendor_retries[]"} <= names


@pytest.mark.parametrize(("name", "annotation"), NUMERIC_FIELDS, ids=[f[0] for f in NUMERIC_FIELDS])
def test_every_numeric_field_refuses_non_finite_and_oversized_numbers(name, annotation) -> None:
    adapter = TypeAdapter(annotation)
    for value in [*HOSTILE_FLOATS, *HOSTILE_INTS]:
        with pytest.raises(ValidationError):
            adapter.validate_python(value)
        with pytest.raises(ValidationError):
            adapter.validate_json(json.dumps(value))


@pytest.mark.parametrize(
    ("values", "field", "message"),
    [
        ({"max_runtime_s": math.inf}, "max_runtime_s", "finite"),
        ({"max_runtime_s": "1e400"}, "max_runtime_s", "finite"),
        ({"max_cost_usd": math.nan}, "max_cost_usd", "finite"),
        (
            {"upstream_backoff": {"factor": 1e300}},
            "upstream_backoff.factor",
            "less than or equal to 100",
        ),
        ({"upstream_backoff": {"initial_s": math.inf}}, "upstream_backoff.initial_s", "finite"),
        (
            {"upstream_backoff": {"max_s": 1e12}},
            "upstream_backoff.max_s",
            f"less than or equal to {MAX_WAIT_S}",
        ),
        ({"max_replans": 2**64}, "max_replans", f"less than or equal to {MAX_COUNT}"),
        ({"max_attempts": 1e400}, "max_attempts", "finite"),
        ({"max_parallel_work": 100_000}, "max_parallel_work", "less than or equal to 1000"),
    ],
    ids=[
        "an infinite runtime budget",
        "a runtime budget written as the string 1e400",
        "a NaN cost budget",
        "a back-off factor of 1e300",
        "an infinite first back-off",
        "a back-off ceiling past 30 days",
        "a replan budget past 2^64",
        "an attempt budget of 1e400",
        "a hundred thousand parallel items",
    ],
)
def test_a_policy_out_of_range_is_one_clear_error(values, field, message) -> None:
    with pytest.raises(PolicyError) as caught:
        policy_from(values)
    assert caught.value.field == field
    assert message in str(caught.value)


def test_the_largest_values_of_every_range_are_accepted() -> None:
    policy = policy_from(
        {
            "max_replans": MAX_COUNT,
            "max_attempts": MAX_COUNT,
            "max_runtime_s": 1e10,
            "max_cost_usd": 1e9,
            "upstream_backoff": {
                "initial_s": MAX_WAIT_S,
                "factor": MAX_FACTOR,
                "max_s": MAX_WAIT_S,
            },
        }
    )
    assert policy.upstream_backoff.factor == MAX_FACTOR


@pytest.mark.parametrize(
    ("field", "value", "problem"),
    [
        ("max_replans", 7.0, None),
        ("max_replans", 7.5, "fractional part"),
        ("max_replans", 1e30, "less than or equal to"),
        ("max_runtime_s", math.inf, "finite"),
        ("max_cost_usd", 12.5, None),
    ],
    ids=[
        "a whole float count",
        "a fractional count",
        "a count past the range",
        "an infinite runtime",
        "a cost",
    ],
)
def test_check_policy_value_says_what_is_wrong(field, value, problem) -> None:
    found = check_policy_value(field, value)
    assert found is None if problem is None else (found is not None and problem in found)


@pytest.mark.parametrize("budget", [b for b in BUDGETS if b.raisable], ids=lambda b: b.name)
def test_raise_checks_the_policy_field_its_budget_names(budget: Budget) -> None:
    """The verb and the event model refuse a limit past the range of the very field the
    budget table says the ledger lifts, with the same words: there is one such list."""
    ceilings = {
        "max_runtime_s": MAX_RUNTIME_S,
        "max_cost_usd": MAX_USD,
        "max_outage_wait_s": MAX_RUNTIME_S,
    }
    top = ceilings.get(budget.field, MAX_COUNT)
    past = float(top) * 10
    problem = check_policy_value(budget.field, past)
    assert problem is not None
    assert check_policy_value(budget.field, float(top)) is None
    story = Story()
    story.plan("a")
    work_id = "p1-a" if budget.scope == "item" else None
    with pytest.raises(CommandRefusedError) as refused:
        story.op("raise_budget", ledger=budget.name, to=past, reason="more", work_id=work_id)
    assert problem.lower() in str(refused.value).lower()
    with pytest.raises(ValidationError) as invalid:
        BudgetRaised.model_validate(
            {"goal_id": "g", "seq": 9, "at": T0, "reason": "more", "ledger": budget.name}
            | {"to": past, "work_id": work_id}
        )
    assert problem in str(invalid.value)


@pytest.mark.parametrize("to", [math.inf, math.nan, 1e400, 2e9, 1e30])
def test_a_raise_past_the_range_is_refused_by_the_event_model(to) -> None:
    with pytest.raises(ValidationError):
        BudgetRaised(goal_id="g", seq=2, at=T0, reason="more", ledger="replans", to=to)


@given(
    initial=st.floats(0, MAX_WAIT_S),
    factor=st.floats(1, 1e308),
    max_s=st.floats(0, 1e308),
    consecutive=st.integers(0, 10**18),
    retry=st.none() | st.floats(0, MAX_WAIT_S),
)
def test_the_backoff_formula_never_overflows(initial, factor, max_s, consecutive, retry) -> None:
    # Built without validation on purpose: even a policy written before the ranges existed
    # (factor 1e300, say) must not crash the fold.
    backoff = UpstreamBackoff.model_construct(
        initial_s=initial, factor=factor, max_s=max(max_s, initial)
    )
    wait = backoff.wait_s(consecutive, retry)
    assert math.isfinite(wait)
    assert wait <= max(backoff.max_s, retry or 0.0)
    if initial == 0:
        assert wait == (retry or 0.0)


def test_outages_under_the_largest_factor_wait_max_s_and_the_goal_goes_on() -> None:
    story = Story(
        max_uncharged_attempts=10,
        upstream_backoff={"initial_s": 30, "factor": MAX_FACTOR, "max_s": 900},
    )
    story.plan("a")
    waits = []
    for _ in range(4):
        story.attempt("p1-a", failure_class="upstream")
        item = story.view.work["p1-a"]
        assert item.not_before is not None
        waits.append((item.not_before - story.now).total_seconds())
    assert waits == [30, 900, 900, 900]
    assert story.decision().status == "waiting"


@pytest.mark.parametrize(
    "field",
    ['"to":1e400', '"to":Infinity', '"to":NaN', '"to":"1e400"', '"to":-Infinity'],
)
def test_a_history_line_with_a_non_finite_number_is_refused_naming_the_line(field) -> None:
    story = Story("g")
    raised = story.op("raise_budget", ledger="replans", to=9, reason="more").events[-1]
    line = encode(raised).replace(b'"to":9.0', field.encode())
    assert line != encode(raised)
    decoder = LineDecoder("h.jsonl")
    with pytest.raises(HistoryError) as caught:
        decoder.decode(line, 7)
    assert caught.value.line == 7
    assert "'to'" in caught.value.detail


def test_a_history_line_with_an_integer_past_64_bits_is_refused() -> None:
    created = Story("g").events[0]
    line = encode(created).replace(b'"seq":1', f'"seq":{2**64}'.encode())
    with pytest.raises(HistoryError, match="seq"):
        LineDecoder().decode(line, 1)


@pytest.mark.parametrize(
    ("value", "stored"),
    [
        (None, None),
        (12.5, 12.5),
        (math.nan, None),
        (-3.0, None),
        (math.inf, MAX_WAIT_S),
        (1e300, MAX_WAIT_S),
    ],
    ids=["nothing", "a plain number", "NaN", "a negative number", "infinity", "1e300"],
)
def test_a_reported_number_is_made_storable(value, stored) -> None:
    assert reported(value, MAX_WAIT_S) == stored


def test_a_hostile_reply_s_numbers_are_recorded_within_range_and_read_back() -> None:
    story = Story()
    story.plan("a")
    story.start("p1-a")
    story.finish("p1-a", failure_class="upstream", retry_after_s=math.inf, cost_usd=1e300)
    finished = story.events[-1]
    assert isinstance(finished, AttemptFinished)
    assert (finished.retry_after_s, finished.cost_usd) == (MAX_WAIT_S, MAX_USD)
    assert LineDecoder().decode(encode(finished), 1) == finished
