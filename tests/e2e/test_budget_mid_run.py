"""End to end: a goal's cost budget spent during a real claude call ends that call at its
next model request, and what the agent already did is kept (SPEC §13.1, §13.5; issue 32).

The planner is scripted (it costs nothing); the worker is the real claude CLI (each pinned
release) through governor's relay against the loopback fake vendor. The vendor's first
answer to the worker is a shell tool call (claude runs it: it writes a file) whose usage,
priced by the shipped table for the profile's model, spends ``max_cost_usd``. The relay
asks the goal's gate before claude's next model request and refuses it: the vendor never
sees it, the attempt is charged under rule ``budget``, and the goal stops on cost.
"""

from __future__ import annotations

import json
from pathlib import Path

from governor.core.observation import Usage
from governor.core.prices import price_usd
from governor.exec.prices import shipped_table
from tests.e2e.cli import Project, plan, planner_script
from tests.fakevendor import scenario as sc
from tests.fakevendor.clis import claude_env
from tests.fakevendor.server import FakeVendor, RecordedRequest

pytest_plugins = ["tests.vendor_conftest"]

MODEL = "claude-sonnet-4-5"
FIRST_USAGE = Usage(input_tokens=120, output_tokens=30)
"""What the fake vendor's Anthropic stream reports for one answer."""


def test_a_claude_call_is_ended_mid_run_when_the_cost_budget_is_spent(
    tmp_path: Path, claude_cli: str
) -> None:
    price = shipped_table().price(MODEL)
    assert price is not None
    first_usd = price_usd(FIRST_USAGE, price)
    limit = first_usd / 2  # the first answer alone spends it

    def answer(request: RecordedRequest) -> sc.Step:
        if "role: worker" not in json.dumps(request.body):
            return sc.Step("reply", text="not asked")  # no other request is expected
        return sc.Step("tool_call", command="touch made-before-the-budget-bit.txt")

    with FakeVendor() as fake:
        fake.respond(answer)
        project = Project(tmp_path)
        project.env.update(claude_env(tmp_path / "home", fake.url, claude_cli))
        planner = {
            "harness": "scripted",
            "args": [project.scenario("plan.json", [planner_script([{"reply": plan("a")}])])],
        }
        worker = {"harness": "claude", "model": MODEL, "args": ["--allowedTools", "Bash"]}
        project.goal("g", planner, worker, max_cost_usd=limit)
        result = project.gov("run", "g", "--max-wait", "0")
        asked = [json.dumps(r.body) for r in fake.model_requests]

    said = result.stdout + result.stderr
    assert (tmp_path / "made-before-the-budget-bit.txt").exists(), said  # the tool effect stays
    worker_requests = [text for text in asked if "role: worker" in text]
    assert len(worker_requests) == 1, said  # the second never left the relay
    assert len(asked) == 1, said

    events = project.events("g")
    finished = [e for e in events if e["type"] == "attempt.finished"]
    assert len(finished) == 1, said
    assert finished[0]["outcome"] == "failed"
    assert finished[0]["evidence"]["rule"] == "budget"
    assert finished[0]["evidence"]["effects"] == "observed"  # charged: the agent did work
    assert finished[0]["cost_usd"] > limit

    status = project.status("g")
    assert status["status"] == "budget_exhausted", said
    assert "cost" in status["reason"]
