"""A worker in this process, on a real SQLite file with the scripted agents.

A step that fails on the store is an infrastructure error — the goal rests, nothing is
recorded or charged, and the next step continues what the failed one had started. A step
whose run raises anything else (the crash-loop guard) records a charged failure of that
run, so the next step does not repeat it."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from governor.core.event_fields import Profile
from governor.core.events import Event
from governor.core.wire.codec import encode
from governor.drive import goals
from governor.errors import StoreError
from governor.exec.harness import Harness, harness_for
from governor.service.logs import JsonLog
from governor.service.observe import Counters, Observation
from governor.service.settings import ErrorBackoff, ServiceSettings
from governor.service.worker import Worker
from governor.store.sqlite import SqliteEventStore
from tests.e2e.cli import Project

SECRET = "sk-live-abcdefghijklmnopqrstuvwx"


class FlakyStore(SqliteEventStore):
    """Fails the first append of an attempt's finish, as a store that lost its disk would."""

    calls: list[float]

    def append(self, goal_id: str, events: Sequence[Event], **kwargs: Any) -> int:
        if any(e.type == "attempt.finished" for e in events):
            self.calls.append(time.monotonic())
            if len(self.calls) == 1:
                raise StoreError(f"the disk is on fire (key {SECRET})")
        return super().append(goal_id, events, **kwargs)


def serve_until_settled(
    tmp_path: Path, store: SqliteEventStore, harnesses: Callable[[Profile, Path], Harness]
) -> tuple[Counters, Path]:
    settings = ServiceSettings(
        workdir=tmp_path,
        env={**os.environ, "OPENAI_API_KEY": SECRET},
        poll_s=0.05,
        error_backoff=ErrorBackoff(initial_s=0.4),
        state_dir=tmp_path / "scripted",
    )
    counters, stopping = Counters(), threading.Event()
    log = JsonLog(tmp_path / "service.jsonl", settings.env, worker="w")
    worker = Worker(
        store, settings, Observation(log, counters), stopping=stopping, harnesses=harnesses
    )
    thread = threading.Thread(target=worker.run)
    thread.start()
    try:
        deadline = time.monotonic() + 120
        while goals.status(store, "g")[1].status != "succeeded":
            assert time.monotonic() < deadline, goals.status(store, "g")[1]
            time.sleep(0.05)
    finally:
        stopping.set()
        thread.join()
    return counters, tmp_path / "service.jsonl"


def test_a_step_that_fails_on_the_store_rests_the_goal_charges_nothing_and_is_continued(
    tmp_path: Path,
) -> None:
    path = Project(tmp_path).goal_file("g", {"harness": "scripted"}, {"harness": "scripted"})
    store = FlakyStore(tmp_path / "governor.db")
    store.calls = []
    goals.create(store, path)
    counters, log = serve_until_settled(tmp_path, store, harness_for)

    events = list(store.load("g"))
    types = [e.type for e in events]
    assert types[5:8] == ["attempt.started", "attempt.continued", "attempt.finished"]
    ledger = goals.status(store, "g")[1].ledger
    assert (ledger.replans.charged, ledger.replans.uncharged) == (2, 0)  # as without the error
    assert (ledger.attempts.used, ledger.attempts.charged) == (1, 1)
    assert store.calls[1] - store.calls[0] >= 0.4  # the goal rested for its back-off
    assert b"fire" not in b"".join(encode(e) for e in events)  # never an event
    errors = store.service_errors()
    assert [e.goal_id for e in errors] == ["g"]
    assert errors[0].error == "StoreError: the disk is on fire (key [REDACTED])"
    assert counters.snapshot()["governor_step_errors_total"] == {(): 1}
    assert SECRET not in log.read_text()
    assert store.workers() == []
    store.close()


def test_a_step_whose_run_raises_records_a_charged_failure_and_moves_on(tmp_path: Path) -> None:
    path = Project(tmp_path).goal_file("g", {"harness": "scripted"}, {"harness": "scripted"})
    store = SqliteEventStore(tmp_path / "governor.db")
    goals.create(store, path)
    calls: list[Profile] = []

    def broken_once(profile: Profile, base_dir: Path) -> Harness:
        calls.append(profile)
        if len(calls) == 1:
            raise RuntimeError(f"the harness broke (key {SECRET})")
        return harness_for(profile, base_dir)

    counters, log = serve_until_settled(tmp_path, store, broken_once)
    events = list(store.load("g"))
    assert [e.type for e in events][:4] == [
        "goal.created",
        "plan.requested",
        "plan.failed",
        "plan.requested",
    ]
    failed = events[2]
    assert failed.type == "plan.failed"
    assert failed.failure_class is None  # charged
    assert failed.error == (
        "governor could not record the run (RuntimeError: the harness broke (key [REDACTED]))"
    )
    ledger = goals.status(store, "g")[1].ledger
    assert (ledger.replans.charged, ledger.replans.uncharged) == (3, 0)  # one more than without
    assert store.service_errors() == []  # recorded, not an infrastructure error
    assert not counters.snapshot().get("governor_step_errors_total")
    assert SECRET not in log.read_text()
    assert SECRET.encode() not in b"".join(encode(e) for e in events)
    store.close()
