"""A goal stopped on a decision asks one question; ``answer`` records it with the verb
that answers it — the same events ``work retry`` and ``resume`` record."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from governor.core import verbs
from governor.core.question import Question, question
from governor.errors import CommandRefusedError
from tests.story import Story, planned


def _worker_asks() -> Story:
    return planned("a").attempt("p1-a", failure_class="decision", error="Which database?")


def _planner_asks() -> Story:
    s = Story()
    s.plan_fails("decision", error="thinking…\nWhich store?")
    return s


QUESTIONS: dict[str, tuple[Callable[[], Story], Question | None]] = {
    "a worker's question names its item, plan and attempt": (
        _worker_asks,
        Question("g", "worker", "Which database?", "p1-a", "p1", 1),
    ),
    "a planner's question names its plan and keeps the whole text": (
        _planner_asks,
        Question("g", "planner", "thinking…\nWhich store?", None, "p1", None),
    ),
    "an environment stop asks nothing": (
        lambda: planned("a").attempt("p1-a", failure_class="environment"),
        None,
    ),
    "a running goal asks nothing": (lambda: planned("a"), None),
}


@pytest.mark.parametrize(("build", "expected"), QUESTIONS.values(), ids=QUESTIONS.keys())
def test_question(build: Callable[[], Story], expected: Question | None) -> None:
    story = build()
    assert question(story.view, story.decision()) == expected


@pytest.mark.parametrize(
    ("build", "verb", "kwargs"),
    [
        (_worker_asks, verbs.retry_work, {"work_id": "p1-a"}),
        (_planner_asks, verbs.resume_goal, {}),
    ],
    ids=["a worker's answer is work.retried", "a planner's answer is goal.resumed"],
)
def test_an_answer_is_the_verb_that_answers_it(build, verb, kwargs) -> None:  # type: ignore[no-untyped-def]
    story = build()
    at = story.tick().now
    answered = verbs.answer(story.view, answer="use postgres", at=at, actor="operator:a")
    assert answered == verb(story.view, reason="use postgres", at=at, actor="operator:a", **kwargs)
    story.add(answered)
    assert question(story.view, story.decision()) is None


def test_nothing_to_answer_and_an_empty_answer_are_refused() -> None:
    story = planned("a")
    with pytest.raises(CommandRefusedError, match="no question is waiting"):
        verbs.answer(story.view, answer="yes", at=story.now, actor="operator:a")
    asked = _worker_asks()
    with pytest.raises(CommandRefusedError, match="an answer needs some text"):
        verbs.answer(asked.view, answer=" \n", at=asked.now, actor="operator:a")
