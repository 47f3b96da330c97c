"""The compiled decoder against the pydantic models: the differential test of SPEC §11.1.

For every input below, three readings are compared:

    pydantic    ``EVENT_ADAPTER.validate_json`` — the models, the one definition
    compiled    ``decode_compiled`` — the msgspec structs derived from the models
    codec       ``codec.decode`` and ``LineDecoder`` — what every reader uses
    lines       ``LineDecoder(structs=True).lines`` — the generated line reader of
                replay and validate (``decoder.line_reader``), against the same lines
                read by pydantic alone (``LineDecoder(compiled=False)``)
    chunks      ``LineDecoder(structs=True).chunks`` — replay's reader, a chunk of lines
                at a time (``decoder.chunk_reader``), the same lines cut into chunks of
                every size from one line to all of them: what ``lines`` reads

and must agree: the compiled path returns an event only where pydantic accepts the line,
and then an equal one (``==``, the same encoding, the same ``repr``); the codec accepts
and rejects exactly what pydantic does, with the same values and the same error message.
Canonical lines (what the codec writes) must take the compiled path, or it would be a
fast path in name only.

Inputs: every line of every golden history (legacy and corrupt ones included), policies
of every shape SPEC §11.5 reads (milestones above replans, as round 1 wrote them, upcast
with a note; milestones omitted, whose default depends on the replans), events generated
from the models' own field types (every event type), and corrupted lines: golden lines
with a field replaced by a hostile value, truncated, or with bytes flipped. Rules between
events (SPEC §11.2: nothing after the end) are the history validator's, not the decoder's.
"""

from __future__ import annotations

import json
import types
import typing
import zlib
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import AfterValidator, BaseModel, ValidationError, field_validator
from pydantic.fields import FieldInfo

from bench.history_gen import events
from governor.core.events import EVENT_CLASSES
from governor.core.history import check_history
from governor.core.wire import decoder, derive
from governor.core.wire.codec import EVENT_ADAPTER, LineDecoder, decode, encode
from governor.core.wire.decoder import decode_compiled, event_of
from governor.errors import CorruptEventError, HistoryError
from governor.store.rows import read_row

ROOT = Path(__file__).resolve().parents[2]
GOLDEN_FILES = [
    *sorted((ROOT / "tests" / "golden").glob("*.jsonl")),
    ROOT / "examples" / "login-page.jsonl",
]
GOLDEN_LINES = [
    line for path in GOLDEN_FILES for line in path.read_bytes().splitlines() if line.strip()
]


def pydantic_reading(line: bytes) -> Any:
    try:
        return EVENT_ADAPTER.validate_json(line)
    except ValidationError:
        return None


def assert_agree(line: bytes) -> None:
    """The compiled path never accepts what pydantic refuses, nor yields another value."""
    expected = pydantic_reading(line)
    compiled = decode_compiled(line)
    if compiled is not None:
        assert expected is not None, f"compiled accepted what pydantic refuses: {line!r}"
        assert compiled == expected, line
        assert encode(compiled) == encode(expected), line
        assert repr(compiled) == repr(expected), line
    try:
        via_codec = decode(line)
    except ValidationError:
        via_codec = None
    assert (via_codec is None) == (expected is None), line
    if via_codec is not None:
        assert encode(via_codec) == encode(expected)
    assert read_lines([line + b"\n"], structs=True) == read_lines([line + b"\n"], compiled=False)
    assert read_chunked([line + b"\n"], 1) == read_lines([line + b"\n"], structs=True)


def read_lines(
    lines: list[bytes], *, allow_torn: bool = False, **how: bool
) -> tuple[list[tuple[int, bytes, str]], list[str], str | None, int | None]:
    """What ``LineDecoder.lines`` reads (``how``: its options): each event as its line
    number, its encoding and its ``repr`` (a struct as its pydantic event), the notes, the
    error that stopped it and the torn line."""
    decoder_ = LineDecoder("h.jsonl", **how)
    return _reading(decoder_, decoder_.lines(lines, allow_torn=allow_torn))


