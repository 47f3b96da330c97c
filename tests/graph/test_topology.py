"""The planning graph's topology is pinned, and its routing is a pure function of the decision."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from governor.core.route import route
from governor.drive.runner import Runner, RunnerSettings
from governor.graph.build import build_graph, node_of
from governor.store.memory import MemoryEventStore
from tests.story import Story, planned, proposed, requested, started


def compiled_edges(tmp_path: Path) -> set[tuple[str, str]]:
    story = Story()
    store = MemoryEventStore()
    store.append("g", story.events, expected_seq=0)
    runner = Runner(store, "g", RunnerSettings(workdir=tmp_path, env={}))
    graph = build_graph(runner).get_graph()
    return {(edge.source, edge.target) for edge in graph.edges}


def test_the_graph_is_assess_then_one_node_then_assess(tmp_path: Path) -> None:
    assert compiled_edges(tmp_path) == {
        ("__start__", "assess"),
        ("assess", "plan"),
        ("assess", "apply"),
        ("assess", "dispatch"),
        ("assess", "accept"),
        ("assess", "park"),
        ("assess", "resume"),
        ("assess", "wait"),
        ("assess", "__end__"),
        ("plan", "assess"),
        ("apply", "assess"),
        ("dispatch", "assess"),
        ("accept", "assess"),
        ("park", "assess"),
        ("resume", "assess"),
        ("wait", "assess"),
        ("wait", "__end__"),
    }


ROUTES = {
    "a new goal plans": (Story, "plan"),
    "a proposal is applied": (proposed, "apply"),
    "ready work is dispatched": (planned, "dispatch"),
    "a passing attempt is accepted": (lambda: planned().attempt("p1-a", "succeeded"), "accept"),
    "a cooldown is waited out": (
        lambda: planned().attempt("p1-a", failure_class="upstream"),
        "wait",
    ),
    "a lost plan is continued by the plan node": (requested, "plan"),
    "a lost attempt is continued by the dispatch node": (started, "dispatch"),
    "a stopped goal ends": (lambda: planned().op("cancel_goal"), "__end__"),
}


@pytest.mark.parametrize(("build", "node"), ROUTES.values(), ids=ROUTES.keys())
def test_route(build: Callable[[], Story], node: str) -> None:
    assert node_of(route(build().decision())) == node
