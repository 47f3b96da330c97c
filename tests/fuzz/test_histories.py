"""Fuzz family 1: mutated histories through every command that reads one.

Each case takes a golden history, damages it (``tests.fuzz.mutate``), and runs one
reader on it: ``validate``, ``replay`` (plain, ``--json``, ``--policy``), ``explain``,
``tune``, or ``import`` followed by the commands that read the imported goal from the
store (``status``, ``events``, ``export``, ``replay``, ``explain``). The promise is
checked after each command (``tests.fuzz.harness``); an import that succeeded must have
stored a history that passes every check.

Not run here: ``tick``/``run`` (they would run the agents a damaged history names).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz.harness import cases, check_outcome, check_store, governor, inside, tally
from tests.fuzz.mutate import mutated_lines

GOLDEN = sorted((Path(__file__).resolve().parent.parent / "golden").glob("*.jsonl"))
READERS = [
    ("validate", "{h}"),
    ("replay", "{h}"),
    ("replay", "{h}", "--json"),
    ("replay", "{h}", "--all", "--now", "2026-03-02T00:00:00Z"),
    ("replay", "{h}", "--policy", "max_replans=9,max_attempts=1"),
    ("replay", "{h}", "--policy", "max_uncharged_replans=5", "--json"),
    ("explain", "{h}"),
    ("explain", "{h}", "--json"),
    ("reclassify", "{h}"),
    ("reclassify", "{h}", "--json"),
    ("tune", "{h}", "--grid", "max_replans=1..3", "--workers", "1", "--quiet", "--json"),
    ("import", "{h}"),
]
STORED = [
    ("status", "{g}", "--json"),
    ("events", "{g}"),
    ("export", "{g}"),
    ("replay", "{g}"),
    ("explain", "{g}"),
    ("reclassify", "{g}", "--json"),
    ("list",),
]


def _goal_id(data: bytes) -> str | None:
    try:
        first = json.loads(data.split(b"\n", 1)[0])
    except (ValueError, RecursionError):
        return None
    goal = first.get("goal_id") if isinstance(first, dict) else None
    return goal if isinstance(goal, str) else None


def test_mutated_histories_keep_the_promise(
    tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GOVERNOR_STORE", raising=False)
    counter = iter(range(10**9))

    @settings(
        max_examples=cases(request.config, long=2_500),
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(data=st.data())
    def case(data: st.DataObject) -> None:
        n = next(counter)
        source = data.draw(st.sampled_from(GOLDEN), label="golden")
        damaged = data.draw(mutated_lines(source.read_bytes().splitlines()), label="history")
        history = tmp_path / f"h{n}.jsonl"
        history.write_bytes(damaged)
        store = str(tmp_path / f"s{n}.db")
        reader = data.draw(st.sampled_from(READERS), label="reader")
        argv = [a.format(h=history.name) for a in reader]
        outcome = governor([*argv, "--store", store])
        counted.add(outcome)
        check_outcome(outcome)
        stored = check_store(store)
        if reader[0] != "import" or outcome.code != 0:
            assert stored == 0
            return
        assert stored == 1
        goal = _goal_id(damaged)
        assert goal is not None
        for command in STORED:
            then = governor([*(a.format(g=goal) for a in command), "--store", store])
            counted.add(then)
            check_outcome(then)
        assert check_store(store) == 1

    with tally("histories", request) as counted, inside(tmp_path):
        case()