def read_chunked(
    lines: list[bytes], size: int, *, allow_torn: bool = False
) -> tuple[list[tuple[int, bytes, str]], list[str], str | None, int | None]:
    """What ``LineDecoder(structs=True).chunks`` reads of ``lines`` cut into chunks of
    ``size`` lines (as ``read_lines`` says it)."""
    decoder_ = LineDecoder("h.jsonl", structs=True)
    chunks = [lines[start : start + size] for start in range(0, len(lines), size)]
    return _reading(decoder_, decoder_.chunks(chunks, allow_torn=allow_torn))


def _reading(
    decoder_: LineDecoder, pairs: Iterator[tuple[int, Any]]
) -> tuple[list[tuple[int, bytes, str]], list[str], str | None, int | None]:
    read, error = [], None
    try:
        for number, event in pairs:
            read.append((number, encode(event_of(event)), repr(event_of(event))))
    except HistoryError as exc:
        error = str(exc)
    return read, decoder_.notes, error, decoder_.torn_line


CHUNK_SIZES = [1, 2, 3, 4, 5, 7, 64, 10**6]
"""Chunks of every size: with ``_attempt_lines``, a line of interest (10, 11, 12, or the
next to last) falls first, last and in the middle of a chunk, and chunks mix types."""


def assert_chunks_read_as_lines(lines: list[bytes], *, allow_torn: bool = False) -> None:
    """Replay's chunked reader gives what the line reader gives, however the lines are
    cut: the same events, notes, error (at the same line) and torn line."""
    expected = read_lines(lines, structs=True, allow_torn=allow_torn)
    for size in CHUNK_SIZES:
        assert read_chunked(lines, size, allow_torn=allow_torn) == expected, size


# --- golden histories ----------------------------------------------------------------------


def test_the_golden_corpus_is_read() -> None:
    assert len(GOLDEN_FILES) > 50
    assert len(GOLDEN_LINES) > 500


@pytest.mark.parametrize("path", GOLDEN_FILES, ids=lambda p: p.stem)
def test_every_golden_line_reads_the_same_both_ways(path: Path) -> None:
    for line in path.read_bytes().splitlines():
        if line.strip():
            assert_agree(line)


def test_every_valid_golden_line_takes_the_compiled_path() -> None:
    valid = [line for line in GOLDEN_LINES if pydantic_reading(line) is not None]
    assert len(valid) > 500
    assert [line for line in valid if decode_compiled(line) is None] == []


def test_canonical_encodings_take_the_compiled_path() -> None:
    for line in GOLDEN_LINES:
        event = pydantic_reading(line)
        if event is not None:
            assert decode_compiled(encode(event)) == event


@pytest.mark.parametrize("path", GOLDEN_FILES, ids=lambda p: p.stem)
def test_line_decoder_gives_the_same_events_notes_and_errors_both_ways(path: Path) -> None:
    """Legacy lines (SPEC §3 upcasts) and corrupt histories included."""
    readings = []
    for compiled in (True, False):
        decoder_ = LineDecoder(path.name, compiled=compiled)
        events, error = [], None
        for number, line in enumerate(path.read_bytes().splitlines(), start=1):
            try:
                events.append(decoder_.decode(line, number))
            except HistoryError as exc:
                error = str(exc)
        readings.append((events, decoder_.notes, error))
    assert readings[0] == readings[1]


@pytest.mark.parametrize("path", GOLDEN_FILES, ids=lambda p: p.stem)
def test_the_line_reader_reads_every_golden_history_as_pydantic_does(path: Path) -> None:
    """The generated reader of replay and validate, the whole history at once: the same
    events (legacy ones upcast), notes and error, at the same line."""
    lines = path.read_bytes().splitlines(keepends=True)
    assert read_lines(lines, structs=True) == read_lines(lines, compiled=False)
    assert read_lines(lines, structs=True) == read_lines(lines)
    assert_chunks_read_as_lines(lines)


def _attempt_lines() -> list[bytes]:
    """A valid history of one goal (``bench/history_gen.py``'s shape): a plan, its items,
    then attempts from line 10 on (the types the reader inlines), started, continued,
    finished in turn, with evidence."""
    lines = [orjson.dumps(event) + b"\n" for event in events(60, cycles=2)]
    assert [json.loads(line)["type"] for line in lines[9:12]] == [
        "attempt.started",
        "attempt.continued",
        "attempt.finished",
    ]
    return lines


