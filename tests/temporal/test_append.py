"""The append activity on a real SQLite store: idempotent on (goal, expected seq, content).

Temporal tries an activity again when its answer is lost (the worker died after the
commit, the network dropped the reply): the second try must find its own events and say
done, never append them twice, never retry forever. Other events at that seq are a
conflict, answered with them; a lease taken over names its holder; a refused event is
answered, not raised. No Temporal server is needed: the activity is a plain method.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from governor.core import record
from governor.core.fold import fold, project
from governor.core.summary import summarize
from governor.core.view import GoalView
from governor.drive import goals
from governor.drive.goalfile import goal_from_mapping
from governor.store import open_store
from governor.store.base import EventStore, Lease
from governor.temporal.activities import Activities, WorkerConfig
from governor.temporal.names import Driver
from governor.temporal.wire import AppendRequest

AT = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
DRIVER = Driver("127.0.0.1:7233", "default")


@pytest.fixture
def store(tmp_path: Path) -> EventStore:
    url = str(tmp_path / "governor.db")
    store = open_store(url)
    spec = {
        "id": "g",
        "title": "G",
        "objective": "o",
        "acceptance": ["a"],
        "planner": "p",
        "worker": "p",
        "profiles": {"p": {"harness": "command", "args": ["/bin/true"]}},
    }
    goals.create_from(store, goal_from_mapping(spec, base=tmp_path, where="g", at=AT))
    return store


@pytest.fixture
def activities(tmp_path: Path, store: EventStore) -> Activities:
    config = WorkerConfig(DRIVER, tmp_path, {}, store_url=str(tmp_path / "governor.db"))
    return Activities(config, client=None, contact=None)  # type: ignore[arg-type]


def plan_request(view: GoalView, lease: Lease, plan_id: str, at: datetime) -> AppendRequest:
    events = record.request_plan(view, plan_id=plan_id, trigger="initial", at=at)
    summary = summarize(fold(view.copy(), events), at)
    return AppendRequest("g", view.seq, events, lease, summary)


def test_an_append_whose_answer_was_lost_is_not_appended_twice(
    store: EventStore, activities: Activities
) -> None:
    lease = store.acquire_lease("g", DRIVER.holder, ttl_s=60)
    request = plan_request(project(store.load("g")), lease, "p1", AT)
    first = activities.append(request)
    again = activities.append(request)  # what Temporal does when the first answer is lost
    assert (first.done, again.done) == (True, True)
    assert again.newer == []
    assert [e.type for e in store.load("g")] == ["goal.created", "plan.requested"]


def test_other_events_at_that_seq_are_a_conflict_answered_with_them(
    store: EventStore, activities: Activities
) -> None:
    lease = store.acquire_lease("g", DRIVER.holder, ttl_s=60)
    view = project(store.load("g"))
    theirs = plan_request(view, lease, "p1", AT)
    assert activities.append(theirs).done
    mine = plan_request(view, lease, "p1", AT + timedelta(seconds=1))  # same seq, other content
    answer = activities.append(mine)
    assert not answer.done
    assert [e.seq for e in answer.newer] == [2]
    assert store.last_seq("g") == 2


def test_a_lease_taken_over_is_named_and_nothing_is_written(
    store: EventStore, activities: Activities
) -> None:
    lease = store.acquire_lease("g", DRIVER.holder, ttl_s=0.001)
    time.sleep(0.01)  # past its expiry, however fast the machine is
    store.acquire_lease("g", "runner-b", ttl_s=60)  # expired: taken over
    answer = activities.append(plan_request(project(store.load("g")), lease, "p1", AT))
    assert (answer.done, answer.taken_over_by) == (False, "runner-b")
    assert store.last_seq("g") == 1
