"""End to end: which calls share an upstream's health record (SPEC §12.9).

The agents are real ``command`` scripts run as ``sh <script>``: two goals whose agents
are *different* scripts never park each other, however alike their command lines start;
two profiles that declare the same ``upstream = "…"`` share one record and park together.
``governor upstreams`` names each record by that identity (a short name and a digest, or
the declared name), never by an absolute path.
"""

from __future__ import annotations

import json
from pathlib import Path

import orjson

from tests.e2e.cli import COMPLETE, Project, done, plan
from tests.e2e.test_upstream_health import AGENT, BACKOFF, calls


def vendor_folder(root: Path, name: str) -> Path:
    folder = root / name
    folder.mkdir()
    return folder


def script(project: Project, name: str) -> str:
    body = AGENT % {
        "done": json.dumps(done("a")),
        "complete": json.dumps(COMPLETE),
        "plan": json.dumps(plan("a")),
    }
    return project.script(name, body.removeprefix("#!/bin/sh\n"))


def agent(path: str, vendor: Path, role: str, upstream: str | None = None) -> dict[str, object]:
    profile: dict[str, object] = {
        "harness": "command",
        "args": ["sh", path, str(vendor), role],
        "probe": ["sh", path, str(vendor), "probe"],
    }
    return {**profile, "upstream": upstream} if upstream else profile


def records(project: Project) -> list[dict]:
    listed = project.gov("upstreams", "--json")
    assert listed.returncode == 0, listed.stderr
    return [orjson.loads(line) for line in listed.stdout.splitlines()]


def test_two_goals_whose_agents_are_different_scripts_never_park_each_other(
    tmp_path: Path,
) -> None:
    project = Project(tmp_path)
    down, up = vendor_folder(tmp_path, "vendor-a"), vendor_folder(tmp_path, "vendor-b")
    a, b = script(project, "agent_a"), script(project, "agent_b")
    project.goal("a", agent(a, down, "planner"), agent(a, down, "worker"), **BACKOFF)
    project.goal("b", agent(b, up, "planner"), agent(b, up, "worker"), **BACKOFF)
    (down / "down").touch()

    project.gov("run", "a", "--max-wait", "0")
    first = project.status("a")
    assert (first["status"], first["blocked_on"]) == ("waiting", "upstream")

    result = project.gov("run", "b", "--max-wait", "0")
    assert result.returncode == 0, result.stdout + result.stderr
    assert project.status("b")["status"] == "succeeded"
    assert "goal.parked" not in project.types("b")  # never parked on a's outage
    assert calls(up).count("planner") == 2

    names = {r["upstream"]: r for r in records(project)}
    [failing] = [r for r in names.values() if r["state"] == "failing"]
    assert failing["upstream"].startswith("command sh agent_a ")
    assert str(tmp_path) not in " ".join(names)  # no absolute path names a record
    assert all("#" in name for name in names)  # a short name and a digest


def test_two_profiles_declaring_the_same_upstream_park_together(tmp_path: Path) -> None:
    project = Project(tmp_path)
    vendor = vendor_folder(tmp_path, "vendor")
    a, b = script(project, "agent_a"), script(project, "agent_b")
    shared = "pretend-vendor"
    project.goal(
        "a", agent(a, vendor, "planner", shared), agent(a, vendor, "worker", shared), **BACKOFF
    )
    project.goal(
        "b", agent(b, vendor, "planner", shared), agent(b, vendor, "worker", shared), **BACKOFF
    )
    (vendor / "down").touch()

    project.gov("run", "a", "--max-wait", "0")
    project.gov("run", "b", "--max-wait", "0")
    assert project.types("b") == ["goal.created", "goal.parked"]  # its agent never called
    assert calls(vendor).count("planner") == 1
    [record] = records(project)
    assert (record["upstream"], record["state"], record["parked_goals"]) == (shared, "failing", 2)

    (vendor / "down").unlink()
    for goal_id in ("b", "a"):
        result = project.gov("run", goal_id, "--max-wait", "5")
        assert result.returncode == 0, result.stdout + result.stderr
        assert project.status(goal_id)["status"] == "succeeded"
