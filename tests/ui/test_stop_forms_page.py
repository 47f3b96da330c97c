"""The page clears the stops its advice names (issue 35 §3), in a real headless Chromium:

* an environment stop: a worker whose vendor refused its credential (401: a
  precondition no driver re-probes);
* an upstream-bound stop: a worker refused by an outside service (503, uncharged) as
  many times in a row as ``max_uncharged_attempts`` allows;

each is let go on from the blocker's form with what changed, recorded as the acting
person's ``work retry``, and a ``governor run`` then finishes the goal.

Real processes: ``governor new`` and ``governor run`` with the scripted harness (its
worker plays the vendor's envelope), ``governor ui --allow-actions --users FILE``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from governor.store.sqlite import SqliteEventStore
from tests.e2e.cli import COMPLETE, Project, done, plan, planner_script, worker_script
from tests.ui.serve import start_ui

ALICE = "alice-token-0123456789"


STOPS = {
    "environment": ({"status": 401}, {}, "precondition"),
    "upstream": ({"status": 503, "retry_after_s": 0}, {"max_uncharged_attempts": 1}, "stop"),
}


@pytest.mark.parametrize("blocked_on", list(STOPS))
def test_a_person_lets_a_stopped_item_go_on_from_its_blocker_form(
    page: Any, tmp_path: Path, blocked_on: str
) -> None:
    error, policy, kind = STOPS[blocked_on]
    project = Project(tmp_path)
    scenario = project.scenario("s.json", [
        planner_script([{"reply": plan("a")}, {"reply": COMPLETE}]),
        worker_script("a", [{"vendor_error": error}, {"reply": done("a")}]),
    ])  # fmt: skip
    agent = {"harness": "scripted", "args": [scenario]}
    project.goal("env", agent, agent, **policy)
    project.gov("run", "env", "--quiet", "--max-wait", "5")
    shown = project.status("env")
    assert (shown["status"], shown["blocked_on"]) == ("blocked", blocked_on)
    users = tmp_path / "users.txt"
    users.write_text(f"alice {ALICE}\n")
    ui = start_ui(
        "--store", str(tmp_path / "governor.db"), "--allow-actions", "--users", str(users)
    )
    try:
        page.goto(f"{ui.url}?token={ALICE}")
        page.goto(ui.at("/goals/env"))
        stop = page.locator(f"#blockers li[data-kind={kind}]")
        assert stop.get_attribute("data-work") == "p1-a"
        stop.locator("textarea").fill("the vendor is fixed")
        stop.locator("button[value='work retry']").click()
        page.wait_for_url("**/goals/env?done=work%20retry")
        assert page.locator("#action-done").inner_text() == "recorded: work retry, by ui:alice"
    finally:
        ui.stop()
    with SqliteEventStore(tmp_path / "governor.db", read_only=True) as store:
        last: Any = list(store.load("env"))[-1]
    assert (last.type, last.actor, last.work_id, last.reason) == (
        "work.retried", "ui:alice", "p1-a", "the vendor is fixed"
    )  # fmt: skip
    assert project.gov("run", "env", "--quiet").returncode == 0
    assert project.status("env")["status"] == "succeeded"
