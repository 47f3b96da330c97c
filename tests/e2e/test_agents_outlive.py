"""Agents never outlive their runner (issue 9, item 2; SPEC §11.11).

Real ``governor run`` processes run real command agents (``tests/e2e/workers.py``: shell
scripts that leave a grandchild in their group and lock their item). A runner killed
with SIGKILL or SIGTERM takes its agents' groups with it; a runner that takes over the
lease of a runner that hangs (SIGSTOP: it can neither renew nor kill anything) ends the
hung runner's agent before its own agent starts on the item.
"""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest

from tests.e2e.cli import COMPLETE, Project, done, plan
from tests.e2e.workers import (
    all_dead,
    entries,
    install,
    kill_all,
    lease_free,
    overlaps,
    processes,
    wait_for_ticks,
)

SLOW_FIRST_ATTEMPT = """prompt=$(cat)
case "$prompt" in
  *"asked now: milestone"*) echo '{complete}' ;;
  *"role: planner"*) echo '{plan}' ;;
  *) if [ ! -e {root}/first.pid ]; then
       (trap '' TERM HUP INT; exec sleep 600) &
       echo "$$ $!" > {root}/first.pid
       wait
     fi
     echo '{done}' ;;
esac
"""


def goal(project: Project, *, ticks: int) -> None:
    agents = install(project, ticks=ticks)
    project.goal("g", agents, agents, max_attempts=3)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_a_killed_runner_takes_its_agents_with_it(tmp_path: Path, sig: signal.Signals) -> None:
    project = Project(tmp_path)
    goal(project, ticks=100_000)  # the planner works until it is killed
    runner = project.popen("run", "g", "--quiet")
    try:
        wait_for_ticks(project, 1)
        pids = processes(project)
        assert len(pids) == 2  # the agent and its grandchild
        runner.send_signal(sig)
        runner.wait(timeout=120)
        assert all_dead(pids) == [], "agent processes outlived their runner"
    finally:
        if runner.poll() is None:
            runner.kill()
        kill_all(processes(project))


def test_a_runner_taking_over_ends_the_hung_runners_agent_first(tmp_path: Path) -> None:
    project = Project(tmp_path)
    goal(project, ticks=40)
    hung = project.popen("run", "g", "--quiet", "--lease-ttl", "1")
    try:
        wait_for_ticks(project, 1)
        hung.send_signal(signal.SIGSTOP)  # it can neither renew its lease nor end its agent
        (first,) = [e for e in entries(project) if e.kind == "start"]
        deadline = time.monotonic() + 120
        while not lease_free(project, "g"):
            assert time.monotonic() < deadline, "the hung runner's lease never expired"
            time.sleep(0.05)
        taking_over = project.gov("run", "g", "--lease-ttl", "30", timeout=600)
        assert taking_over.returncode == 0, taking_over.stderr + taking_over.stdout
        assert overlaps(project) == []  # the new agent never found the item's lock taken
        assert all_dead(processes(project)[:2]) == []
        said = taking_over.stdout + taking_over.stderr
        assert f"agent pid {first.pids[0]} of" in said
        assert "killed it before going on" in said
        started = [e for e in entries(project) if e.kind == "start"]
        assert [e.key for e in started[:2]] == ["plan", "plan"]  # the plan was run again
        assert project.status("g")["status"] == "succeeded"
    finally:
        hung.send_signal(signal.SIGKILL)
        hung.wait(timeout=60)
        kill_all(processes(project))


def test_cancelling_the_goal_ends_the_agent_of_the_run_in_flight(tmp_path: Path) -> None:
    """SPEC §11.11: an agent never outlives its attempt, and after ``goal.cancelled`` no
    attempt can be recorded. The agent used to run on until it finished by itself (up to
    its ``timeout_s``) and the runner with it; now the runner's next heartbeat kills it."""
    project = Project(tmp_path)
    agents = {**install(project, ticks=100_000), "timeout_s": 3600}  # works until killed
    project.goal("g", agents, agents)
    runner = project.popen("run", "g", "--quiet", "--lease-ttl", "3")
    try:
        wait_for_ticks(project, 1)
        pids = processes(project)
        assert len(pids) == 2  # the agent and its grandchild
        cancelled = project.gov("cancel", "g", "--reason", "not needed")
        assert cancelled.returncode == 0, cancelled.stderr
        assert all_dead(pids, within_s=60) == [], "the agents outlived the cancelled goal"
        assert runner.wait(timeout=120) == 13
        assert project.status("g")["status"] == "cancelled"
    finally:
        if runner.poll() is None:
            runner.kill()
        kill_all(processes(project))


def _first_agent(project: Project) -> list[tuple[int, int]]:
    path = project.root / "first.pid"
    deadline = time.monotonic() + 120
    while not path.exists() or not path.read_text().endswith("\n"):
        assert time.monotonic() < deadline, "the first attempt's agent never started"
        time.sleep(0.05)
    pids = [int(p) for p in path.read_text().split()]
    return [(pid, int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]))
            for pid in pids]  # fmt: skip


def test_abandoning_the_attempt_in_flight_ends_its_agent_and_the_run_goes_on(
    tmp_path: Path,
) -> None:
    """SPEC §11.11: an agent never outlives its attempt. `work abandon` finishes the
    attempt in flight; its agent used to run on, and when it ended the runner stopped
    with "has no attempt in flight" (exit 5) instead of going on."""
    project = Project(tmp_path)
    body = SLOW_FIRST_ATTEMPT.format(
        root=tmp_path,
        plan=json.dumps(plan("a")),
        complete=json.dumps(COMPLETE),
        done=json.dumps(done("a")),
    )
    agent = {"harness": "command", "args": [project.script("agent", body)], "timeout_s": 3600}
    project.goal("g", agent, agent)
    runner = project.popen("run", "g", "--quiet", "--lease-ttl", "3")
    first: list[tuple[int, int]] = []
    try:
        first = _first_agent(project)
        abandoned = project.gov("work", "abandon", "g", "p1-a", "--reason", "wrong approach")
        assert abandoned.returncode == 0, abandoned.stderr
        assert all_dead(first, within_s=60) == [], "the abandoned attempt's agent ran on"
        assert runner.wait(timeout=120) == 0
        outcomes = [e["outcome"] for e in project.events("g") if e["type"] == "attempt.finished"]
        assert outcomes == ["abandoned", "succeeded"]
        assert project.status("g")["status"] == "succeeded"
    finally:
        if runner.poll() is None:
            runner.kill()
        kill_all(first)
