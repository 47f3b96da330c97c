"""The lean steps of ``replay --json`` (``StepLines.lines``, docs/decisions/0012) print
exactly the lines of the reference path: ``orjson.dumps(records.step_record(step))`` for
every step of ``replay`` (SPEC §9 pins that shape), byte for byte.

Where the short path of rules 8 and 9 decides, the lean steps make a line from the
decision's head (``Decider.head``) and the rows the decider decided again
(``Decider.relaid``), without the step's ``Decision``, ``Ledger`` or ``WorkLedgers``;
elsewhere they take ``decide``. Both are held here to the reference, over every golden
history (parked goals, upstream outages and corrupt histories among them), histories a
random driver records under random policies, the long generated history of the
benchmark, fixed times (``--now``) before, among and after the events, and lean and full
steps interleaved on one memo. Each check also counts the lean steps, so that it could
not pass by every step taking ``decide``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from itertools import count
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.history_gen import events as generated_events
from governor.analysis.replay import ReplayStep, replay
from governor.core.events import Event
from governor.core.fold import evolve
from governor.core.policy_input import with_overrides
from governor.core.rules.decide import decide
from governor.core.rules.decider import Decider
from governor.core.rules.goal import Head
from governor.core.view import GoalView
from governor.core.wire.codec import LineDecoder, decode_lines, encode
from governor.errors import HistoryError
from governor.render import lines as lines_module
from governor.render import records
from governor.render.lines import StepLines
from tests.core.test_properties import policies, recorded

GOLDEN = sorted((Path(__file__).parent / "golden").glob("*.jsonl"))


def reference(pairs: Sequence[tuple[int, Event]], now: datetime | None) -> tuple[list[bytes], str]:
    """Every step record of ``replay`` (and the error that ended it, if one did)."""
    out: list[bytes] = []
    try:
        for step in replay(pairs, now=now):
            out.append(orjson.dumps(records.step_record(step)) + b"\n")
    except HistoryError as exc:
        return out, str(exc)
    return out, ""


# Against the compiled build (.ci/compiled, decision record 0031) a compiled caller does
# not see a method patched on its class, so the lean steps cannot be counted (nor full ones
# forced) there: the lines are still compared with the reference, line by line.
COUNTED = str(lines_module.__file__).endswith(".py")


def lean(
    pairs: Sequence[tuple[int, Event]],
    now: datetime | None,
    monkeypatch: pytest.MonkeyPatch,
    every: int = 0,
) -> tuple[list[bytes], str, int]:
    """The lines of ``StepLines.lines`` (and its error), and how many were lean steps;
    with ``every``, each ``every``-th step takes ``decide`` even where a head was found
    (the decider brought up to date by ``Decider.head`` all the same)."""
    taken, steps = count(), count(1)
    taken_head = Decider.head

    def counted(decider: Decider, when: datetime) -> Head | None:
        head = taken_head(decider, when)
        if every and next(steps) % every == 0:
            return None
        if head is not None:
            next(taken)
        return head

    whole = StepLines.line

    def checked(self: StepLines, step: ReplayStep) -> bytes:
        """A full step between lean ones: its decision (ledger included) is whole too."""
        line = whole(self, step)
        assert line == orjson.dumps(records.step_record(step)) + b"\n", step.seq
        return line

    out: list[bytes] = []
    with monkeypatch.context() as patch:
        patch.setattr(Decider, "head", counted)
        patch.setattr(StepLines, "line", checked)
        try:
            out.extend(StepLines().lines(pairs, now=now))
        except HistoryError as exc:
            return out, str(exc), next(taken)
    return out, "", next(taken)


def assert_lean_is_the_reference(
    pairs: Sequence[tuple[int, Event]],
    monkeypatch: pytest.MonkeyPatch,
    now: datetime | None = None,
    every: int = 0,
) -> int:
    """Lean lines == reference lines, the same error at the same line; the lean steps."""
    want, want_error = reference(pairs, now)
    got, got_error, leaned = lean(pairs, now, monkeypatch, every)
    for n, (a, b) in enumerate(zip(got, want, strict=False)):
        assert a == b, (n, a, b)
    assert len(got) == len(want)
    assert got_error == want_error
    return leaned


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
def test_every_golden_history_prints_the_reference_lines(
    structs: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    leaned = 0
    for path in GOLDEN:
        leaned += assert_lean_is_the_reference(golden_pairs(path, structs=structs), monkeypatch)
    assert leaned > 100 or not COUNTED, "the golden histories take lean steps"


def test_golden_histories_at_fixed_times_print_the_reference_lines(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``--now``: before every event, among them (cooldowns crossed or not) and after."""
    leaned = 0
    for path in GOLDEN:
        pairs = golden_pairs(path)
        if not pairs:
            continue
        first, last = pairs[0][1].at, pairs[-1][1].at
        middle = first + (last - first) / 2
        for now in (first - timedelta(days=1), middle, last + timedelta(hours=3)):
            leaned += assert_lean_is_the_reference(pairs, monkeypatch, now.astimezone(UTC))
    assert leaned > 100 or not COUNTED


