"""Goals in a store: create, inspect, govern and drive them — the library behind the CLI.

Rules:
    * Each function loads the goal's events, lets the core decide or record, and appends
      in one transaction with an expected-seq check; a conflicting writer makes it reload
      and rebuild (operator verbs never take the lease: optimistic concurrency protects
      them, and a runner's next append sees the new events).
    * ``tick`` (and ``governor.graph.build.run``) hold the goal's lease while they act and
      release it at the end; a second runner is refused with the holder's name.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal

from pydantic import ValidationError

from governor.clock import Clock, utc_now
from governor.core import commands, verbs
from governor.core.commands import OperatorVerb
from governor.core.decision import Decision
from governor.core.durations import parse_duration
from governor.core.events import Event
from governor.core.policy import LedgerName
from governor.core.route import Action, Ask, Park, Resume, Stop, acts, route
from governor.core.rules.decide import decide
from governor.core.view import GoalView
from governor.drive.act import act
from governor.drive.append import Build, append_built, append_folded
from governor.drive.reads import exists, load, status
from governor.drive.spans import goal_span, record_goal
from governor.errors import CommandRefusedError, ConcurrencyConflictError, InputError, NotFoundError

if TYPE_CHECKING:  # the runner and the harnesses load on first use: read commands start fast
    from governor.drive.calls import Calls
    from governor.drive.health import OnChange
    from governor.drive.runner import HarnessFactory, Observer, Progress, Runner, RunnerSettings
    from governor.store.base import EventStore

__all__ = [  # ``exists``, ``load`` and ``status`` live in ``governor.drive.reads``
    "VERBS",
    "Outcome",
    "RunReport",
    "answer",
    "create",
    "create_from",
    "environment_back",
    "exists",
    "govern",
    "load",
    "needs_step",
    "new_limit",
    "operate",
    "outcome_of",
    "refuse_secrets_in",
    "runner",
    "status",
    "stop_outcome",
    "stopped",
    "tick",
]

Outcome = Literal["stopped", "waiting", "review", "steps"]
"""How a drive ended: the goal stopped, must wait longer than the drive sleeps, awaits a
review, or the step limit was reached."""


def operate(store: EventStore, goal_id: str, build: Build, *, clock: Clock = utc_now) -> Decision:
    """Record an operator verb built on the current view; rebuild it if another writer won."""
    view, _ = append_built(store, load(store, goal_id), build, clock)
    return decide(view, clock())


def create(
    store: EventStore, path: Path, *, clock: Clock = utc_now, actor: str = "governor"
) -> GoalView:
    """Create the goal a goal file describes; refuses an id that is already taken."""
    from governor.drive.goalfile import goal_from_file  # noqa: PLC0415 - start-up (see above)

    return create_from(store, goal_from_file(path, at=clock(), actor=actor), clock=clock)


def create_from(store: EventStore, events: list[Event], *, clock: Clock = utc_now) -> GoalView:
    """Store a new goal's ``goal.created`` (``goalfile.goal_from_mapping`` builds it);
    refuses an id that is already taken."""
    goal_id = events[0].goal_id
    first = events[0]
    if first.type == "goal.created" and first.pools:
        from governor.drive.pools import check_pools_exist  # noqa: PLC0415 - start-up

        check_pools_exist(store, first.pools)
    if store.last_seq(goal_id) != 0:
        raise CommandRefusedError(
            f"a goal with id '{goal_id}' already exists; give the goal another id"
        )
    view = GoalView()
    try:
        append_folded(store, view, events, clock())
    except ConcurrencyConflictError:
        raise CommandRefusedError(
            f"a goal with id '{goal_id}' was just created by someone else"
        ) from None
    return view


VERBS: Final = commands.VERB_NAMES
"""Every operator verb's name (``governor.core.commands``)."""


