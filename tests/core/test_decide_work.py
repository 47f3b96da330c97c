"""SPEC §6.1, one table: every numbered work-item rule, with the reason a person reads."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest

from governor.core.evidence import UNKNOWN, Evidence
from governor.core.rules.work import decide_work
from governor.errors import CommandRefusedError
from tests.story import ABSENT, Story


@dataclass(frozen=True)
class Case:
    story: Callable[[], Story]
    work_id: str
    status: str
    next_action: str
    blocked_on: str | None
    reason: str
    rule: str
    seconds_later: float = 0.0


def one(*keys: str, **policy: Any) -> Story:
    story = Story(**policy)
    story.plan(*keys or ("a",))
    return story


def reopened_after_spending() -> Story:
    s = one("a")
    s.attempt("p1-a").attempt("p1-a").succeed("p1-a")
    return s.op("reopen_work", work_id="p1-a")


def upstream_times(n: int, **policy: Any) -> Story:
    s = one("a", **policy)
    for _ in range(n):
        s.attempt("p1-a", failure_class="upstream", evidence=ABSENT)
    return s


def _deps() -> Story:
    s = Story()
    s.plan("a", "b", deps={"b": ("a",)})
    return s


def _started() -> Story:
    s = one("a")
    s.start("p1-a")
    return s


CASES = {
    "1 an accepted item has succeeded": Case(
        lambda: one("a").succeed("p1-a"), "p1-a", "succeeded", "none", None, "accepted", "work.1"
    ),
    "1 a cancelled item is cancelled": Case(
        lambda: one("a").op("cancel_work", work_id="p1-a"),
        "p1-a",
        "cancelled",
        "none",
        None,
        "cancelled",
        "work.1",
    ),
    "2 an item waits for a dependency that has not succeeded": Case(
        _deps, "p1-b", "waiting", "wait_for_dependencies", None, "waiting for p1-a", "work.2"
    ),
    "3 a fresh item is ready for its first attempt": Case(
        lambda: one("a"), "p1-a", "ready", "run", None, "ready for attempt 1", "work.3"
    ),
    "3 a retried item is ready again, its number continuing": Case(
        lambda: (
            one("a")
            .attempt("p1-a", failure_class="environment")
            .op("retry_work", work_id="p1-a", reason="installed it")
        ),
        "p1-a",
        "ready",
        "run",
        None,
        "ready for attempt 2",
        "work.3",
    ),
    "3 a reopened item whose budget is spent is exhausted, not ready": Case(
        reopened_after_spending,
        "p1-a",
        "budget_exhausted",
        "none",
        None,
        "exhausted its 3 attempts",
        "work.3",
    ),
    "4 an attempt started and not finished is running": Case(
        _started, "p1-a", "running", "wait", None, "attempt 1 is running", "work.4"
    ),
    "5 a passing attempt is accepted when accept_passing": Case(
        lambda: one("a").attempt("p1-a", "succeeded"),
        "p1-a",
        "in_review",
        "accept",
        None,
        "attempt 1 passed",
        "work.5",
    ),
    "5 a passing attempt awaits review without accept_passing": Case(
        lambda: one("a", accept_passing=False).attempt("p1-a", "succeeded"),
        "p1-a",
        "in_review",
        "review",
        "operator",
        "awaiting review",
        "work.5",
    ),
    "6 an uncharged environment failure stops the item and names the precondition": Case(
        lambda: one("a").attempt(
            "p1-a", failure_class="environment", error="codex: not found on PATH"
        ),
        "p1-a",
        "blocked",
        "none",
        "environment",
        "a required precondition is missing: “codex: not found on PATH”",
        "work.6",
    ),
    "7 a decision stops the item and carries the question": Case(
        lambda: one("a").attempt(
            "p1-a", failure_class="decision", evidence=UNKNOWN, error="Postgres or SQLite?"
        ),
        "p1-a",
        "blocked",
        "none",
        "decision",
        "Postgres or SQLite?",
        "work.7",
    ),
    "8 the upstream bound stops the item": Case(
        lambda: upstream_times(3),
        "p1-a",
        "blocked",
        "none",
        "upstream",
        "blocked waiting on an outside service after 3 consecutive uncharged attempts",
        "work.8",
    ),
    "8 the upstream bound of 1 says the spec's words": Case(
        lambda: upstream_times(1, max_uncharged_attempts=1),
        "p1-a",
        "blocked",
        "none",
        "upstream",
        "blocked waiting on an outside service after 1 consecutive uncharged attempts",
        "work.8",
    ),
    "8 an upstream failure waits out its cooldown": Case(
        lambda: upstream_times(1),
        "p1-a",
        "waiting",
        "wait",
        "upstream",
        "waiting until 2026-01-01T00:00:35Z",
        "work.8",
    ),
    "8 after the cooldown an upstream failure is retried": Case(
        lambda: upstream_times(2),
        "p1-a",
        "blocked",
        "retry",
        None,
        "uncharged, 2 of 3 in a row",
        "work.8",
        seconds_later=61,
    ),
    "9 a charged failure is retried while budget remains": Case(
        lambda: one("a").attempt("p1-a"),
        "p1-a",
        "blocked",
        "retry",
        None,
        "attempt 1 failed (charged 1 of 3)",
        "work.9",
    ),
    "9 a timeout is a charged failure": Case(
        lambda: one("a").attempt("p1-a", "timed_out"),
        "p1-a",
        "blocked",
        "retry",
        None,
        "attempt 1 timed out",
        "work.9",
    ),
    "9 an upstream failure without positive evidence is an ordinary charged failure": Case(
        lambda: one("a").attempt("p1-a", failure_class="upstream", evidence=UNKNOWN),
        "p1-a",
        "blocked",
        "retry",
        None,
        "charged 1 of 3",
        "work.9",
    ),
    "9 an environment failure after output was observed is charged": Case(
        lambda: one("a").attempt(
            "p1-a",
            failure_class="environment",
            evidence=Evidence(
                effects="absent", output="observed", refusal="absent", source="x:y", ref="z"
            ),
        ),
        "p1-a",
        "blocked",
        "retry",
        None,
        "charged 1 of 3",
        "work.9",
    ),
    "9 an item out of charged attempts is exhausted": Case(
        lambda: one("a").attempt("p1-a").attempt("p1-a").attempt("p1-a", "lost"),
        "p1-a",
        "budget_exhausted",
        "none",
        None,
        "exhausted its 3 attempts",
        "work.9",
    ),
    "9 an item out of its single attempt says the spec's words": Case(
        lambda: one("a", max_attempts=1).attempt("p1-a"),
        "p1-a",
        "budget_exhausted",
        "none",
        None,
        "exhausted its 1 attempts",
        "work.9",
    ),
    "3 a reopened item out of its single attempt says the spec's words": Case(
        lambda: one("a", max_attempts=1).succeed("p1-a").op("reopen_work", work_id="p1-a"),
        "p1-a",
        "budget_exhausted",
        "none",
        None,
        "exhausted its 1 attempts",
        "work.3",
    ),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_work_rule(case: Case) -> None:
    story = case.story()
    d = decide_work(
        story.view, story.view.work[case.work_id], story.now + timedelta(seconds=case.seconds_later)
    )
    assert (d.status, d.next_action, d.blocked_on) == (
        case.status,
        case.next_action,
        case.blocked_on,
    ), d.reason
    assert case.reason in d.reason
    assert d.rule == case.rule


def test_exhausted_items_name_the_attempts_ledger() -> None:
    story = one("a").attempt("p1-a").attempt("p1-a").attempt("p1-a")
    d = decide_work(story.view, story.view.work["p1-a"], story.now)
    assert d.exhausted == "attempts"


def test_passed_work_under_review_is_rejected_by_a_retry_saying_what_to_change() -> None:
    s = Story(accept_passing=False)
    s.plan("a")
    s.attempt("p1-a", "succeeded")
    assert s.decision().next_action == "review_work"
    s.op("retry_work", work_id="p1-a", reason="use bold headings")
    decision = s.decision()
    assert (decision.next_action, decision.work_ids) == ("run", ("p1-a",))
    assert s.view.work["p1-a"].guidance == "use bold headings"  # the next prompt's guidance
    auto = Story()  # with accept_passing, passed work is accepted, never retried
    auto.plan("a")
    auto.attempt("p1-a", "succeeded")
    with pytest.raises(CommandRefusedError, match="p1-a has no failed attempt to retry"):
        auto.op("retry_work", work_id="p1-a", reason="again")
