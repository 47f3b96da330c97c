"""What-if over a profile's in-agent retry (issue 25 §3, SPEC §12.12): the recorded tries."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from governor.analysis.tries import cut_history, parse_profiles, under_profiles
from governor.core.evidence import Evidence, Tries
from governor.core.work_events import AttemptFinished
from governor.errors import InputError
from tests.story import Story
from tests.ui.serve import GOVERNOR


def _tried(first: str, *, max_attempts: int = 3) -> Story:
    """One item whose only attempt succeeded at its second in-agent try (``first``: what
    the first try came to)."""
    s = Story("g-tries", max_attempts=max_attempts)
    s.plan("a")
    s.start("p1-a")
    tries = Tries(count=2, classes=(first, "ok"), last_error="no JSON object found")  # type: ignore[arg-type]
    s.finish("p1-a", "succeeded", evidence=Evidence(tries=tries))
    s.accept("p1-a")
    return s


def test_a_success_at_the_second_try_is_a_charged_failure_under_one_try() -> None:
    s = _tried("invalid_reply")
    finished = next(e for e in s.events if isinstance(e, AttemptFinished))
    cut, seq = cut_history(s.events, {"worker": 1})
    assert seq == finished.seq
    last = cut[-1]
    assert isinstance(last, AttemptFinished)
    assert last.seq == finished.seq
    assert (last.outcome, last.failure_class) == ("failed", None)  # charged, as the try says
    assert last.evidence is not None
    assert last.evidence.tries == Tries(
        count=1, classes=("invalid_reply",), last_error="no JSON object found"
    )
    result = under_profiles(s.events, {"worker": 1})
    assert result.outcome == "censored"  # the item would be retried: never observed
    assert result.divergence is not None
    assert result.divergence.seq == finished.seq
    assert result.final.next_action == "run"
    assert result.final.ledger.work["p1-a"].charged_attempts == 1
    assert result.recorded_final.status == s.decision().status


def test_an_upstream_first_try_becomes_an_uncharged_failure() -> None:
    s = _tried("upstream")
    result = under_profiles(s.events, {"worker": 1})
    item = result.final.ledger.work["p1-a"]
    assert item.charged_attempts == 0
    assert item.attempts_used - item.charged_attempts == 1  # the one attempt, uncharged
    assert result.outcome == "censored"


def test_a_cut_that_spends_the_items_attempts_is_a_known_stop() -> None:
    """With one charged attempt per item and no replans left, the cut failure stops the goal."""
    s = Story("g-tight", max_attempts=1, max_replans=1)
    s.plan("a")
    s.start("p1-a")
    tries = Tries(count=2, classes=("invalid_reply", "ok"))
    s.finish("p1-a", "succeeded", evidence=Evidence(tries=tries))
    s.accept("p1-a")
    result = under_profiles(s.events, {"worker": 1})
    assert result.final.is_stopped, result.final
    assert result.outcome == "stopped_earlier"
    assert result.known


def test_runs_of_other_profiles_and_within_the_limit_are_kept() -> None:
    s = _tried("invalid_reply")
    assert cut_history(s.events, {"planner": 1})[1] is None
    assert cut_history(s.events, {"worker": 2})[1] is None
    assert under_profiles(s.events, {"worker": 2}).outcome == "same"


def test_profile_specs_are_checked() -> None:
    assert parse_profiles(["worker.max_attempts=1", "planner.max_attempts=2"]) == {
        "worker": 1,
        "planner": 2,
    }
    for bad in ("worker=1", "worker.timeout_s=5", "worker.max_attempts=0", "worker.max_attempts=x"):
        with pytest.raises(InputError):
            parse_profiles([bad])
    with pytest.raises(InputError, match="no profile nobody"):
        under_profiles(_tried("upstream").events, {"nobody": 1})


def test_the_whatif_command_takes_a_profile(tmp_path: Path) -> None:
    path = tmp_path / "tries.jsonl"
    events = _tried("invalid_reply").events
    path.write_text("".join(e.model_dump_json(exclude_none=True) + "\n" for e in events))
    run = [GOVERNOR, "replay", str(path), "--profile", "worker.max_attempts=1"]
    done = subprocess.run([*run, "--json"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["overrides"] == {"worker.max_attempts": 1}
    assert record["outcome"] == "censored"
    assert record["divergence"]["type"] == "attempt.finished"
    text = subprocess.run(run, capture_output=True, text=True, timeout=120)
    assert text.returncode == 0, text.stderr
    assert "under worker.max_attempts=1:" in text.stdout
    bad = subprocess.run(
        [*run[:3], "--profile", "worker.model=x"], capture_output=True, text=True, timeout=120
    )
    assert bad.returncode == 3, bad.stderr
    assert "cannot be re-projected" in bad.stderr
