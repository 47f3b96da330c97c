"""Every blocker on the page (issue 35 §2), in a real headless Chromium: a goal held by a
worker's question and by another item's missing binary shows both, the binary first (it
holds a dependant too); the person answers from the page, installs the binary, and the
goal finishes under ``governor run`` with no further command.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.e2e.cli import done
from tests.e2e.test_blockers import AGENT, QUESTION, two_blockers
from tests.ui.serve import start_ui

TOKEN = "alice-token-0123456789"


def test_the_page_shows_both_blockers_and_answering_and_installing_finishes_it(
    page: Any, tmp_path: Path
) -> None:
    project = two_blockers(tmp_path)
    users = tmp_path / "users.txt"
    users.write_text(f"alice {TOKEN}\n")
    ui = start_ui(
        "--store", str(tmp_path / "governor.db"), "--allow-actions", "--users", str(users)
    )
    try:
        page.goto(f"{ui.url}?token={TOKEN}")
        page.goto(ui.at("/goals/g"))
        kinds = page.locator("#blockers > ol > li").evaluate_all(
            "items => items.map(i => i.dataset.kind + ' ' + i.dataset.work)"
        )
        assert kinds == ["precondition p1-b", "question p1-a"]
        missing = page.locator("#blockers li[data-kind=precondition]")
        assert "governor serve" in missing.locator(".todo").inner_text()
        assert missing.locator("form").count() == 0  # installing it is enough
        question = page.locator("#blockers li[data-kind=question]")
        assert question.locator("blockquote").inner_text() == QUESTION  # data, not a command
        question.locator("textarea").fill("SQLite")
        question.locator("button[value='work retry']").click()
        page.wait_for_url("**/goals/g?done=work%20retry")
        assert page.locator("#action-done").inner_text() == "recorded: work retry, by ui:alice"
    finally:
        ui.stop()
    agent = tmp_path / "agents" / AGENT
    agent.write_text(f"#!/bin/sh\ncat >/dev/null\nprintf '%s\\n' '{json.dumps(done('b'))}'\n")
    agent.chmod(0o755)
    finished = project.gov("run", "g", "--quiet")
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert project.status("g")["status"] == "succeeded"
