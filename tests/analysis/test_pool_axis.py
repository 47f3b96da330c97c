"""Tune's pool axis (issue 33 Build 7): a corpus's goals replayed through one shared pool
per limit. The answers are worked out here on their own from the histories as written."""

from __future__ import annotations

import itertools
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.e2e.cli import Project

WORKER_USD = 0.25
"""What the model's worker call costs (``Model.worker_cost_usd``); its planner reports none."""
DEFAULT_RESERVE = 0.05
"""What a call reserves with nothing recorded before it (``DEFAULT_RESERVE_USD``, docs/pools.md)."""


def _simulate(project: Project, goals: int, spread_s: int, seed: int) -> None:
    result = project.gov(
        "simulate", "--goals", str(goals), "--seed", str(seed), "--out", "corpus",
        "--fleet", "aware", "--spread-s", str(spread_s), "--outage-rate-per-h", "0",
        "--missing-binary", "0", "--planner-s", "30", "--worker-s", "60", "--json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr


def _calls(path: Path) -> tuple[str, list[tuple[datetime, datetime, float]], bool]:
    """A history's goal id, its calls (start, end, cost) in order, and whether it succeeded."""
    lines = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    starts: dict[str, datetime] = {}
    calls = []
    for e in lines:
        key = e.get("plan_id") or e.get("run_id")
        if e["type"] in ("plan.requested", "attempt.started"):
            starts[key] = datetime.fromisoformat(e["at"])
        elif e["type"] in ("plan.proposed", "plan.failed", "attempt.finished"):
            calls.append(
                (starts.pop(key), datetime.fromisoformat(e["at"]), e.get("cost_usd") or 0.0)
            )
    return lines[0]["goal_id"], calls, False


def _goals(folder: Path) -> list[tuple[str, list[tuple[datetime, datetime, float]]]]:
    goals = [_calls(p)[:2] for p in sorted(folder.glob("*.jsonl"))]
    goals.sort(key=lambda g: g[1][0][0])
    return goals


def _tune(project: Project, *more: str) -> dict[str, Any]:
    result = project.gov(
        "tune", "corpus", "--grid", "max_replans=3,5", "--bootstrap", "0", "--workers", "1",
        "--quiet", "--json", *more,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return orjson.loads(result.stdout)  # type: ignore[no-any-return]


def _by_hand(goals: list[Any], limit: float) -> tuple[list[tuple[str, str, float]], float]:
    """One ``total`` pool, goals one after another: each call asks its goal's median recorded
    cost so far (all the worker's), else the default; the first that does not fit parks its
    goal for good. Which goals park, when, at what spend; and the spend."""
    spent, parked = 0.0, []
    for goal_id, calls in goals:
        costed = False
        for start, _end, cost in calls:
            ask = WORKER_USD if costed else DEFAULT_RESERVE
            if limit - spent <= 1e-12 or ask > limit - spent + 1e-12:
                parked.append((goal_id, start.isoformat().replace("+00:00", "Z"), spent))
                break
            spent += cost
            costed = costed or cost > 0
    return parked, spent


@pytest.fixture(scope="module")
def apart(tmp_path_factory: pytest.TempPathFactory) -> Project:
    """Five goals a day apart, each over in well under a day: no two calls overlap."""
    project = Project(tmp_path_factory.mktemp("apart"))
    _simulate(project, goals=5, spread_s=86_400, seed=4)
    goals = _goals(project.root / "corpus")
    for (_, before), (_, after) in itertools.pairwise(goals):
        assert before[-1][1] < after[0][0]  # the premise of the hand count
    assert {cost for _, calls in goals for *_, cost in calls} <= {0.0, WORKER_USD}
    return project


def test_which_goal_parks_at_which_total_limit_is_the_hand_count(apart: Project) -> None:
    limits = (0.5, 0.6, 1.1, 2.0, 3.0)
    report = _tune(apart, "--pool-usd", ",".join(map(str, limits)))
    goals = _goals(apart.root / "corpus")
    axis = report["pools"]
    assert axis["goals"] == 5
    assert axis["cost_per_goal"] == pytest.approx(
        sum(c for _, calls in goals for *_, c in calls) / 5
    )
    assert [row["limit"]["usd"] for row in axis["rows"]] == list(limits)
    seen_parks = 0
    for limit, row in zip(limits, axis["rows"], strict=True):
        parked, spent = _by_hand(goals, limit)
        got = [(p["goal"], p["at"], p["spent"]) for p in row["parked"]]
        assert [(g, at) for g, at, _ in got] == [(g, at) for g, at, _ in parked]
        assert [s for *_, s in got] == pytest.approx([s for *_, s in parked])
        assert all(p["for_good"] and p["renews_at"] is None for p in row["parked"])
        assert row["stopped_goals"] == len(parked)
        assert row["cost_per_goal"] == pytest.approx(spent / 5)
        assert row["finished_in_period"] == 5 - len(parked)
        assert row["spend_per_period"][0]["start"] is None
        assert row["spend_per_period"][0]["usd"] == pytest.approx(spent)
        # one call at a time: over only by what that call cost beyond its reservation
        assert spent <= limit + WORKER_USD - DEFAULT_RESERVE + 1e-9
        seen_parks += len(parked)
    assert seen_parks > 0  # the limits are small enough to park someone


def test_a_daily_pool_delays_its_goals_but_loses_none(apart: Project) -> None:
    report = _tune(apart, "--pool-usd", "1", "--pool-per", "day", "--pool-tz", "Europe/Berlin")
    axis, (row,) = report["pools"], report["pools"]["rows"]
    assert row["limit"] == {
        "usd": 1.0, "attempts": None, "run_time_s": None, "period": "day", "every_s": None,
        "tz": "Europe/Berlin",
    }  # fmt: skip
    assert row["stopped_goals"] == 0
    assert row["parked_goals"] > 0
    assert row["parked_s"] > 0
    assert row["success_rate"] == axis["success_rate"]  # every goal still finishes, later
    assert row["cost_per_goal"] == pytest.approx(axis["cost_per_goal"])
    assert row["success_rate_in_period"] <= row["success_rate"]
    for park in row["parked"]:  # Berlin's midnight is 23:00 UTC in winter
        assert park["renews_at"].endswith("T23:00:00Z")
        assert not park["for_good"]
    for period in row["spend_per_period"]:
        # one call in flight at a time, reserved at least the default: over by at most the rest
        assert period["usd"] <= 1.0 + WORKER_USD - DEFAULT_RESERVE + 1e-9


def test_the_pools_key_is_added_last_only_when_asked(apart: Project) -> None:
    plain = _tune(apart)
    pooled = _tune(apart, "--pool-attempts", "3,50", "--pool-per", "2h")
    assert list(pooled) == [*plain, "pools"]
    assert {k: v for k, v in pooled.items() if k != "pools"} == plain
    assert list(pooled["pools"]) == ["replayed", "goals", "success_rate", "cost_per_goal", "rows"]
    row = pooled["pools"]["rows"][0]
    assert list(row) == [
        "limit", "parked_goals", "parks", "stopped_goals", "parked_s", "finished_in_period",
        "success_rate", "success_rate_in_period", "cost_per_goal", "spend_per_period", "parked",
    ]  # fmt: skip
    assert row["limit"]["attempts"] == 3
    assert row["limit"]["every_s"] == 7200
    assert row["parked_goals"] > 0  # three attempts per two hours is tight
    assert pooled["pools"]["rows"][1]["parked_goals"] == 0
    text = apart.gov(
        "tune", "corpus", "--grid", "max_replans=3", "--bootstrap", "0", "--quiet",
        "--pool-usd", "0.5",
    )  # fmt: skip
    assert text.returncode == 0, text.stderr
    assert "pool limits (the 5 recorded goals" in text.stdout
    assert "$0.5 in total:" in text.stdout


@pytest.mark.parametrize(
    ("options", "says"),
    [
        (["--pool-usd", "-1"], "error: pool usd: Input should be greater than or equal to 0"),
        (["--pool-usd", "nan"], "error: pool usd: Input should be a finite number"),
        (["--pool-usd", "1,inf"], "error: pool usd: Input should be a finite number"),
        (
            ["--pool-usd", "1e30"],
            "error: pool usd: Input should be less than or equal to 1000000000",
        ),
        (
            ["--pool-attempts", "2.5"],
            "error: --pool-attempts 2.5: give whole numbers separated by commas",
        ),
        (
            ["--pool-usd", "1", "--pool-per", "fortnight"],
            "error: --pool-per: 'fortnight' is not a duration",
        ),
        (
            ["--pool-usd", "1", "--pool-tz", "Mars/Olympus"],
            "error: unknown time zone 'Mars/Olympus': use an IANA name such as Europe/Berlin or UTC",
        ),
        (
            ["--pool-per", "day"],
            "error: --pool-per and --pool-tz need --pool-usd or --pool-attempts",
        ),
    ],
)
def test_a_bad_pool_axis_is_one_line_exit_3_and_nothing_written(
    apart: Project, options: list[str], says: str
) -> None:
    result = apart.gov(
        "tune", "corpus", "--grid", "max_replans=3", "--quiet", "--plot", "never.png", *options
    )
    assert result.returncode == 3
    assert result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1
    assert result.stderr.startswith(says)
    assert not (apart.root / "never.png").exists()