BAD_IN_THE_MIDDLE = {
    "a value the models refuse": lambda o: {**o, "work_id": "no spaces"},
    "a run id the models refuse": lambda o: {**o, "run_id": "-x"},
    "a time not in UTC": lambda o: {**o, "at": o["at"].replace("Z", "+01:00")},
    "a time without a zone": lambda o: {**o, "at": o["at"].replace("Z", "")},
    "a time in a week date": lambda o: {**o, "at": "2026-W01-1T00:00:00Z"},
    "an unknown field": lambda o: {**o, "extra": 1},
    "a missing field": lambda o: {k: v for k, v in o.items() if k != "at"},
    "an unknown type": lambda o: {**o, "type": "attempt.paused"},
    "not an object": lambda o: [o],
    "evidence the models refuse": lambda o: {**o, "evidence": {"effects": "maybe"}},
    "partial output with a bad digest": lambda o: {
        **o,
        "evidence": {"partial": {"bytes": 1, "sha256": "X" * 64}},
    },
}
FINE_IN_THE_MIDDLE = {
    "a +00:00 offset (pydantic reads it)": lambda o: {**o, "at": o["at"].replace("Z", "+00:00")},
    "nanoseconds (pydantic truncates)": lambda o: {
        **o,
        "at": o["at"].replace("Z", ".123456789Z"),
    },
    "microseconds (the compiled path reads them)": lambda o: {
        **o,
        "at": o["at"].replace("Z", ".000001Z"),
    },
    "a number as a string (pydantic reads it)": lambda o: {**o, "attempt": str(o["attempt"])},
}


@pytest.mark.parametrize("bad", BAD_IN_THE_MIDDLE.values(), ids=list(BAD_IN_THE_MIDDLE))
@pytest.mark.parametrize("where", [9, 10, 11, -2], ids=["started", "continued", "finished", "late"])
def test_one_bad_line_among_attempts_is_reported_at_its_line_as_before(
    bad: Any, where: int
) -> None:
    lines = _attempt_lines()
    lines[where] = json.dumps(bad(json.loads(lines[where]))).encode() + b"\n"
    fast = read_lines(lines, structs=True)
    assert fast == read_lines(lines, compiled=False) == read_lines(lines)
    assert_chunks_read_as_lines(lines)
    read, _, error, _ = fast
    number = where % len(lines) + 1
    assert error is not None
    assert error.startswith(f"h.jsonl: line {number}: "), error
    assert [n for n, _, _ in read] == list(range(1, number))


@pytest.mark.parametrize("fine", FINE_IN_THE_MIDDLE.values(), ids=list(FINE_IN_THE_MIDDLE))
def test_an_unusual_line_among_attempts_is_read_as_pydantic_reads_it(fine: Any) -> None:
    lines = _attempt_lines()
    for where in (9, 10, 11):
        lines[where] = json.dumps(fine(json.loads(lines[where]))).encode() + b"\n"
    fast = read_lines(lines, structs=True)
    assert fast == read_lines(lines, compiled=False)
    assert_chunks_read_as_lines(lines)
    assert fast[2] is None
    assert len(fast[0]) == len(lines)


@pytest.mark.parametrize("allow_torn", [False, True])
def test_a_torn_last_line_stops_the_reader_as_before(allow_torn: bool) -> None:
    lines = _attempt_lines()
    lines[-1] = lines[-1][:-1]
    fast = read_lines(lines, structs=True, allow_torn=allow_torn)
    assert fast == read_lines(lines, compiled=False, allow_torn=allow_torn)
    assert_chunks_read_as_lines(lines, allow_torn=allow_torn)
    read, _, error, torn = fast
    assert len(read) == len(lines) - 1
    if allow_torn:
        assert (error, torn) == (None, len(lines))
    else:
        assert error == f"h.jsonl: line {len(lines)}: torn final line (no trailing newline)"


