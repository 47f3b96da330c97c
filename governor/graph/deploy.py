"""The planning graph over the event store: deployed (``make_graph``) or embedded (``planning_graph``).

Rules (SPEC §8; ``docs/deployment.md``, ``docs/api.md``):
    * The event store stays the truth. The graph's state holds the goal id and a JSON
      copy of the last decision, never anything a step needs: every node reads the goal
      from the store, so a thread may be resumed, replayed, re-run or abandoned at any
      point, and a new run on the same thread or goal simply continues. ``assess``
      clears the last run's outcome, so a second run on a checkpointed thread goes on.
    * The topology is the planning graph's: ``assess`` routes (with ``route``) to
      ``plan`` | ``apply`` | ``dispatch`` | ``accept`` | ``wait`` | ``ask`` | END; each
      acting node is one step under the goal's lease (``goals.tick``: take it, decide on
      the fresh view, act once, release), then back to ``assess``. Between nodes the
      lease is free, so ``governor serve`` workers and operators may act on the goal too.
    * ``wait`` and ``ask`` act (``governor.drive.act``) on a ``GraphActor`` (``asking``): a wait the
      graph will not sit through (a server never sleeps: ``max_wait_s`` 0) ends the run
      with ``outcome`` ``waiting`` and ``wake_at``; a question is LangGraph's
      ``interrupt()``, and ``Command(resume=answer)`` records the answer with the
      operator verb that answers it (``governor.core.verbs.answer``), as the CLI does.
      A goal waiting on a person's grant (``governor.graph.granting``) goes to ``ask``
      too: its request is the interrupt, and ``Command(resume={"grant": …})`` or
      ``{"decline": …}`` records the answer as ``governor grant``/``decline`` does.
      Either node returns to ``assess`` when the goal has moved on meanwhile.
    * A goal whose lease another runner holds ends the run with outcome ``leased``,
      naming the holder: the graph never waits for, nor steals, a lease.
    * A governor error ends the run with its own message (``GovernorRunError``, which
      the LangGraph server shows), never a bare "internal error".
    * Configuration belongs to whoever deploys the graph: ``make_graph`` reads
      ``GOVERNOR_STORE``, ``GOVERNOR_WORKDIR`` and ``GOVERNOR_PROFILES`` (the profiles a
      goal created over the API may name) from the environment, and refuses a run whose
      config tries to name a store or a working directory.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Final, ParamSpec

from langgraph.graph import END, START, StateGraph
from langgraph.managed import RemainingSteps
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from governor.analysis.asking import need_in
from governor.clock import utc_now
from governor.core.decision import Decision
from governor.core.event_fields import Profile
from governor.core.question import question
from governor.core.route import Action, Ask, Stop, Wait, route
from governor.core.text import stamp
from governor.core.view import GoalView
from governor.drive import goals
from governor.drive.act import act
from governor.drive.goalfile import goal_from_mapping, profiles_from_file
from governor.drive.lease import holder_id
from governor.drive.runner import Runner, RunnerSettings
from governor.drive.spans import instrument_from
from governor.errors import GovernorError, InputError, LeaseError
from governor.graph.asking import DEFAULT_ACTOR, GraphActor, identity
from governor.graph.build import NODES, node_of
from governor.graph.granting import grant_asked, grant_identity
from governor.render.records import decision_record
from governor.store.base import EventStore
from governor.store.url import open_store


class GoalInput(TypedDict, total=False):
    """What a run starts from: the goal to drive, or one to create and drive."""

    goal_id: str
    """The goal to drive (``governor new`` or an earlier run created it)."""
    goal: dict[str, Any]
    """A goal to create first: a goal file's keys (``title``, ``objective``,
    ``acceptance``, ``planner``, ``worker``, ``policy``, ``id``); its profiles are the
    deployment's (``GOVERNOR_PROFILES``)."""


