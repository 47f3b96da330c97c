"""``governor forecast`` and ``new``'s line as a user runs them, and ``need_to_finish``."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from governor.analysis.corpus import corpus_of
from governor.analysis.forecast import forecast, lifted, need_to_finish, similar
from governor.analysis.model import Model
from governor.analysis.simulate import simulate_goal
from governor.core.events import GoalCreated
from governor.core.fold import project
from governor.core.policy import Policy
from governor.core.policy_input import with_overrides
from governor.core.rules.decide import decide
from governor.drive.goalfile import goal_from_file
from governor.store.jsonl import write_history
from tests.e2e.cli import Project

TIGHT = Policy(max_replans=3, max_uncharged_replans=2, max_attempts=2, max_uncharged_attempts=2)
GOAL = (
    'id = "{id}"\ntitle = "Login page"\nobjective = "O"\nplanner = "a"\nworker = "a"\n'
    "[policy]\nmax_replans = 5\nmax_uncharged_replans = 2\nmax_attempts = 2\n"
    '[profiles.a]\nharness = "scripted"\nargs = ["{arg}"]\n'
)
GOALS = 60


def _corpus(folder: Path, goals: int = GOALS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for g in range(goals):
        history = simulate_goal(Model(), TIGHT, 3, g)
        with (folder / f"{history[0].goal_id}.jsonl").open("wb") as handle:
            write_history(history, handle)
    return folder


def _goal_file(folder: Path, goal_id: str = "g", arg: str = "sim.json") -> Path:
    path = folder / f"{goal_id}.toml"
    path.write_text(GOAL.format(id=goal_id, arg=arg))
    return path


def test_forecast_json_from_a_corpus(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus")
    _goal_file(tmp_path)
    done = Project(tmp_path).gov(
        "forecast", "g.toml", "--corpus", str(corpus), "--json", "--bootstrap", "4"
    )
    assert done.returncode == 0, done.stderr
    record = orjson.loads(done.stdout)
    assert record["histories"] == GOALS
    assert record["similar_by"] == "corpus"
    assert record["policy"]["max_replans"] == 5
    assert record["basis"] == "extrapolated"  # max_replans 5 goes past the record's 3
    assert 0 < record["censored_share"] < 1
    for name in ("charged_attempts", "planner_calls", "cost_usd", "run_time_s"):
        q = record[name]
        assert q["median_ci"][0] <= q["median"] <= q["median_ci"][1]
        assert q["p90_ci"][0] <= q["p90"] <= q["p90_ci"][1]
        assert q["median"] <= q["p90"]
    assert record["planner_calls"]["median"] >= 1
    assert record["success_ci"][0] <= record["success_rate"] <= record["success_ci"][1]


def test_forecast_text_and_no_data(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus", 30)
    _goal_file(tmp_path)
    project = Project(tmp_path)
    shown = project.gov("forecast", "g.toml", "--corpus", str(corpus), "--bootstrap", "0")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0].startswith("forecast for 'Login page' under its policy, from 30 histories")
    assert [line.split()[0] for line in lines[2:6]] == ["charged", "planner", "cost", "run"]
    assert lines[-1].lstrip().startswith("succeeds:")
    empty = project.gov("forecast", "g.toml")  # no store at all: no similar goals
    assert empty.returncode == 0, empty.stderr
    assert empty.stdout.strip() == "no forecast for 'Login page': no similar goals recorded"
    record = orjson.loads(project.gov("forecast", "g.toml", "--json").stdout)
    assert (record["histories"], record["basis"], record["success_rate"]) == (0, None, None)


def test_a_bad_goal_file_is_one_line_and_exit_3(tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_text('id = "g"\ntitle = "T"\n')
    done = Project(tmp_path).gov("forecast", "bad.toml")
    assert done.returncode == 3
    assert done.stderr.strip().count("\n") == 0
    assert "bad.toml" in done.stderr


def test_new_prints_a_forecast_line_from_similar_goals_only(tmp_path: Path) -> None:
    project = Project(tmp_path)
    _goal_file(tmp_path, "first")
    quiet = project.gov("new", "first.toml")  # an empty store: the id, nothing else
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stdout.strip() == "first"
    assert quiet.stderr.strip() == ""
    corpus = _corpus(tmp_path / "corpus", 30)
    assert project.gov("import", str(corpus)).returncode == 0
    _goal_file(tmp_path, "second")
    created = project.gov("new", "second.toml")
    assert created.returncode == 0, created.stderr
    assert created.stdout.strip() == "second"
    assert created.stderr.startswith("forecast: cost $")
    assert "from 30 similar goals (same profiles)" in created.stderr  # not 'first': it did nothing
    _goal_file(tmp_path, "other", arg="other.json")  # another agent: no similar goal
    other = project.gov("new", "other.toml")
    assert other.returncode == 0, other.stderr
    assert other.stderr.strip() == ""
    by_store = orjson.loads(project.gov("forecast", "second.toml", "--json").stdout)
    assert (by_store["histories"], by_store["similar_by"]) == (30, "profiles")


def test_similar_goals_run_the_same_agents(tmp_path: Path) -> None:
    here = goal_from_file(_goal_file(tmp_path), at=simulate_goal(Model(), TIGHT, 1, 0)[0].at)[0]
    sim = simulate_goal(Model(), TIGHT, 1, 0)[0]
    assert isinstance(here, GoalCreated)
    assert isinstance(sim, GoalCreated)
    assert similar(here, sim)  # args resolved to /tmp/…/sim.json: compared by name
    other = goal_from_file(_goal_file(tmp_path, "o", "x.json"), at=sim.at)[0]
    assert isinstance(other, GoalCreated)
    assert not similar(other, sim)


def test_the_record_decides_a_policy_no_looser_than_it(tmp_path: Path) -> None:
    corpus = corpus_of([str(_corpus(tmp_path / "corpus", 40))])
    fc = forecast(corpus, TIGHT, bootstrap=0)
    assert (fc.basis, fc.censored_share) == ("observed", 0.0)
    costs = sorted(project(simulate_goal(Model(), TIGHT, 3, g)).cost_usd for g in range(40))
    assert fc.quantities["cost_usd"].median == costs[19]  # the lower median of the record


def test_need_to_finish_a_goal_stopped_on_its_budget(tmp_path: Path) -> None:
    corpus = corpus_of([str(_corpus(tmp_path / "corpus", 40))])
    stopped = None
    for g in range(100, 200):
        view = project(simulate_goal(Model(), TIGHT, 3, g))
        assert view.last_at is not None
        decision = decide(view, view.last_at, with_ledger=False)
        # an item failed its attempts and no replan is left: it needs a plan and more work
        if decision.status == "budget_exhausted" and "exhausted its" in decision.reason:
            stopped = view
            break
    assert stopped is not None
    need = need_to_finish(stopped, corpus, tails=60)
    assert need.histories == 40
    assert need.finishes > 0.2
    assert need.median["planner_calls"] >= 1
    assert need.median["charged_attempts"] >= 1
    assert need.p90["cost_usd"] >= need.median["cost_usd"] > 0
    done = project(simulate_goal(Model(), TIGHT, 3, 0))
    assert need_to_finish(done, corpus, tails=10).median["charged_attempts"] in (0.0, 0)


def test_lifted_raises_only_the_goals_own_budgets() -> None:
    loose = lifted(with_overrides(TIGHT, {"max_replans": 3}))
    assert loose.max_replans == 12
    assert loose.max_uncharged_replans == 8
    assert loose.max_attempts == TIGHT.max_attempts  # an item's: not the goal's
    with pytest.raises(AssertionError):
        assert loose.max_replans == TIGHT.max_replans


def test_a_policy_that_differs_in_a_nested_field_is_forecast(tmp_path: Path) -> None:
    """A goal whose policy differs from the record's in ``grants`` or ``upstream_backoff``
    (nested fields) is forecast like any other (it once raised ``unhashable type``)."""
    corpus = corpus_of([str(_corpus(tmp_path / "corpus", 20))])
    nested = with_overrides(
        TIGHT,
        {"grants": {"auto_usd": 0.5, "auto_attempts": 1}, "upstream_backoff.initial_s": 7.0},
    )
    fc = forecast(corpus, nested, bootstrap=0)
    plain = forecast(corpus, TIGHT, bootstrap=0)
    assert fc.histories == plain.histories == 20
    assert fc.quantities["cost_usd"].median == plain.quantities["cost_usd"].median
