"""Many workers, many goals (SPEC §8): ``governor serve --workers 4`` on 40 scripted goals
(200 in the long mode, ``--fuzz-long``).

Every goal must end as a single ``governor run`` ends the same scenario, no attempt may
start twice, and every history must validate. Real processes throughout: the service,
its four worker processes, and a subprocess per agent call. Forty goals are ten per
worker, every scenario kind several times over: enough for the workers to contend for
goals; the long mode runs five times as many.
"""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

import orjson
import pytest

from governor.store import open_store
from tests.e2e.cli import Project
from tests.service.fleet import (
    KINDS,
    charged_finishes,
    check_runs,
    create_goals,
    export_all,
    metric,
    outcome,
    reaped,
    stop,
    wait_until_settled,
    write_goal,
)

MIX = {"plain": 16, "outage": 8, "replan": 8, "exhaust": 4, "environment": 4}
"""The goals of each scenario kind in the default run; the long mode has ``LONG`` times
as many."""
LONG = 5


def single_runner_outcomes(root: Path) -> dict[str, tuple[object, ...]]:
    """Each scenario once, by ``governor run`` (one runner, its own store): the reference."""
    project = Project(root)
    for kind in KINDS:
        assert project.gov("new", write_goal(project, kind.name, kind).name).returncode == 0
    runs = [project.popen("run", kind.name, "--quiet") for kind in KINDS]
    for run in runs:
        run.communicate(timeout=120)
    with closing(open_store(project.env["GOVERNOR_STORE"])) as store:
        return {kind.name: outcome(store, kind.name) for kind in KINDS}


pytest_plugins = ["tests.store.postgres_server"]  # store_url's PostgreSQL


@pytest.mark.slow
def test_four_workers_drive_many_goals_as_one_runner_would(
    tmp_path: Path, store_url: str, long_run: bool
) -> None:
    mix = {name: n * LONG if long_run else n for name, n in MIX.items()}
    total = sum(mix.values())
    (tmp_path / "single").mkdir()
    expected = single_runner_outcomes(tmp_path / "single")
    assert {o[0] for o in expected.values()} == {"succeeded", "budget_exhausted", "blocked"}

    project = Project(tmp_path / "fleet")
    project.root.mkdir()
    project.env["GOVERNOR_STORE"] = store_url
    kinds = {kind.name: kind for kind in KINDS}
    names = [(f"{name}-{i:03d}", kinds[name]) for name, n in mix.items() for i in range(n)]
    goal_ids = create_goals(project, store_url, names)
    assert len(goal_ids) == total

    serve = project.popen(
        "serve", "--workers", "4", "--poll-s", "0.05", "--lease-ttl", "10",
        "--log-file", "service.jsonl", "--metrics-file", "metrics.prom", "--metrics-interval", "0.5",
    )  # fmt: skip
    with reaped(serve):
        counts = wait_until_settled(store_url, timeout_s=150)
        status = project.gov("service", "status", "--json")
        assert status.returncode == 0, status.stderr
        assert orjson.loads(status.stdout)["goals"] == counts
        assert stop(serve) == 0
    assert sum(counts.values()) == total

    with closing(open_store(store_url)) as store:
        histories = {goal_id: list(store.load(goal_id)) for goal_id in goal_ids}
        for goal_id, kind in names:
            assert outcome(store, goal_id) == expected[kind.name], goal_id
        assert store.workers() == []  # every worker left cleanly
    for goal_id, events in histories.items():
        check_runs(goal_id, events)
        name = goal_id.rsplit("-", 1)[0]
        assert sum(charged_finishes(events).values()) == expected[name][5], goal_id

    export_all(store_url, goal_ids, tmp_path / "histories")
    valid = project.gov("validate", str(tmp_path / "histories"))
    assert valid.returncode == 0, valid.stderr[-2000:]
    assert valid.stdout.count("ok: ") == total

    metrics = (project.root / "metrics.prom").read_text()
    finishes = sum(e.type == "attempt.finished" for h in histories.values() for e in h)
    assert metric(metrics, "governor_attempts_total") == finishes
    assert metric(metrics, "governor_goals", status="succeeded") == counts["succeeded"]
    assert metric(metrics, "governor_step_errors_total") == 0
