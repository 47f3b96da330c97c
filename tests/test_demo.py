"""``governor demo``: each scenario runs end to end as a user runs it (a real process)."""

from __future__ import annotations

from pathlib import Path

from tests.cli.test_cli import governor


def test_the_same_failure_demo_stops_a_planner_that_repeats_itself_and_advises_a_fix(
    tmp_path: Path,
) -> None:
    """Issue 25: a planner that never answers with JSON is stopped after 3 calls (SPEC
    §12.10), with replans left, and the advice is to fix it, never a budget."""
    result = governor("demo", "--scenario", "same-failure", "--dir", str(tmp_path / "d"))
    assert result.returncode == 10, result.stderr  # blocked
    out = result.stdout
    assert "rule goal.same_failure" in out
    assert "the planner failed the same way 3 times in a row" in out
    assert "replans   3/5" in out
    advice = next(line for line in out.splitlines() if line.startswith("explain: "))
    assert "fix the agent, its prompt or its environment" in advice
    assert "raise" not in advice
    assert result.stderr.count("requested") == 3


def test_the_story_demo_still_succeeds(tmp_path: Path) -> None:
    result = governor("demo", "--dir", str(tmp_path / "d"))
    assert result.returncode == 0, result.stderr
    assert "succeeded" in result.stdout
