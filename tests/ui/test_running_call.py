"""A running call is live on the page (issue 35 §3), in a real headless Chromium: its
elapsed time and its agent's last line move without a reload (the page polls and swaps
its main part; the runner writes the line into the agent's row at its heartbeat), it
names the driver that holds the lease, and the ledger's runtime counts the call so far.

Real processes: ``governor run`` drives a goal whose worker is a command that sleeps,
``governor ui`` serves the store.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tests.e2e.cli import Project, plan, planner_script
from tests.ui.serve import start_ui


def test_a_running_calls_elapsed_time_and_last_line_move_and_count_in_the_runtime(
    page: Any, tmp_path: Path
) -> None:
    project = Project(tmp_path)
    scenario = project.scenario("scenario.json", [planner_script([{"reply": plan("a")}])])
    go = tmp_path / "go"
    # The worker says one thing, waits for the test to see it, says another (with
    # back-quotes and HTML: agent text, to be shown quoted), then sleeps.
    sleeper = project.script(
        "sleeper",
        "cat >/dev/null\necho 'warming up the `cache`'\n"
        f"while [ ! -f {go} ]; do sleep 0.1; done\n"
        "echo 'FAILED tests/test_x.py::test_y <b>bold</b>'\necho 'tidying up'\nsleep 120\n",
    )
    project.goal(
        "g", {"harness": "scripted", "args": [scenario]}, {"harness": "command", "args": [sleeper]}
    )
    run = project.popen("run", "g", "--quiet", "--lease-ttl", "3")
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
        line = row.locator("td.last-line .agent-text")
        page.wait_for_function(
            'want => document.querySelector("#running td.last-line")?.textContent.includes(want)',
            arg="warming up the 'cache'",
            timeout=30_000,
        )
        assert line.inner_text() == "“warming up the 'cache'”"
        assert row.locator("td.last-line code").count() == 0
        go.touch()
        # the telling line (a failing test) wins over the last one, HTML shown as text
        page.wait_for_function(
            'want => document.querySelector("#running td.last-line")?.textContent.includes(want)',
            arg="FAILED tests/test_x.py::test_y <b>bold</b>",
            timeout=30_000,
        )
        assert row.locator("td.last-line b").count() == 0
        assert (
            "of calls still running"
            in page.locator("#ledger, section").filter(has_text="runtime").first.inner_text()
        )
    finally:
        run.terminate()  # governor run ends its agent and releases the lease
        run.wait(timeout=30)
        if ui is not None:
            ui.stop()
