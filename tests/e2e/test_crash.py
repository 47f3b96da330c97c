"""Crash safety (SPEC §6.3, §8): SIGKILL the runner at random points, then finish the goal.

After every kill the history validates, a new ``governor run`` completes the goal, no
attempt number is skipped or reused, and no continuation is charged. The default run
kills ``KILLS_SHORT`` runners, the long mode (``--fuzz-long``) ``KILLS``.
"""

from __future__ import annotations

import random
import signal
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from governor.core.evidence import is_uncharged
from tests.conftest import long_mode
from tests.e2e.cli import (
    MILESTONE_COMPLETE,
    Project,
    done,
    plan,
    planner_script,
    worker_script,
)
from tests.e2e.workers import lease_free

KILLS = 30
KILLS_SHORT = 8


def scenario(project: Project) -> dict[str, Any]:
    slow = {"delay_s": 0.15, "effects": True}
    flaky = {"delay_s": 0.1, "effects": True, "stderr": "flaky test\n", "exit_code": 1}
    scripts = [
        MILESTONE_COMPLETE,  # a plan continued after a kill is asked again: plan, not complete
        planner_script([{"delay_s": 0.1, "reply": plan("a", "b", "c", deps={"c": ["a"]})}]),
        worker_script("a", [{**slow, "reply": done("a")}]),
        worker_script("b", [flaky, {**slow, "reply": done("b")}]),
        worker_script("c", [{"vendor_error": {"status": 503}}, {**slow, "reply": done("c")}]),
    ]
    return {"harness": "scripted", "args": [project.scenario("scenario.json", scripts)]}


def charged_finishes(events: list[dict[str, Any]]) -> Counter[str]:
    """Per item: finished attempts the gate charges (what the ledger must say, no more)."""
    from governor.core.evidence import Evidence

    out: Counter[str] = Counter()
    for e in events:
        if e["type"] == "attempt.finished":
            evidence = Evidence.model_validate(e["evidence"]) if e.get("evidence") else None
            if not is_uncharged(e["outcome"], e.get("class"), evidence):
                out[e["work_id"]] += 1
    return out


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """One kill per seed: every seed in the long mode, the first few by default."""
    if "seed" in metafunc.fixturenames:
        metafunc.parametrize("seed", range(KILLS if long_mode(metafunc.config) else KILLS_SHORT))


@pytest.mark.slow
def test_a_killed_runner_leaves_a_history_that_validates_and_resumes(
    tmp_path: Path, seed: int
) -> None:
    project = Project(tmp_path)
    agents = scenario(project)
    project.goal(
        "g",
        agents,
        agents,
        upstream_backoff={"initial_s": 0.05, "factor": 1, "max_s": 0.05},
        max_continuations=10,
    )
    runner = project.popen("run", "g", "--lease-ttl", "0.6", "--quiet")
    time.sleep(random.Random(seed).uniform(0.2, 2.0))
    runner.send_signal(signal.SIGKILL)
    runner.wait(timeout=30)

    exported = project.gov("export", "g", "-o", "h.jsonl")
    assert exported.returncode == 0, exported.stderr
    valid = project.gov("validate", "h.jsonl")
    assert valid.returncode == 0, valid.stderr

    deadline = time.monotonic() + 120  # the dead runner's lease expires: it is taken over,
    while not lease_free(project, "g"):  # never pid-probed
        assert time.monotonic() < deadline, "the dead runner's lease never expired"
        time.sleep(0.05)
    finish = project.gov("run", "g", "--lease-ttl", "5", "--quiet")
    assert finish.returncode == 0, finish.stderr + finish.stdout

    events = project.events("g")
    numbers: dict[str, list[int]] = {}
    for e in events:
        if e["type"] == "attempt.started":
            numbers.setdefault(e["work_id"], []).append(e["attempt"])
    assert all(n == list(range(1, len(n) + 1)) for n in numbers.values()), numbers
    ledger = project.status("g")["ledger"]["work"]
    charged = charged_finishes(events)
    for work_id, row in ledger.items():
        assert row["charged_attempts"] == charged[work_id], (work_id, row, charged)
    assert project.gov("validate", "h.jsonl").returncode == 0