def new_limit(ledger: LedgerName | None, text: str) -> float:
    """``raise``'s new limit as given: a number, or for the runtime ledger a duration (``2h``).

    Raises:
        InputError: naming ``--to`` and what is wrong with it.
    """
    try:
        return float(text)
    except ValueError:
        pass
    if ledger == "runtime":
        try:
            return parse_duration(text)
        except ValueError as exc:
            raise InputError(f"--to: {exc}") from None
    raise InputError(f"--to: '{text}' is not a number (a duration like 2h is for --ledger runtime)")


def govern(
    store: EventStore,
    goal_id: str,
    verb: OperatorVerb,
    *,
    clock: Clock = utc_now,
    reason_is: str = "--reason",
) -> Decision:
    """Record an operator verb (never taking the lease, as every verb: see the rules) and
    return the goal's decision after it.

    The verb's text may not hold a secret of this process's environment (``reason_is``
    names the text in the refusal).

    Raises:
        NotFoundError: no such goal, plan or work item.
        CommandRefusedError: the rules refuse the verb in the goal's state.
        InputError: an unknown verb, a missing argument, a secret or an invalid value.
    """
    exists(store, goal_id)
    return operate(store, goal_id, lambda view: _built(verb, view, clock(), reason_is), clock=clock)


def refuse_secrets_in(
    store: EventStore, goal_id: str, verb: OperatorVerb, *, clock: Clock = utc_now
) -> None:
    """Refuse a verb whose text holds a secret of this environment before it is sent to
    another writer (a Temporal workflow does not know this environment). A verb the rules
    refuse passes: its writer says why, with nothing recorded."""
    try:
        _built(verb, load(store, goal_id), clock(), "--reason")
    except (CommandRefusedError, NotFoundError):
        return


def _built(verb: OperatorVerb, view: GoalView, at: datetime, reason_is: str) -> list[Event]:
    from governor.core.wire.codec import describe  # noqa: PLC0415 - start-up (see above)
    from governor.drive.secrets import refuse_secrets  # noqa: PLC0415 - start-up (see above)

    try:
        built = commands.apply_verb(verb, view, at)
    except ValidationError as exc:  # a value the event models refuse: nothing is written
        raise InputError(describe(exc)) from None
    return refuse_secrets(built, reason_is)


def answer(
    store: EventStore, goal_id: str, text: str, *, actor: str, clock: Clock = utc_now
) -> Decision:
    """Answer the question the goal stops on: ``work retry`` or ``resume``, as the CLI does."""
    exists(store, goal_id)
    return operate(
        store,
        goal_id,
        lambda view: verbs.answer(view, answer=text, at=clock(), actor=actor),
        clock=clock,
    )


@dataclass(frozen=True, slots=True)
class RunReport:
    """How a run ended."""

    decision: Decision
    outcome: Outcome
    steps: int
    title: str
    """The goal's title, for the report (the runner's view already holds it)."""


def runner(
    store: EventStore,
    goal_id: str,
    settings: RunnerSettings,
    *,
    clock: Clock = utc_now,
    sleep: Callable[[float], None] = time.sleep,
    progress: Progress | None = None,
    harnesses: HarnessFactory | None = None,
    observer: Observer | None = None,
    on_upstream: OnChange | None = None,
    calls: Calls | None = None,
) -> Runner:
    """A runner for one goal (it does not hold the lease yet).

    ``harnesses`` defaults to the real ones (``governor.exec.harness.harness_for``);
    ``observer`` is told of every batch of events the runner appends (logs, metrics);
    ``on_upstream`` of every upstream that goes down, comes back or refuses a probe;
    ``calls`` keeps the agent calls in flight (a live view reads it).
    """
    from governor.drive.runner import Runner  # noqa: PLC0415 - start-up (see above)
    from governor.exec.harness import harness_for  # noqa: PLC0415 - start-up (see above)

    exists(store, goal_id)
    return Runner(
        store,
        goal_id,
        settings,
        clock=clock,
        sleep=sleep,
        progress=progress,
        harnesses=harnesses or harness_for,
        observer=observer,
        on_upstream=on_upstream,
        calls=calls,
    )


