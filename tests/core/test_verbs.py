"""Operator verbs at their edges (issue 35): one answer per question, and a cancel that
closes the attempt it interrupts."""

from __future__ import annotations

import pytest

from governor.core.history import validate_events
from governor.errors import CommandRefusedError
from tests.story import Story


def asked() -> Story:
    s = Story()
    s.plan("a")
    s.attempt("p1-a", failure_class="decision", error="Postgres or SQLite?")
    return s


def test_a_worker_question_is_answered_once() -> None:
    s = asked().op("retry_work", work_id="p1-a", reason="Postgres")
    with pytest.raises(CommandRefusedError, match=r"already retried.*“Postgres”"):
        s.op("retry_work", work_id="p1-a", reason="SQLite")
    assert s.view.work["p1-a"].guidance == "Postgres"


def test_an_attempt_since_lets_the_item_be_retried_again() -> None:
    s = asked().op("retry_work", work_id="p1-a", reason="Postgres")
    s.attempt("p1-a", error="tests failed")
    s.op("retry_work", work_id="p1-a", reason="fix the migration")
    assert s.view.work["p1-a"].guidance == "fix the migration"


def test_reopening_does_not_count_as_an_answer() -> None:
    s = asked().op("retry_work", work_id="p1-a", reason="Postgres")
    s.attempt("p1-a", error="tests failed")
    s.op("cancel_work", work_id="p1-a").op("reopen_work", work_id="p1-a")
    s.op("retry_work", work_id="p1-a", reason="try once more")


def test_cancelling_closes_the_attempt_it_interrupts_first() -> None:
    s = Story()
    s.plan("a")
    s.start("p1-a")
    s.tick(300)
    s.op("cancel_goal", reason="not needed")
    finished, cancelled = s.events[-2:]
    assert finished.type == "attempt.finished"
    assert finished.outcome == "abandoned"  # type: ignore[union-attr]
    assert cancelled.type == "goal.cancelled"
    assert not s.view.work["p1-a"].running
    assert s.decision().ledger is not None
    assert s.decision().ledger.runtime_s >= 300  # type: ignore[union-attr]
    assert s.decision().status == "cancelled"
    validate_events(s.events)


def test_cancelling_between_attempts_records_the_cancel_only() -> None:
    s = Story()
    s.plan("a")
    before = len(s.events)
    s.op("cancel_goal")
    assert [e.type for e in s.events[before:]] == ["goal.cancelled"]
