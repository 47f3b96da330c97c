"""SPEC §11.9: in-agent tries are never invisible, and every run line says charged or not.

Real ``governor`` processes, the real scripted harness, a real SQLite file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.cli import COMPLETE, Project, done, plan, planner_script, worker_script

FAST_BACKOFF = {"upstream_backoff": {"initial_s": 0.05, "factor": 1, "max_s": 0.05}}
OUTAGE = {"vendor_error": {"status": 503, "message": "HTTP/1.1 503 Service Unavailable"}}


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


def test_a_worker_503_absorbed_in_agent_shows_in_events_progress_status_and_explain(
    project: Project,
) -> None:
    scenario = {
        "harness": "scripted",
        "args": [
            project.scenario(
                "scenario.json",
                [
                    planner_script([OUTAGE, {"reply": plan("a")}, {"reply": COMPLETE}]),
                    worker_script("a", [OUTAGE, {"reply": done("a")}]),
                ],
            )
        ],
    }
    project.goal("g", scenario, {**scenario, "max_attempts": 2}, **FAST_BACKOFF)
    result = project.gov("run", "g")
    assert result.returncode == 0, result.stderr

    # the planner (one try per run) was refused once: the progress line says it was free
    assert (
        "plan p1: failed (upstream, not charged): “HTTP/1.1 503 Service Unavailable”"
        in result.stderr
    )
    # the worker's refused first try is on its line although the attempt succeeded
    assert (
        "p2-a attempt 1: succeeded (charged; 2 in-agent tries: upstream, ok; "
        "last error: HTTP/1.1 503 Service Unavailable)"
    ) in result.stderr

    [finished] = [e for e in project.events("g") if e["type"] == "attempt.finished"]
    assert finished["outcome"] == "succeeded"
    assert finished["evidence"]["tries"]["count"] == 2
    assert finished["evidence"]["tries"]["classes"] == ["upstream", "ok"]
    assert "503" in finished["evidence"]["tries"]["last_error"]

    status = project.gov("status", "g")
    assert status.returncode == 0, status.stderr
    assert "last runs:" in status.stdout
    assert "2 in-agent tries: upstream, ok" in status.stdout

    explained = project.gov("explain", "g")
    assert explained.returncode == 0, explained.stderr
    assert "p2-a attempt 1" in explained.stdout
    assert "2 in-agent tries: upstream, ok" in explained.stdout

    exported = project.gov("export", "g")
    assert exported.returncode == 0, exported.stderr
    (project.root / "h.jsonl").write_text(exported.stdout)
    validated = project.gov("validate", "h.jsonl")
    assert validated.returncode == 0, validated.stdout + validated.stderr


def test_a_charged_worker_failure_says_charged_on_its_progress_line(project: Project) -> None:
    fail = {"effects": True, "stderr": "tests failed\n", "exit_code": 1}
    scenario = {
        "harness": "scripted",
        "args": [
            project.scenario(
                "scenario.json",
                [
                    planner_script([{"reply": plan("a")}]),
                    worker_script("a", [fail]),
                ],
            )
        ],
    }
    project.goal(
        "g", scenario, {**scenario, "max_attempts": 2}, max_attempts=1, max_total_attempts=1
    )
    result = project.gov("run", "g")
    assert result.returncode == 11, result.stderr
    # SPEC §12.12: a worker that ran and failed is not spawned again inside its attempt,
    # though its profile allows 2 spawns: the next attempt would be the retry
    assert "p1-a attempt 1: failed (charged): “tests failed" in result.stderr
    [finished] = [e for e in project.events("g") if e["type"] == "attempt.finished"]
    assert (finished.get("evidence") or {}).get("tries") is None