def test_parked_goals_and_upstream_outages_print_the_reference_lines(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A parked goal is decided by ``decide`` (the fleet rules) between lean steps."""
    parked = [p for p in GOLDEN if "park" in p.stem or "upstream" in p.stem or "outage" in p.stem]
    assert len(parked) >= 3, parked
    for path in parked:
        assert_lean_is_the_reference(golden_pairs(path), monkeypatch)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), policy=policies, at=st.sampled_from([None, -1, 0, 1]))
def test_recorded_histories_print_the_reference_lines(
    data: st.DataObject, policy: dict[str, Any], at: int | None
) -> None:
    events = recorded(data, policy, max_steps=80).events
    raw = b"".join(encode(e) + b"\n" for e in events)
    pairs = pairs_of(raw)
    now = None if at is None else events[0].at + at * (events[-1].at - events[0].at)
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert_lean_is_the_reference(pairs, monkeypatch, now)


def test_the_generated_long_history_prints_the_reference_lines(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The benchmark's shape (ready, running and cooling items over two plans): lean steps
    and ``decide`` in turn on one memo, new items laid out by either."""
    raw = b"".join(orjson.dumps(e) + b"\n" for e in generated_events(30_000, cycles=300))
    pairs = pairs_of(raw)
    leaned = assert_lean_is_the_reference(pairs, monkeypatch)
    assert not COUNTED or 0.5 * len(pairs) < leaned < len(pairs), (leaned, len(pairs))


@pytest.mark.parametrize("every", [2, 3, 7])
def test_lean_and_full_steps_in_any_turn_print_the_reference_lines(
    every: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full step after lean ones lays out every row they handed out (new items, several
    rows at once, rows decided again at a later ``--now``), and a lean step after a full
    one splices onto the rows it rendered."""
    raw = b"".join(orjson.dumps(e) + b"\n" for e in generated_events(3_000, cycles=20))
    histories = [pairs_of(raw), *(golden_pairs(path) for path in GOLDEN)]
    leaned = 0
    for pairs in histories:
        leaned += assert_lean_is_the_reference(pairs, monkeypatch, every=every)
        if pairs:
            later = pairs[-1][1].at + timedelta(days=1)
            leaned += assert_lean_is_the_reference(pairs, monkeypatch, later, every=every)
    assert leaned > 1_000 or not COUNTED


def parked_in_turn(n: int) -> bytes:
    """The generated history with the goal parked on its upstream after every 40th
    finished attempt (and resumed a few events later): lean steps around parked ones."""
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


def test_a_goal_parked_between_lean_steps_prints_the_reference_lines(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pairs = pairs_of(parked_in_turn(4_000))
    assert sum(e.type == "goal.parked" for _, e in pairs) >= 5
    assert sum(e.type == "goal.resumed" for _, e in pairs) >= 5
    assert reference(pairs, None)[1] == "", "a valid history"
    for now in (None, pairs[-1][1].at):
        assert assert_lean_is_the_reference(pairs, monkeypatch, now) > 1_000 or not COUNTED


def test_every_lean_head_is_the_head_decide_takes() -> None:
    """``Decider.head`` on one view, ``decide`` on another folded alike: the same head
    whenever it gives one (and it gives heads of both rules)."""
    raw = b"".join(orjson.dumps(e) + b"\n" for e in generated_events(6_000, cycles=60))
    histories = [[e for _, e in pairs_of(raw)]]
    histories += [[e for _, e in golden_pairs(path)] for path in GOLDEN]
    seen = set()
    for events in histories:
        lean, full_view = Decider(), GoalView()
        for k, event in enumerate(events):
            lean.fold(event)
            evolve(full_view, event)
            now = event.at + timedelta(seconds=59 * (k % 3))
            head = lean.head(now)
            taken = decide(full_view, now)
            if head is not None:
                assert head == (
                    taken.status,
                    taken.next_action,
                    taken.reason,
                    taken.blocked_on,
                    taken.not_before,
                    taken.exhausted,
                ), (k, event.type)
                assert taken.rule in {"goal.8", "goal.9"}, taken.rule
                seen.add(taken.rule)
    assert seen == {"goal.8", "goal.9"}


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


@pytest.mark.parametrize(
    "overrides",
    [
        {"retry_blocked": False},
        {"retry_blocked": True, "max_parallel_work": 2},
        {"accept_passing": False, "max_parallel_work": 3},
        {"max_total_attempts": 1},
    ],
    ids=["held-off", "held-two", "review-three", "attempts-spent"],
)
def test_lean_heads_follow_policy_swaps(overrides: dict[str, Any]) -> None:
    """A view whose policy is swapped between steps (as a what-if swaps it): the lean
    head (its kept scans and runs) is the head ``decide`` takes under each policy."""
    histories = [[e for _, e in golden_pairs(path)] for path in GOLDEN]
    raw = b"".join(orjson.dumps(e) + b"\n" for e in generated_events(3_000, cycles=20))
    histories.append([e for _, e in pairs_of(raw)])
    compared = 0
    for events in histories:
        lean, full_view = Decider(), GoalView()
        lean_view = lean.view
        for k, event in enumerate(events):
            lean.fold(event)
            evolve(full_view, event)
            if k % 3 == 2:  # the other policy for a step, then the recorded one again
                kept = lean_view.policy, full_view.policy
                lean_view.policy = full_view.policy = with_overrides(kept[0], overrides)
                head, taken = lean.head(event.at), decide(full_view, event.at)
                lean_view.policy, full_view.policy = kept
            else:
                head, taken = lean.head(event.at), decide(full_view, event.at)
            if head is not None:
                whole = (taken.status, taken.next_action, taken.reason)
                assert head == (*whole, taken.blocked_on, taken.not_before, taken.exhausted), k
                compared += 1
    assert compared > 500
