"""Explain (SPEC §9): the rule that fired, the last failures, and the smallest policy change."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from governor.analysis.explain import explain
from governor.core.evidence import Evidence, nothing_happened
from governor.core.policy import UpstreamBackoff, completion_problem
from governor.core.policy_input import with_overrides
from governor.core.record_park import park_goal
from governor.core.rules.decide import decide
from governor.core.upstream import Seen, Upstream, observed
from governor.store.jsonl import read_history
from tests.story import Story

GOLDEN = Path(__file__).resolve().parent.parent / "golden"

CASES = {
    "stopped by the upstream bound after 3 outages: max_uncharged_replans=4": (
        "planner_upstream_bound",
        "max_uncharged_replans",
        3,
        4,
        "--ledger uncharged_replans --to 4",
    ),
    "out of replans after 2: max_replans=3": (
        "replans_exhausted",
        "max_replans",
        2,
        3,
        "--ledger replans --to 3",
    ),
    "an item at its upstream bound: max_uncharged_attempts=4 for that item": (
        "work_upstream_bound",
        "max_uncharged_attempts",
        3,
        4,
        "--ledger uncharged_attempts --work p1-a --to 4",
    ),
    "out of total attempts": (
        "total_attempts_exhausted",
        "max_total_attempts",
        2,
        3,
        "--ledger total_attempts --to 3",
    ),
    "over its cost": ("cost_exhausted", "max_cost_usd", 0.5, 0.61, "--ledger cost --to 0.61"),
    "out of plan records at a milestone": (
        "milestone_plan_records",
        "max_plan_records",
        1,
        2,
        "--ledger plan_records --to 2",
    ),
}


@pytest.mark.parametrize(
    ("name", "field", "before", "after", "command"), CASES.values(), ids=CASES.keys()
)
def test_the_smallest_change(
    name: str, field: str, before: float, after: float, command: str
) -> None:
    ex = explain(e for _, e in read_history(GOLDEN / f"{name}.jsonl"))
    assert ex.change is not None
    assert (ex.change.field, ex.change.before, ex.change.after) == (field, before, after)
    assert command in ex.advice


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("planner_environment_stop", "install what is missing"),
        ("work_environment_stop", "install what is missing"),
        ("planner_decision", "answer the question"),
        ("work_decision_blocked", "answer the question"),
    ],
)
def test_environment_and_decision_stops_need_a_person(name: str, words: str) -> None:
    ex = explain(e for _, e in read_history(GOLDEN / f"{name}.jsonl"))
    assert ex.change is None
    assert ex.advice.startswith("no policy change helps: a person must act")
    assert words in ex.advice


REFUSED = nothing_happened("claude:api_error_status", "401", rule="credential")
MISSING = nothing_happened("exec:spawn-errno", "ENOENT", rule="spawn-errno")
LINE = "the credential for planner was refused: set ANTHROPIC_API_KEY"


def _planner_stop(evidence: Evidence, error: str) -> Story:
    s = Story()
    s.plan_fails("environment", evidence, error=error)
    return s


def _work_stop(evidence: Evidence, error: str) -> Story:
    s = Story()
    s.plan("a")
    s.start("p1-a")
    s.finish("p1-a", "failed", "environment", evidence, error=error)
    return s


@pytest.mark.parametrize("stop", [_planner_stop, _work_stop], ids=["planner", "work item"])
def test_a_refused_credential_is_told_by_the_rule_that_classed_it_not_by_its_words(
    stop: Callable[[Evidence, str], Story],
) -> None:
    refused = explain(stop(REFUSED, f"HTTP 401\n{LINE}").events)
    assert refused.decision.blocked_on == "environment"
    assert "fix the credential" in refused.advice
    # the same words from a missing binary (an agent may print anything) are not a credential
    missing = explain(stop(MISSING, f"spawn failed\n{LINE}").events)
    assert missing.decision.blocked_on == "environment"
    assert "install what is missing" in missing.advice
    # a credential refusal whose error says nothing of the kind is one still
    plain = explain(stop(REFUSED, "HTTP 401").events)
    assert "fix the credential" in plain.advice


def test_two_spent_ledgers_need_more_than_one_change() -> None:
    ex = explain(e for _, e in read_history(GOLDEN / "runtime_exhausted.jsonl"))
    assert (ex.decision.exhausted, ex.change) == ("runtime", None)
    assert "no single budget change" in ex.advice


def test_the_last_failures_carry_class_rule_and_evidence() -> None:
    ex = explain(e for _, e in read_history(GOLDEN / "planner_upstream_bound.jsonl"))
    assert ex.decision.rule == "goal.4"
    assert [(f.what, f.failure_class, f.charged) for f in ex.failures] == [
        ("plan p1", "upstream", False),
        ("plan p2", "upstream", False),
        ("plan p3", "upstream", False),
    ]
    assert all(f.rule and f.evidence and f.evidence.effects == "absent" for f in ex.failures)


def test_a_goal_that_has_not_stopped_is_not_a_budget_problem() -> None:
    ex = explain(e for _, e in read_history(GOLDEN / "work_upstream_cooldown.jsonl"))
    assert ex.change is None
    assert ex.advice == "the goal has not stopped: it waits for an outside service"


def test_a_park_past_its_outage_wait_is_a_stop_explained_with_the_raise_that_lets_it_wait_on() -> (
    None
):
    s = Story(max_outage_wait_s=600)
    s.plan("a")
    upstream = Upstream("codex", "https://api.openai.com/v1", "gpt-5-codex")
    health = observed(None, upstream, Seen("refused", 503), s.now, UpstreamBackoff())
    assert health is not None
    d = decide(s.view, s.now, upstreams={"worker": health})
    assert d.outage is not None
    s.add(park_goal(s.view, d.outage, at=s.now))
    parked_at = s.now
    assert explain(s.events).decision.status == "waiting"  # at its last event
    later = explain(s.events, now=parked_at + timedelta(seconds=900))
    assert (later.decision.status, later.decision.exhausted) == ("budget_exhausted", "outage_wait")
    assert later.change is not None
    assert later.change.field == "max_outage_wait_s"
    assert later.change.after > 900
    assert "--ledger outage_wait --to" in later.advice


GOLDEN_HISTORIES = sorted(
    p
    for p in (Path(__file__).resolve().parents[1] / "golden").glob("*.jsonl")
    if not p.name.startswith("corrupt_")
)


@pytest.mark.parametrize("path", GOLDEN_HISTORIES, ids=lambda p: p.stem)
def test_explain_never_advises_a_policy_that_cannot_afford_its_completion(path: Path) -> None:
    """SPEC §12.1: what explain advises is a policy a new goal may have — recorded policies
    that break the rule included (``reopened_spent_item`` records ``max_replans`` 1) — and
    never ``max_same_failures`` (SPEC §12.10)."""
    events = [e for _, e in read_history(path)]
    explained = explain(events)
    if explained.change is None:
        return
    assert explained.change.field != "max_same_failures"
    created = events[0]
    assert created.type == "goal.created"
    advised = with_overrides(created.policy, {explained.change.field: explained.change.after})
    assert completion_problem(advised) is None, (explained.change, explained.advice)


def test_a_recorded_policy_without_a_completion_call_is_advised_more_replans() -> None:
    """``max_replans`` 1 (recorded before SPEC §12.1): any other raise would leave an
    infeasible policy, so the advice is replans, to at least 2."""
    explained = explain([e for _, e in read_history(GOLDEN / "reopened_spent_item.jsonl")])
    assert explained.change is not None
    assert explained.change.field == "max_replans"
    assert explained.change.after >= 2


# --- advice a person can run (issue 25 §2) -------------------------------------------------


def test_a_run_of_the_same_planner_failure_is_never_advised_a_budget() -> None:
    """Seen: three identical "no JSON object" planner failures ran out of replans, and
    explain said "raise max_replans from 3 to 4". The same failure again is the agent's to
    fix (SPEC §12.10), whichever rule stopped the goal first."""
    s = Story(max_replans=2)
    for _ in range(2):
        s.plan_fails(error="the reply could not be used: no JSON object found")
    assert s.decision().status == "budget_exhausted"
    explained = explain(s.events)
    assert explained.change is None
    assert "fix the agent" in explained.advice
    assert "raise" not in explained.advice
    assert explained.commands == ()  # resume would be refused: a budget is spent


def test_a_workers_question_is_answered_by_retrying_its_item_with_the_real_ids() -> None:
    """Seen: "`governor resume GOAL --reason ANSWER` or `governor work retry GOAL ITEM …`":
    placeholders, and resume is refused on a worker's question."""
    s = Story("g-ask")
    s.plan("api")
    s.start("p1-api")
    s.finish("p1-api", "failed", failure_class="decision", error="OAuth or passwords?")
    explained = explain(s.events, store_arg="/srv/my store.db")
    line = "governor work retry g-ask p1-api --reason ANSWER --store '/srv/my store.db'"
    assert explained.commands == (line,)
    assert f"`{line}`" in explained.advice
    assert "resume" not in explained.advice
    assert "GOAL" not in explained.advice


def test_a_raise_says_what_the_whatif_shows_would_follow() -> None:
    explained = explain([e for _, e in read_history(GOLDEN / "replans_exhausted.jsonl")])
    assert explained.commands == (
        "governor raise g-replans-exhausted --ledger replans --to 3 --reason REASON",
    )
    assert "would continue after seq 5 (plan: " in explained.advice
