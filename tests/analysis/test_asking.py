"""How much a goal stopped by a budget asks for (SPEC §13.7): the forecast's need to finish,
read from the driver's own open store (``governor.analysis.asking``)."""

from __future__ import annotations

import math
from pathlib import Path

from governor.analysis.asking import need_in
from governor.analysis.corpus import corpus_of
from governor.analysis.forecast import need_to_finish
from governor.analysis.model import Model
from governor.analysis.simulate import simulate_goal
from governor.core.events import GoalCreated
from governor.core.fold import project
from governor.core.policy import Policy
from governor.core.rules.decide import decide
from governor.core.view import GoalView
from governor.store.jsonl import write_history
from governor.store.sqlite import SqliteEventStore

TIGHT = Policy(max_replans=3, max_uncharged_replans=2, max_attempts=2, max_uncharged_attempts=2)
SEED = 3


def _stopped() -> GoalView:
    """A simulated goal that its budget stopped (an item out of attempts, no replan left)."""
    for g in range(100, 200):
        view = project(simulate_goal(Model(), TIGHT, SEED, g))
        assert view.last_at is not None
        decision = decide(view, view.last_at, with_ledger=False)
        if decision.status == "budget_exhausted" and "exhausted its" in decision.reason:
            return view
    raise AssertionError("no simulated goal stopped on its budget")


def test_a_stopped_goal_asks_what_its_similar_goals_in_the_store_say_it_needs(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "histories"
    folder.mkdir()
    with SqliteEventStore(tmp_path / "governor.db") as store:
        for g in range(30):
            history = simulate_goal(Model(), TIGHT, SEED, g)
            store.append(history[0].goal_id, history, expected_seq=0)
            with (folder / f"{history[0].goal_id}.jsonl").open("wb") as handle:
                write_history(history, handle)
        stopped = _stopped()
        asked = need_in(store)(stopped)
    # the same histories read as files, the other way a corpus is read
    need = need_to_finish(stopped, corpus_of([str(folder)]))
    assert need.histories == 30
    assert asked is not None
    assert asked.usd == need.median["cost_usd"] > 0
    assert asked.attempts == math.ceil(need.median["charged_attempts"]) >= 1


def test_without_similar_goals_there_is_no_data(tmp_path: Path) -> None:
    stopped = _stopped()
    assert stopped.created is not None
    profiles = stopped.created.profiles
    elsewhere = {
        name: p.model_copy(update={"args": ("other.json",)}) for name, p in profiles.items()
    }
    other = stopped.created.model_copy(update={"profiles": elsewhere})
    with SqliteEventStore(tmp_path / "governor.db") as store:
        assert need_in(store)(stopped) is None  # an empty store
        for g in range(5):
            history = simulate_goal(Model(), TIGHT, SEED, g)
            first = history[0]
            assert isinstance(first, GoalCreated)
            history[0] = other.model_copy(update={"goal_id": first.goal_id})
            store.append(first.goal_id, history, expected_seq=0)
        assert need_in(store)(stopped) is None  # goals of other profiles only
