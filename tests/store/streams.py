"""What the store contract tests are made of: sample streams, summaries, a fake clock,
and ``Backend``, the fixtures and hooks each backend's test class provides."""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from governor.core.events import Event, GoalResumed
from governor.store import EventStore, GoalSummary, export_history
from tests.story import T0, Story

GOLDEN = Path(__file__).parent.parent / "golden"
VALID_GOLDEN = sorted(p for p in GOLDEN.glob("*.jsonl") if not p.name.startswith("corrupt_"))

MakeStore = Callable[[], EventStore]


class FakeClock:
    """A clock that moves only when told to."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self):
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


def story(goal_id: str = "g1") -> Story:
    """A goal with a plan of two items, one attempted and accepted (9 events)."""
    s = Story(goal_id)
    s.plan("a", "b")
    s.succeed("p1-a")
    return s


def resumed(goal_id: str, seq: int, reason: str = "go on") -> GoalResumed:
    """A small event that any stream can take (the store does not check history rules)."""
    return GoalResumed(goal_id=goal_id, seq=seq, at=T0 + timedelta(hours=1), reason=reason)


def summary(
    goal_id: str,
    status: str,
    *,
    seq: int = 1,
    not_before_s: float | None = None,
    updated_s: float = 0,
) -> GoalSummary:
    return GoalSummary(
        goal_id=goal_id,
        title=f"goal {goal_id}",
        seq=seq,
        status=status,
        next_action="wait" if status == "waiting" else "none",
        blocked_on="upstream" if status == "waiting" else None,
        not_before=None if not_before_s is None else T0 + timedelta(seconds=not_before_s),
        updated_at=T0 + timedelta(seconds=updated_s),
    )


def resumed_json(
    *,
    seq: int = 4,
    goal_id: str = "g1",
    reason: str | None = "x",
    attempt_type: str = "goal.resumed",
    **extra: str,
) -> str:
    """A goal.resumed body as a careless editor would write it."""
    body = {
        "schema_version": 1,
        "goal_id": goal_id,
        "seq": seq,
        "type": attempt_type,
        "at": "2026-01-01T00:00:09Z",
    }
    if reason is not None:
        body["reason"] = reason
    return json.dumps({**body, **extra})


def export_bytes(store: EventStore, goal_id: str) -> bytes:
    out = io.BytesIO()
    export_history(store, goal_id, out)
    return out.getvalue()


class Backend:
    """Fixtures and hooks of one backend; its test class overrides ``make_store`` and ``damage``."""

    @pytest.fixture
    def clock(self) -> FakeClock:
        return FakeClock()

    @pytest.fixture
    def make_store(self, tmp_path: Path, clock: FakeClock) -> MakeStore:
        raise NotImplementedError("a backend's test class returns a factory of its stores")

    @pytest.fixture
    def store(self, make_store: MakeStore) -> Iterator[EventStore]:
        store = make_store()
        yield store
        store.close()

    def damage(
        self, store: EventStore, goal_id: str, seq: int, body: str | None, *, checksum: bool
    ) -> None:
        """Replace the stored body of one event behind the store's back (None: delete the row).

        With ``checksum`` the row's checksum is recomputed to match (a careful edit);
        without it the old checksum stays.
        """
        raise NotImplementedError

    def seed(self, store: EventStore, goal_id: str = "g1") -> list[Event]:
        events = story(goal_id).events
        store.append(goal_id, events, expected_seq=0)
        return events
