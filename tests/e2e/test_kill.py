"""The kill test (issue 9; SPEC §11.11): SIGKILL runners while real agents work.

30 ``governor run`` processes and 10 ``serve`` worker processes are killed with SIGKILL
at random points while real command agents (``tests/e2e/workers.py``) work. Afterwards:
no agent process of the goal is alive, no item was worked by two agents at once (each
agent locks its item with ``flock`` for its whole process group and logs ``overlap``
when it finds the lock taken), every history validates, and nothing is charged twice
(attempt numbers gapless, the ledger equals the charged finishes).

The default run kills ``RUN_KILLS_SHORT`` runners and ``SERVE_KILLS_SHORT`` workers;
the long mode (``--fuzz-long``) runs the full 30 + 10. Each case prints one
``kill-figures`` line; docs/reliability.md records them.
"""

from __future__ import annotations

import os
import random
import signal
import time
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

import pytest

from governor.core.events import Event
from governor.core.fold import project as fold_view
from governor.core.rules.decide import decide
from governor.drive import goals
from governor.store import open_store
from tests.conftest import long_mode
from tests.e2e.cli import Project
from tests.e2e.workers import (
    alive,
    all_dead,
    entries,
    install,
    kill_all,
    lease_free,
    overlaps,
    processes,
)
from tests.service.fleet import (
    charged_finishes,
    check_runs,
    export_all,
    reaped,
    stop,
    wait_until_settled,
)

RUN_KILLS = 30
SERVE_KILLS = 10
RUN_KILLS_SHORT = 4
SERVE_KILLS_SHORT = 2
"""The kills of the default run (the long mode: ``RUN_KILLS`` and ``SERVE_KILLS``)."""
POLICY = {"max_attempts": 3, "max_continuations": 20, "max_parallel_work": 2}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """One runner kill per seed: every seed in the long mode, the first few by default."""
    if "seed" in metafunc.fixturenames:
        kills = RUN_KILLS if long_mode(metafunc.config) else RUN_KILLS_SHORT
        metafunc.parametrize("seed", range(kills))


def ticks(project: Project) -> int:
    return sum(e.kind == "tick" for e in entries(project))


def check_histories(project: Project, url: str, goal_ids: list[str]) -> None:
    """Every history validates, runs are unique and gapless, nothing is charged twice."""
    with closing(open_store(url)) as store:
        histories: dict[str, list[Event]] = {g: list(store.load(g)) for g in goal_ids}
    for goal_id, history in histories.items():
        check_runs(goal_id, history)
        work = decide(fold_view(history), datetime.now(UTC)).ledger.work
        charged = charged_finishes(history)
        for work_id, row in work.items():
            assert row.charged_attempts == charged[work_id], (goal_id, work_id)
    export_all(url, goal_ids, project.root / "histories")
    valid = project.gov("validate", str(project.root / "histories"))
    assert valid.returncode == 0, valid.stderr[-2000:]


@pytest.mark.slow
def test_a_runner_killed_while_its_agents_work(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    project = Project(tmp_path)
    url = project.env["GOVERNOR_STORE"]
    agents = install(project, ticks=6)
    project.goal("g", agents, agents, **POLICY)
    runner = project.popen("run", "g", "--lease-ttl", "0.6", "--quiet")
    try:
        point = rng.randint(1, 24)  # a whole run writes about 30 ticks
        deadline = time.monotonic() + 300
        while ticks(project) < point and runner.poll() is None:
            assert time.monotonic() < deadline, f"fewer than {point} ticks"
            time.sleep(0.005)
        working = [p for p in processes(project) if alive(p)]
        runner.send_signal(signal.SIGKILL)
        runner.wait(timeout=60)
        assert all_dead(processes(project)) == [], "agents outlived their runner"

        deadline = time.monotonic() + 120
        while not lease_free(project, "g"):
            assert time.monotonic() < deadline, "the dead runner's lease never expired"
            time.sleep(0.05)
        finish = project.gov("run", "g", "--lease-ttl", "30", "--quiet", timeout=600)
        assert finish.returncode == 0, finish.stderr + finish.stdout
        assert project.status("g")["status"] == "succeeded"
        assert all_dead(processes(project)) == []
        assert overlaps(project) == []
        check_histories(project, url, ["g"])
        print(f"kill-figures run seed={seed} tick={point} agents_working={len(working)}")
    finally:
        if runner.poll() is None:
            runner.kill()
        kill_all(processes(project))


def holders(url: str, goal_ids: list[str]) -> list[int]:
    """The pids of the live worker processes holding a goal's lease."""
    found = []
    with closing(open_store(url)) as store:
        for goal_id in goal_ids:
            lease = store.current_lease(goal_id)
            if lease is not None and lease.expires_at > datetime.now(UTC):
                pid = int(lease.holder.rsplit(":", 1)[1])
                if Path(f"/proc/{pid}").exists():
                    found.append(pid)
    return found


@pytest.mark.slow
def test_serve_workers_killed_while_their_agents_work(tmp_path: Path, long_run: bool) -> None:
    kills = SERVE_KILLS if long_run else SERVE_KILLS_SHORT
    rng = random.Random(9)
    project = Project(tmp_path)
    url = project.env["GOVERNOR_STORE"]
    agents = install(project, ticks=10)
    goal_ids = [project.goal(f"g{i}", agents, agents, **POLICY) for i in range(6)]
    serve = project.popen(
        "serve", "--workers", "2", "--lease-ttl", "1", "--poll-s", "0.05", "--error-backoff", "0.1"
    )
    killed = working_at_kill = 0
    with reaped(serve):
        try:
            while killed < kills:
                before = ticks(project)
                deadline = time.monotonic() + 300
                while ticks(project) < before + rng.randint(1, 8):
                    assert time.monotonic() < deadline, "the agents stopped working"
                    assert serve.poll() is None
                    time.sleep(0.005)
                victims = holders(url, goal_ids)
                if not victims:
                    continue
                working_at_kill += sum(alive(p) for p in processes(project))
                os.kill(rng.choice(victims), signal.SIGKILL)
                killed += 1
            wait_until_settled(url, timeout_s=600)
            assert stop(serve) == 0
        finally:
            kill_all(processes(project))
    assert all_dead(processes(project)) == []
    assert overlaps(project) == []
    check_histories(project, url, goal_ids)
    with closing(open_store(url)) as store:
        statuses = {g: goals.status(store, g)[1].status for g in goal_ids}
    assert set(statuses.values()) == {"succeeded"}, statuses
    print(
        f"kill-figures serve kills={killed} agent_processes_alive_at_kills={working_at_kill}"
        f" agents_started={len(processes(project)) // 2}"
    )
