"""The web view answers a Temporal-driven goal's question through its workflow's update.

``governor ui --allow-actions`` over a project whose goal Temporal drives: the goal blocks
on a worker's question; the page's answer form (a real POST with the access cookie, the
Origin and a form token) reaches the workflow as ``governor.verb``, the workflow records
the answer as the view's actor, and the goal goes on to succeed. A verb the rules refuse
comes back on the page as the CLI's one line, and nothing is recorded.
"""

from __future__ import annotations

import html
import re

from tests.e2e.cli import MILESTONE_COMPLETE, done, plan, planner_script, worker_script
from tests.temporal.conftest import TemporalProject
from tests.temporal.test_verbs import scripted, start
from tests.ui.serve import start_ui
from tests.ui.test_acting_http import Browser

ERROR = re.compile(r'<p class="error" id="action-error" role="alert">([^<]*)</p>')


def test_the_web_view_answers_a_temporal_goals_question(project: TemporalProject) -> None:
    question = {"status": "decision", "question": "Which database?", "summary": "need a choice"}
    scripts = [
        MILESTONE_COMPLETE,
        planner_script([{"reply": plan("a")}]),
        worker_script("a", [{"reply": question}, {"reply": done("a")}]),
    ]
    agents = scripted(project, scripts)
    start(project, "w", agents, agents)
    project.worker()
    project.wait_status("w", {"blocked"}, blocked_on="decision")
    store = project.env["GOVERNOR_STORE"]
    server = start_ui("--store", store, "--allow-actions", "--actor", "alice")
    try:
        browser = Browser(server)
        seq = project.status("w")["seq"]
        refused = {"csrf": browser.form_token("w"), "form": "plan", "verb": "plan approve"}
        status, _, page = browser.post("w", {**refused, "plan": "p9"})
        assert status == 404, page
        shown = ERROR.search(page)
        assert shown is not None
        assert html.unescape(shown.group(1)).startswith("error: ")
        assert project.status("w")["seq"] == seq

        token = browser.form_token("w")
        fields = {"csrf": token, "form": "answer", "verb": "answer", "reason": "PostgreSQL"}
        status, _, page = browser.post("w", fields)
        assert status == 303, page
        project.wait_status("w", {"succeeded"})
    finally:
        server.stop()
    answers = [e for e in project.events("w") if e["type"] == "work.retried"]
    assert [(e["reason"], e["actor"]) for e in answers] == [("PostgreSQL", "ui:alice")]
