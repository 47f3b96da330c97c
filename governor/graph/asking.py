"""Questions, requests for more budget and waits in the graph: the actor of the ``ask``
and ``wait`` nodes.

Rules (SPEC §4 rule 5; ``docs/api.md``):
    * A question is LangGraph's ``interrupt()`` whose value is Agent Inbox's
      ``HumanInterrupt`` (``action_request`` {action, args}, ``config`` {allow_ignore,
      allow_respond, allow_edit, allow_accept}, ``description``), so inbox UIs can answer
      it, with the question's keys beside it (``question``, ``goal_id``, ``work_id`` …)
      for the callers that read them. The resume value is the answer — text, ``{"answer",
      "actor"}``, or an inbox ``response`` — recorded by the operator verb that answers it
      (``governor.drive.goals.answer``: ``work.retried`` or ``goal.resumed``), exactly as
      ``governor work retry`` / ``governor resume`` record it; an inbox ``ignore`` leaves
      the question standing and ends the run.
    * The node that interrupts runs again when the run resumes. If the question it asked
      (the one ``assess`` saw: ``asked``) no longer stands — answered elsewhere
      meanwhile, the CLI, the web view — the resume value is not recorded against
      whatever is asked now: the run reports it (``answer``: ``recorded`` false, and
      why) and goes on (so too for a request for more budget). Every answer's fate is
      reported so, never dropped silently.
    * A request for more budget that only a person's grant moves is asked the same way,
      through the same node (``governor.graph.granting``): ``ask_grant``.
    * A wait is the runner's: slept through up to ``max_wait_s`` (0 on a server).
"""

from __future__ import annotations

from typing import Any, Final

from langgraph.errors import GraphInterrupt
from langgraph.types import interrupt

from governor.analysis import runnable
from governor.core.question import Question, question
from governor.core.route import Accept, Apply, Ask, Dispatch, Park, Plan, Resume, Wait
from governor.drive import goals
from governor.drive.runner import Runner
from governor.errors import InputError
from governor.graph.granting import (
    GrantAsked,
    answer_report,
    grant_answer_of,
    grant_identity,
    grant_record,
    is_grant_identity,
    record_answer,
)

DEFAULT_ACTOR: Final = "operator:langgraph"
"""Who answered a question, when the run's context does not say."""


Answer = dict[str, Any]
"""What became of a resume value: ``recorded``, the ``answer``, its ``actor``, and why."""


class GraphActor:
    """The actor of the graph's ``wait`` and ``ask`` nodes (``governor.drive.act``): the
    runner's actions, a wait bounded by ``max_wait_s``, and questions put to a person
    through ``interrupt()``.

    ``asked`` is the question ``assess`` routed to the ``ask`` node with (its ids); after
    ``ask``, ``answer`` says what became of the resume value (None: there was none).
    """

    def __init__(
        self, runner: Runner, actor: str = DEFAULT_ACTOR, asked: dict[str, Any] | None = None
    ) -> None:
        self.runner, self.actor, self.asked = runner, actor, asked
        self.answer: Answer | None = None

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
        """Interrupt with the question; record the answer ``Command(resume=…)`` brings.

        False when the person ignored it (the run ends; the question stands)."""
        asked = question(self.runner.view, self.runner.decide())
        if asked is None or (self.asked is not None and identity(asked) != self.asked):
            self.answered_meanwhile()
            return True  # answered meanwhile: decide again
        given = answer_of(interrupt(question_record(asked)), self.actor)
        if given is None:
            self.answer = {"recorded": False, "ignored": True, "reason": IGNORED}
            return False
        text, actor = given
        goals.answer(self.runner.store, asked.goal_id, text, actor=actor)
        self.answer = {"recorded": True, "answer": text, "actor": actor, "verb": asked.verb}
        return True

    def ask_grant(self, asked: GrantAsked) -> bool:
        """Interrupt with the request for more budget; record the grant or decline
        ``Command(resume=…)`` brings (``governor.graph.granting``).

        False when the person ignored it (the run ends; the request stands)."""
        if self.asked is not None and grant_identity(asked) != self.asked:
            self.answered_meanwhile()
            return True  # answered meanwhile, and asked anew: decide again
        given = grant_answer_of(interrupt(grant_record(asked)), self.actor)
        if given is None:
            self.answer = {"recorded": False, "ignored": True, "reason": IGNORED_GRANT}
            return False
        record_answer(self.runner, asked, given)
        self.answer = answer_report(given)
        return True

    def answered_meanwhile(self) -> None:
        """The question (or request) this run asked is gone: report the resume value it
        brings, if any."""
        if self.asked is None:
            return
        try:  # a resume value for the question asked before, or (first pass) none: no pause
            value = interrupt(self.asked)
        except GraphInterrupt:
            return
        if is_grant_identity(self.asked):
            granted = grant_answer_of(value, self.actor)
            text, actor = (granted.reason, granted.actor) if granted else (None, self.actor)
        else:
            given = answer_of(value, self.actor)
            text, actor = given if given is not None else (None, self.actor)
        self.answer = {"recorded": False, "answer": text, "actor": actor, "reason": TOO_LATE}


IGNORED: Final = "ignored: the question still waits for an answer"
IGNORED_GRANT: Final = "ignored: the request for more budget still waits for an answer"
TOO_LATE: Final = (
    "the question was answered elsewhere (or the goal moved on) before this answer "
    "arrived; it was not recorded"
)


def identity(asked: Question) -> dict[str, Any]:
    """What tells one question from another: who asked, for which plan, item and attempt."""
    return {
        "asker": asked.asker,
        "plan_id": asked.plan_id,
        "work_id": asked.work_id,
        "attempt": asked.attempt,
    }


def question_record(asked: Question) -> dict[str, Any]:
    """The interrupt's value: Agent Inbox's ``HumanInterrupt``, and the question's keys."""
    keys = {
        "goal_id": asked.goal_id,
        "asker": asked.asker,
        "question": asked.text,
        "work_id": asked.work_id,
        "plan_id": asked.plan_id,
        "attempt": asked.attempt,
        "answer_with": runnable.answer(asked.goal_id, asked.work_id).line(None),
    }
    who = f"the worker of {asked.work_id}" if asked.work_id else "the planner"
    return {
        "action_request": {"action": f"Question from {who} ({asked.goal_id})", "args": keys},
        "config": {
            "allow_ignore": True,
            "allow_respond": True,
            "allow_edit": False,
            "allow_accept": False,
        },
        "description": f"{asked.text}\n\n---\nRespond with the answer: it is recorded as "
        f"`{keys['answer_with']}` records it. Ignore leaves the question waiting.",
        **keys,
    }


def answer_of(value: Any, default_actor: str) -> tuple[str, str] | None:
    """The answer text and who gave it, from a resume value (None: the person ignored it).

    Accepted: a string; ``{"answer": str, "actor"?: str}``; an Agent Inbox response
    ``{"type": "response", "args": str}`` or ``{"type": "ignore"}``, or a list holding one.
    """
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if isinstance(value, str):
        return value, default_actor
    if isinstance(value, dict):
        if value.get("type") == "ignore":
            return None
        text = value.get("answer", value.get("args") if value.get("type") == "response" else None)
        actor = value.get("actor", default_actor)
        if isinstance(text, str) and isinstance(actor, str):
            return text, actor
    raise InputError(
        'answer a question with Command(resume="…"), {"answer": "…", "actor": "operator:…"} '
        'or an inbox response {"type": "response", "args": "…"}'
    )
