"""The LangGraph deployment: ``langgraph.json`` names a factory that builds the planning
graph over the event store, and ``graph.invoke`` drives a goal to its end with it."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest
from langgraph.graph.state import CompiledStateGraph

from governor.core.history import check_history
from governor.drive import goals
from governor.graph.deploy import make_graph
from governor.store.sqlite import SqliteEventStore
from tests.e2e.cli import COMPLETE, Project, done, plan, planner_script, worker_script

ROOT = Path(__file__).resolve().parents[2]
OUTAGE = {"vendor_error": {"status": 503, "message": "HTTP/1.1 503 Service Unavailable"}}


@pytest.fixture
def project(tmp_path: Path) -> Project:
    project = Project(tmp_path)
    scenario = project.scenario(
        "scenario.json",
        [
            planner_script([OUTAGE, {"reply": plan("a")}, {"reply": COMPLETE}]),
            worker_script("a", [{"effects": True, "reply": done("a")}]),
        ],
    )
    agents = {"harness": "scripted", "args": [scenario]}
    path = project.goal_file(
        "g", agents, agents, upstream_backoff={"initial_s": 0.05, "factor": 1, "max_s": 0.05}
    )
    with SqliteEventStore(tmp_path / "governor.db") as store:
        goals.create(store, path)
    return project


def config(project: Project, **more: object) -> dict[str, object]:
    url = f"sqlite:///{project.root / 'governor.db'}"
    return {"configurable": {"store": url, "workdir": str(project.root), **more}}


def test_langgraph_json_names_the_factory_of_a_compiled_graph() -> None:
    spec = json.loads((ROOT / "langgraph.json").read_text())
    assert spec["dependencies"] == ["."]  # the package is installed, so a module path works
    module, _, name = spec["graphs"]["governor"].partition(":")
    graph = getattr(importlib.import_module(module), name)({"configurable": {"store": "memory:"}})
    assert isinstance(graph, CompiledStateGraph)
    edges = {(e.source, e.target) for e in graph.get_graph().edges}
    assert {("__start__", "assess"), ("assess", "dispatch"), ("dispatch", "assess")} <= edges


def test_invoke_drives_a_goal_through_an_outage_to_success_and_the_store_keeps_it(
    project: Project,
) -> None:
    graph = make_graph(config(project))
    final = graph.invoke({"goal_id": "g"})
    assert final["outcome"] == "stopped"
    assert final["decision"]["status"] == "succeeded"
    assert final["decision"]["ledger"]["replans"]["uncharged"] == 1
    with SqliteEventStore(project.root / "governor.db") as store:
        events = list(store.load("g"))
        assert store.current_lease("g") is None  # every step released it
    assert len(list(check_history(enumerate(events, 1)))) == len(events)
    assert [e.type for e in events].count("attempt.started") == 1
    again = make_graph(config(project)).invoke({"goal_id": "g"})  # the store is the truth
    assert (again["outcome"], again["steps"]) == ("stopped", 1)


def test_the_goal_may_come_from_the_config_and_progress_is_streamed(project: Project) -> None:
    graph = make_graph(config(project, goal_id="g"))
    chunks = list(graph.stream({}, stream_mode=["custom", "updates"]))
    progress = [c["progress"] for mode, c in chunks if mode == "custom"]
    assert any("plan p1 (initial) requested" in p for p in progress)
    assert [c for mode, c in chunks if mode == "updates"][-1]["assess"]["outcome"] == "stopped"


def test_a_goal_held_by_another_runner_ends_the_run_naming_the_holder(project: Project) -> None:
    with SqliteEventStore(project.root / "governor.db") as store:
        store.acquire_lease("g", "worker-7", ttl_s=60)
        final = make_graph(config(project)).invoke({"goal_id": "g"})
    assert (final["outcome"], final["holder"]) == ("leased", "worker-7")


def test_without_a_goal_id_the_run_fails_with_a_clear_error(project: Project) -> None:
    with pytest.raises(Exception, match="give the goal to drive"):
        make_graph(config(project)).invoke({})
