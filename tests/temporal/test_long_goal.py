"""A goal of thousands of events on Temporal: the workflow continues as new, often.

Eight items run at once, each failing (charged) until its attempts are spent; then the
planner is asked again and declares the goal complete. With a short ``max_history`` the
workflow continues as new many times on the way; each new run loads the goal from the
store (in pages) and goes on. The goal ends as it would under ``governor run``, its
history validates, and every run's Temporal history replays (tests/temporal/conftest.py).

The long mode (``--fuzz-long``) gives each item 125 attempts: more than 2,000 events. The
default run gives 13 (more than 200 events) and continues as new every 200 Temporal
events instead of 600, so each run still crosses several continues-as-new.
"""

from __future__ import annotations

from contextlib import closing

import pytest

from governor.core.history import validate_events
from governor.store import open_store
from governor.temporal.wire import DriveSettings
from tests.e2e.cli import COMPLETE, plan
from tests.temporal.conftest import (
    TemporalProject,
    histories,
    run_async,
    start_all,
    workflow_of,
)

ITEMS = "abcdefgh"
ATTEMPTS, EVENTS, MAX_HISTORY = 125, 2000, 600
ATTEMPTS_SHORT, EVENTS_SHORT, MAX_HISTORY_SHORT = 13, 200, 200
FAILING = """#!/bin/sh
prompt=$(cat)
key=$(printf '%s\\n' "$prompt" | sed -n 's/^work_key: *//p' | head -n 1)
n=$(cat "count.$key" 2>/dev/null || echo 0)
echo $((n + 1)) > "count.$key"
if [ $((n % 2)) -eq 0 ]; then word=alpha; else word=beta; fi
echo "{\\"status\\": \\"failed\\", \\"summary\\": \\"not yet: $word\\"}"
"""


@pytest.mark.slow
def test_a_goal_of_thousands_of_events_continues_as_new(
    project: TemporalProject, long_run: bool
) -> None:
    attempts, events_at_least, max_history = (
        (ATTEMPTS, EVENTS, MAX_HISTORY)
        if long_run
        else (ATTEMPTS_SHORT, EVENTS_SHORT, MAX_HISTORY_SHORT)
    )
    worker = {"harness": "command", "args": [project.script("fail", FAILING)], "max_attempts": 1}
    scripts = [
        {
            "name": "plan",
            "match": "role: planner",
            "steps": [{"reply": plan(*ITEMS)}, {"reply": COMPLETE}],
        }
    ]
    planner = {"harness": "scripted", "args": [project.scenario("planner.json", scripts)]}
    policy = {
        "max_attempts": attempts,
        "max_total_attempts": attempts * len(ITEMS) + 1,  # room for the completion review
        "max_parallel_work": len(ITEMS),
        "max_work_items_per_plan": len(ITEMS),
    }
    project.goal("long", planner, worker, **policy)
    start_all(project, ["long"], DriveSettings(max_history=max_history))
    project.worker("--max-concurrent-calls", str(len(ITEMS)))
    status = project.wait_status(
        "long", {"succeeded", "blocked", "budget_exhausted"}, within_s=1800
    )

    with closing(open_store(project.env["GOVERNOR_STORE"])) as store:
        events = list(store.load("long"))
    assert len(events) >= events_at_least, len(events)
    assert status["status"] == "succeeded", status["reason"]
    charged = status["ledger"]["attempts"]["charged"]
    assert charged == attempts * len(ITEMS)
    assert validate_events(events).seq == len(events)  # raises on an invalid history
    workflow = workflow_of(project, "long")
    runs = [n for n, _ in run_async(histories(project.temporal)) if n.startswith(f"{workflow}.")]
    assert len(runs) >= 3, f"the workflow continued as new only {len(runs) - 1} times"
    print(f"long-goal events={len(events)} workflow_runs={len(runs)}")
