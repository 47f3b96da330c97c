"""Agent output never crashes the runner (issue 9, items 3 and 5; SPEC §7, §10).

Real command agents write what a hostile or broken agent might: a reply nested far
deeper than Python's recursion limit, a decision question holding a lone surrogate, a
megabyte of unbalanced braces, a key spelled with JSON escapes. ``governor run``,
``tick`` and ``serve`` each record the attempt as a charged failure with a clear error
and go on; no traceback, no attempt continued for free, and the key never lands in an
event.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.cli import Project, plan
from tests.service.fleet import reaped, stop, wait_until_settled

NESTED = '{"status": "done", "x": ' + '{"a": ' * 50_000 + "1" + "}" * 50_000 + "}"
SURROGATE = '{"status": "decision", "question": "which one \\udfff?"}'
BRACES = "{" * 1_000_000
SECRET = "sk-abcdefghijklmnopqrstuvwx0123"
ESCAPED_SECRET = (
    '{"status": "failed", "summary": "the key is \\u0073k-abcdefghijklmnopqrstuvwx0123"}'
)

REPLIES = {"nested": NESTED, "surrogate": SURROGATE, "braces": BRACES}


def agent(project: Project, name: str, reply: str) -> dict[str, Any]:
    """A command agent (a real Python process) that reads the prompt and prints ``reply``."""
    (project.root / f"{name}.txt").write_text(reply)
    path = project.root / f"{name}.py"
    path.write_text(
        f"#!{sys.executable}\nimport sys\nsys.stdin.read()\n"
        f"sys.stdout.write(open({str(project.root / f'{name}.txt')!r}).read())\n"
    )
    path.chmod(0o755)
    return {"harness": "command", "args": [f"./{name}.py"]}


def hostile_goal(project: Project, goal_id: str, reply: str) -> str:
    planner = agent(project, "planner", json.dumps(plan("a")))
    worker = agent(project, f"worker-{goal_id}", reply)
    return project.goal(goal_id, planner, worker, max_attempts=2, max_total_attempts=2)


def check_charged_failures(project: Project, goal_id: str) -> list[dict[str, Any]]:
    """Two charged failures of p1-a, none continued; the goal spent its budget."""
    events = project.events(goal_id)
    assert "attempt.continued" not in [e["type"] for e in events]
    finished = [e for e in events if e["type"] == "attempt.finished"]
    assert [(e["attempt"], e["outcome"], e.get("class")) for e in finished] == [
        (1, "failed", None),
        (2, "failed", None),
    ]
    for e in finished:
        assert "the reply could not be used" in e["error"], e["error"]
    status = project.status(goal_id)
    assert status["status"] == "budget_exhausted"
    assert status["ledger"]["attempts"]["charged"] == 2
    return finished


@pytest.mark.parametrize("kind", sorted(REPLIES))
def test_run_records_a_hostile_reply_as_a_charged_failure(tmp_path: Path, kind: str) -> None:
    project = Project(tmp_path)
    hostile_goal(project, "g", REPLIES[kind])
    result = project.gov("run", "g", "--quiet")
    assert result.returncode == 11, result.stderr  # budget_exhausted
    assert "Traceback" not in result.stderr
    check_charged_failures(project, "g")


def test_tick_records_a_hostile_reply_and_the_next_tick_does_not_repeat_it(
    tmp_path: Path,
) -> None:
    project = Project(tmp_path)
    hostile_goal(project, "g", NESTED)
    codes = []
    for _ in range(6):  # plan, apply, attempt 1, attempt 2, ... until the goal stops
        result = project.gov("tick", "g")
        assert "Traceback" not in result.stderr, result.stderr
        codes.append(result.returncode)
        if result.returncode == 11:
            break
    assert codes[-1] == 11, codes
    check_charged_failures(project, "g")


def test_serve_records_a_hostile_reply_and_moves_on(tmp_path: Path) -> None:
    project = Project(tmp_path)
    store_url = f"sqlite:///{project.env['GOVERNOR_STORE']}"
    hostile_goal(project, "g", SURROGATE)
    with reaped(project.popen("serve", "--workers", "1", "--poll-s", "0.05")) as serve:
        wait_until_settled(store_url, timeout_s=300)
        assert stop(serve) == 0
        _, stderr = serve.communicate(timeout=60)
    assert "Traceback" not in stderr
    check_charged_failures(project, "g")


def test_a_key_spelled_with_json_escapes_never_lands_in_an_event(tmp_path: Path) -> None:
    project = Project(tmp_path)
    hostile_goal(project, "g", ESCAPED_SECRET)
    result = project.gov("run", "g", "--quiet")
    assert result.returncode == 11, result.stderr
    exported = project.gov("export", "g")
    assert exported.returncode == 0
    assert SECRET not in exported.stdout
    assert SECRET[:12] not in json.dumps(
        [json.loads(line) for line in exported.stdout.splitlines()]
    )
    finished = [e for e in project.events("g") if e["type"] == "attempt.finished"]
    assert "the key is [REDACTED]" in finished[0]["error"]
