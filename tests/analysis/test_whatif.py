"""What-if (SPEC §9): exact where the outcome is known; the recorded policy reproduces every decision."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from governor.analysis.replay import replay
from governor.analysis.whatif import Trace, whatif
from governor.core.budgets import BY_FIELD
from governor.core.events import Event
from governor.core.evidence import nothing_happened
from governor.core.policy_input import with_overrides
from governor.core.rules.decide import decide
from governor.render.text import format_whatif
from governor.store.jsonl import read_history
from tests.story import Story
from tests.ui.serve import GOVERNOR

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
VALID = sorted(
    p
    for p in GOLDEN.glob("*.jsonl")
    if "error_line" not in json.loads((GOLDEN / f"{p.stem}.expected.json").read_text())
)


def events(name: str) -> list:  # type: ignore[type-arg]
    return [e for _, e in read_history(GOLDEN / f"{name}.jsonl")]


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_the_recorded_policy_reproduces_every_recorded_decision(path: Path) -> None:
    history = [e for _, e in read_history(path)]
    trace = Trace.of(history)
    recorded = [step.decision for step in replay(enumerate(history, start=1))]
    again = [decide(view, event.at) for event, view in trace.steps(trace.policy)]
    assert [(d.status, d.next_action, d.reason, d.ledger) for d in again] == [
        (d.status, d.next_action, d.reason, d.ledger) for d in recorded
    ]
    assert whatif(history, trace.policy).outcome == "same"


TIGHTER = {
    "three outages, the bound tightened to 2: stops at the third request": (
        "planner_upstream_bound",
        {"max_uncharged_replans": 2},
        6,
        "plan.requested",
        "blocked",
        "upstream",
        "after 2 consecutive uncharged planner failures",
    ),
    "one replan fewer: stops when the replan is due": (
        "work_exhausted_replan",
        {"max_replans": 1},
        None,
        None,
        "budget_exhausted",
        "replans",
        "its charged plans are spent (1 of 1)",
    ),
    "total attempts tightened: stops before the attempt it cannot pay for": (
        "total_attempts_exhausted",
        {"max_total_attempts": 1},
        8,
        "attempt.started",
        "budget_exhausted",
        "total_attempts",
        "charged attempts are spent (1 of 1)",
    ),
    "the upstream bound of an item tightened to 1": (
        "work_upstream_bound",
        {"max_uncharged_attempts": 1},
        8,
        "attempt.started",
        "blocked",
        "upstream",
        "after 1 consecutive uncharged attempt",
    ),
}


@pytest.mark.parametrize(
    ("name", "override", "seq", "type_", "status", "on", "reason"),
    TIGHTER.values(),
    ids=TIGHTER.keys(),
)
def test_a_tighter_limit_reports_the_exact_stop(
    name: str,
    override: dict,
    seq: int | None,
    type_: str | None,  # type: ignore[type-arg]
    status: str,
    on: str,
    reason: str,
) -> None:
    history = events(name)
    result = whatif(history, with_overrides(history[0].policy, override))  # type: ignore[union-attr]
    assert result.outcome == "stopped_earlier"
    assert result.known
    if seq is None:
        assert result.divergence is None
    else:
        assert result.divergence is not None
        assert (result.divergence.seq, result.divergence.event_type, result.divergence.kind) == (
            seq,
            type_,
            "stop",
        )
    assert result.final.status == status
    assert on in (result.final.blocked_on, result.final.exhausted)
    assert reason in result.final.reason


def test_a_looser_limit_goes_on_past_the_recorded_end_censored() -> None:
    history = events("planner_upstream_bound")
    result = whatif(history, with_overrides(history[0].policy, {"max_uncharged_replans": 5}))  # type: ignore[union-attr]
    assert (result.outcome, result.known, result.divergence) == ("censored", False, None)
    assert result.recorded_final.status == "blocked"
    assert not result.final.is_stopped


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
@pytest.mark.parametrize(
    "override",
    [
        {"max_replans": 1},
        {"max_replans": 2},
        {"max_replans": 50},
        {"max_uncharged_replans": 0},
        {"max_uncharged_replans": 9},
        {"max_attempts": 1},
        {"max_attempts": 7},
        {"max_total_attempts": 2},
        {"max_uncharged_attempts": 1},
        {"max_plan_records": 2},
        {"max_runtime_s": 50.0},
    ],
    ids=str,
)
def test_policies_with_the_same_key_refold_a_history_identically(
    path: Path, override: dict
) -> None:  # type: ignore[type-arg]
    history = [e for _, e in read_history(path)]
    trace = Trace.of(history)
    policy = with_overrides(trace.policy, override)
    loosest = with_overrides(
        policy,
        {
            f: v
            for f, v in {
                "max_replans": 10_000,
                "max_uncharged_replans": 10_000,
                "max_plan_records": 10_000,
                "max_attempts": 10_000,
                "max_uncharged_attempts": 10_000,
                "max_total_attempts": 10_000,
            }.items()
            if getattr(policy, f) > _demand(trace, f)
        },
    )
    assert trace.demands.key(policy) == trace.demands.key(loosest)
    a, b = trace.under(policy), trace.under(loosest)
    assert (a.outcome, a.divergence and (a.divergence.seq, a.divergence.kind)) == (
        b.outcome,
        b.divergence and (b.divergence.seq, b.divergence.kind),
    )
    assert (a.final.status, a.final.next_action, a.final.blocked_on, a.final.exhausted) == (
        b.final.status,
        b.final.next_action,
        b.final.blocked_on,
        b.final.exhausted,
    )


def _demand(trace: Trace, field: str) -> float:
    return trace.demands.most[BY_FIELD[field].name]


def _vendor_and_decide() -> Story:
    """p1-decide asked a person; p1-vendor's vendor refused it once (uncharged): the goal
    waits out p1-vendor's cooldown."""
    s = Story("g-two", max_parallel_work=2)
    s.plan("decide", "vendor")
    s.start("p1-decide")
    s.start("p1-vendor")
    refused = nothing_happened("vendor", "503", rule="vendor-status")
    s.finish("p1-vendor", "failed", failure_class="upstream", evidence=refused, error="503")
    s.finish("p1-decide", "failed", failure_class="decision", error="OAuth or passwords?")
    return s


