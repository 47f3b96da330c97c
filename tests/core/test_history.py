"""SPEC §3: the history format, its line-numbered errors, the validator and legacy upcasting."""

from __future__ import annotations

from collections.abc import Callable

import orjson
import pytest

from governor.core.history import check_history
from governor.core.wire.codec import decode_lines, encode
from governor.errors import HistoryError
from tests.story import Story


def story_lines() -> list[bytes]:
    s = Story()
    s.plan("a")
    s.attempt("p1-a").attempt("p1-a", "succeeded").accept("p1-a")
    return [encode(e) + b"\n" for e in s.events]


def check(lines: list[bytes]) -> int:
    count = 0
    for _ in check_history(decode_lines(lines)):
        count += 1
    return count


def edit(line: int, change: Callable[[dict], object]) -> list[bytes]:
    lines = story_lines()
    obj = orjson.loads(lines[line - 1])
    change(obj)
    lines[line - 1] = orjson.dumps(obj) + b"\n"
    return lines


def test_a_recorded_story_is_valid() -> None:
    assert check(story_lines()) == len(story_lines())


def _reject_without_reason() -> list[bytes]:
    s = Story(auto_apply=False)
    plan_id = s.propose("a")
    s.op("reject_plan", plan_id=plan_id, reason="no")
    lines = [encode(e) + b"\n" for e in s.events]
    obj = orjson.loads(lines[3])
    obj.pop("reason")
    lines[3] = orjson.dumps(obj) + b"\n"
    return lines


BAD = {
    "unknown type": (
        lambda: edit(3, lambda o: o.update(type="plan.exploded")),
        3,
        "unknown event type 'plan.exploded'",
    ),
    "unknown field": (
        lambda: edit(2, lambda o: o.update(colour="red")),
        2,
        "unknown field 'colour' in plan.requested",
    ),
    "unknown nested field": (
        lambda: edit(1, lambda o: o["policy"].update(max_replanz=3)),
        1,
        "unknown field 'policy.max_replanz'",
    ),
    "bad value": (lambda: edit(2, lambda o: o.update(seq=0)), 2, "field 'seq'"),
    "bad goal id": (lambda: edit(1, lambda o: o.update(goal_id="../etc")), 1, "field 'goal_id'"),
    "missing field": (lambda: edit(2, lambda o: o.pop("plan_id")), 2, "missing field 'plan_id'"),
    "not UTC": (
        lambda: edit(2, lambda o: o.update(at="2026-01-01T00:00:01+02:00")),
        2,
        "must be UTC",
    ),
    # SPEC §3: ``at`` is RFC 3339 UTC; pydantic alone would read these as times
    "a number for a time": (
        lambda: edit(2, lambda o: o.update(at=1767225601)),
        2,
        "field 'at' in plan.requested: must be an RFC 3339 time in UTC",
    ),
    "a numeric string for a time": (
        lambda: edit(2, lambda o: o.update(at="1767225601")),
        2,
        "must be an RFC 3339 time in UTC",
    ),
    "a date without a time": (
        lambda: edit(2, lambda o: o.update(at="2026-01-01")),
        2,
        "must be an RFC 3339 time in UTC",
    ),
    "a time without seconds": (
        lambda: edit(2, lambda o: o.update(at="2026-01-01T00:01Z")),
        2,
        "must be an RFC 3339 time in UTC",
    ),
    "invalid JSON": (lambda: [*story_lines()[:2], b"{not json\n"], 3, "not valid JSON"),
    "a JSON array": (lambda: [*story_lines()[:2], b"[1,2]\n"], 3, "an event must be a JSON object"),
    "non-UTF-8": (lambda: [*story_lines()[:2], b'{"type": "\xff"}\n'], 3, "not valid UTF-8"),
    "an empty line": (lambda: [*story_lines()[:2], b"\n", *story_lines()[2:]], 3, "empty line"),
    "a torn final line": (
        lambda: [*story_lines()[:-1], story_lines()[-1].rstrip(b"\n")],
        len(story_lines()),
        "torn final line",
    ),
    "a seq gap": (
        lambda: story_lines()[:2] + story_lines()[3:],
        3,
        "seq 4 breaks the sequence (expected 3)",
    ),
    "a second goal.created": (
        lambda: [*story_lines()[:1], story_lines()[0].replace(b'"seq":1', b'"seq":2')],
        2,
        "goal.created appears a second time",
    ),
    "no goal.created first": (lambda: story_lines()[1:], 1, "must start with goal.created"),
    "another goal's event": (
        lambda: edit(2, lambda o: o.update(goal_id="other")),
        2,
        "differs from the history's",
    ),
    "time going back": (
        lambda: edit(3, lambda o: o.update(at="2025-01-01T00:00:00Z")),
        3,
        "at goes back in time",
    ),
    "an unknown plan": (lambda: edit(3, lambda o: o.update(plan_id="p9")), 3, "unknown plan 'p9'"),
    "an unknown work item": (
        lambda: edit(6, lambda o: o.update(work_id="p1-zz")),
        6,
        "unknown work item 'p1-zz'",
    ),
    "a work item outside its plan's proposal": (
        lambda: edit(4, lambda o: o.update(work_id="p1-zz")),
        4,
        "'p1-zz' is not a work item of the proposal of 'p1'",
    ),
    "an attempt number skipped": (
        lambda: edit(6, lambda o: o.update(attempt=2)),
        6,
        "should be 1 (attempt numbers are gapless)",
    ),
    "a run id reused": (
        lambda: edit(8, lambda o: o.update(run_id="r1")),
        8,
        "run id 'r1' is used a second time",
    ),
    "a finish by a stranger run": (
        lambda: edit(7, lambda o: o.update(run_id="rX")),
        7,
        "is not a run of attempt 1",
    ),
    "a reason missing where required": (
        _reject_without_reason,
        4,
        "a reason is required",
    ),
}