def test_a_line_nested_too_deeply_is_refused_at_its_line_as_before() -> None:
    """As the compiled event path words it; pydantic alone refuses the same line as
    JSON past its depth limit (msgspec raises ``RecursionError``, which the codec words)."""
    lines = _attempt_lines()
    lines[10] = b'{"evidence": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n"
    fast = read_lines(lines, structs=True)
    assert fast == read_lines(lines)
    assert_chunks_read_as_lines(lines)
    assert fast[2] == "h.jsonl: line 11: nested too deeply to be an event"
    read, notes, error, _ = read_lines(lines, compiled=False)
    assert (read, notes) == fast[:2]
    assert error is not None
    assert error.startswith("h.jsonl: line 11: not valid JSON (depth limit exceeded")


def test_the_line_reader_remembers_attempts_for_a_legacy_line_after_them() -> None:
    """An item's latest attempt, kept by the reader inline, numbers a legacy line that
    follows (SPEC §3 upcasts): as the event path numbers it."""
    lines = _attempt_lines()
    started = next(n for n, line in enumerate(lines) if b'"attempt.started"' in line)
    finished = next(
        n for n, line in enumerate(lines) if n > started and b'"attempt.finished"' in line
    )
    legacy = json.loads(lines[finished])
    del legacy["attempt"]
    lines[finished] = json.dumps(legacy).encode() + b"\n"
    fast = read_lines(lines, structs=True)
    assert fast == read_lines(lines, compiled=False) == read_lines(lines)
    assert_chunks_read_as_lines(lines)
    assert any("legacy attempt.finished" in note for note in fast[1])


def test_chunks_of_a_valid_history_take_the_sure_path_and_read_as_lines() -> None:
    """The whole chunk is read at once where it is sure (no line is read again): the
    same structs as the line reader, times and all, however the lines are cut."""
    lines = _attempt_lines()
    assert_chunks_read_as_lines(lines)
    again: list[int] = []
    reader = decoder.line_reader(("attempt.started", "work_id", "attempt"))

    def counting(*args: Any) -> Any:
        again.append(args[-1])
        return reader(*args)

    decoder_ = LineDecoder("h.jsonl", structs=True)
    read_chunks = decoder.chunk_reader(("attempt.started", "work_id", "attempt"))
    scope = read_chunks.__globals__
    scope["read_lines"] = counting
    try:
        chunks = [lines[start : start + 7] for start in range(0, len(lines), 7)]
        read = list(decoder_.chunks(chunks))
    finally:
        scope["read_lines"] = reader
    assert [n for n, _ in read] == list(range(1, len(lines) + 1))
    assert again == []
    assert [event_of(s) for _, s in read] == [
        event_of(s) for _, s in LineDecoder(structs=True).lines(lines)
    ]


MIXED_TIMES = {
    "whole seconds and microseconds in one chunk": lambda o, n: {
        **o,
        "at": o["at"].replace("Z", ".000001Z") if n % 2 else o["at"],
    },
    "microseconds only": lambda o, n: {**o, "at": o["at"].replace("Z", ".250000Z")},
    "a +00:00 offset every third line": lambda o, n: {
        **o,
        "at": o["at"].replace("Z", "+00:00") if n % 3 == 0 else o["at"],
    },
    "a time of the short shape with a letter for a digit": lambda o, n: {
        **o,
        "at": o["at"].replace("2026", "2O26") if n == 30 else o["at"],
    },
    "a time of the long shape with a space for a digit": lambda o, n: {
        **o,
        "at": o["at"].replace("Z", ".12345 Z") if n == 30 else o["at"].replace("Z", ".123456Z"),
    },
    "a value with a newline among ids": lambda o, n: (
        {**o, "run_id": o["run_id"] + "\nx"} if n == 31 else o
    ),
    "ids as long as the pattern allows, and one longer": lambda o, n: (
        {**o, "run_id": "r" * (100 if n != 32 else 101)} if "run_id" in o else o
    ),
}


@pytest.mark.parametrize("change", MIXED_TIMES.values(), ids=list(MIXED_TIMES))
def test_times_and_ids_a_chunk_checks_together_read_as_each_alone(change: Any) -> None:
    """The bulk checks of a chunk (the times' shapes, the ids' pattern over the values
    joined) accept and refuse what the line reader does, line by line."""
    lines = [
        json.dumps(change(json.loads(line), n)).encode() + b"\n"
        for n, line in enumerate(_attempt_lines())
    ]
    fast = read_lines(lines, structs=True)
    assert fast == read_lines(lines, compiled=False)
    assert_chunks_read_as_lines(lines)
    assert len(fast[0]) >= 30, fast[2]  # the change is read where it is, among attempts


