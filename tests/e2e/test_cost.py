"""End to end: an agent that reports only its token usage is bounded by ``max_cost_usd``
(SPEC §13.5) — a custom ``command`` agent through its reply envelope, and the real codex
CLI (which reports no cost) against the loopback fake vendor.

The agent is a real ``command`` script; its reply envelope (the last stdout line) says how
many tokens each call used and nothing of its cost. governor prices the usage — the
planner by the shipped price table (its model is ``gpt-5-codex``), the worker by its
profile's own ``price`` — records the cost on each event, and stops the goal once the sum
is over its limit.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from governor.exec.prices import shipped_table
from tests.e2e.cli import COMPLETE, Project, done, plan
from tests.fakevendor.clis import codex_env, require_cli
from tests.fakevendor.scenario import Step
from tests.fakevendor.server import FakeVendor, RecordedRequest

AGENT = """\
prompt=$(cat)
echo "$1" >> calls
case "$prompt" in
  *"role: worker"*) echo '%(done)s' ;;
  *"asked now: milestone"*) echo '%(complete)s' ;;
  *) echo '%(plan)s' ;;
esac
echo '{"status": "ok", "usage": {"input_tokens": 1000000, "cached_input_tokens": 200000, "output_tokens": 10000}}'
"""


def test_a_goal_whose_agent_reports_only_usage_is_stopped_by_max_cost_usd(
    tmp_path: Path,
) -> None:
    project = Project(tmp_path)
    project.script(
        "agent",
        AGENT
        % {
            "done": json.dumps(done("a")),
            "complete": json.dumps(COMPLETE),
            "plan": json.dumps(plan("a", "b")),
        },
    )
    planner = {"harness": "command", "args": ["bin/agent", "planner"], "model": "gpt-5-codex"}
    worker = {
        "harness": "command",
        "args": ["bin/agent", "worker"],
        "price": {"input_per_mtok": 2.0, "output_per_mtok": 8.0, "cached_input_per_mtok": 0.5},
    }
    project.goal("g", planner, worker, max_cost_usd=2.0, max_parallel_work=1)

    result = project.gov("run", "g", "--max-wait", "0")
    status = project.status("g")
    assert status["status"] == "budget_exhausted", result.stdout + result.stderr
    assert "cost" in status["reason"]

    table = shipped_table().price("gpt-5-codex")
    assert table is not None
    cached = table.cached_input_per_mtok or table.input_per_mtok
    planned = 0.8 * table.input_per_mtok + 0.2 * cached + 0.01 * table.output_per_mtok
    worked = 0.8 * 2.0 + 0.2 * 0.5 + 0.01 * 8.0
    events = project.events("g")
    costs: list[tuple[str, float]] = [(e["type"], e["cost_usd"]) for e in events if "cost_usd" in e]
    assert costs[0][0] == "plan.proposed"
    assert costs[0][1] == pytest.approx(planned)
    finished = [c for kind, c in costs if kind == "attempt.finished"]
    assert finished == [pytest.approx(worked)]
    assert sum(c for _, c in costs) > 2.0
    # the goal stopped at the first call over the limit: item b never ran
    assert (tmp_path / "calls").read_text().split() == ["planner", "worker"]


def test_a_codex_goal_is_stopped_by_max_cost_usd_from_its_priced_usage(tmp_path: Path) -> None:
    """codex reports no cost, only the tokens of ``turn.completed`` (from the vendor's
    ``response.completed``): priced by the shipped table for its model, they bound it."""
    cli = require_cli("codex")

    def answer(request: RecordedRequest) -> Step:
        text = json.dumps(request.body)
        reply = done("a") if "role: worker" in text else plan("a", "b")
        return Step("reply", text=json.dumps(reply))

    with FakeVendor() as fake:
        fake.respond(answer)
        project = Project(tmp_path)
        project.env.update(codex_env(tmp_path / "home", fake.url, cli))
        codex = {"harness": "codex", "env": ["FAKE_VENDOR_API_KEY"], "timeout_s": 120}
        per_call = 120 * 1.25e-6 + 30 * 10e-6  # the fake's usage at gpt-5-codex's price
        project.goal("g", codex, codex, max_cost_usd=1.5 * per_call, max_parallel_work=1)
        result = project.gov("run", "g", "--max-wait", "0")
        requests = len(fake.model_requests)

    status = project.status("g")
    assert status["status"] == "budget_exhausted", result.stdout + result.stderr
    assert "cost" in status["reason"]
    events = project.events("g")
    costs = [e["cost_usd"] for e in events if "cost_usd" in e]
    table = shipped_table().price("gpt-5-codex")
    assert table is not None
    assert costs == [pytest.approx(per_call), pytest.approx(per_call)]
    assert table.input_per_mtok == 1.25  # the figure per_call assumes
    assert requests == 2  # the planner's and the first worker's: item b never ran
