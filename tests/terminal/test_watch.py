"""``governor run GOAL --watch`` and ``governor status GOAL --watch`` follow a goal that
another driver runs (a real ``governor serve``) until it stops; Ctrl-C stops watching
with exit 130 and the goal goes on."""

from __future__ import annotations

import re
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.cli import COMPLETE, GOVERNOR, Project, done, plan, planner_script, worker_script
from tests.terminal.tty import run_in_tty


@pytest.fixture
def project(tmp_path: Path) -> Project:
    project = Project(tmp_path)
    scripts = [
        planner_script([{"reply": plan("a")}, {"reply": COMPLETE}]),
        worker_script("a", [{"stdout": "working\n", "delay_s": 3, "reply": done("a")}]),
    ]
    agent = {"harness": "scripted", "args": [project.scenario("scenario.json", scripts)]}
    project.goal("g", agent, agent)
    return project


@pytest.fixture
def serving(project: Project) -> Iterator[subprocess.Popen[str]]:
    service = project.popen("serve", "--poll-s", "0.2")
    try:
        yield service
    finally:
        service.send_signal(signal.SIGTERM)
        service.communicate(timeout=120)


def test_run_watch_follows_the_service_until_the_goal_stops(
    project: Project, serving: subprocess.Popen[str]
) -> None:
    watched = subprocess.run(
        [GOVERNOR, "run", "g", "--watch"],
        cwd=project.root, env=project.env, capture_output=True, timeout=180,
    )  # fmt: skip
    assert watched.returncode == 0, watched.stderr
    for stream in (watched.stdout, watched.stderr):  # bytes: text mode would hide a \r
        assert b"\r" not in stream
        assert b"\x1b" not in stream
    lines = watched.stderr.decode().splitlines()
    assert re.search(r"following g: \w+/\w+", lines[0])
    assert any(re.search(r"driven by \S+:\d+", line) for line in lines)
    assert any(line.endswith("p1-a attempt 1: succeeded (charged)") for line in lines)
    assert any(line.endswith("plan p2: the goal is complete") for line in lines)
    assert "succeeded/none" in watched.stdout.decode()
    assert project.status("g")["status"] == "succeeded"
    assert project.types("g").count("attempt.started") == 1  # the watcher drove nothing


def test_status_watch_on_a_terminal_shows_the_call_in_flight_and_json_at_the_end(
    project: Project, serving: subprocess.Popen[str]
) -> None:
    shown = run_in_tty(
        [GOVERNOR, "status", "g", "--watch", "--json"], cwd=project.root, env=project.env
    )
    assert shown.code == 0, shown.text[-2000:]
    assert re.search(r"p1-a attempt 1\s+\d+s\s+│ \(run by \S+:\d+\)", shown.text)
    assert '"status":"succeeded"' in shown.text


def test_ctrl_c_stops_watching_with_exit_130_and_the_goal_goes_on(project: Project) -> None:
    shown = run_in_tty(
        [GOVERNOR, "status", "g", "--watch"],
        cwd=project.root,
        env=project.env,
        until=lambda seen: b"nobody drives it now" in seen,
        then=lambda process: process.send_signal(signal.SIGINT),
    )
    assert shown.code == 130, shown.text[-2000:]
    assert "stopped watching g; the goal goes on (governor status g)" in shown.text
    assert "Traceback" not in shown.text
    assert project.status("g")["status"] == "ready"


def test_watch_needs_a_goal_that_exists(project: Project) -> None:
    missing = project.gov("run", "nope", "--watch")
    assert missing.returncode == 4
    assert missing.stderr.strip().splitlines() == [
        "error: no goal 'nope' in this store (governor list shows the goals)"
    ]
    assert project.gov("status", "--watch").returncode == 3