def outcome_of(decision: Decision) -> Outcome:
    """How a drive that ends on ``decision`` ended."""
    if decision.status in ("waiting", "running"):
        return "waiting"
    return "review" if decision.status == "awaiting_review" else "stopped"


def stop_outcome(action: Stop) -> Outcome:
    """How a drive whose goal routes to ``action`` ended."""
    return "review" if action.reason == "review" else "stopped"


def stopped(goal_runner: Runner) -> RunReport | None:
    """The report of a drive of a goal that stops at once — it stopped, awaits a review,
    or asks a question nobody here answers; None when there is something to do (the graph
    drives it then). This is the graph's first ``assess`` (and ``ask``) taken without the
    graph, so ``governor run`` of a stopped goal imports no LangGraph: decided first
    without the lease, then, as the graph would, under it (an environment stop whose binary
    came back is cleared there, and the goal goes on)."""
    if not isinstance(route(goal_runner.decide()), Stop | Ask):
        return None
    with goal_span(goal_runner.goal_id) as current:
        goal_runner.acquire()
        try:
            goal_runner.refresh()
            action = route(goal_runner.settle())
            if isinstance(action, Stop):
                outcome = stop_outcome(action)
            elif isinstance(action, Ask) and not act(goal_runner, action):
                outcome = "stopped"
            else:
                return None
            report = RunReport(goal_runner.decide(with_ledger=True), outcome, 1, goal_runner.title)
            record_goal(current, report.decision, report.outcome)
            return report
        finally:
            goal_runner.release()


def needs_step(goal_runner: Runner) -> bool:
    """Whether a step would do anything: act, or probe the upstream the goal is parked on."""
    decision = goal_runner.decide()
    if acts(route(decision)):
        return True
    created = goal_runner.view.created
    return created is not None and goal_runner.monitor.probe_due(decision, created.profiles)


def environment_back(goal_runner: Runner) -> bool:
    """Whether a step would clear an environment stop: the binary of one of the goal's
    re-probed preconditions (``governor.core.blockers``) can start now. Read without the
    lease; the step that clears it (``tick``) looks again under it."""
    from governor.core.blockers import blockers  # noqa: PLC0415 - start-up (see above)

    return any(
        b.kind == "precondition" and b.reprobed and goal_runner.environment_back(b.work_id)
        for b in blockers(goal_runner.view, goal_runner.decide())
    )


def tick(
    goal_runner: Runner, *, on_decision: Callable[[Decision, Action], None] | None = None
) -> RunReport:
    """One step: decide, then act once (plan, apply, dispatch, accept, park, resume) —
    never wait. A run an upstream refused parks the goal in the same step (or resumes it,
    when the upstream came back meanwhile), so no goal stopped on a failing upstream
    waits for a person (SPEC §11.10).

    ``on_decision`` is told of the decision acted on and its action, before it is done.
    """
    with goal_span(goal_runner.goal_id) as current:
        report = _tick(goal_runner, on_decision)
        record_goal(current, report.decision, report.outcome)
        return report


def _tick(goal_runner: Runner, on_decision: Callable[[Decision, Action], None] | None) -> RunReport:
    goal_runner.acquire()
    try:
        goal_runner.refresh()
        decision = goal_runner.settle()
        action = route(decision)
        if on_decision is not None:
            on_decision(decision, action)
        if acts(action):
            act(goal_runner, action)
            then = route(goal_runner.decide())
            if isinstance(then, Park | Resume) and not isinstance(action, Park | Resume):
                act(goal_runner, then)
        after = goal_runner.decide(with_ledger=True)
        return RunReport(after, outcome_of(after), 1, goal_runner.title)
    finally:
        goal_runner.release()