class GoalOutput(TypedDict, total=False):
    """How a run ended."""

    goal_id: str
    outcome: str | None
    """``stopped``, ``review``, ``waiting``, ``leased`` or ``steps``."""
    decision: dict[str, Any]
    """The goal's decision when the run ended, with its rule and ledger."""
    wake_at: str | None
    """When a ``waiting`` goal may go on (RFC 3339 UTC); run it again then."""
    holder: str | None
    """Who holds the lease, when the outcome is ``leased``."""
    answer: dict[str, Any] | None
    """What became of the answer a resumed run brought (``Command(resume=…)``):
    ``recorded`` (bool), ``answer``, ``actor``, and ``verb`` or the ``reason`` it was not
    recorded (answered elsewhere first; ``ignored``). None when the run brought none."""


class DeployState(GoalInput, GoalOutput, total=False):
    """What a run carries between nodes: JSON only, never the truth."""

    node: str
    """Where ``assess`` routed last."""
    asked: dict[str, Any] | None
    """The question ``assess`` routed to ``ask`` with (its ids), so that the answer to it
    is never recorded against another one."""
    remaining_steps: RemainingSteps


class DeployContext(TypedDict, total=False):
    """What a run's caller may say (the run's ``context``)."""

    actor: str
    """Who answers this run's questions, as recorded with the answer (default
    ``operator:langgraph``)."""


class GovernorRunError(ValueError):  # a ValueError: the LangGraph server shows its message
    """A governor error that ended a graph run; its message is governor's own.

    Attributes:
        kind: the governor error's class name (``NotFoundError``, ``CommandRefusedError`` …).
    """

    def __init__(self, error: GovernorError) -> None:
        self.kind = type(error).__name__
        super().__init__(str(error))


@dataclass(frozen=True, slots=True)
class GraphSettings:
    """What the graph needs, given once by whoever builds it."""

    store: str | EventStore
    """A store URL (opened per node), or an open store (never closed by the graph)."""
    workdir: Path
    env: Mapping[str, str]
    profiles: Mapping[str, Profile] = field(default_factory=dict)
    """The profiles a goal created through the graph's input may name."""
    max_wait_s: float = 0.0
    """The longest cooldown a run sleeps through; 0: a wait ends the run."""
    lease_ttl_s: float = 60.0
    max_steps: int = 10_000
    """Steps of one run (each is two supersteps of LangGraph's ``recursion_limit``)."""

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> GraphSettings:
        """A deployment's settings: ``GOVERNOR_STORE``, ``GOVERNOR_WORKDIR``, ``GOVERNOR_PROFILES``."""
        workdir = Path(environ.get("GOVERNOR_WORKDIR") or os.getcwd()).resolve()
        store = environ.get("GOVERNOR_STORE")
        if not store:  # the documented default, created as ``governor`` creates it (issue 35)
            default = workdir / ".governor" / "governor.db"
            default.parent.mkdir(parents=True, exist_ok=True)
            store = str(default)
        profiles_file = environ.get("GOVERNOR_PROFILES")
        profiles = profiles_from_file(workdir / profiles_file) if profiles_file else {}
        return cls(store=store, workdir=workdir, env=dict(environ), profiles=profiles)


