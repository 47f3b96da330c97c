"""A goal waiting on a person's grant, in the LangGraph graph (SPEC §13.7): its request for
more budget is an ``interrupt()`` (Agent Inbox's ``HumanInterrupt``), and
``Command(resume=…)`` grants or declines it as ``governor grant``/``governor decline`` do —
the goal moves (a pool's request granted on the pool too), a decline leaves it stopped, an
ignore leaves the request standing, a bad amount is refused with nothing recorded, and an
answer given elsewhere first is reported."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt.interrupt import HumanInterrupt
from langgraph.types import Command
from pydantic import TypeAdapter

from governor.drive import grants
from governor.graph.asking import TOO_LATE
from governor.graph.deploy import GovernorRunError
from governor.graph.granting import AS_ASKED
from governor.store.sqlite import SqliteEventStore
from tests.e2e.cli import COMPLETE, Project, done, plan, planner_script, worker_script
from tests.e2e.test_pools import ok as pool_ok
from tests.e2e.test_pools import pooled_goal
from tests.graph.test_deploy import events, graph, project_with, thread

NOBODY = {"auto_usd": 0.0, "auto_attempts": 0}
"""A grants policy under which governor grants nothing by itself: a person must."""


@pytest.fixture
def short(tmp_path: Path) -> Project:
    """Two items, b after a, and a budget of one charged attempt: the goal asks for one more."""
    return project_with(
        tmp_path,
        [
            planner_script([{"reply": plan("a", "b", deps={"b": ["a"]})}, {"reply": COMPLETE}]),
            worker_script("a", [{"effects": True, "reply": done("a")}]),
            worker_script("b", [{"effects": True, "reply": done("b")}]),
        ],
        max_total_attempts=1,
        grants=NOBODY,
    )


def paused_on(project: Project) -> tuple[Any, dict[str, Any]]:
    compiled = graph(project, checkpointer=InMemorySaver())
    paused = compiled.invoke({"goal_id": "g"}, thread())
    [pending] = paused["__interrupt__"]
    return compiled, pending.value


def types(project: Project) -> list[str]:
    return [e.type for e in events(project)]


def test_the_request_is_an_agent_inbox_interrupt_naming_the_commands(short: Project) -> None:
    _, value = paused_on(short)
    TypeAdapter(HumanInterrupt).validate_python(value)
    assert value["config"] == {
        "allow_ignore": True,
        "allow_respond": True,
        "allow_edit": True,
        "allow_accept": True,
    }
    assert value["action_request"] == {
        "action": "Grant --attempts 1 to g?",
        "args": {"usd": None, "attempts": 1, "expires": None, "reason": ""},
    }
    assert (value["goal_id"], value["budget"], value["attempts"]) == ("g", "total_attempts", 1)
    assert value["grant_with"] == "governor grant g --attempts 1 --reason REASON"
    assert value["decline_with"] == "governor decline g --reason REASON"
    assert "total_attempts budget is spent" in value["request"]
    assert value["description"].startswith(value["request"])
    assert types(short).count("budget.requested") == 1
    assert "budget.granted" not in types(short)


def test_command_resume_grants_it_and_the_goal_goes_on_to_success(short: Project) -> None:
    compiled, _ = paused_on(short)
    final = compiled.invoke(
        Command(resume={"grant": {"attempts": 2, "expires": "2h", "reason": "ship it"}}),
        thread(),
        context={"actor": "operator:dana"},
    )
    assert final["decision"]["status"] == "succeeded"
    assert final["answer"] == {
        "recorded": True,
        "answer": "ship it",
        "actor": "operator:dana",
        "verb": "grant",
        "usd": None,
        "attempts": 2,
        "expires_s": 7200.0,
    }
    [granted] = [e for e in events(short) if e.type == "budget.granted"]
    assert (granted.actor, granted.reason, granted.attempts) == ("operator:dana", "ship it", 2)
    assert granted.expires_at is not None
    assert granted.rule is None
    assert types(short).count("attempt.started") == 2


def test_an_inbox_accept_grants_the_amount_asked_and_the_next_stop_asks_again(
    short: Project,
) -> None:
    compiled, _ = paused_on(short)
    paused = compiled.invoke(Command(resume=[{"type": "accept", "args": None}]), thread())
    [granted] = [e for e in events(short) if e.type == "budget.granted"]
    assert (granted.actor, granted.reason, granted.attempts) == ("operator:langgraph", AS_ASKED, 1)
    # the one attempt granted ran b; the budget is spent again (2 of 2): asked anew
    assert types(short).count("attempt.started") == 2
    [pending] = paused["__interrupt__"]
    assert pending.value["request"].endswith("(2 charged of 2)")
    final = compiled.invoke(Command(resume=[{"type": "accept", "args": None}]), thread())
    assert final["decision"]["status"] == "succeeded"
    assert types(short).count("budget.granted") == 2


def test_a_decline_leaves_the_goal_stopped_and_is_not_asked_again(short: Project) -> None:
    compiled, _ = paused_on(short)
    final = compiled.invoke(Command(resume={"decline": {"reason": "not this week"}}), thread())
    assert final["outcome"] == "stopped"
    assert (final["decision"]["status"], final["decision"]["blocked_on"]) == (
        "blocked",
        "operator",
    )
    assert final["answer"]["verb"] == "decline"
    [declined] = [e for e in events(short) if e.type == "budget.declined"]
    assert declined.reason == "not this week"
    again = graph(short, checkpointer=InMemorySaver()).invoke({"goal_id": "g"}, thread("u"))
    assert "__interrupt__" not in again
    assert again["outcome"] == "stopped"


def test_an_inbox_response_declines_it_with_its_text(short: Project) -> None:
    compiled, _ = paused_on(short)
    compiled.invoke(Command(resume=[{"type": "response", "args": "too dear"}]), thread())
    assert [e.reason for e in events(short) if e.type == "budget.declined"] == ["too dear"]


def test_an_ignore_leaves_the_request_standing_and_ends_the_run(short: Project) -> None:
    compiled, _ = paused_on(short)
    final = compiled.invoke(Command(resume={"type": "ignore"}), thread())
    assert final["outcome"] == "stopped"
    assert final["answer"]["recorded"] is False
    assert final["answer"]["ignored"] is True
    assert not {"budget.granted", "budget.declined"} & set(types(short))


@pytest.mark.parametrize(
    ("resume", "says"),
    [
        ({"grant": {"attempts": -1, "reason": "x"}}, "--attempts"),
        ({"grant": {"usd": "lots", "reason": "x"}}, "--usd: 'lots' is not a number"),
        ({"grant": {"expires": "soonish", "reason": "x"}}, "--expires"),
        ({"grant": {"attempts": 1}}, "needs a reason"),
        ("yes", "answer a request for more budget with"),
    ],
    ids=["a negative amount", "an amount that is no number", "an expiry that is no duration",
         "no reason", "a bare string"],
)  # fmt: skip
def test_a_bad_answer_is_refused_in_one_line_and_nothing_is_recorded(
    short: Project, resume: Any, says: str
) -> None:
    compiled, _ = paused_on(short)
    before = len(events(short))
    with pytest.raises(GovernorRunError, match=says) as raised:
        compiled.invoke(Command(resume=resume), thread())
    assert "\n" not in str(raised.value)
    assert len(events(short)) == before


def test_a_grant_made_elsewhere_first_is_kept_and_the_late_answer_reported(
    short: Project,
) -> None:
    compiled, _ = paused_on(short)
    with SqliteEventStore(short.root / "governor.db") as store:
        answer = grants.Answer("from the CLI", "operator:dave", attempts=2)
        grants.grant_goal(store, "g", answer, clock=lambda: events(short)[-1].at)
    final = compiled.invoke(Command(resume={"decline": {"reason": "no"}}), thread())
    assert final["decision"]["status"] == "succeeded"
    assert final["answer"] == {
        "recorded": False,
        "answer": "no",
        "actor": "operator:langgraph",
        "reason": TOO_LATE,
    }
    assert [e.reason for e in events(short) if e.type == "budget.granted"] == ["from the CLI"]
    assert "budget.declined" not in types(short)


def test_a_pools_request_granted_by_command_resume_is_granted_on_the_pool_too(
    tmp_path: Path,
) -> None:
    project = Project(tmp_path)
    pool_ok(project, "pool", "set", "small", "--usd", "0.15")  # total: only a grant helps
    pooled_goal(project, "g", ["small"])
    compiled, value = paused_on(project)
    assert (value["budget"], value["usd"]) == ("pool:small", 0.1)
    assert value["grant_with"] == "governor grant g --usd 0.1 --reason REASON"
    final = compiled.invoke(
        Command(resume={"grant": {"usd": 1, "reason": "the release needs it"}}), thread()
    )
    assert final["decision"]["status"] == "succeeded"
    listed = pool_ok(project, "pool", "show", "small", "--events").splitlines()
    [granted] = [e for e in map(json.loads, listed) if e["type"] == "pool.granted"]
    assert (granted["actor"], granted["reason"]) == ("operator:langgraph", "the release needs it")
    assert (granted["goal_id"], granted["figure"]["usd"]) == ("g", 1.0)
    [on_goal] = [e for e in events(project) if e.type == "budget.granted"]
    assert (on_goal.budget, on_goal.usd, on_goal.actor) == ("pool:small", 1.0, "operator:langgraph")
