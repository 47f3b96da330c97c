"""The planning graph as a LangGraph deployment: ``make_graph(config)``, named in ``langgraph.json``.

Rules (SPEC §8; ``docs/deployment.md``):
    * The event store stays the truth. The graph's state holds the goal id and a JSON
      copy of the last decision, never anything a step needs: every node reads the goal
      from the store, so a thread may be resumed, replayed or abandoned at any point,
      and a new run on the same goal simply continues. No checkpointer is required.
    * The topology is the planning graph's: ``assess`` routes (with ``route``) to
      ``plan`` | ``apply`` | ``dispatch`` | ``accept`` | ``wait`` | END; each acting node
      is one step under the goal's lease (``goals.tick``: take it, decide on the fresh
      view, act once, release), then back to ``assess``. Between nodes the lease is
      free, so ``governor serve`` workers and operators may act on the goal too.
    * A goal whose lease another runner holds ends the run with outcome ``leased``,
      naming the holder: a deployed graph never waits for, nor steals, a lease.
    * Settings are read once per factory call: the run's ``configurable`` (``store``,
      ``workdir``, ``goal_id``, ``max_wait_s``, ``lease_ttl_s``, ``max_steps``), else
      ``GOVERNOR_STORE`` and ``GOVERNOR_WORKDIR``. The goal id comes from the input
      (``{"goal_id": "…"}``) or from ``configurable.goal_id``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph

from governor.core.route import Stop, Wait, route
from governor.drive import goals
from governor.drive.runner import Runner, RunnerSettings, holder_id
from governor.errors import InputError, LeaseError
from governor.graph.build import NODES, node_of
from governor.render.records import decision_record
from governor.store.url import open_store


class DeployState(TypedDict, total=False):
    """What a deployed run carries between nodes: JSON only, never the truth."""

    goal_id: str
    node: str
    """Where ``assess`` routed last."""
    decision: dict[str, Any]
    """The last decision, with its rule (``governor.render.records.decision_record``)."""
    outcome: str
    """Why the run ended: ``stopped``, ``review``, ``waiting``, ``leased`` or ``steps``."""
    holder: str
    """Who held the lease, when the outcome is ``leased``."""
    steps: int


@dataclass(frozen=True, slots=True)
class DeploySettings:
    """What the deployed graph needs, read once from the run config and the environment."""

    store_url: str | None
    workdir: Path
    env: Mapping[str, str]
    goal_id: str | None = None
    max_wait_s: float = 900.0
    lease_ttl_s: float = 60.0
    max_steps: int = 10_000

    @classmethod
    def read(cls, config: Mapping[str, Any], environ: Mapping[str, str]) -> DeploySettings:
        """Settings from ``config["configurable"]``, falling back on ``environ``."""
        given: Mapping[str, Any] = config.get("configurable") or {}
        workdir = given.get("workdir") or environ.get("GOVERNOR_WORKDIR") or os.getcwd()
        return cls(
            store_url=given.get("store") or environ.get("GOVERNOR_STORE") or None,
            workdir=Path(workdir).resolve(),
            env=dict(environ),
            goal_id=given.get("goal_id"),
            max_wait_s=float(given.get("max_wait_s", 900.0)),
            lease_ttl_s=float(given.get("lease_ttl_s", 60.0)),
            max_steps=int(given.get("max_steps", 10_000)),
        )


class _Nodes:
    """The deployed graph's nodes: each opens the store and a runner, and closes them after."""

    def __init__(self, settings: DeploySettings) -> None:
        self.settings = settings
        self.holder = holder_id("langgraph")

    @contextmanager
    def runner(self, goal_id: str) -> Iterator[Runner]:
        s = self.settings
        runner_settings = RunnerSettings(
            workdir=s.workdir,
            env=s.env,
            holder=self.holder,
            lease_ttl_s=s.lease_ttl_s,
            max_wait_s=s.max_wait_s,
            state_dir=s.workdir / ".governor" / "scripted",
        )
        with closing(open_store(s.store_url)) as store:
            yield goals.runner(store, goal_id, runner_settings, progress=_progress(goal_id))

    def assess(self, state: DeployState) -> DeployState:
        """Decide on the goal's history; route to the node that acts (or end the run)."""
        goal_id = state.get("goal_id") or self.settings.goal_id
        if not goal_id:
            raise InputError(
                'give the goal to drive: input {"goal_id": "…"} or configurable.goal_id'
            )
        with self.runner(goal_id) as runner:
            decision = runner.decide(with_ledger=True)  # the graph's state shows the ledger
            if decision.is_stopped and decision.blocked_on == "environment":
                goals.tick(runner)  # re-probes the missing binary under the lease
                decision = runner.decide(with_ledger=True)
        action, steps = route(decision), state.get("steps", 0) + 1
        update: DeployState = {"goal_id": goal_id, "node": node_of(action), "steps": steps}
        update["decision"] = decision_record(decision)
        if isinstance(action, Stop):
            update["outcome"] = "review" if action.reason == "review" else "stopped"
        elif steps > self.settings.max_steps:
            update["outcome"] = "steps"
        return update

    def act(self, state: DeployState) -> DeployState:
        """One step under the goal's lease: plan, apply, dispatch or accept."""
        try:
            with self.runner(state["goal_id"]) as runner:
                goals.tick(runner)
        except LeaseError as exc:
            return {"outcome": "leased", "holder": exc.holder or "another runner"}
        return {}

    def wait(self, state: DeployState) -> DeployState:
        """Sleep through a cooldown up to ``max_wait_s``; a longer one ends the run."""
        with self.runner(state["goal_id"]) as runner:
            action = route(runner.decide())
            if isinstance(action, Wait) and not runner.wait(action):
                return {"outcome": "waiting"}
        return {}


def _progress(goal_id: str) -> Callable[[str], None]:
    """Runner progress as LangGraph ``custom`` stream chunks (a no-op outside a stream)."""
    try:
        from langgraph.config import get_stream_writer  # noqa: PLC0415 - only inside a run

        writer = get_stream_writer()
    except (ImportError, RuntimeError):
        return lambda _message: None
    return lambda message: writer({"goal_id": goal_id, "progress": message})


def _then(state: DeployState) -> str:
    return END if state.get("outcome") else "assess"


def build_deploy_graph(settings: DeploySettings) -> Any:
    """Compile the deployed planning graph (``Any``: LangGraph's compiled type is generic)."""
    nodes = _Nodes(settings)
    graph: Any = StateGraph(DeployState)
    graph.add_node("assess", nodes.assess)
    for name in NODES:
        graph.add_node(name, nodes.wait if name == "wait" else nodes.act)
    graph.add_edge(START, "assess")
    graph.add_conditional_edges(
        "assess", lambda s: END if s.get("outcome") else s["node"], [*NODES, END]
    )
    for name in NODES:
        graph.add_conditional_edges(name, _then, ["assess", END])
    # Each step is two supersteps (assess, then a node); LangGraph's default limit is 25.
    return graph.compile(name="governor").with_config(recursion_limit=2 * settings.max_steps + 10)


def make_graph(config: Mapping[str, Any] | None = None) -> Any:
    """The graph factory ``langgraph.json`` names: settings from ``config``, then the environment."""
    return build_deploy_graph(DeploySettings.read(config or {}, os.environ))
