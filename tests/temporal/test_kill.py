"""The Temporal kill test: SIGKILL workers while real agents work and appends commit.

Three ``governor temporal worker`` processes drive twenty goals (thirty in the long mode)
whose agents are real shell scripts (``tests/e2e/workers.py``: each locks its item with
``flock`` for its whole process group and logs its pid and start time, ``overlap`` when
the lock was taken).
Ten times a worker is killed with SIGKILL at a random point — half of them while the
store's write lock is held, so appends wait inside the append activity of every worker
and the kill lands mid-append — and a fresh worker takes its place. Afterwards:

* every goal reached the outcome it reaches under ``governor run`` (succeeded);
* every history validates, runs are unique and attempt numbers gapless, and the ledger's
  charged attempts equal the charged finishes (nothing was charged twice);
* no two agents of one item ever overlapped, and no agent process is left alive.

The long mode (``--fuzz-long``) kills thirty times.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import time
from contextlib import closing
from pathlib import Path

import pytest

from governor.drive import goals
from governor.store import open_store
from governor.temporal.wire import DriveSettings
from tests.e2e.test_kill import check_histories
from tests.e2e.workers import all_dead, entries, install, kill_all, overlaps, processes
from tests.temporal.conftest import TemporalProject, start_all

GOALS = 20
"""Issue 23's twenty goals, more than the three workers' call slots, some thirty agent
ticks each: ten kills (a hundred ticks apart at most, all told) land while agents work."""
GOALS_LONG = 30
WORKERS = 3
KILLS = 10
KILLS_LONG = 30
POLICY = {"max_attempts": 3, "max_continuations": 30, "max_parallel_work": 2}
SETTINGS = DriveSettings(
    lease_ttl_s=60, call_heartbeat_s=3, kill_grace_s=2, store_timeout_s=8, reprobe_s=5
)
"""Short heartbeats and store timeouts: a killed worker's work is taken up in seconds."""
DEADLINE_S = 900.0
"""Generous: every wait is on a condition; this only bounds a broken run."""


def ticks(project: TemporalProject) -> int:
    return sum(e.kind == "tick" for e in entries(project))


def wait_ticks(project: TemporalProject, more: int) -> None:
    target, deadline = ticks(project) + more, time.monotonic() + DEADLINE_S
    while ticks(project) < target:
        assert time.monotonic() < deadline, "the agents stopped working"
        time.sleep(0.01)


def kill_mid_append(project: TemporalProject, victim: int, rng: random.Random) -> None:
    """SIGKILL ``victim`` while the store's write lock is held: the workers' appends
    wait inside the append activity (SQLite's busy timeout) when it dies."""
    db = sqlite3.connect(project.root / "governor.db", timeout=60, isolation_level=None)
    try:
        db.execute("BEGIN IMMEDIATE")
        time.sleep(rng.uniform(0.3, 1.0))
        os.kill(victim, signal.SIGKILL)
        time.sleep(0.2)
        db.execute("ROLLBACK")
    finally:
        db.close()


@pytest.mark.slow
def test_workers_killed_while_agents_work_and_appends_commit(
    project: TemporalProject, long_run: bool
) -> None:
    rng = random.Random(23)
    agents = install(project, ticks=6, tick_s=0.05)
    ids = [f"g{n:02d}" for n in range(GOALS_LONG if long_run else GOALS)]
    with closing(open_store(project.env["GOVERNOR_STORE"])) as store:
        for goal_id in ids:  # ``governor new``'s own tests run the command
            goals.create(store, project.goal_file(goal_id, agents, agents, **POLICY))
    start_all(project, ids, SETTINGS)
    live = [project.worker("--max-concurrent-calls", "4") for _ in range(WORKERS)]
    kills = KILLS_LONG if long_run else KILLS
    mid_append = 0
    try:
        for n in range(kills):
            wait_ticks(project, rng.randint(1, 10))
            victim = live.pop(rng.randrange(len(live)))
            if n % 2:
                kill_mid_append(project, victim.pid, rng)
                mid_append += 1
            else:
                victim.send_signal(signal.SIGKILL)
            victim.wait(timeout=60)
            live.append(project.worker("--max-concurrent-calls", "4"))
        url = project.env["GOVERNOR_STORE"]
        deadline = time.monotonic() + DEADLINE_S
        with closing(open_store(url)) as store:
            while store.goal_counts().get("succeeded", 0) < len(ids):
                assert time.monotonic() < deadline, store.goal_counts()
                time.sleep(0.2)
        project.stop_workers()
    finally:
        project.stop_workers()
        left = all_dead(processes(project), within_s=30)
        kill_all(processes(project))
    assert left == [], "agents outlived their workers"
    assert overlaps(project) == [], "two agents worked one item at once"
    check_histories(project, url, ids)
    with closing(open_store(url)) as store:
        statuses = {g: goals.status(store, g)[1].status for g in ids}
        continued = sum(
            e.type in ("attempt.continued", "plan.continued") for g in ids for e in store.load(g)
        )
    assert set(statuses.values()) == {"succeeded"}, statuses
    print(
        f"temporal-kill-figures kills={kills} mid_append={mid_append} continuations={continued}"
        f" agents_started={len(processes(project)) // 2}"
    )


def test_the_kill_test_agent_logs_are_read(tmp_path: Path) -> None:
    """The checks above read the agents' log: an overlap line is found (so a real one would
    fail the test), and a process that is not alive is not reported alive."""
    from tests.e2e.cli import Project

    project = Project(tmp_path)
    (tmp_path / "agents.log").write_text("start a 1 2 3 4\noverlap a 99\n")
    assert [e.kind for e in overlaps(project)] == ["overlap"]
    assert all_dead([(2**22 + 1, 7)], within_s=0) == []