class _Nodes:
    """The graph's nodes: each opens the store and a runner, and closes them after."""

    def __init__(self, settings: GraphSettings) -> None:
        self.settings = settings
        self.holder = holder_id("langgraph")

    @contextmanager
    def store(self) -> Iterator[EventStore]:
        given = self.settings.store
        if not isinstance(given, str):
            yield given
            return
        store = open_store(given)
        try:
            yield store
        finally:
            store.close()

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
            asking=need_in,
        )
        with self.store() as store:
            yield goals.runner(store, goal_id, runner_settings, progress=_progress(goal_id))

    def assess(self, state: DeployState) -> DeployState:
        """Create the goal if asked; decide; route to the node that acts (or end the run)."""
        goal_id = self._created(state["goal"]) if state.get("goal") else state.get("goal_id")
        if not goal_id:
            raise InputError('give the goal to drive: input {"goal_id": "…"} or {"goal": {…}}')
        with self.runner(goal_id) as runner:
            decision = runner.decide(with_ledger=True)  # the graph's state shows the ledger
            if decision.is_stopped and (
                decision.blocked_on == "environment" or decision.status == "budget_exhausted"
            ):  # re-probes a missing binary; asks for (or auto-grants) budget; under the lease
                with contextlib.suppress(LeaseError):  # its holder settles it: decide as it is
                    goals.tick(runner)
                decision = runner.decide(with_ledger=True)
            action = route(decision)
            node, asked = _routed(runner.view, decision, action)
        update: DeployState = {
            "goal_id": goal_id,
            "goal": {},
            "node": node,
            "decision": decision_record(decision),
            "outcome": None,
            "wake_at": None,
            "holder": None,
            "asked": asked,
            # a run that follows an ended one starts afresh; a resumed run keeps its answer
            "answer": None if state.get("outcome") else state.get("answer"),
        }
        if isinstance(action, Stop) and node == END:
            update["outcome"] = "review" if action.reason == "review" else "stopped"
        elif state.get("remaining_steps", 3) <= 2:
            update["outcome"] = "steps"  # room for no further step in this run
        return update

    def _created(self, spec: Mapping[str, Any]) -> str:
        s = self.settings
        events = goal_from_mapping(
            spec, base=s.workdir, where="goal", at=utc_now(), profiles=s.profiles
        )
        with self.store() as store:
            goals.create_from(store, events)
        return events[0].goal_id

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
            if isinstance(action, Wait) and not act(GraphActor(runner), action):
                return {"outcome": "waiting", "wake_at": _stamp(action.until)}
        return {}

    def ask(self, state: DeployState, runtime: Runtime[DeployContext]) -> DeployState:
        """Put the planner's or a worker's question, or a request for more budget, to a
        person; record the answer."""
        actor = (runtime.context or {}).get("actor") or DEFAULT_ACTOR
        with self.runner(state["goal_id"]) as runner:
            actor_of = GraphActor(runner, actor, state.get("asked"))
            decision = runner.decide()
            action, grant = route(decision), grant_asked(runner.view, decision)
            if grant is not None:
                goes_on = actor_of.ask_grant(grant)
            elif isinstance(action, Ask):
                goes_on = act(actor_of, action)
            else:
                goes_on = True
                actor_of.answered_meanwhile()
        update: DeployState = {"answer": actor_of.answer} if actor_of.answer else {}
        return update if goes_on else {**update, "outcome": "stopped"}


def _routed(
    view: GoalView, decision: Decision, action: Action
) -> tuple[str, dict[str, Any] | None]:
    """The node ``assess`` routes to, and the ids of what it asks there: a request for more
    budget a person must answer (``ask``), a question, or nothing."""
    grant = grant_asked(view, decision)
    if grant is not None:
        return "ask", grant_identity(grant)
    asked = question(view, decision)
    return node_of(action), identity(asked) if asked and isinstance(action, Ask) else None


def _stamp(when: datetime | None) -> str | None:
    return stamp(when) if when else None


def _progress(goal_id: str) -> Callable[[str], None]:
    """Runner progress as LangGraph ``custom`` stream chunks (a no-op outside a stream)."""
    try:
        from langgraph.config import get_stream_writer  # noqa: PLC0415 - only inside a run

        writer = get_stream_writer()
    except (ImportError, RuntimeError):
        return lambda _message: None
    return lambda message: writer({"goal_id": goal_id, "progress": message})


P = ParamSpec("P")


