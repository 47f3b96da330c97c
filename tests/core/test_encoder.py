"""The compiled encoder against pydantic's serializer: the codec writes the same bytes.

``codec.encode`` writes with the encoder derived from the models
(``governor.core.wire.encoder``); the reference is the models' own
``dump_json(by_alias=True, exclude_none=True)``, what the codec wrote before it. The history
format is a contract (the golden histories replay byte-identical), so for every input below
the two must be equal byte for byte, and the compiled path must be the one taken.

Inputs: every valid line of every golden history, events of every type generated from the
models' own field types (``tests/core/test_decoder.py``'s generator: any text, any number
in range, nested models, tuples and dicts of them), and text no generator favours
(control characters, non-ASCII, escapes). A valid event holds nothing orjson refuses (the
models bound every int and refuse a lone surrogate), so the codec's fallback to pydantic is
for what has no derived encoder.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError, field_serializer

from governor.core.events import EVENT_CLASSES, Event
from governor.core.wire.codec import EVENT_ADAPTER, encode, to_dict
from governor.core.wire.encoder import encoder_of, encoders
from tests.core.test_decoder import GOLDEN_LINES, _model_strategy, _plausible, pydantic_reading


def reference(event: Event) -> bytes:
    """What pydantic writes (the codec's encoding before the compiled encoder)."""
    return EVENT_ADAPTER.dump_json(event, by_alias=True, exclude_none=True)


def assert_same_bytes(event: Event) -> None:
    expected = reference(event)
    compiled = orjson.dumps(encoders()[type(event)](event), option=orjson.OPT_UTC_Z)
    assert compiled == expected, event
    assert encode(event) == expected
    assert to_dict(event) == EVENT_ADAPTER.dump_python(
        event, mode="json", by_alias=True, exclude_none=True
    )


def _golden_events() -> list[Event]:
    found = []
    for line in GOLDEN_LINES:
        try:
            found.append(EVENT_ADAPTER.validate_json(line))
        except ValidationError:
            continue  # the corrupt goldens' bad lines
    return found


def test_every_event_type_has_a_compiled_encoder() -> None:
    assert set(encoders()) == set(EVENT_CLASSES.values())


def test_every_valid_golden_line_is_written_as_pydantic_writes_it() -> None:
    events = _golden_events()
    assert len(events) > 500
    assert {e.type for e in events} >= {"goal.created", "attempt.started", "attempt.finished"}
    for event in events:
        assert_same_bytes(event)


def test_canonical_golden_lines_are_written_back_unchanged() -> None:
    """A line the codec wrote is written again to the same bytes (most golden lines were
    written by hand, with spaces: those are compared through pydantic above)."""
    same = 0
    for line in GOLDEN_LINES:
        event = pydantic_reading(line)
        if event is not None and reference(event) == line:
            assert encode(event) == line
            same += 1
    assert same > 0


@pytest.mark.parametrize("tag", sorted(EVENT_CLASSES))
def test_generated_events_of_every_type_are_written_as_pydantic_writes_them(tag: str) -> None:
    written = 0

    @settings(max_examples=150, database=None, suppress_health_check=[HealthCheck.too_slow])
    @given(_model_strategy(EVENT_CLASSES[tag], tag).map(_plausible))
    def check(data: dict[str, Any]) -> None:
        nonlocal written
        event = pydantic_reading(json.dumps(data).encode())
        if event is not None:
            written += 1
            assert_same_bytes(event)

    check()
    assert written > 0, f"no generated {tag} was valid: the generator says nothing"


TEXT = st.text(
    st.characters(codec="utf-8") | st.sampled_from('\x00\x1f\x7f\u2028"\\/<>&é😀'),
    max_size=40,
)


@settings(max_examples=300, database=None)
@given(TEXT, TEXT)
def test_any_text_is_written_as_pydantic_writes_it(reason: str, error: str) -> None:
    line = next(line for line in GOLDEN_LINES if b'"attempt.finished"' in line)
    data = json.loads(line)
    data["error"] = error
    data["acceptance"]["satisfied"] = [reason]
    event = pydantic_reading(json.dumps(data).encode())
    assert event is not None
    assert_same_bytes(event)


def test_a_field_with_a_serializer_of_its_own_fails_the_derivation() -> None:
    class Shouting(BaseModel):
        name: str

        @field_serializer("name")
        def _shout(self, value: str) -> str:
            return value.upper()

    with pytest.raises(TypeError, match="Shouting"):
        encoder_of(Shouting)


def test_a_type_with_no_compiled_encoding_fails_the_derivation_naming_the_field() -> None:
    class Odd(BaseModel):
        when: set[int]

    with pytest.raises(TypeError, match=r"Odd\.when"):
        encoder_of(Odd)