@pytest.mark.parametrize(("make", "line", "detail"), BAD.values(), ids=BAD.keys())
def test_bad_input_names_the_line(make: Callable[[], list[bytes]], line: int, detail: str) -> None:
    with pytest.raises(HistoryError) as info:
        check(make())
    assert info.value.line == line
    assert detail in info.value.detail
    assert str(info.value).startswith(f"line {line}: ")


def test_an_empty_history_is_an_error() -> None:
    with pytest.raises(HistoryError, match="empty"):
        check([])


def test_finishing_an_attempt_twice_is_refused() -> None:
    lines = story_lines()
    twice = [*lines[:7], lines[6].replace(b'"seq":7', b'"seq":8')]
    with pytest.raises(HistoryError, match="already finished"):
        check(twice)


def test_continuing_a_finished_attempt_is_refused() -> None:
    s = Story()
    s.plan("a")
    s.start("p1-a")
    s.continue_("p1-a")
    s.finish("p1-a")
    lines = [encode(e) + b"\n" for e in s.events]
    cont = orjson.loads(lines[-2])
    cont.update(seq=len(lines) + 1, run_id="r9", at=orjson.loads(lines[-1])["at"])
    with pytest.raises(HistoryError, match="already finished"):
        check([*lines, orjson.dumps(cont) + b"\n"])


def test_budget_raised_must_raise() -> None:
    s = Story()
    lines = [encode(e) + b"\n" for e in s.events]
    lowered = {
        "schema_version": 1,
        "goal_id": "g",
        "seq": 2,
        "at": "2026-01-01T00:00:01Z",
        "actor": "operator:x",
        "reason": "why",
        "type": "budget.raised",
        "ledger": "replans",
        "to": 5,
    }
    with pytest.raises(HistoryError, match="does not raise the limit"):
        check([*lines, orjson.dumps(lowered) + b"\n"])


def legacy(lines: list[bytes]) -> list[bytes]:
    out = []
    for raw in lines:
        obj = orjson.loads(raw)
        if obj["type"].startswith("attempt."):
            obj.pop("attempt")
        out.append(orjson.dumps(obj) + b"\n")
    return out


def test_legacy_attempt_events_are_numbered_from_earlier_lines() -> None:
    pairs = list(decode_lines(legacy(story_lines())))
    attempts = [(e.type, e.attempt) for _, e in pairs if e.type.startswith("attempt.")]  # type: ignore[union-attr]
    assert attempts == [
        ("attempt.started", 1),
        ("attempt.finished", 1),
        ("attempt.started", 2),
        ("attempt.finished", 2),
    ]
    assert check(legacy(story_lines())) == len(story_lines())


def test_a_legacy_item_retries_at_two_not_one() -> None:
    lines = legacy(story_lines())[
        :7
    ]  # goal, plan, proposal, work, applied, started, finished (failed)
    from governor.core.wire.codec import LineDecoder

    decoder = LineDecoder()
    view = None
    for _, _, after in check_history(decode_lines(lines, decoder=decoder)):
        view = after
    assert view is not None
    assert view.work["p1-a"].attempts_used == 1
    assert "read as attempt 1" in decoder.notes[0]
    assert view.work["p1-a"].attempts_used + 1 == 2


@pytest.mark.parametrize(
    "at",
    [
        "2026-01-01T00:00:01Z",
        "2026-01-01T00:00:01.5Z",
        "2026-01-01T00:00:01+00:00",
        "2026-01-01t00:00:01z",
        "2026-01-01 00:00:01Z",
    ],
)
def test_rfc_3339_times_in_utc_are_read(at: str) -> None:
    """SPEC §3: ``at`` is RFC 3339 UTC; its spellings (``T`` or a space, any case, ``Z`` or
    ``+00:00``, fractional seconds) are all read, by the compiled decoder and the models."""
    lines = edit(2, lambda o: o.update(at=at))
    assert check(lines) == len(lines)
