"""A worker in this process, on a real SQLite file with the scripted agents: a step that
raises is an infrastructure error — the goal rests, nothing is recorded or charged, and
the next step continues what the failed one had started."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from governor.core.codec import encode
from governor.core.events import Profile
from governor.drive import goals
from governor.exec.harness import Harness, harness_for
from governor.service.observe import Counters, JsonLog, Observation
from governor.service.settings import ErrorBackoff, ServiceSettings
from governor.service.worker import Worker
from governor.store.sqlite import SqliteEventStore
from tests.e2e.cli import Project

SECRET = "sk-live-abcdefghijklmnopqrstuvwx"


def test_a_step_that_raises_rests_the_goal_charges_nothing_and_is_continued(tmp_path: Path) -> None:
    path = Project(tmp_path).goal_file("g", {"harness": "scripted"}, {"harness": "scripted"})
    store = SqliteEventStore(tmp_path / "governor.db")
    goals.create(store, path)
    calls: list[float] = []

    def flaky(profile: Profile, base_dir: Path) -> Harness:
        calls.append(time.monotonic())
        if len(calls) == 1:
            raise RuntimeError(f"the disk is on fire (key {SECRET})")
        return harness_for(profile, base_dir)

    settings = ServiceSettings(
        workdir=tmp_path,
        env={**os.environ, "OPENAI_API_KEY": SECRET},
        poll_s=0.05,
        error_backoff=ErrorBackoff(initial_s=0.4),
        state_dir=tmp_path / "scripted",
    )
    counters, stopping = Counters(), threading.Event()
    log = JsonLog(tmp_path / "service.jsonl", settings.env, worker="w")
    worker = Worker(store, settings, Observation(log, counters), stopping=stopping, harnesses=flaky)
    thread = threading.Thread(target=worker.run)
    thread.start()
    try:
        deadline = time.monotonic() + 60
        while goals.status(store, "g")[1].status != "succeeded":
            assert time.monotonic() < deadline, goals.status(store, "g")[1]
            time.sleep(0.05)
    finally:
        stopping.set()
        thread.join()

    events = list(store.load("g"))
    types = [e.type for e in events]
    assert types[:4] == ["goal.created", "plan.requested", "plan.continued", "plan.proposed"]
    ledger = goals.status(store, "g")[1].ledger
    assert (ledger.replans.charged, ledger.replans.uncharged) == (2, 0)  # as without the error
    assert calls[1] - calls[0] >= 0.4  # the goal rested for its back-off
    assert b"fire" not in b"".join(encode(e) for e in events)  # never an event
    errors = store.service_errors()
    assert [e.goal_id for e in errors] == ["g"]
    assert errors[0].error == "RuntimeError: the disk is on fire (key [REDACTED])"
    assert counters.snapshot()["governor_step_errors_total"] == {(): 1}
    assert SECRET not in (tmp_path / "service.jsonl").read_text()
    assert store.workers() == []
    store.close()