@pytest.mark.parametrize(
    "lines",
    [
        [],
        [b"\n"],
        [b""],
        [b"{}"],
        [b"   \n", b"{}\n"],
    ],
    ids=["no line", "an empty line", "an empty last line", "a torn object", "blank then bad"],
)
def test_chunks_of_nothing_or_of_empty_lines_read_as_lines(lines: list[bytes]) -> None:
    for allow_torn in (False, True):
        assert_chunks_read_as_lines(lines, allow_torn=allow_torn)


def test_crlf_line_ends_and_empty_chunks_read_as_lines() -> None:
    lines = [line[:-1] + b"\r\n" for line in _attempt_lines()]
    assert_chunks_read_as_lines(lines)
    expected = read_lines(lines, structs=True)
    decoder_ = LineDecoder("h.jsonl", structs=True)
    chunks = [[], *[lines[start : start + 5] for start in range(0, len(lines), 5)], []]
    assert _reading(decoder_, decoder_.chunks(chunks)) == expected


def test_pydantic_events_are_read_from_chunks_line_by_line() -> None:
    """Without ``structs`` a decoder reads the chunks' lines one by one, as ``lines``."""
    lines = _attempt_lines()
    lines[11] = b"{}\n"
    for how in ({}, {"compiled": False}):
        decoder_ = LineDecoder("h.jsonl", **how)
        chunks = [lines[start : start + 4] for start in range(0, len(lines), 4)]
        assert _reading(decoder_, decoder_.chunks(chunks)) == read_lines(lines, **how)


def test_the_legacy_history_is_upcast_the_same_way() -> None:
    path = ROOT / "tests" / "golden" / "legacy_attempt_less.jsonl"
    fast, slow = LineDecoder(compiled=True), LineDecoder(compiled=False)
    lines = path.read_bytes().splitlines()
    assert [fast.decode(line, n) for n, line in enumerate(lines, 1)] == [
        slow.decode(line, n) for n, line in enumerate(lines, 1)
    ]
    assert fast.notes == slow.notes
    assert any("legacy attempt.started" in note for note in fast.notes)


# --- policies of round 1 and the milestones default (SPEC §11.5, decision record 0006) -------

ROUND_ONE = ROOT / "tests" / "golden" / "round_one_milestones_above_replans.jsonl"


def _goal_created(policy: dict[str, Any]) -> bytes:
    obj = json.loads(ROUND_ONE.read_bytes().splitlines()[0])
    return json.dumps({**obj, "policy": policy}).encode()


def _readings(line: bytes) -> list[tuple[Any, list[str]]]:
    """What the line decoder reads both ways (the event and the notes), and the store."""
    readings: list[tuple[Any, list[str]]] = []
    for compiled in (True, False):
        decoder_ = LineDecoder("h.jsonl", compiled=compiled)
        try:
            readings.append((decoder_.decode(line, 1), decoder_.notes))
        except HistoryError as exc:
            readings.append((str(exc), decoder_.notes))
    try:
        stored: Any = read_row(GOAL_ID, 1, line, zlib.crc32(line))
    except CorruptEventError:
        stored = None
    readings.append((stored, []))
    return readings


GOAL_ID = "g-round-one-milestones-above-replans"


