"""A running call is live on the page (issue 35 §3), in a real headless Chromium: its
elapsed time moves without a reload (the page polls and swaps its main part), it names
the driver that holds the lease, and the ledger's runtime counts the call so far.

Real processes: ``governor run`` drives a goal whose worker is a command that sleeps,
``governor ui`` serves the store.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tests.e2e.cli import Project, plan, planner_script
from tests.ui.serve import start_ui


def test_a_running_calls_elapsed_time_moves_and_counts_in_the_runtime(
    page: Any, tmp_path: Path
) -> None:
    project = Project(tmp_path)
    scenario = project.scenario("scenario.json", [planner_script([{"reply": plan("a")}])])
    sleeper = project.script("sleeper", "cat >/dev/null\nsleep 120\n")
    project.goal(
        "g", {"harness": "scripted", "args": [scenario]}, {"harness": "command", "args": [sleeper]}
    )
    run = project.popen("run", "g", "--quiet")
    ui = None
    try:
        deadline = time.monotonic() + 60
        while project.status("g")["status"] != "running":
            assert time.monotonic() < deadline, "the worker never started"
            time.sleep(0.2)
        ui = start_ui("--store", str(tmp_path / "governor.db"), "--refresh-s", "0.5")
        page.goto(ui.at("/goals/g"))
        row = page.locator("#running tr[data-call='p1-a attempt 1']")
        first = row.locator("td.elapsed").inner_text()
        assert row.locator("td.holder").inner_text().endswith(f":{run.pid}")
        page.wait_for_function(
            'was => document.querySelector("#running td.elapsed").textContent !== was',
            arg=first,
            timeout=30_000,
        )
        assert (
            "of calls still running"
            in page.locator("#ledger, section").filter(has_text="runtime").first.inner_text()
        )
    finally:
        run.terminate()  # governor run ends its agent and releases the lease
        run.wait(timeout=30)
        if ui is not None:
            ui.stop()
