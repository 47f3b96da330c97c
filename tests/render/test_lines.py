"""The lines of ``replay --json`` (``governor.render.lines.StepLines``) are exactly the
reference lines: ``orjson.dumps(records.step_record(step))`` for every step of ``replay``
(SPEC §9 pins that shape), byte for byte.

``StepLines`` keeps the bytes of what did not change between steps (a ledger snapshot's
rows, the goal's ledgers, a decision's head); a line made from a stale piece would differ
from the reference. Under the compiled build (decision record 0031) this is what caught
mypyc reading ``x is not (x := f())`` after the assignment (a stale ledger). Held here
over every golden history (parked goals, upstream outages and corrupt histories among
them), histories a random driver records under random policies, the long generated
history of the benchmark, fixed times (``--now``) before, among and after the events, a
goal parked between steps, and the real command.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.history_gen import events as generated_events
from governor.analysis.replay import replay
from governor.core.events import Event
from governor.core.wire.codec import LineDecoder, decode_lines, encode
from governor.errors import HistoryError
from governor.render import records
from governor.render.lines import StepLines
from tests.core.test_properties import policies, recorded

GOLDEN = sorted((Path(__file__).parents[1] / "golden").glob("*.jsonl"))


def reference(pairs: Sequence[tuple[int, Event]], now: datetime | None) -> tuple[list[bytes], str]:
    """Every step record of ``replay`` (and the error that ended it, if one did)."""
    out: list[bytes] = []
    try:
        for step in replay(pairs, now=now):
            out.append(orjson.dumps(records.step_record(step)) + b"\n")
    except HistoryError as exc:
        return out, str(exc)
    return out, ""


def printed(pairs: Sequence[tuple[int, Event]], now: datetime | None) -> tuple[list[bytes], str]:
    """The lines of ``StepLines.lines`` (and the error that ended them, if one did)."""
    out: list[bytes] = []
    try:
        out.extend(StepLines().lines(pairs, now=now))
    except HistoryError as exc:
        return out, str(exc)
    return out, ""


def assert_lines_are_the_reference(
    pairs: Sequence[tuple[int, Event]], now: datetime | None = None
) -> int:
    """Lines == reference lines, the same error at the same line; how many lines."""
    want, want_error = reference(pairs, now)
    got, got_error = printed(pairs, now)
    for n, (a, b) in enumerate(zip(got, want, strict=False)):
        assert a == b, (n, a, b)
    assert len(got) == len(want)
    assert got_error == want_error
    return len(got)


def pairs_of(raw: bytes, *, structs: bool = True) -> list[tuple[int, Event]]:
    decoder = LineDecoder("h", structs=structs)
    out: list[tuple[int, Event]] = []
    # an unreadable line: the lines before it are a history all the same
    with contextlib.suppress(HistoryError):
        out.extend(decode_lines(raw.splitlines(keepends=True), decoder=decoder))
    return out


def golden_pairs(path: Path, *, structs: bool = True) -> list[tuple[int, Event]]:
    return pairs_of(path.read_bytes(), structs=structs)


@pytest.mark.parametrize("structs", [False, True], ids=["events", "structs"])
def test_every_golden_history_prints_the_reference_lines(structs: bool) -> None:
    leaned = 0
    for path in GOLDEN:
        leaned += assert_lines_are_the_reference(golden_pairs(path, structs=structs))
    assert leaned > 100, "the golden histories are read"


def test_golden_histories_at_fixed_times_print_the_reference_lines() -> None:
    """``--now``: before every event, among them (cooldowns crossed or not) and after."""
    leaned = 0
    for path in GOLDEN:
        pairs = golden_pairs(path)
        if not pairs:
            continue
        first, last = pairs[0][1].at, pairs[-1][1].at
        middle = first + (last - first) / 2
        for now in (first - timedelta(days=1), middle, last + timedelta(hours=3)):
            leaned += assert_lines_are_the_reference(pairs, now.astimezone(UTC))
    assert leaned > 100


def test_parked_goals_and_upstream_outages_print_the_reference_lines() -> None:
    """A parked goal's steps (the fleet rules over the goal rules)."""
    parked = [p for p in GOLDEN if "park" in p.stem or "upstream" in p.stem or "outage" in p.stem]
    assert len(parked) >= 3, parked
    for path in parked:
        assert_lines_are_the_reference(golden_pairs(path))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), policy=policies, at=st.sampled_from([None, -1, 0, 1]))