@settings(max_examples=300, database=None)
@given(
    replans=st.integers(0, 12),
    milestones=st.none() | st.integers(0, 15),
    attempts=st.none() | st.integers(1, 5),
    same=st.none() | st.integers(1, 5),
)
def test_a_policy_reads_the_same_both_ways_whether_milestones_fit_are_omitted_or_not(
    replans: int, milestones: int | None, attempts: int | None, same: int | None
) -> None:
    """A round-1 policy (milestones above replans) is a doubt of the compiled path and
    upcast, lowered with a note, exactly as pydantic's path does; an omitted
    ``max_milestones`` is ``min(4, max_replans - 1)`` both ways (SPEC §12.1), an omitted
    ``max_same_failures`` no limit (SPEC §12.10); the store reads the row as the line
    decoder does."""
    policy: dict[str, Any] = {"max_replans": replans}
    if milestones is not None:
        policy["max_milestones"] = milestones
    if attempts is not None:
        policy["max_attempts"] = attempts
    if same is not None:
        policy["max_same_failures"] = same
    line = _goal_created(policy)
    assert_agree(line)
    fast, slow, stored = _readings(line)
    assert fast == slow
    event, notes = fast
    assert not isinstance(event, str), event
    if milestones is not None and milestones > replans:
        assert decode_compiled(line) is None, "a round-1 policy goes down the upcasting path"
        assert event.policy.max_milestones == replans
        assert len(notes) == 1
        assert "max_milestones" in notes[0]
    else:
        assert decode_compiled(line) == event
        want = max(0, min(4, replans - 1)) if milestones is None else milestones
        assert event.policy.max_milestones == want
        assert notes == []
    assert event.policy.max_same_failures == same
    assert stored[0] == event


def test_the_round_one_golden_is_upcast_the_same_way_by_every_reader() -> None:
    line = ROUND_ONE.read_bytes().splitlines()[0]
    assert decode_compiled(line) is None
    fast, slow, stored = _readings(line)
    assert fast == slow
    assert fast[0].policy.max_milestones == 2
    assert stored[0] == fast[0]


@pytest.mark.parametrize("end", ["completed", "cancelled"])
def test_an_event_after_the_end_is_the_validators_business_not_the_decoders(end: str) -> None:
    """SPEC §11.2 is a rule between events: every line decodes (on the compiled path),
    and the history check refuses the one after the end, naming the same line both ways."""
    path = ROOT / "tests" / "golden" / f"corrupt_event_after_{end}.jsonl"
    lines = path.read_bytes().splitlines()
    assert all(decode_compiled(line) is not None for line in lines)
    errors = []
    for compiled in (True, False):
        decoder_ = LineDecoder(path.name, compiled=compiled)
        pairs = ((n, decoder_.decode(line, n)) for n, line in enumerate(lines, start=1))
        with pytest.raises(HistoryError) as caught:
            list(check_history(pairs, source=path.name))
        errors.append(str(caught.value))
    assert errors[0] == errors[1]
    expected = json.loads(path.with_suffix(".expected.json").read_text())
    assert f"line {expected['error_line']}:" in errors[0]
    assert expected["error_contains"] in errors[0]


# --- events generated from the models' own field types --------------------------------------


def _time_text(moment: datetime, style: int) -> str:
    text = moment.isoformat()
    return [text.replace("+00:00", "Z"), text, text.replace("T", " ")][style]


def _strategy(hint: Any) -> st.SearchStrategy[Any]:
    """Valid-looking JSON values for a pydantic annotation (constraints respected)."""
    origin = get_origin(hint)
    if origin is Annotated:
        base, *extras = get_args(hint)
        found = [m for e in extras for m in (e.metadata if isinstance(e, FieldInfo) else [e])]
        return _constrained(base, found)
    if origin in (Union, types.UnionType):
        return st.one_of(*(_strategy(a) for a in get_args(hint)))
    if hint is type(None):
        return st.none()
    if origin is Literal:
        return st.sampled_from(get_args(hint))
    if origin is tuple:
        return st.lists(_strategy(get_args(hint)[0]), max_size=3)
    if origin is dict:
        key, value = get_args(hint)
        return st.dictionaries(_strategy(key), _strategy(value), min_size=1, max_size=2)
    if isinstance(hint, type) and issubclass(hint, BaseModel):
        return _model_strategy(hint)
    if hint is bool:
        return st.booleans()
    if hint is str:
        return st.text(max_size=20)
    raise TypeError(hint)


