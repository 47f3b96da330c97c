"""Questions and waits in the graph: the actor of the ``ask`` and ``wait`` nodes.

Rules (SPEC §4 rule 5; ``docs/api.md``):
    * A question is LangGraph's ``interrupt()`` with the question and the ids it
      concerns; the resume value is the answer, recorded by the operator verb that
      answers it (``governor.drive.goals.answer``: ``work.retried`` or ``goal.resumed``),
      exactly as ``governor work retry`` / ``governor resume`` record it.
    * The node that interrupts runs again when the run resumes: it asks only if the
      question still stands, so an answer given elsewhere meanwhile lets the run go on.
    * A wait is the runner's: slept through up to ``max_wait_s`` (0 on a server).
"""

from __future__ import annotations

from typing import Any, Final

from langgraph.types import interrupt

from governor.core.question import Question, question
from governor.core.route import Accept, Apply, Ask, Dispatch, Park, Plan, Resume, Wait
from governor.drive import goals
from governor.drive.runner import Runner
from governor.errors import InputError

DEFAULT_ACTOR: Final = "operator:langgraph"
"""Who answered a question, when the run's context does not say."""


class GraphActor:
    """The actor of the graph's ``wait`` and ``ask`` nodes (``governor.drive.act``): the
    runner's actions, a wait bounded by ``max_wait_s``, and questions put to a person
    through ``interrupt()``."""

    def __init__(self, runner: Runner, actor: str = DEFAULT_ACTOR) -> None:
        self.runner, self.actor = runner, actor

    def plan(self, action: Plan) -> None:
        self.runner.plan(action)

    def apply(self, action: Apply) -> None:
        self.runner.apply(action)

    def dispatch(self, action: Dispatch) -> None:
        self.runner.dispatch(action)

    def accept(self, action: Accept) -> None:
        self.runner.accept(action)

    def park(self, action: Park) -> None:
        self.runner.park(action)

    def resume(self, action: Resume) -> None:
        self.runner.resume(action)

    def wait(self, action: Wait) -> bool:
        return self.runner.wait(action)

    def ask(self, action: Ask) -> bool:
        """Interrupt with the question; record the answer ``Command(resume=…)`` brings."""
        asked = question(self.runner.view, self.runner.decide())
        if asked is None:
            return True  # answered meanwhile: decide again
        text, actor = answer_of(interrupt(question_record(asked)), self.actor)
        goals.answer(self.runner.store, asked.goal_id, text, actor=actor)
        return True


def question_record(asked: Question) -> dict[str, Any]:
    """The interrupt's value: the question and the ids it concerns, as JSON."""
    words = (
        ["work", "retry", asked.goal_id, asked.work_id]
        if asked.work_id
        else ["resume", asked.goal_id]
    )
    return {
        "goal_id": asked.goal_id,
        "asker": asked.asker,
        "question": asked.text,
        "work_id": asked.work_id,
        "plan_id": asked.plan_id,
        "attempt": asked.attempt,
        "answer_with": " ".join(["governor", *words, "--reason", "ANSWER"]),
        "description": asked.text,
    }


def answer_of(value: Any, default_actor: str) -> tuple[str, str]:
    """The answer text and who gave it, from a resume value.

    Accepted: a string; ``{"answer": str, "actor"?: str}``; an Agent Inbox response
    ``{"type": "response", "args": str}``, or a list holding one.
    """
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if isinstance(value, str):
        return value, default_actor
    if isinstance(value, dict):
        text = value.get("answer", value.get("args") if value.get("type") == "response" else None)
        actor = value.get("actor", default_actor)
        if isinstance(text, str) and isinstance(actor, str):
            return text, actor
    raise InputError(
        'answer a question with Command(resume="…") or {"answer": "…", "actor": "operator:…"}'
    )