def test_recorded_histories_print_the_reference_lines(
    data: st.DataObject, policy: dict[str, Any], at: int | None
) -> None:
    events = recorded(data, policy, max_steps=80).events
    raw = b"".join(encode(e) + b"\n" for e in events)
    pairs = pairs_of(raw)
    now = None if at is None else events[0].at + at * (events[-1].at - events[0].at)
    assert_lines_are_the_reference(pairs, now)


def test_the_generated_long_history_prints_the_reference_lines() -> None:
    """The benchmark's shape (ready, running and cooling items over two plans): ledger
    snapshots that follow one another, new items laid out as they come."""
    raw = b"".join(orjson.dumps(e) + b"\n" for e in generated_events(30_000, cycles=300))
    pairs = pairs_of(raw)
    assert assert_lines_are_the_reference(pairs) == len(pairs)


def parked_in_turn(n: int) -> bytes:
    """The generated history with the goal parked on its upstream after every 40th
    finished attempt (and resumed a few events later): running steps around parked ones."""
    out: list[dict[str, Any]] = []
    finished, parked = 0, None
    for event in generated_events(n, cycles=20):
        if parked is not None and event["type"] == "attempt.started":
            when = event["at"]
            out.append({**parked, "type": "goal.resumed", "at": when, "reason": "back"})
            for key in ("upstream", "profile", "since", "until"):
                del out[-1][key]
            parked = None
        out.append(event)
        if event["type"] == "attempt.finished":
            finished += 1
            if finished % 40 == 0 and event["at"] < "2026-01-01T05":
                at = datetime.fromisoformat(event["at"])
                parked = {
                    "schema_version": 1,
                    "goal_id": event["goal_id"],
                    "type": "goal.parked",
                    "at": event["at"],
                    "actor": "governor",
                    "reason": "parked: the upstream is failing",
                    "upstream": "codex gpt-5-codex",
                    "profile": "p",
                    "since": event["at"],
                    "until": (at + timedelta(minutes=10)).isoformat().replace("+00:00", "Z"),
                }
                out.append(parked)
    for seq, event in enumerate(out, start=1):
        event["seq"] = seq
    return b"".join(orjson.dumps(e) + b"\n" for e in out)


def test_a_goal_parked_between_running_steps_prints_the_reference_lines() -> None:
    pairs = pairs_of(parked_in_turn(4_000))
    assert sum(e.type == "goal.parked" for _, e in pairs) >= 5
    assert sum(e.type == "goal.resumed" for _, e in pairs) >= 5
    assert reference(pairs, None)[1] == "", "a valid history"
    for now in (None, pairs[-1][1].at):
        assert assert_lines_are_the_reference(pairs, now) > 1_000


def cli_replay(*args: str) -> subprocess.CompletedProcess[bytes]:
    """The real ``governor`` command (its output as bytes)."""
    exe = shutil.which("governor", path=str(Path(sys.executable).parent)) or "governor"
    return subprocess.run(
        [exe, "replay", *args],
        capture_output=True,
        timeout=600,
        env={**os.environ, "PYTHONWARNINGS": "error"},
        check=False,
    )


@pytest.mark.parametrize("now", [None, "2026-01-01T03:00:00Z"], ids=["at-each-event", "now"])
def test_the_command_prints_the_reference_lines_of_a_long_history(
    tmp_path: Path, now: str | None
) -> None:
    """``governor replay FILE --json`` (lines written in runs of many at once): exactly
    every reference line, over more runs than one."""
    raw = b"".join(orjson.dumps(e) + b"\n" for e in generated_events(20_000, cycles=150))
    path = tmp_path / "long.jsonl"
    path.write_bytes(raw)
    when = None if now is None else datetime.fromisoformat(now)
    want, error = reference(pairs_of(raw), when)
    assert not error
    result = cli_replay(str(path), "--json", *(["--now", now] if now else []))
    assert result.returncode == 0, result.stderr
    assert result.stdout == b"".join(want)
    assert len(result.stdout) > 4 * (1 << 18), "more than a few runs of lines"


def test_the_command_prints_the_lines_before_a_fault(tmp_path: Path) -> None:
    """A history broken after many lines: every line before the fault, then one error line."""
    lines = [orjson.dumps(e) + b"\n" for e in generated_events(5_000, cycles=40)]
    broken = [*lines[:3_001], lines[2_000]]  # a seq that breaks the sequence
    path = tmp_path / "broken.jsonl"
    path.write_bytes(b"".join(broken))
    want, error = reference(pairs_of(b"".join(broken)), None)
    assert error
    assert len(want) == 3_001
    result = cli_replay(str(path), "--json")
    assert result.returncode != 0
    assert result.stdout == b"".join(want)
    assert len(result.stderr.decode().strip().splitlines()) == 1, result.stderr
    assert "3002" in result.stderr.decode(), result.stderr
