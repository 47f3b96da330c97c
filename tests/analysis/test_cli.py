"""The analysis commands as a user runs them: replay (folder, store, what-if), explain, simulate, tune."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest

from tests.e2e.cli import Project

GOLDEN = Path(__file__).resolve().parent.parent / "golden"


def test_replay_a_folder_prints_each_history(tmp_path: Path) -> None:
    for name in ("planner_upstream_bound", "replans_exhausted"):
        shutil.copy(GOLDEN / f"{name}.jsonl", tmp_path)
    result = Project(tmp_path).gov("replay", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("== ") == 2
    assert "(goal.4)" in result.stdout


def test_replay_and_explain_a_goal_in_the_store(tmp_path: Path) -> None:
    project = Project(tmp_path)
    assert project.gov("import", str(GOLDEN / "planner_upstream_bound.jsonl")).returncode == 0
    goal = "g-planner-upstream-bound"
    timeline = project.gov("replay", goal)
    assert timeline.returncode == 0, timeline.stderr
    assert "blocked/none [on upstream]" in timeline.stdout
    explained = project.gov("explain", goal, "--json")
    record = orjson.loads(explained.stdout)
    assert record["change"] == {"field": "max_uncharged_replans", "from": 3, "to": 4}
    assert record["status"] == "blocked"
    assert record["rule"] == "goal.4"
    assert [f["class"] for f in record["failures"]] == ["upstream"] * 3


def test_replay_timeline_shows_only_decision_changes(tmp_path: Path) -> None:
    example = str(GOLDEN.parent.parent / "examples" / "login-page.jsonl")
    every = Project(tmp_path).gov("replay", example, "--all").stdout.splitlines()
    changes = Project(tmp_path).gov("replay", example).stdout.splitlines()
    assert len(changes) < len(every)
    assert not any(
        line.lstrip().startswith(("7 ", "8 ")) for line in changes
    )  # work.created: still ready/apply


def test_replay_policy_json_reports_the_divergence(tmp_path: Path) -> None:
    result = Project(tmp_path).gov(
        "replay",
        str(GOLDEN / "planner_upstream_bound.jsonl"),
        "--policy",
        "max_uncharged_replans=2",
        "--json",
    )
    record = orjson.loads(result.stdout)
    assert (record["outcome"], record["known"]) == ("stopped_earlier", True)
    assert record["divergence"]["seq"] == 6
    assert record["divergence"]["status"] == "blocked"
    assert record["overrides"] == {"max_uncharged_replans": 2}


def test_a_bad_policy_override_is_one_clear_line(tmp_path: Path) -> None:
    result = Project(tmp_path).gov(
        "replay", str(GOLDEN / "planner_upstream_bound.jsonl"), "--policy", "max_replan=3"
    )
    assert result.returncode == 3
    assert result.stderr.strip() == (
        "error: unknown policy field 'max_replan' (did you mean 'max_replans'?)"
    )


def test_simulate_then_tune_json_has_the_contract_shape(tmp_path: Path) -> None:
    project = Project(tmp_path)
    sim = project.gov(
        "simulate",
        "--goals",
        "60",
        "--seed",
        "3",
        "--out",
        "corpus",
        "--policy",
        "max_replans=3,max_milestones=1",
        "--json",
    )
    assert sim.returncode == 0, sim.stderr
    assert orjson.loads(sim.stdout)["histories"] == 60
    assert project.gov("validate", "corpus").returncode == 0
    tuned = project.gov(
        "tune",
        "corpus",
        "--grid",
        "max_replans=1..3",
        "--grid",
        "max_uncharged_replans=1,3",
        "--workers",
        "2",
        "--json",
        "--quiet",
        "--plot",
        "plot.png",
    )
    assert tuned.returncode == 0, tuned.stderr
    report = orjson.loads(tuned.stdout)
    assert list(report) == [
        "corpus",
        "policies",
        "recommended",
        "model_checks",
        "bootstrap",
        "fleet",
        "holdout",
        "infeasible",
    ]
    assert report["bootstrap"] == 8
    assert 0 <= report["holdout"]["cut_share"] <= 1
    assert report["holdout"]["success_error_per_completed"] >= 0
    # SPEC §12.1: max_replans 1 leaves no planner call for the completion review
    assert [p["policy"]["max_replans"] for p in report["policies"]] == [2, 2, 3, 3]
    assert report["infeasible"] == [
        {
            "policy": {"max_replans": 1, "max_uncharged_replans": n},
            "why": "max_replans 1 leaves no planner call for the completion review: "
            "use max_replans ≥ 2",
        }
        for n in (1, 3)
    ]
    assert report["recommended"]["policy"]["max_replans"] != 1
    checks = report["model_checks"]
    assert [c["check"] for c in checks] == [
        "attempts_per_item",
        "outage_streaks",
        "outage_lengths",
        "replans_per_goal",
        "items_per_plan",
        "after_failure",
    ]
    for check in checks:
        assert list(check) == [
            "check",
            "statistic",
            "observed",
            "replicated",
            "count",
            "distance",
            "p_value",
            "poor",
        ]
        assert set(check["observed"]) == set(check["replicated"])
        assert isinstance(check["poor"], bool)
    assert list(report["fleet"]) == [
        "outages",
        "refused_calls",
        "sent_under_fleet_rule",
        "calls_saved",
    ]
    assert report["corpus"]["histories"] == 60
    assert len(report["policies"]) == 4
    first = report["policies"][0]
    assert list(first) == [
        "policy",
        "success_rate",
        "success_ci",
        "planner_calls",
        "attempts",
        "wall_s",
        "cost_usd",
        "censored_share",
        "pareto",
        "basis",
    ]
    assert {p["basis"] for p in report["policies"]} <= {"observed", "reprojected", "extrapolated"}
    tighter = next(p for p in report["policies"] if p["policy"]["max_replans"] == 2)
    assert tighter["censored_share"] == 0
    assert tighter["basis"] == "observed"
    assert set(first["policy"]) == {"max_replans", "max_uncharged_replans"}
    assert list(first["planner_calls"]) == ["charged", "uncharged"]
    assert any(p["pareto"] for p in report["policies"])
    assert set(report["recommended"]) == {"policy", "why"}
    assert (tmp_path / "plot.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("1", "must be 0 (off) or 2 to 1000 replicates, not 1"),
        ("-2", "must be at least 0, not -2"),
        ("1001", "must be at most 1000, not 1001"),
        ("many", "'many' is not a whole number"),
    ],
    ids=["one replicate", "negative", "too many", "not a number"],
)
def test_a_bad_bootstrap_is_one_line_naming_the_option(
    tmp_path: Path, value: str, says: str
) -> None:
    result = Project(tmp_path).gov(
        "tune", "corpus", "--grid", "max_replans=1..2", "--bootstrap", value
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"governor tune: error: argument --bootstrap: {says} (see governor tune --help)"
    ]


def test_tune_names_a_bad_input(tmp_path: Path) -> None:
    project = Project(tmp_path)
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "h.jsonl").write_text('{"nope": 1}\n')
    result = project.gov("tune", "bad", "--grid", "max_replans=1..2", "--quiet")
    assert result.returncode == 3
    assert "h.jsonl: line 1:" in result.stderr


def test_simulate_and_tune_name_a_file_they_cannot_write_in_one_line(tmp_path: Path) -> None:
    project = Project(tmp_path)
    missing = tmp_path / "no" / "such" / "folder"
    (tmp_path / "taken").write_text("a file, not a folder\n")
    plot = project.gov(
        "simulate", "--fleet", "aware", "--goals", "2", "--out", "o", "--plot", f"{missing}.png"
    )
    assert (plot.returncode, plot.stderr) == (
        3,
        f"error: cannot write {missing}.png: No such file or directory\n",
    )
    out = project.gov("simulate", "--goals", "2", "--out", str(tmp_path / "taken" / "o"))
    assert out.returncode == 3
    assert out.stderr.startswith(f"error: cannot write {tmp_path / 'taken' / 'o'}: ")
    assert out.stderr.count("\n") == 1
    assert project.gov("simulate", "--goals", "4", "--out", "corpus").returncode == 0
    tuned = project.gov(
        "tune", "corpus", "--grid", "max_replans=1..2", "--quiet", "--plot", f"{missing}.png"
    )
    assert (tuned.returncode, tuned.stderr) == (
        3,
        f"error: cannot write {missing}.png: No such file or directory\n",
    )


def test_simulate_refuses_a_plot_without_a_fleet_and_a_fleet_of_no_goals(tmp_path: Path) -> None:
    project = Project(tmp_path)
    alone = project.gov("simulate", "--goals", "2", "--out", "o", "--plot", "p.png")
    assert (alone.returncode, alone.stderr) == (
        3,
        "error: --plot draws a fleet outage: give --fleet aware or --fleet per-goal\n",
    )
    assert not (tmp_path / "p.png").exists()
    none = project.gov("simulate", "--fleet", "aware", "--goals", "0", "--out", "o")
    assert none.returncode == 2
    assert "argument --goals: must be above 0, not 0" in none.stderr.splitlines()[-1]
    assert "Traceback" not in none.stderr


def test_the_timeline_says_why_a_parked_goal_was_resumed(tmp_path: Path) -> None:
    result = Project(tmp_path).gov("replay", str(GOLDEN / "fleet_parked_then_resumed.jsonl"))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    [at] = [n for n, line in enumerate(lines) if "  goal.resumed  " in line]
    assert lines[at + 1].strip().startswith("goal.resumed by governor: codex ")
    assert "is back: its probe at" in lines[at + 1]
    assert "the outage lasted from" in lines[at + 1]
