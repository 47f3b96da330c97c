"""``replay --json`` renders its lines incrementally (``governor.render.lines``): each line
must be exactly ``orjson.dumps(records.step_record(step)) + b"\\n"``, the pinned shape
(SPEC §9), whatever was kept from the step before."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.history_gen import events
from governor.analysis.replay import replay
from governor.core.events import Event
from governor.core.wire.codec import LineDecoder, decode_lines, encode
from governor.errors import HistoryError
from governor.render import records
from governor.render.lines import _HEADS_KEPT, StepLines
from tests.core.test_properties import policies, recorded

GOLDEN = sorted((Path(__file__).parent / "golden").glob("*.jsonl"))


def assert_lines_are_the_records(pairs: Iterable[tuple[int, Event]]) -> int:
    lines, count = StepLines(), 0
    try:
        for step in replay(pairs):
            assert lines.line(step) == orjson.dumps(records.step_record(step)) + b"\n", step.seq
            count += 1
    except HistoryError:
        pass  # a corrupt golden history: the lines up to its fault were checked
    return count


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.stem)
@pytest.mark.parametrize("structs", [False, True], ids=["events", "structs"])
def test_every_golden_line_is_its_step_record(path: Path, structs: bool) -> None:
    with path.open("rb") as f:
        decoder = LineDecoder(path.name, structs=structs)
        assert_lines_are_the_records(decode_lines(f, decoder=decoder))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), policy=policies)
def test_every_recorded_line_is_its_step_record(
    data: st.DataObject, policy: dict[str, Any]
) -> None:
    events = recorded(data, policy, max_steps=80).events
    raw = b"".join(encode(e) + b"\n" for e in events)
    decoder = LineDecoder("h", structs=True)
    count = assert_lines_are_the_records(
        decode_lines(raw.splitlines(keepends=True), decoder=decoder)
    )
    assert count == len(events)


def test_a_generated_long_history_renders_its_step_records() -> None:
    """10^5 events over a few items (the ``bench/replay.py --json-rate`` shape): every
    line the incremental renderer splices is the step record rendered whole."""
    raw = [orjson.dumps(event) + b"\n" for event in events(100_000, cycles=1_500)]
    count = assert_lines_are_the_records(
        decode_lines(raw, decoder=LineDecoder("generated", structs=True))
    )
    assert count == len(raw) >= 100_000


def test_steps_of_two_replays_in_turn_render_whole_rows_again() -> None:
    """A renderer splices changed rows only onto the snapshot it rendered last, from the
    same replay: steps of two replays in turn (their snapshots count alike) each render
    as their own step record."""
    first, second = (
        list(replay(decode_lines(raw.splitlines(keepends=True), decoder=LineDecoder("h"))))
        for raw in (
            b"".join(orjson.dumps(e) + b"\n" for e in events(3_000, cycles=cycles))
            for cycles in (5, 7)
        )
    )
    lines = StepLines()
    for n, (a, b) in enumerate(zip(first, second, strict=False)):
        step = a if n % 2 == 0 else b
        assert lines.line(step) == orjson.dumps(records.step_record(step)) + b"\n", n


def test_kept_decision_heads_tell_apart_what_their_stamps_print() -> None:
    """The renderer keeps a decision's head by what it reads (``governor.render.lines``):
    an equal ``not_before`` at another UTC offset stamps differently, a reason or a status
    apart is another head, and past the table's bound heads are rendered again."""
    raw = b"".join(orjson.dumps(e) + b"\n" for e in events(400, cycles=5))
    steps = list(replay(decode_lines(raw.splitlines(keepends=True), decoder=LineDecoder("h"))))
    when = datetime(2026, 3, 1, 12, tzinfo=UTC)
    variants: list[dict[str, Any]] = [
        {"not_before": when, "blocked_on": "upstream"},
        {"not_before": when.astimezone(timezone(timedelta(hours=2))), "blocked_on": "upstream"},
        {"not_before": when, "blocked_on": "upstream", "reason": "another"},
        {"not_before": None, "status": "waiting"},
        {"not_before": None, "exhausted": "replans"},
    ]
    lines = StepLines()
    for n, step in enumerate(steps):
        changed = step._replace(decision=step.decision._replace(**variants[n % len(variants)]))
        assert lines.line(changed) == orjson.dumps(records.step_record(changed)) + b"\n", n
    for n in range(2 * _HEADS_KEPT + 3):  # more heads than are kept, then the first again
        step = steps[n % len(steps)]
        changed = step._replace(decision=step.decision._replace(reason=f"reason {n % 4100}"))
        assert lines.line(changed) == orjson.dumps(records.step_record(changed)) + b"\n", n
