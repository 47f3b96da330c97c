"""``governor ui --temporal-ui URL``: a goal Temporal drives links to its workflow's page."""

from __future__ import annotations

import urllib.request
from contextlib import closing
from pathlib import Path

from governor.store import open_store
from governor.temporal.names import workflow_id_of
from tests.e2e.cli import Project
from tests.ui.serve import start_ui


def page(url: str) -> str:
    with urllib.request.urlopen(url, timeout=60) as response:
        return str(response.read().decode())


def test_the_goal_page_links_to_the_workflow_of_a_goal_temporal_drives(tmp_path: Path) -> None:
    project = Project(tmp_path)
    agent = {"harness": "command", "args": ["/bin/true"]}
    project.goal("driven", agent, agent)
    project.goal("local", agent, agent)
    db = str(tmp_path / "governor.db")
    with closing(open_store(db)) as store:
        store.acquire_lease("driven", "temporal:prod@temporal.internal:7233", ttl_s=600)
        workflow = workflow_id_of(store, "driven")
    assert workflow.endswith(".driven")
    assert len(workflow) == len("0123456789.driven")
    server = start_ui(
        "--store", db, "--port", "0", "--temporal-ui", "http://temporal.internal:8233/"
    )
    try:
        driven = page(server.at("/goals/driven"))
        local = page(server.at("/goals/local"))
    finally:
        server.stop()
    href = f'href="http://temporal.internal:8233/namespaces/prod/workflows/{workflow}"'
    assert href in driven
    assert "Driven by Temporal (namespace prod at temporal.internal:7233)" in driven
    assert "Driven by Temporal" not in local