def test_a_whatif_names_the_item_the_changed_policy_stops() -> None:
    """Seen: ``--policy max_uncharged_attempts=0`` reported p1-decide, which stopped under
    the recorded policy too, when the change stops p1-vendor."""
    s = _vendor_and_decide()
    assert s.decision().status == "waiting"
    result = whatif(s.events, with_overrides(s.policy, {"max_uncharged_attempts": 0}))
    assert result.outcome == "stopped_earlier"
    assert result.final.work_ids == ("p1-vendor",)
    assert result.final.blocked_on == "upstream"
    assert result.final.reason.startswith("p1-vendor: ")


def _whatif_command(events: list[Event], tmp_path: Path) -> dict[str, Any]:
    """``governor replay FILE --policy max_uncharged_attempts=0 --json`` (it streams)."""
    path = tmp_path / "two.jsonl"
    path.write_text("".join(e.model_dump_json(exclude_none=True) + "\n" for e in events))
    done = subprocess.run(
        [GOVERNOR, "replay", str(path), "--policy", "max_uncharged_attempts=0", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    record: dict[str, Any] = json.loads(done.stdout)
    return record


def test_the_whatif_command_names_the_item_the_change_stops(tmp_path: Path) -> None:
    record = _whatif_command(_vendor_and_decide().events, tmp_path)
    assert record["final"]["reason"].startswith("p1-vendor: "), record["final"]
    assert record["final"]["blocked_on"] == "upstream"


def test_a_whatif_names_the_item_the_change_stops_at_a_divergence(tmp_path: Path) -> None:
    """The record ran p1-vendor again after its cooldown (p1-decide still asking): under
    ``max_uncharged_attempts=0`` the goal stops before that run, on p1-vendor."""
    s = _vendor_and_decide()
    s.tick(120)
    s.start("p1-vendor")
    started = s.events[-1].seq
    s.finish("p1-vendor", "succeeded")
    policy = with_overrides(s.policy, {"max_uncharged_attempts": 0})
    result = whatif(s.events, policy)
    assert result.divergence is not None
    assert result.divergence.seq == started
    assert result.divergence.decision.work_ids == ("p1-vendor",)
    assert result.final.reason.startswith("p1-vendor: ")
    record = _whatif_command(s.events, tmp_path)  # streamed: the same naming
    assert record["divergence"]["seq"] == started
    assert record["divergence"]["reason"].startswith("p1-vendor: "), record["divergence"]


def test_the_text_names_the_item_the_other_policy_exhausts() -> None:
    """Issue 35: under ``max_attempts=1`` the divergence names the next item to run; the
    item the policy spent was shown only by ``--json``."""
    s = Story(max_attempts=3)
    s.plan("a", "b")
    s.attempt("p1-a", error="tests failed")
    s.attempt("p1-a", error="tests failed again")
    s.succeed("p1-b")
    policy = with_overrides(s.policy, {"max_attempts": 1})
    text = format_whatif(whatif(s.events, policy), {"max_attempts": 1})
    assert "run p1-b" in text
    assert "p1-a is budget_exhausted: 1 of its 1 attempts charged" in text
