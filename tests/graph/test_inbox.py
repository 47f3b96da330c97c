"""Questions an inbox can answer (issue 27 §5): the interrupt's value is Agent Inbox's
``HumanInterrupt``; an inbox ``response`` answers it, an ``ignore`` leaves it standing;
and an answer that arrives after the question was answered elsewhere is reported in the
run's result (``answer``), never recorded against another question nor dropped silently."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt.interrupt import HumanInterrupt
from langgraph.types import Command
from pydantic import TypeAdapter

from governor.drive import goals
from governor.drive.runner import RunnerSettings
from governor.graph.asking import TOO_LATE
from governor.store.sqlite import SqliteEventStore
from tests.e2e.cli import COMPLETE, Project, done, plan, planner_script, worker_script
from tests.graph.test_deploy import QUESTION, events, graph, project_with, thread


def paused_on(project: Project) -> tuple[Any, Any]:
    compiled = graph(project, checkpointer=InMemorySaver())
    paused = compiled.invoke({"goal_id": "g"}, thread())
    [pending] = paused["__interrupt__"]
    return compiled, pending.value


def test_the_interrupt_is_an_agent_inbox_human_interrupt(asking: Project) -> None:
    _, value = paused_on(asking)
    TypeAdapter(HumanInterrupt).validate_python(value)  # the inbox's own type
    assert value["config"] == {
        "allow_ignore": True,
        "allow_respond": True,
        "allow_edit": False,
        "allow_accept": False,
    }
    assert value["action_request"]["action"] == "Question from the worker of p1-a (g)"
    args = value["action_request"]["args"]
    assert args["question"].endswith("Which database should I use?")
    assert args["answer_with"] == "governor work retry g p1-a --reason ANSWER"
    assert value["description"].startswith(args["question"])
    assert value["question"] == args["question"]  # the keys callers read before, kept


def test_an_inbox_response_answers_it_and_the_result_says_so(asking: Project) -> None:
    compiled, _ = paused_on(asking)
    final = compiled.invoke(
        Command(resume=[{"type": "response", "args": "use postgres"}]), thread()
    )
    assert final["decision"]["status"] == "succeeded"
    assert final["answer"] == {
        "recorded": True,
        "answer": "use postgres",
        "actor": "operator:langgraph",
        "verb": "work retry",
    }
    assert [e.reason for e in events(asking) if e.type == "work.retried"] == ["use postgres"]


def test_an_inbox_ignore_leaves_the_question_standing_and_ends_the_run(asking: Project) -> None:
    compiled, _ = paused_on(asking)
    final = compiled.invoke(Command(resume=[{"type": "ignore", "args": None}]), thread())
    assert final["outcome"] == "stopped"
    assert (final["decision"]["status"], final["decision"]["blocked_on"]) == ("blocked", "decision")
    assert final["answer"]["recorded"] is False
    assert final["answer"]["ignored"] is True
    assert not [e for e in events(asking) if e.type == "work.retried"]


def test_an_answer_after_the_question_was_answered_elsewhere_is_reported(asking: Project) -> None:
    compiled, _ = paused_on(asking)
    with SqliteEventStore(asking.root / "governor.db") as store:
        goals.answer(store, "g", "use postgres", actor="operator:dave")
    final = compiled.invoke(Command(resume="use mysql"), thread())
    assert final["decision"]["status"] == "succeeded"
    assert final["answer"] == {
        "recorded": False,
        "answer": "use mysql",
        "actor": "operator:langgraph",
        "reason": TOO_LATE,
    }
    assert [e.reason for e in events(asking) if e.type == "work.retried"] == ["use postgres"]
    again = compiled.invoke({"goal_id": "g"}, thread())  # a later run starts afresh
    assert again["answer"] is None


def test_an_answer_to_a_question_replaced_by_another_is_not_recorded_against_it(
    tmp_path: Path,
) -> None:
    """The worker asks twice; the first question is answered elsewhere and the second is
    pending when the graph's (late) answer to the first arrives: it must not answer the second."""
    second = {"status": "decision", "summary": "", "question": "Which port?"}
    project = project_with(
        tmp_path,
        [
            planner_script([{"reply": plan("a")}, {"reply": COMPLETE}]),
            {
                "name": "told",
                "match": ["role: worker", "port 5432"],
                "steps": [{"reply": done("a")}],
            },
            worker_script("a", [{"reply": QUESTION}, {"reply": second}]),
        ],
    )
    compiled, first = paused_on(project)
    assert first["question"].endswith("Which database should I use?")
    with SqliteEventStore(project.root / "governor.db") as store:
        goals.answer(store, "g", "use postgres", actor="operator:dave")
        runner = goals.runner(store, "g", _settings(project))
        goals.tick(runner)  # another driver runs attempt 2, which asks the second question
    paused = compiled.invoke(Command(resume="use mysql"), thread())
    assert paused["answer"]["recorded"] is False
    [pending] = paused["__interrupt__"]
    assert pending.value["question"].endswith("Which port?")
    assert pending.value["attempt"] == 2
    assert [e.reason for e in events(project) if e.type == "work.retried"] == ["use postgres"]
    final = compiled.invoke(Command(resume="port 5432"), thread())
    assert final["decision"]["status"] == "succeeded"
    assert final["answer"]["recorded"] is True


def _settings(project: Project) -> RunnerSettings:
    return RunnerSettings(
        workdir=project.root,
        env=dict(os.environ),
        state_dir=project.root / ".governor" / "scripted",
    )
