"""The rival world (bench/worlds/rival.py): valid histories, and the features it exists for.

It is the independent model the tuner is validated against (``bench.tune_validity``), so
these tests check that its histories are real ones (the validator and ``governor
validate`` accept every one) and that what makes it differ from governor's own model does
happen: heavy-tailed outages, planners that repeat a failing plan, goals of varied
difficulty, environment failures.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from bench.worlds.rival import Episode, RivalModel, play, rival_goal
from governor.analysis.whatif import whatif
from governor.core.events import Event, PlanFailed
from governor.core.fold import fold
from governor.core.history import validate_events
from governor.core.policy import Policy
from governor.core.policy_input import with_overrides
from governor.core.rules.decide import decide
from governor.core.view import GoalView
from governor.core.wire.codec import encode
from governor.core.work_events import AttemptFinished, WorkCreated
from governor.store.jsonl import write_history

GOALS, SEED = 50, 3
TIGHT = Policy(max_replans=3, max_uncharged_replans=2, max_attempts=2, max_uncharged_attempts=2)
LOOSE = with_overrides(TIGHT, {"max_replans": 6, "max_uncharged_replans": 4, "max_attempts": 4})
TIGHTER = with_overrides(TIGHT, {"max_replans": 2, "max_uncharged_replans": 0, "max_attempts": 1})
POLICIES = {"tight": TIGHT, "loose": LOOSE, "tighter": TIGHTER}


@pytest.fixture(scope="module")
def episodes() -> dict[str, list[Episode]]:
    return {
        name: [play(RivalModel(), policy, SEED, g) for g in range(GOALS)]
        for name, policy in POLICIES.items()
    }


def test_every_history_validates_under_every_policy(episodes: dict[str, list[Episode]]) -> None:
    for runs in episodes.values():
        for episode in runs:
            view = validate_events(episode.events)
            assert view.seq == len(episode.events)
            assert decide(view, view.last_at or episode.now, with_ledger=False).status in {
                "succeeded",
                "budget_exhausted",
                "blocked",
            }


def test_governor_validate_accepts_the_written_histories(
    episodes: dict[str, list[Episode]], tmp_path: Path
) -> None:
    for episode in episodes["loose"]:
        with (tmp_path / f"{episode.events[0].goal_id}.jsonl").open("wb") as handle:
            write_history(episode.events, handle)
    done = subprocess.run(
        [str(Path(sys.executable).parent / "governor"), "validate", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert len(list(tmp_path.glob("*.jsonl"))) == GOALS


def test_a_seed_gives_the_same_goal_and_another_seed_another() -> None:
    def text(seed: int, goal: int) -> bytes:
        return b"".join(encode(e) for e in rival_goal(RivalModel(), TIGHT, seed, goal))

    assert [text(1, g) for g in range(10)] == [text(1, g) for g in range(10)]
    assert [text(1, g) for g in range(10)] != [text(2, g) for g in range(10)]


def test_a_tighter_policy_tells_the_same_story_until_it_stops(
    episodes: dict[str, list[Episode]],
) -> None:
    """Common random numbers: what direct simulation as the truth leans on."""
    compared = 0
    for loose, tight in zip(episodes["loose"], episodes["tight"], strict=True):
        result = whatif(loose.events, TIGHT)
        if result.outcome == "stopped_earlier" and result.divergence is not None:
            n = result.divergence.seq - 1
            assert [(e.type, e.at) for e in tight.events[:n]] == [
                (e.type, e.at) for e in loose.events[:n]
            ]
            compared += 1
        if result.outcome == "same":
            assert [e.type for e in tight.events] == [e.type for e in loose.events]
            compared += 1
    assert compared > GOALS // 2


def test_outages_are_heavy_tailed(episodes: dict[str, list[Episode]]) -> None:
    """Far more very long outages than an exponential law with the same median allows:
    beyond ten medians it leaves 0.1 %, this world's Pareto about 2 %."""
    lengths = [s for e in episodes["loose"] for s in e.vendor.outages_s()]
    median = statistics.median(lengths)
    long_share = sum(s > 10 * median for s in lengths) / len(lengths)
    assert len(lengths) > 500
    assert long_share > 0.008, (long_share, median)
    assert max(lengths) > 30 * median
    refused = [
        e
        for ep in episodes["loose"]
        for e in ep.events
        if isinstance(e, AttemptFinished | PlanFailed) and e.failure_class == "upstream"
    ]
    assert len(refused) > 10


def _repeated_failures(events: list[Event]) -> int:
    """Items created with the title of an earlier item that had exhausted its attempts."""
    view, repeats = GoalView(), 0
    for event in events:
        if isinstance(event, WorkCreated):
            exhausted = {
                w.spec.title
                for w in view.work.values()
                if not w.accepted and w.charged_attempts >= w.max_attempts
            }
            repeats += event.title in exhausted
        fold(view, [event])
    return repeats


def test_planners_repeat_failing_plans(episodes: dict[str, list[Episode]]) -> None:
    runs = [e for name in ("tight", "loose") for e in episodes[name]]
    seen = sum(_repeated_failures(e.events) for e in runs)
    assert seen > 0
    assert seen <= sum(e.goal.repeats for e in runs)


def test_goals_differ_in_difficulty_and_it_shows(episodes: dict[str, list[Episode]]) -> None:
    runs = episodes["loose"]
    difficulty = [e.goal.difficulty for e in runs]
    assert statistics.pstdev(difficulty) > 0.7

    def won(e: Episode) -> bool:
        return decide(e.view, e.now, with_ledger=False).status == "succeeded"

    easy = [won(e) for e in runs if e.goal.difficulty < 0]
    hard = [won(e) for e in runs if e.goal.difficulty > 0.8]
    assert easy
    assert hard
    assert sum(easy) / len(easy) > sum(hard) / len(hard) + 0.15
    per_item = {round(t.success_p, 2) for e in runs for t in e.goal.tasks}
    assert len(per_item) > 20


def test_environment_failures_happen_at_a_small_rate() -> None:
    model = RivalModel(planner_missing=0.2, tool_missing=0.1)
    classes = Counter(
        type(e).__name__
        for g in range(30)
        for e in rival_goal(model, LOOSE, SEED, g)
        if isinstance(e, AttemptFinished | PlanFailed) and e.failure_class == "environment"
    )
    assert classes["PlanFailed"] > 0
    assert classes["AttemptFinished"] > 0
    default = RivalModel()
    assert 0 < default.planner_missing < 0.05
    assert 0 < default.tool_missing < 0.05