def _surfaced(node: Callable[P, DeployState]) -> Callable[P, DeployState]:
    """The node, its governor errors raised as ``GovernorRunError`` (their message shown)."""

    @functools.wraps(node)
    def wrapped(*args: P.args, **kwargs: P.kwargs) -> DeployState:
        try:
            return node(*args, **kwargs)
        except GovernorError as exc:
            raise GovernorRunError(exc) from exc

    return wrapped


def _then(state: DeployState) -> str:
    return END if state.get("outcome") else "assess"


def build_deploy_graph(settings: GraphSettings, *, checkpointer: Any = None) -> Any:
    """Compile the planning graph over the store (``Any``: LangGraph's compiled type is generic)."""
    nodes = _Nodes(settings)
    acting: dict[str, Callable[..., DeployState]] = {"wait": nodes.wait, "ask": nodes.ask}
    graph: Any = StateGraph(
        DeployState,
        context_schema=DeployContext,
        input_schema=GoalInput,
        output_schema=GoalOutput,
    )
    graph.add_node("assess", _surfaced(nodes.assess))
    for name in NODES:
        graph.add_node(name, _surfaced(acting.get(name, nodes.act)))
    graph.add_edge(START, "assess")
    graph.add_conditional_edges(
        "assess", lambda s: END if s.get("outcome") else s["node"], [*NODES, END]
    )
    for name in NODES:
        graph.add_conditional_edges(name, _then, ["assess", END])
    compiled = graph.compile(name="governor", checkpointer=checkpointer)
    # Each step is two supersteps (assess, then a node); LangGraph's default limit is 25.
    return compiled.with_config(recursion_limit=2 * settings.max_steps + 10)


CALLER_KEYS: Final = ("store", "workdir", "profiles")
"""Run config keys a caller may not set: the deployment decides where goals live and run."""


def make_graph(config: Mapping[str, Any] | None = None) -> Any:
    """The graph factory ``langgraph.json`` names: settings from the deployment's environment.

    Raises:
        GovernorRunError: when the run's config names a store, a working directory or
            profiles (those belong to the deployment).
    """
    given: Mapping[str, Any] = (config or {}).get("configurable") or {}
    named = [key for key in CALLER_KEYS if key in given]
    if named:
        raise GovernorRunError(
            InputError(
                f"a run may not set {', '.join(named)}: they come from the deployment "
                "(GOVERNOR_STORE, GOVERNOR_WORKDIR, GOVERNOR_PROFILES)"
            )
        )
    try:
        settings = GraphSettings.from_env(os.environ)
        instrument_from(os.environ)
    except GovernorError as exc:
        raise GovernorRunError(exc) from exc
    return build_deploy_graph(settings)


def planning_graph(
    store: str | EventStore,
    *,
    workdir: str | Path = ".",
    env: Mapping[str, str] | None = None,
    profiles: Mapping[str, Profile] | None = None,
    max_wait_s: float = 0.0,
    max_steps: int = 10_000,
    checkpointer: Any = None,
) -> Any:
    """The planning graph over ``store``, to run or to embed as a node of your own graph.

    Args:
        store: a store URL (``sqlite:///…``, ``postgresql://…``) or an open store.
        workdir: where agents run (relative harness paths resolve here).
        env: the environment agents' variables come from (default: this process's).
        profiles: the profiles a goal given as input (``{"goal": {…}}``) may name.
        max_wait_s: the longest cooldown a run sleeps through; longer ends the run
            ``waiting`` with ``wake_at`` (default 0: never sleep).
        max_steps: steps per run before it ends with outcome ``steps``.
        checkpointer: a LangGraph checkpointer (needed to answer a question with
            ``Command(resume=…)``; a parent graph's is used when embedded).
    """
    settings = GraphSettings(
        store=store,
        workdir=Path(workdir).resolve(),
        env=dict(os.environ if env is None else env),
        profiles=dict(profiles or {}),
        max_wait_s=max_wait_s,
        max_steps=max_steps,
    )
    return build_deploy_graph(settings, checkpointer=checkpointer)
