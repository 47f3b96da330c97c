"""One fewer fsync per agent call (issue 12): an automatic acceptance (``accept_passing``)
lands in the same append as the attempt it accepts, through the real runner, the real
scripted harness (a subprocess per call) and a real SQLite file."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from governor.core.events import Event
from governor.core.history import validate_events
from governor.core.work_events import AttemptFinished, WorkAccepted
from governor.drive import goals
from governor.drive.runner import RunnerSettings
from governor.graph.build import run
from governor.store.sqlite import SqliteEventStore
from tests.e2e.cli import COMPLETE, done, plan, planner_script, worker_script

KEYS = ("a", "b", "c")


def _scenario() -> dict[str, Any]:
    workers = [worker_script(k, [{"reply": done(k)}]) for k in KEYS]
    return {"scripts": [planner_script([{"reply": plan(*KEYS)}, {"reply": COMPLETE}]), *workers]}


def _run(tmp_path: Path, **policy: Any) -> tuple[list[list[Event]], list[Event], str]:
    (tmp_path / "scenario.json").write_text(json.dumps(_scenario()))
    goal = {
        "id": "g",
        "title": "Auto-accept",
        "objective": "o",
        "acceptance": ["a"],
        "planner": "p",
        "worker": "p",
        "policy": policy,
        "profiles": {"p": {"harness": "scripted", "args": ["scenario.json"], "max_attempts": 1}},
    }
    (tmp_path / "goal.json").write_text(json.dumps(goal))
    store = SqliteEventStore(tmp_path / "governor.db")
    try:
        goals.create(store, tmp_path / "goal.json")
        settings = RunnerSettings(
            workdir=tmp_path, env=dict(os.environ), state_dir=tmp_path / "state", max_wait_s=0
        )
        batches: list[list[Event]] = []

        def observe(events: Sequence[Event]) -> None:
            batches.append(list(events))

        report = run(goals.runner(store, "g", settings, observer=observe))
        return batches, list(store.load("g")), report.decision.status
    finally:
        store.close()


def _types(batch: list[Event]) -> list[str]:
    return [e.type for e in batch]


def test_a_passing_attempt_is_accepted_in_its_finish_append(tmp_path: Path) -> None:
    batches, history, status = _run(tmp_path)
    assert status == "succeeded"
    validate_events(history)
    finishes = [b for b in batches if "attempt.finished" in _types(b)]
    assert len(finishes) == len(KEYS)
    for batch in finishes:
        assert _types(batch) == ["attempt.finished", "work.accepted"]
        finished, accepted = batch
        assert isinstance(finished, AttemptFinished)
        assert isinstance(accepted, WorkAccepted)
        assert (accepted.work_id, accepted.actor) == (finished.work_id, "governor")
    assert not [b for b in batches if _types(b) == ["work.accepted"]]


@pytest.mark.parametrize("auto_apply", [True, False])
def test_without_accept_passing_the_finish_is_appended_alone(
    tmp_path: Path, auto_apply: bool
) -> None:
    batches, history, status = _run(tmp_path, accept_passing=False, auto_apply=auto_apply)
    assert status == "awaiting_review"
    validate_events(history)
    assert all("work.accepted" not in _types(b) for b in batches)
