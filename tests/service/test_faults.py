"""Faults of the service (SPEC §6.3, §8): a worker SIGKILLed mid-step, and SIGTERM.

A killed worker's goals are taken over once their leases expire; the run it left
started becomes a continuation (uncharged) that finishes normally; nothing is lost or
charged twice. SIGTERM lets the step in hand finish, releases the lease, exits 0.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest

from governor.core.events import Event
from governor.core.fold import project
from governor.core.rules.decide import decide
from governor.core.work_events import AttemptContinued, AttemptFinished
from governor.drive import goals
from governor.store import open_store
from tests.e2e.cli import COMPLETE, Project, done, plan, planner_script, worker_script
from tests.service.fleet import (
    Kind,
    charged_finishes,
    check_runs,
    create_goals,
    metric,
    mid_run,
    reaped,
    stop,
    wait_until_settled,
)

SLOW = Kind(
    "slow",
    [
        planner_script([{"reply": plan("a")}, {"reply": COMPLETE}]),
        worker_script("a", [{"delay_s": 1.5, "effects": True, "reply": done("a")}]),
    ],
)
"""One item whose worker takes 1.5 s: long enough to be caught mid-run."""


def serve(project: Project, *args: str) -> subprocess.Popen[str]:
    return project.popen(
        "serve", "--poll-s", "0.05", "--log-file", "service.jsonl",
        "--metrics-file", "metrics.prom", "--metrics-interval", "0.2", *args,
    )  # fmt: skip


def project_on(tmp_path: Path, store_url: str) -> Project:
    project = Project(tmp_path)
    project.env["GOVERNOR_STORE"] = store_url
    return project


pytest_plugins = ["tests.store.postgres_server"]  # store_url's PostgreSQL


@pytest.mark.slow
def test_a_killed_workers_goal_is_taken_over_and_its_run_continued_uncharged(
    tmp_path: Path, store_url: str
) -> None:
    proj = project_on(tmp_path, store_url)
    goal_ids = create_goals(proj, store_url, [(f"slow-{i}", SLOW) for i in range(6)])
    with reaped(serve(proj, "--workers", "2", "--lease-ttl", "1")) as service:
        with closing(open_store(store_url)) as store:
            victim, started = mid_run(store, goal_ids)
            os.kill(victim, signal.SIGKILL)
        wait_until_settled(store_url, timeout_s=90)
        status = orjson.loads(proj.gov("service", "status", "--json").stdout)
        assert stop(service) == 0

    with closing(open_store(store_url)) as store:
        histories: dict[str, list[Event]] = {g: list(store.load(g)) for g in goal_ids}
        for goal_id in goal_ids:
            assert goals.status(store, goal_id)[1].status == "succeeded", goal_id
        ledger = goals.status(store, started.goal_id)[1].ledger
    events = histories[started.goal_id]
    after = events[started.seq :]
    continued = [e for e in after if isinstance(e, AttemptContinued)]
    assert [(e.work_id, e.attempt) for e in continued] == [(started.work_id, started.attempt)]
    finish = next(e for e in after if isinstance(e, AttemptFinished))
    assert (finish.attempt, finish.run_id, finish.outcome) == (
        started.attempt,
        continued[0].run_id,
        "succeeded",
    )
    assert ledger.work[started.work_id].charged_attempts == 1  # one attempt, charged once
    for goal_id, history in histories.items():
        check_runs(goal_id, history)
        work = decide(project(history), datetime.now(UTC)).ledger.work
        for work_id, row in work.items():
            assert row.charged_attempts == charged_finishes(history)[work_id], (goal_id, work_id)

    assert victim not in {w["pid"] for w in status["workers"]}
    assert len(status["workers"]) == 2  # the dead worker was replaced
    assert any("died" in e["error"] for e in status["errors"])
    metrics = (tmp_path / "metrics.prom").read_text()
    assert metric(metrics, "governor_lease_takeovers_total") >= 1
    assert metric(metrics, "governor_continuations_total", kind="attempt") >= 1


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["1", "2"], ids=["in-process", "worker-processes"])
def test_sigterm_lets_the_step_in_hand_finish_then_exits_0(
    tmp_path: Path, store_url: str, workers: str
) -> None:
    proj = project_on(tmp_path, store_url)
    create_goals(proj, store_url, [("slow", SLOW)])
    with (
        reaped(serve(proj, "--workers", workers, "--lease-ttl", "30")) as service,
        closing(open_store(store_url)) as store,
    ):
        _, started = mid_run(store, ["slow"])
        signalled = datetime.now(UTC)
        code = stop(service)
        assert code == 0
        events = list(store.load("slow"))
        assert store.current_lease("slow") is None  # released, not left to expire
        assert store.workers() == []
    finish = next(e for e in events if isinstance(e, AttemptFinished))
    assert (finish.run_id, finish.outcome) == (started.run_id, "succeeded")
    assert finish.at > signalled  # the step went on after the signal, to its end
    # and no further step was taken: the step's last append is the finish with its
    # automatic acceptance (accept_passing: one transaction, issue 12)
    assert [e.type for e in events[events.index(finish) :]] == ["attempt.finished", "work.accepted"]


@pytest.mark.slow
def test_workers_left_without_their_supervisor_stop_cleanly(tmp_path: Path, store_url: str) -> None:
    proj = project_on(tmp_path, store_url)
    with (
        reaped(serve(proj, "--workers", "2", "--lease-ttl", "1")) as service,
        closing(open_store(store_url)) as store,
    ):
        deadline = time.monotonic() + 60
        while len(store.workers()) < 2:
            assert time.monotonic() < deadline, "the workers never registered"
            time.sleep(0.05)
        pids = [w.pid for w in store.workers()]
        service.kill()
        service.wait(timeout=10)
        while store.workers():  # each notices at its next heartbeat, then leaves cleanly
            assert time.monotonic() < deadline + 30, store.workers()
            time.sleep(0.05)
    deadline = time.monotonic() + 10
    while not all(exited(pid) for pid in pids):
        assert time.monotonic() < deadline, [pid for pid in pids if not exited(pid)]
        time.sleep(0.05)


def exited(pid: int) -> bool:
    """Whether the process has ended (gone, or a zombie its new parent has not reaped yet)."""
    try:
        return "State:\tZ" in Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