def _constrained(base: Any, constraints: list[Any]) -> st.SearchStrategy[Any]:
    bounds = {
        name: getattr(c, name)
        for c in constraints
        for name in ("ge", "gt", "le", "min_length", "max_length")
        if getattr(c, name, None) is not None
    }
    pattern = next((c.pattern for c in constraints if getattr(c, "pattern", None)), None)
    if any(isinstance(c, AfterValidator) for c in constraints):
        return st.builds(
            _time_text,
            st.datetimes(
                min_value=datetime(2000, 1, 1),
                max_value=datetime(2100, 1, 1),
                timezones=st.just(UTC),
            ),
            st.integers(0, 2),
        )
    if pattern:  # without the anchors: hypothesis would let "$" take a final newline
        return st.from_regex(pattern.removeprefix("^").removesuffix("$"), fullmatch=True)
    if base is str:
        return st.text(
            min_size=bounds.get("min_length", 0), max_size=min(bounds.get("max_length", 30), 30)
        )
    low = bounds.get("ge", bounds.get("gt"))
    high = bounds.get("le")
    if base is int:
        return st.integers(low, high)
    return st.floats(low, high, exclude_min="gt" in bounds, allow_nan=False, allow_infinity=False)


def _model_strategy(model: type[BaseModel], tag: str | None = None) -> st.SearchStrategy[Any]:
    hints = typing.get_type_hints(model, include_extras=True)
    required: dict[str, st.SearchStrategy[Any]] = {}
    optional: dict[str, st.SearchStrategy[Any]] = {}
    for name, info in model.model_fields.items():
        key = info.alias or name
        if name == "type" and tag is not None:
            required[key] = st.just(tag)
            continue
        hint = Annotated[hints[name], *info.metadata] if info.metadata else hints[name]
        (required if info.is_required() else optional)[key] = _strategy(hint)
    return st.fixed_dictionaries(required, optional=optional)


def _plausible(data: dict[str, Any]) -> dict[str, Any]:
    """Nudge generated events towards validity (rules between fields are rarely met by chance)."""
    if data.get("type") == "goal.created" and isinstance(data.get("profiles"), dict):
        name = next(iter(data["profiles"]))
        data["planner"] = data["worker"] = name
    if data.get("type") == "budget.raised" and data.get("reason") and data["to"] > 0:
        # make the rest fit the ledger: a work id where it counts per item,
        # a whole number in range where it counts
        if data["ledger"] in ("attempts", "uncharged_attempts"):
            data.setdefault("work_id", "p1-a")
        else:
            data.pop("work_id", None)
        if data["ledger"] not in ("runtime", "cost"):
            data["to"] = float(min(int(data["to"]), 10**9))
    return data


@pytest.mark.parametrize("tag", sorted(EVENT_CLASSES))
def test_generated_events_of_every_type_read_the_same_both_ways(tag: str) -> None:
    accepted = 0

    @settings(max_examples=150, database=None, suppress_health_check=[HealthCheck.too_slow])
    @given(_model_strategy(EVENT_CLASSES[tag], tag).map(_plausible))
    def check(data: dict[str, Any]) -> None:
        nonlocal accepted
        line = json.dumps(data).encode()
        assert_agree(line)
        event = pydantic_reading(line)
        if event is not None:  # what the codec writes is what the compiled path reads
            accepted += 1
            assert decode_compiled(encode(event)) == event

    check()
    assert accepted > 0, f"no generated {tag} was valid: the generator says nothing"


# --- corrupted lines -----------------------------------------------------------------------

HOSTILE = [
    None,
    True,
    0,
    -1,
    1.5,
    2**63,
    2**64,
    -(2**70),
    "",
    "x" * 3000,
    "5",
    "1e400",
    "NaN",
    "\u0000",
    "a\nb",
    "goal\n",
    "2026-01-01T00:00:00.1234567Z",
    "2026-01-01T00:00:00+01:00",
    "2026-01-01T00:00:00",
    "2026-01-01",
    1_700_000_000,
    [],
    [1, "a"],
    {},
    {"effects": "absent"},
]
RAW_HOSTILE = [b"1e400", b"-1e400", b"Infinity", b"NaN", b"1.0", b"1e2", b'"\\udfff"', b"00"]


