"""The planning graph: ``assess`` -> ``plan`` | ``apply`` | ``dispatch`` | ``accept`` | ``park`` |
``resume`` | ``wait`` | ``ask`` | END.

Rules (SPEC §8):
    * ``assess`` re-derives the view from the store and takes the core's decision; the
      node it goes to is the name of the action the core routes it to
      (``governor.core.route``), END for ``Stop``. Every other node performs that action
      (``governor.drive.act``) and returns to ``assess``.
    * The graph holds no durable state: the event store is the truth, and a graph built
      anew over the same store continues where the last one stopped. No checkpointer.
    * Building is a factory with no import-time side effects.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Final, TypedDict

from langchain_core.callbacks import Callbacks
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import merge_configs
from langgraph.graph import END, START, StateGraph

from governor.core.route import ACTING, Action, Ask, Stop, Wait, name_of, route
from governor.drive.act import act
from governor.drive.goals import Outcome, RunReport, stop_outcome
from governor.drive.runner import Runner
from governor.drive.spans import goal_span, record_goal

NODES: Final = (
    *(cls.__name__.lower() for cls in ACTING),
    name_of(Wait(None)),
    name_of(Ask(None, "")),
)
"""The nodes after ``assess``, one per action but ``Stop`` (END)."""


class GraphState(TypedDict, total=False):
    action: Action
    outcome: Outcome
    steps: int


def node_of(action: Action) -> str:
    """The node that performs an action (END for a stop)."""
    return END if isinstance(action, Stop) else name_of(action)


def build_graph(runner: Runner, *, max_steps: int = 10_000) -> Any:
    """Compile the planning graph for one runner (one goal, one lease)."""

    def assess(state: GraphState) -> GraphState:
        runner.refresh()
        decision = runner.settle()
        action = route(decision)
        steps = state.get("steps", 0) + 1
        update: GraphState = {"action": action, "steps": steps}
        if isinstance(action, Stop):
            update["outcome"] = stop_outcome(action)
        elif steps > max_steps:
            update["outcome"] = "steps"
        return update

    def perform(node: str) -> Callable[[GraphState], GraphState]:
        def step(state: GraphState) -> GraphState:
            if act(runner, state["action"]):
                return {}
            return {"outcome": "waiting" if node == "wait" else "stopped"}

        step.__name__ = node
        return step

    def after_assess(state: GraphState) -> str:
        return END if state.get("outcome") else node_of(state["action"])

    graph: Any = StateGraph(GraphState)  # Any at the LangGraph boundary: its node types are generic
    graph.add_node("assess", assess)
    for node in NODES:
        graph.add_node(node, perform(node))
    graph.add_edge(START, "assess")
    graph.add_conditional_edges("assess", after_assess, [*NODES, END])
    for node in NODES:
        if node in ("wait", "ask"):
            graph.add_conditional_edges(
                node, lambda s: END if s.get("outcome") else "assess", ["assess", END]
            )
        else:
            graph.add_edge(node, "assess")
    return graph.compile()


def run_config(
    goal_id: str, max_steps: int, callbacks: Callbacks = None, config: RunnableConfig | None = None
) -> RunnableConfig:
    """A run's LangGraph config: the caller's, its callbacks, the goal id as metadata (so
    tracers file the run under its goal) and room for ``max_steps`` steps."""
    ours: RunnableConfig = {
        "metadata": {"goal_id": goal_id},
        "run_name": f"governor {goal_id}",
        "recursion_limit": 2 * max_steps + 10,
    }
    if callbacks is not None:
        ours["callbacks"] = callbacks
    return merge_configs(ours, config)


def stream(
    runner: Runner,
    *,
    max_steps: int = 10_000,
    callbacks: Callbacks = None,
    config: RunnableConfig | None = None,
) -> Iterator[tuple[str, GraphState]]:
    """Run the graph until the goal stops or must wait; yields each node's update."""
    graph = build_graph(runner, max_steps=max_steps)
    updates: Iterator[dict[str, GraphState | None]] = graph.stream(
        {"steps": 0},
        config=run_config(runner.goal_id, max_steps, callbacks, config),
        stream_mode="updates",
    )
    for update in updates:
        for node, state in update.items():
            yield node, state or {}


def run(
    runner: Runner,
    *,
    max_steps: int = 10_000,
    callbacks: Callbacks = None,
    config: RunnableConfig | None = None,
) -> RunReport:
    """Drive the goal with the graph until it stops or must wait longer than the runner's
    ``max_wait_s``, holding its lease throughout.

    Args:
        runner: the goal's runner.
        max_steps: steps before the run ends with outcome ``steps``.
        callbacks: LangChain callbacks (a tracer, a handler) for the run and every agent
            call in it.
        config: a LangGraph/LangChain run config merged under governor's (its tags,
            metadata, callbacks, ``recursion_limit``).
    """
    with goal_span(runner.goal_id) as current:
        runner.acquire()
        try:
            outcome: Outcome = "stopped"
            steps = 0
            for node, state in stream(
                runner, max_steps=max_steps, callbacks=callbacks, config=config
            ):
                steps += node == "assess"
                outcome = state.get("outcome", outcome)
            report = RunReport(runner.decide(with_ledger=True), outcome, steps, runner.title)
            record_goal(current, report.decision, outcome)
            return report
        finally:
            runner.release()
