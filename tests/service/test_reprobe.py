"""The service re-probes environment stops (issue 35 §1): a goal stopped because its
planner's binary is not on PATH goes on by itself once the binary is installed, under
``governor serve --workers 2``, with no person's command.

Real processes throughout: the service and its two worker processes, the agent a real
executable put on the PATH the service (and so the agent) sees.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import orjson

from tests.e2e.cli import COMPLETE, Project, done, plan, worker_script
from tests.service.fleet import reaped, stop

AGENT = "gov-reprobe-planner"
"""The planner's executable: a bare name, looked up on the scrubbed PATH."""


def _wait_for(project: Project, goal_id: str, status: str, timeout_s: float = 60.0) -> dict:
    deadline = time.monotonic() + timeout_s
    while True:
        shown = project.status(goal_id)
        if shown["status"] == status:
            return shown
        assert time.monotonic() < deadline, f"{goal_id} is still {shown['status']}"
        time.sleep(0.2)


def install(agent: Path, marker: Path) -> None:
    """A planner that proposes one item, then says the goal is complete."""
    first, then = json.dumps(plan("a")), json.dumps(COMPLETE)
    agent.write_text(
        f"#!/bin/sh\ncat >/dev/null\nif [ -e {marker} ]; then printf '%s\\n' '{then}'; "
        f"else : > {marker}; printf '%s\\n' '{first}'; fi\n"
    )
    agent.chmod(0o755)


def test_serve_resumes_a_goal_whose_missing_binary_was_installed(tmp_path: Path) -> None:
    project = Project(tmp_path)
    agents = tmp_path / "agents"
    agents.mkdir()
    project.env["PATH"] = f"{agents}{os.pathsep}{os.environ['PATH']}"
    scenario = project.scenario("w.json", [worker_script("a", [{"reply": done("a")}])])
    project.goal(
        "g-env",
        {"harness": "command", "args": [AGENT]},
        {"harness": "scripted", "args": [scenario]},
    )
    serve = project.popen(
        "serve", "--workers", "2", "--poll-s", "0.05", "--reprobe", "1", "--log-file", "s.jsonl"
    )
    with reaped(serve):
        blocked = _wait_for(project, "g-env", "blocked")
        assert blocked["blocked_on"] == "environment"
        status = project.gov("service", "status", "--json")
        assert status.returncode == 0, status.stderr
        assert orjson.loads(status.stdout)["due_at_reprobe"] == 1
        text = project.gov("service", "status").stdout
        assert "due at the next re-probe: 1" in text

        install(agents / AGENT, tmp_path / "planned")
        _wait_for(project, "g-env", "succeeded")
        assert stop(serve) == 0
    events = project.events("g-env")
    resumed = [e for e in events if e["type"] == "goal.resumed"]
    assert len(resumed) == 1
    assert resumed[0]["actor"] == "governor"
    assert f"{AGENT} is there now" in resumed[0]["reason"]
