"""A stream whose last rows were deleted is corruption, never a silent rewind (issue 9, item 9).

A goal runs to success; its last rows are then deleted behind the store's back. Every
command that reads the goal exits 7 with one line naming what is missing, and ``tick``
does not plan the finished work again.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from tests.e2e.cli import COMPLETE, Project, done, plan, planner_script, worker_script


@pytest.mark.parametrize("command", ["tick", "run", "status", "export", "events"])
def test_a_stream_missing_its_last_rows_is_corrupt_for_every_command(
    tmp_path: Path, command: str
) -> None:
    project = Project(tmp_path)
    scenario = project.scenario(
        "scenario.json",
        [
            planner_script([{"reply": plan("a")}, {"reply": COMPLETE}]),
            worker_script("a", [{"reply": done("a")}]),
        ],
    )
    agents = {"harness": "scripted", "args": [scenario]}
    project.goal("g", agents, agents)
    assert project.gov("run", "g", "--quiet").returncode == 0
    n = len(project.events("g"))
    db = project.root / "governor.db"
    with closing(sqlite3.connect(db)) as raw, raw:
        raw.execute("DELETE FROM events WHERE goal_id = 'g' AND seq > ?", (n - 3,))

    result = project.gov(command, "g")
    assert result.returncode == 7, (result.stdout, result.stderr)
    assert result.stderr.strip().count("\n") == 0, result.stderr
    assert f"the stream ends at event {n - 3}, but the store recorded {n}" in result.stderr
    assert "Traceback" not in result.stderr
    with closing(sqlite3.connect(db)) as raw:
        (rows,) = raw.execute("SELECT COUNT(*) FROM events WHERE goal_id = 'g'").fetchone()
    assert rows == n - 3  # nothing was planned or written again
