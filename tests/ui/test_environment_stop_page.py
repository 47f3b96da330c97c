"""The page clears an environment stop its advice names (issue 35 §3), in a real headless
Chromium: a worker whose vendor refused its credential (401: a precondition no driver
re-probes) is let go on from the blocker's form with what changed, recorded as the
acting person's ``work retry``, and a ``governor run`` then finishes the goal.

Real processes: ``governor new`` and ``governor run`` with the scripted harness (its
worker plays a vendor's 401 envelope), ``governor ui --allow-actions --users FILE``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from governor.store.sqlite import SqliteEventStore
from tests.e2e.cli import COMPLETE, Project, done, plan, planner_script, worker_script
from tests.ui.serve import start_ui

ALICE = "alice-token-0123456789"


def test_a_person_lets_an_item_stopped_on_a_refused_credential_go_on(
    page: Any, tmp_path: Path
) -> None:
    project = Project(tmp_path)
    scenario = project.scenario("s.json", [
        planner_script([{"reply": plan("a")}, {"reply": COMPLETE}]),
        worker_script("a", [{"vendor_error": {"status": 401}}, {"reply": done("a")}]),
    ])  # fmt: skip
    agent = {"harness": "scripted", "args": [scenario]}
    project.goal("env", agent, agent)
    project.gov("run", "env", "--quiet")
    shown = project.status("env")
    assert (shown["status"], shown["blocked_on"]) == ("blocked", "environment")
    users = tmp_path / "users.txt"
    users.write_text(f"alice {ALICE}\n")
    ui = start_ui(
        "--store", str(tmp_path / "governor.db"), "--allow-actions", "--users", str(users)
    )
    try:
        page.goto(f"{ui.url}?token={ALICE}")
        page.goto(ui.at("/goals/env"))
        stop = page.locator("#blockers li[data-kind=precondition]")
        assert stop.get_attribute("data-work") == "p1-a"
        stop.locator("textarea").fill("the API key is renewed")
        stop.locator("button[value='work retry']").click()
        page.wait_for_url("**/goals/env?done=work%20retry")
        assert page.locator("#action-done").inner_text() == "recorded: work retry, by ui:alice"
    finally:
        ui.stop()
    with SqliteEventStore(tmp_path / "governor.db", read_only=True) as store:
        last = list(store.load("env"))[-1]
    assert (last.type, last.actor, last.work_id, last.reason) == (
        "work.retried", "ui:alice", "p1-a", "the API key is renewed"
    )  # fmt: skip
    assert project.gov("run", "env", "--quiet").returncode == 0
    assert project.status("env")["status"] == "succeeded"
