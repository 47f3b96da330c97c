"""The page does what its advice says (issue 35 §3), in a real headless Chromium, each
action recorded with the acting person's name (``governor ui --users``):

* a planner stopped on the same failure again (``goal.same_failure``) is resumed with a
  reason from the blockers' **resume** form, and a ``governor run`` then finishes it;
* a worker's question is answered from the blocker's **answer** form;
* two goals' stopped items are retried at once from the list (ticked, one confirmation,
  one reason); a goal ticked with them whose only blocker is a question is refused alone;
* three goals are cancelled at once from the list (ticked, one confirmation).

Real processes: ``governor new`` and ``governor run`` with the scripted harness make the
goals, ``governor ui --allow-actions --users FILE`` serves them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from governor.store.sqlite import SqliteEventStore
from tests.e2e.cli import COMPLETE, Project, done, plan, planner_script, worker_script
from tests.ui.serve import Server, start_ui

ALICE = "alice-token-0123456789"
PROSE = {"reply": "Schema first, then the API: that is the plan I would propose."}
ASK = {"reply": {"status": "decision", "question": "Postgres or SQLite?"}}
CANCELLED = ("c1", "c2", "c3")
RETRIED = ("r1", "r2")
FAILS = {"effects": True, "stderr": "FAILED tests/test_api.py::test_get\n", "exit_code": 1}


@pytest.fixture
def served(tmp_path: Path) -> Any:
    """The goals, and ``governor ui`` over them as alice may act."""
    project = Project(tmp_path)
    same = project.scenario("scenario-same.json", [
        planner_script([PROSE, PROSE, {"reply": plan("a")}, {"reply": COMPLETE}]),
        worker_script("a", [{"reply": done("a")}]),
    ])  # fmt: skip
    asks = project.scenario("scenario-ask.json", [
        planner_script([{"reply": plan("a")}, {"reply": COMPLETE}]),
        worker_script("a", [ASK, {"reply": done("a")}]),
    ])  # fmt: skip
    agent = {"harness": "scripted"}
    project.goal("same", {**agent, "args": [same]}, {**agent, "args": [same]}, max_same_failures=2)
    project.goal("ask", {**agent, "args": [asks]}, {**agent, "args": [asks]})
    for goal_id in CANCELLED:
        project.goal(goal_id, {**agent, "args": []}, {**agent, "args": []})
    stops = project.scenario("scenario-stops.json", [
        planner_script([{"reply": plan("a")}, {"reply": COMPLETE}]),
        worker_script("a", [{"reply": FAILS}, {"reply": done("a")}]),
    ])  # fmt: skip
    for goal_id in RETRIED:
        project.goal(goal_id, {**agent, "args": [stops]}, {**agent, "args": [stops]},
                     retry_blocked=False)  # fmt: skip
    for goal_id in ("same", "ask", *RETRIED):
        project.gov("run", goal_id, "--quiet")
    for goal_id in RETRIED:
        assert project.status(goal_id)["status"] == "blocked"
    assert project.status("same")["rule"] == "goal.same_failure"
    assert project.status("ask")["blocked_on"] == "decision"
    users = tmp_path / "users.txt"
    users.write_text(f"alice {ALICE}\n")
    store = str(tmp_path / "governor.db")
    server = start_ui("--store", store, "--allow-actions", "--users", str(users))
    yield project, server
    server.stop()


def _last(project: Project, goal_id: str) -> Any:
    with SqliteEventStore(project.root / "governor.db", read_only=True) as store:
        return list(store.load(goal_id))[-1]


def _acted(page: Any, goal_id: str, verb: str) -> None:
    page.wait_for_url(f"**/goals/{goal_id}?done={verb.replace(' ', '%20')}")
    assert page.locator("#action-done").inner_text() == f"recorded: {verb}, by ui:alice"


def test_a_person_resumes_a_same_failure_stop_answers_and_bulk_cancels(
    page: Any, served: tuple[Project, Server]
) -> None:
    project, ui = served
    page.goto(f"{ui.url}?token={ALICE}")

    page.goto(ui.at("/goals/same"))
    stop = page.locator("#blockers li[data-kind=stop]")
    stop.locator("textarea").fill("the prompt now asks for JSON only")
    stop.locator("button[value=resume]").click()
    _acted(page, "same", "resume")
    last = _last(project, "same")
    assert (last.type, last.actor, last.reason) == (
        "goal.resumed", "ui:alice", "the prompt now asks for JSON only"
    )  # fmt: skip
    assert project.gov("run", "same", "--quiet").returncode == 0
    assert project.status("same")["status"] == "succeeded"

    page.goto(ui.at("/goals/ask"))
    question = page.locator("#blockers li[data-kind=question]")
    assert question.locator("blockquote").inner_text() == "Postgres or SQLite?"
    question.locator("textarea").fill("SQLite")
    question.locator("button[value='work retry']").click()
    _acted(page, "ask", "work retry")
    last = _last(project, "ask")
    assert (last.type, last.actor, last.reason) == ("work.retried", "ui:alice", "SQLite")

    page.goto(ui.url)
    for goal_id in (*RETRIED, "ask"):
        page.locator(f"input.tick[value={goal_id}]").check()
    page.locator("#bulk-reason").fill("the API's fixture is fixed")
    page.locator("#bulk input[name=confirm]").check()
    page.locator("#bulk button[value=retry]").click()
    page.wait_for_url("**/?done=retry*")
    assert page.locator("#action-done").inner_text() == "recorded: retry of 2 goals, by ui:alice"
    assert "ask: no item of it waits for a retry" in page.locator("#action-error").inner_text()
    for goal_id in RETRIED:
        last = _last(project, goal_id)
        assert (last.type, last.actor, last.work_id, last.reason) == (
            "work.retried", "ui:alice", "p1-a", "the API's fixture is fixed"
        )  # fmt: skip
        assert project.gov("run", goal_id, "--quiet").returncode == 0
        assert project.status(goal_id)["status"] == "succeeded"
    assert _last(project, "ask").type == "work.retried"  # alice's answer, nothing more

    page.goto(ui.url)
    for goal_id in CANCELLED:
        page.locator(f"input.tick[value={goal_id}]").check()
    page.locator("#bulk input[name=confirm]").check()
    page.locator("#bulk button[value=cancel]").click()
    page.wait_for_url("**/?done=cancel*")
    assert page.locator("#action-done").inner_text() == "recorded: cancel of 3 goals, by ui:alice"
    for goal_id in CANCELLED:
        last = _last(project, goal_id)
        assert (last.type, last.actor) == ("goal.cancelled", "ui:alice")
    shown = json.loads(project.gov("status", "ask", "--json").stdout)
    assert shown["status"] != "cancelled"  # only the goals ticked
