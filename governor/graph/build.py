"""The planning graph: ``assess`` -> ``plan`` | ``apply`` | ``dispatch`` | ``accept`` | ``wait`` | END.

Rules (SPEC §8):
    * ``assess`` re-derives the view from the store and takes the core's decision; the
      route is a pure function of that decision. Every other node appends events and
      returns to ``assess``.
    * The graph holds no durable state: the event store is the truth, and a graph built
      anew over the same store continues where the last one stopped. No checkpointer.
    * Building is a factory with no import-time side effects.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, TypedDict

from langgraph.graph import END, START, StateGraph

from governor.core.decision import Decision
from governor.drive.runner import ACTING, Runner

Outcome = Literal["stopped", "waiting", "review", "steps"]
NODES = (*ACTING, "wait")


class GraphState(TypedDict, total=False):
    decision: Decision
    outcome: Outcome
    steps: int


def route(decision: Decision) -> str:
    """The node that acts on a decision (END when nothing is left to do without a person)."""
    action = decision.next_action
    if action in ("plan", "apply", "accept"):
        return action
    if action == "run":
        return "dispatch"
    if decision.status == "running":
        return "plan" if decision.rule == "goal.3" else "dispatch"
    if decision.status == "waiting":
        return "wait"
    return END


@dataclass(slots=True)
class Wait:
    """How long a run may sleep through a cooldown before it returns ``waiting``."""

    max_wait_s: float
    clock: Callable[[], datetime]
    sleep: Callable[[float], None]


def build_graph(runner: Runner, wait: Wait, *, max_steps: int = 10_000) -> Any:
    """Compile the planning graph for one runner (one goal, one lease)."""

    def assess(state: GraphState) -> GraphState:
        runner.refresh()
        decision = runner.settle()
        steps = state.get("steps", 0) + 1
        outcome: Outcome | None = None
        if route(decision) == END:
            outcome = "review" if decision.status == "awaiting_review" else "stopped"
        elif steps > max_steps:
            outcome = "steps"
        return {"decision": decision, "steps": steps, **({"outcome": outcome} if outcome else {})}

    def act(name: str) -> Callable[[GraphState], GraphState]:
        method = getattr(runner, name)

        def node(state: GraphState) -> GraphState:
            method(state["decision"])
            return {}

        node.__name__ = name
        return node

    def wait_node(state: GraphState) -> GraphState:
        decision = state["decision"]
        if decision.not_before is None:
            return {"outcome": "waiting"}
        delay = (decision.not_before - wait.clock()).total_seconds()
        if delay > wait.max_wait_s:
            return {"outcome": "waiting"}
        runner.progress(
            f"waiting {max(delay, 0):.1f}s for the outside service (until the cooldown ends)"
        )
        wait.sleep(max(delay, 0.0))
        return {}

    def after_assess(state: GraphState) -> str:
        return END if state.get("outcome") else route(state["decision"])

    graph: Any = StateGraph(GraphState)  # Any at the LangGraph boundary: its node types are generic
    graph.add_node("assess", assess)
    for name in ACTING:
        graph.add_node(name, act(name))
    graph.add_node("wait", wait_node)
    graph.add_edge(START, "assess")
    graph.add_conditional_edges("assess", after_assess, [*NODES, END])
    for name in ACTING:
        graph.add_edge(name, "assess")
    graph.add_conditional_edges(
        "wait", lambda s: END if s.get("outcome") else "assess", ["assess", END]
    )
    return graph.compile()


def drive(
    runner: Runner, wait: Wait, *, max_steps: int = 10_000
) -> Iterator[tuple[str, GraphState]]:
    """Run the graph until the goal stops or must wait; yields each node's update."""
    graph = build_graph(runner, wait, max_steps=max_steps)
    config = {"recursion_limit": 2 * max_steps + 10}
    updates: Iterator[dict[str, GraphState | None]] = graph.stream(
        {"steps": 0}, config=config, stream_mode="updates"
    )
    for update in updates:
        for node, state in update.items():
            yield node, state or {}