@settings(max_examples=600, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(GOLDEN_LINES),
    st.data(),
)
def test_a_field_replaced_by_a_hostile_value_reads_the_same_both_ways(
    line: bytes, data: Any
) -> None:
    obj = json.loads(line)
    key = data.draw(st.sampled_from([*sorted(obj), "class", "failure_class", "extra", "type"]))
    value = data.draw(st.sampled_from(HOSTILE))
    obj[key] = value
    assert_agree(json.dumps(obj).encode())


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(GOLDEN_LINES), st.data())
def test_a_raw_hostile_number_reads_the_same_both_ways(line: bytes, data: Any) -> None:
    obj = json.loads(line)
    numeric = [k for k, v in obj.items() if isinstance(v, int | float) and not isinstance(v, bool)]
    key = data.draw(st.sampled_from(numeric))
    marker = "__HOSTILE__"
    obj[key] = marker
    hostile = data.draw(st.sampled_from(RAW_HOSTILE))
    assert_agree(json.dumps(obj).encode().replace(f'"{marker}"'.encode(), hostile))


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(GOLDEN_LINES), st.data())
def test_truncated_or_flipped_lines_read_the_same_both_ways(line: bytes, data: Any) -> None:
    cut = data.draw(st.integers(0, len(line)))
    assert_agree(line[:cut])
    at = data.draw(st.integers(0, len(line) - 1))
    byte = data.draw(st.integers(0, 255))
    assert_agree(line[:at] + bytes([byte]) + line[at + 1 :])


@pytest.mark.parametrize(
    "variant",
    [
        lambda o: json.dumps(o, indent=2),
        lambda o: json.dumps(o).replace('"seq"', '"seq", "seq": 0, "seq"', 1),
        lambda o: json.dumps(o, ensure_ascii=True).replace('"goal_id"', '"\\u0067oal_id"'),
        lambda o: " " + json.dumps(o) + " ",
        lambda o: json.dumps({**o, "at": o["at"].replace("Z", "+00:00")}),
        lambda o: json.dumps({**o, "at": o["at"].replace("Z", ".999999999Z")}),
        lambda o: json.dumps({**o, "seq": float(o["seq"])}),
        lambda o: json.dumps({**o, "seq": str(o["seq"])}),
    ],
    ids=[
        "pretty printed",
        "a duplicated key (the last wins)",
        "an escaped key",
        "spaces around",
        "a +00:00 offset",
        "nanoseconds (msgspec rounds, pydantic truncates)",
        "a whole float for an int",
        "a number as a string",
    ],
)
def test_unusual_spellings_read_the_same_both_ways(variant: Any) -> None:
    for line in GOLDEN_LINES[:80]:
        obj = json.loads(line)
        try:
            text = variant(obj)
        except (KeyError, AttributeError):
            continue
        assert_agree(text.encode())


def test_nanoseconds_go_to_pydantic_which_truncates() -> None:
    line = next(line for line in GOLDEN_LINES if pydantic_reading(line) is not None)
    obj = json.loads(line)
    obj["at"] = "2026-03-01T10:00:00.1234567Z"
    text = json.dumps(obj).encode()
    assert decode_compiled(text) is None
    assert decode(text).at.microsecond == 123456


def test_errors_name_the_line_and_the_field_as_before() -> None:
    line = GOLDEN_LINES[0].replace(b'"goal.created"', b'"goal.created", "max_runtime_s": 1')
    for compiled in (True, False):
        with pytest.raises(HistoryError, match=r"h\.jsonl: line 4: unknown field 'max_runtime_s'"):
            LineDecoder("h.jsonl", compiled=compiled).decode(line, 4)


# --- the derivation refuses what it cannot compile ------------------------------------------


def test_a_validator_the_decoder_cannot_compile_fails_the_derivation() -> None:
    class Checked(BaseModel):
        name: str

        @field_validator("name")
        @classmethod
        def _shout(cls, value: str) -> str:
            return value.upper()

    with pytest.raises(TypeError, match="validators"):
        derive.compiled_model(Checked)


def test_an_unknown_constraint_fails_the_derivation() -> None:
    class Odd(BaseModel):
        value: Annotated[int, AfterValidator(lambda v: v)]

    with pytest.raises(TypeError, match=r"Odd\.value"):
        derive.compiled_model(Odd)


def test_every_event_type_has_a_compiled_struct() -> None:
    tags = {struct.__struct_config__.tag for struct in derive.compiled().builders}
    assert tags == set(EVENT_CLASSES)
