"""Fixtures of the graph tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.cli import COMPLETE, Project, done, plan, planner_script, worker_script
from tests.graph.test_deploy import QUESTION, project_with


@pytest.fixture
def asking(tmp_path: Path) -> Project:
    """A worker that asks which database to use, and is done once told."""
    return project_with(
        tmp_path,
        [
            planner_script([{"reply": plan("a")}, {"reply": COMPLETE}]),
            {
                "name": "told",
                "match": ["role: worker", "use postgres"],
                "steps": [{"reply": done("a")}],
            },
            worker_script("a", [{"reply": QUESTION}]),
        ],
    )
