"""SPEC §12.10 through the command: replay shows the signature and the rule, what-if and
tune vary ``max_same_failures`` like any limit, explain never advises a budget for it.

Real ``governor`` processes over the golden histories of the rule.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from tests.cli.test_cli import governor

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
PLANNER = GOLDEN / "planner_same_failure.jsonl"
ITEM = GOLDEN / "work_same_failure_replan.jsonl"


def test_replay_shows_each_failures_signature_and_the_rule_that_stopped_the_goal() -> None:
    result = governor("replay", str(PLANNER))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    stop = next(i for i, line in enumerate(lines) if "(goal.same_failure)" in line)
    assert "blocked/none [on work]: the planner failed the same way 3 times in a row" in lines[stop]
    assert lines[stop + 1].strip().startswith("signature none/none ")
    assert lines[stop + 1].strip().endswith("no JSON object found in <n> characters of output")
    signed = [line for line in lines if line.strip().startswith("signature ")]
    assert len(signed) == 4  # every plan.failed: three alike, one uncharged refusal


def test_replay_shows_the_item_rule_in_its_step() -> None:
    result = governor("replay", str(ITEM), "--all")
    assert result.returncode == 0, result.stderr
    assert "p1-a failed the same way 3 times in a row; plan (replan" in result.stdout


def test_what_if_varies_max_same_failures_like_any_limit() -> None:
    tighter = governor("replay", str(PLANNER), "--policy", "max_same_failures=2", "--json")
    assert tighter.returncode == 0, tighter.stderr
    record = orjson.loads(tighter.stdout)
    assert record["outcome"] == "stopped_earlier"
    assert record["divergence"]["seq"] == 8  # p4 is never requested
    assert record["divergence"]["rule"] == "goal.same_failure"
    assert "2 times in a row" in record["divergence"]["reason"]
    looser = governor("replay", str(PLANNER), "--policy", "max_same_failures=4", "--json")
    assert looser.returncode == 0, looser.stderr
    assert orjson.loads(looser.stdout)["outcome"] == "censored"  # it would have planned again
    item = governor("replay", str(ITEM), "--policy", "max_same_failures=2", "--json")
    assert orjson.loads(item.stdout)["divergence"]["seq"] == 12  # no third attempt


def test_tune_grids_max_same_failures(tmp_path: Path) -> None:
    result = governor(
        "tune",
        str(PLANNER),
        "--grid",
        "max_same_failures=2..4",
        "--bootstrap",
        "0",
        "--workers",
        "1",
        "--quiet",
        "--json",
    )
    assert result.returncode == 0, result.stderr
    report = orjson.loads(result.stdout)
    rows = {p["policy"]["max_same_failures"]: p for p in report["policies"]}
    assert sorted(rows) == [2, 3, 4]
    assert rows[3]["basis"] == "observed"  # the recorded limit decides the recorded outcome
    assert rows[2]["success_rate"] == 0.0
    assert report["infeasible"] == []


def test_explain_advises_fixing_the_agent_never_a_budget() -> None:
    result = governor("explain", str(PLANNER))
    assert result.returncode == 0, result.stderr
    advice = next(line for line in result.stdout.splitlines() if line.startswith("advice: "))
    assert "fix the agent, its prompt or its environment" in advice
    assert "raise" not in advice
    assert "max_same_failures" not in advice
    assert "governor resume" in advice
