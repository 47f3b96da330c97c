"""The runner: one goal, its lease, and the effects behind each node of the planning graph.

Rules (SPEC §6.3, §8):
    * The store is the truth. ``refresh`` folds whatever was appended since; a failed
      append (a conflict, a lost lease) reloads the view from the store.
    * Link before execute: ``plan.requested`` / ``attempt.started`` are appended (and
      committed) before the agent starts.
    * A plan or attempt found started but unfinished was lost (nodes run to completion
      while the lease is held): it is continued under the same id or number, free,
      until ``max_continuations``.
    * Every append carries the lease (``governor.drive.lease``: taken, renewed by a
      heartbeat, given back), so a runner whose lease was taken over cannot write. When
      the heartbeat finds the goal ended or an attempt settled by an operator, it kills
      their agents (SPEC §11.11); the run's own outcome is then dropped and the runner
      goes on.
    * Events are built against the current view by a function, so a conflicting append
      (an operator verb landing meanwhile) is rebuilt on the fresh view, not replayed stale.
    * A finished attempt the decision after it would accept on its own (``accept_passing``)
      is accepted in the finish's own append: one transaction, one fsync, fewer per call
      (issue 12); the events are those two appends would have written.
    * The crash-loop guard (``governor.drive.crashes``): an exception while a plan or
      attempt is in flight is recorded as a charged failure of that run; a proposal that
      cannot be applied is rejected (charged) the same way.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, wait
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Literal

from governor.clock import utc_now
from governor.core import record, record_work, verbs
from governor.core.blockers import blockers
from governor.core.charges import RunEvent
from governor.core.decision import Decision
from governor.core.event_fields import Profile
from governor.core.events import Event
from governor.core.fold import fold, project
from governor.core.record_park import park_goal, resume_goal
from governor.core.route import Accept, Apply, Ask, Dispatch, Park, Plan, Resume, Wait
from governor.core.rules.decider import Decider
from governor.core.summary import summarize
from governor.core.upstream import UpstreamHealth
from governor.core.view import GoalView
from governor.drive.agents import Agents
from governor.drive.append import Along, Build, append_built
from governor.drive.calling import AgentCaller, agent_env
from governor.drive.calls import Calls
from governor.drive.crashes import CrashGuard
from governor.drive.health import MonitorSettings, OnChange, UpstreamMonitor
from governor.drive.lease import LeaseKeeper, holder_id
from governor.drive.outcomes import describe_run, finish_events
from governor.drive.pools import NeedToFinish, PoolCalls, Reserved
from governor.drive.reprobe import environment_back, recovered
from governor.drive.spans import record_event, span
from governor.drive.threads import CallThreads
from governor.errors import CommandRefusedError
from governor.exec.call import CallInfo
from governor.exec.environment import Redactor
from governor.exec.harness import Harness, harness_for
from governor.store.base import EventStore, Lease
from governor.workflow.run import (
    PlannerRun,
    Runtime,
    WorkerRun,
    plan_events,
)

HarnessFactory = Callable[[Profile, Path], Harness]
Progress = Callable[[str], None]
Observer = Callable[[Sequence[Event]], None]
"""Told of every batch of events the runner appended, after the append committed."""


def new_run_id() -> str:
    return f"r-{uuid.uuid4().hex[:16]}"


@dataclass(slots=True)
class RunnerSettings:
    """Process configuration of a runner, read once by the caller and injected."""

    workdir: Path
    """Where agents run (and where relative harness paths resolve)."""
    env: Mapping[str, str]
    """The source environment; each harness scrubs it for its children."""
    holder: str = field(default_factory=holder_id)
    lease_ttl_s: float = 60.0
    max_wait_s: float = 900.0
    """The longest cooldown a run sleeps through before it ends ``waiting``."""
    state_dir: Path | None = None
    """Per-goal state of the scripted harness (kept apart so a rerun starts fresh)."""
    asking: Callable[[EventStore], NeedToFinish] | None = None
    """How a request for more budget is sized (SPEC §13.7): what the goal needs to finish,
    forecast from the runner's store by the layers that can forecast
    (``governor.analysis.asking.need_in``); None: one more of the spent unit."""


class Runner:
    """Drives one goal: loads, decides, acts, records, appends — under its lease.

    It is the ``Actor`` of real runs (``governor.drive.act``): one method per action.
    """

    def __init__(
        self,
        store: EventStore,
        goal_id: str,
        settings: RunnerSettings,
        *,
        clock: Callable[[], datetime] = utc_now,
        sleep: Callable[[float], None] = time.sleep,
        ids: Callable[[], str] = new_run_id,
        runtime: Runtime | None = None,
        progress: Progress | None = None,
        harnesses: HarnessFactory = harness_for,
        observer: Observer | None = None,
        on_upstream: OnChange | None = None,
        calls: Calls | None = None,
        view: GoalView | None = None,
    ) -> None:
        self.store, self.goal_id, self.settings = store, goal_id, settings
        self.calls = calls or Calls()
        """The agent calls in flight, for a live view (``governor run`` on a terminal)."""
        self.harnesses, self.observer = harnesses, observer
        self.clock, self.sleep, self.ids = clock, sleep, ids
        self.runtime = runtime or Runtime(sleep=sleep)
        self.progress = progress or (lambda _message: None)
        self.decider = Decider(project(store.load(goal_id)) if view is None else view)
        """The goal folded from the store (``view``: one folded already, brought up to date)
        and the decisions taken on it (a view reloaded after a conflict gets a new one)."""
        env = agent_env(settings.env, settings.state_dir, goal_id)
        self.monitor = UpstreamMonitor(
            store,
            MonitorSettings(settings.workdir, env, settings.holder),
            clock=clock,
            harnesses=harnesses,
            on_change=on_upstream,
        )
        self._lock = threading.RLock()
        self.threads = CallThreads(f"worker:{goal_id}")
        """The threads the worker calls of each dispatch run on, kept for the next."""
        self.agents = Agents(
            store,
            goal_id,
            settings.holder,
            lease=lambda: self.lease,
            clock=clock,
            progress=self.progress,
            lines=self.calls.telling_lines,
            redact=Redactor({**settings.env, **env}),
        )
        self.keeper = LeaseKeeper(
            store,
            goal_id,
            settings.holder,
            settings.lease_ttl_s,
            agents=self.agents,
            lock=self._lock,
            seq=lambda: self.view.seq,
        )
        self.guard = CrashGuard(self.record, self.progress, settings.env)
        self.caller = AgentCaller(
            goal_id,
            lambda: self.view,
            settings.workdir,
            env,
            lock=self._lock,
            monitor=self.monitor,
            harnesses=harnesses,
            agents=self.agents,
            calls=self.calls,
            runtime=self.runtime,
            clock=clock,
        )
        self.pool_calls = PoolCalls(
            store,
            goal_id,
            view=lambda: self.view,
            record=self.record,
            clock=self.now,
            ids=ids,
            progress=self.progress,
            need=settings.asking(store) if settings.asking is not None else None,
        )
        """The goal's calls against its pools (SPEC §13.6) and its requests for more."""
        if view is not None:
            self.refresh()

    # ------------------------------------------------------------ plumbing

    def now(self) -> datetime:
        """The time for the next event: never earlier than the last one recorded."""
        now = self.clock()
        return max(now, self.view.last_at) if self.view.last_at else now

    @property
    def view(self) -> GoalView:
        """The goal as folded so far (the decider's view)."""
        return self.decider.view

    @view.setter
    def view(self, view: GoalView) -> None:
        if view is not self.decider.view:  # reloaded: its decisions are taken afresh
            self.decider = Decider(view)

    @property
    def title(self) -> str:
        return self.view.created.title if self.view.created else self.goal_id

    def settle(self) -> Decision:
        """The decision now, after clearing environment stops whose binary came back and
        probing the failing upstream the goal is parked on when its probe is due."""
        decision = self.decide()
        while (
            self.reprobe(decision) or self.probe(decision) or self.pool_calls.own_budget(decision)
        ):
            decision = self.decide()
        return decision

    def decide(self, *, with_ledger: bool = False) -> Decision:
        """The goal's decision now, given the shared health of its upstreams; the full
        ledger only when asked (routing never reads it)."""
        return self.decider.decide(
            self.clock(), with_ledger=with_ledger, upstreams=self.upstreams()
        )

    def upstreams(self) -> dict[str, UpstreamHealth]:
        """The shared health of the upstreams the goal's profiles reach (by profile name)."""
        created = self.view.created
        if created is None:
            return {}
        return self.monitor.health(created.profiles, self.view.parked)

    def probe(self, decision: Decision) -> bool:
        """Probe the upstream the goal waits parked on, when its probe is due; True if it ran."""
        created = self.view.created
        after = self.monitor.probe_parked(decision, created.profiles) if created else None
        if after is not None:
            self.progress(f"probed {after.upstream}: {'answered' if after.healthy else 'refused'}")
        return after is not None

    def reschedule(self) -> None:
        """Store the summary the decision now gives (no event), so a goal that had nothing
        to do is not due again before its state may change."""
        with self._lock:
            if self.view.created is not None:
                self.store.reschedule(summarize(self.view, self.clock(), self.upstreams()))

    def refresh(self) -> None:
        with self._lock:
            fold(self.view, self.store.load(self.goal_id, after_seq=self.view.seq))

    def record(self, build: Build, along: Along | None = None) -> list[Event]:
        """Build events on the current view and append them (with the pool events
        ``along`` gives, in the same transaction); rebuild on a conflict.

        Returns no events when the goal ended meanwhile (an operator cancelled it): nothing
        may follow its end, so what the run observed is not recorded.
        """
        with self._lock:
            try:
                self.view, events = append_built(
                    self.store,
                    self.view,
                    build,
                    self.clock,
                    lease=self.lease,
                    decider=self.decider,
                    along=along,
                )
            except BaseException as exc:
                self.view = project(self.store.load(self.goal_id))
                if isinstance(exc, CommandRefusedError) and self.view.ended:
                    self.progress(f"the goal ended meanwhile ({self.view.ended}); not recorded")
                    return []
                raise
            if events and self.observer is not None:
                self.observer(events)
            return events

    @property
    def lease(self) -> Lease | None:
        """The lease every append carries (None while none is held)."""
        return self.keeper.lease

    @lease.setter
    def lease(self, lease: Lease | None) -> None:
        self.keeper.lease = lease

    def acquire(self) -> Lease:
        """Take the goal's lease and keep it alive (``governor.drive.lease``)."""
        return self.keeper.acquire()

    def release(self) -> None:
        """Give the lease back; an agent still running (the run was interrupted: SIGTERM)
        is killed first, as nothing it does could be recorded any more."""
        self.agents.end_own("the run ended")
        self.keeper.release()
        self.threads.close()

    # ------------------------------------------------------------ actions

    def plan(self, action: Plan) -> None:
        """Request a plan (or continue a lost one) with the planner call's reservation
        against the goal's pools in the same append (SPEC §13.6), run the planner, record
        its outcome with the settlement."""
        created = self.view.created
        if created is None:
            return
        reserved = self.pool_calls.hold(created.planner)
        finish: Event | None = None
        try:
            finish = self._plan(action, reserved)
        finally:
            self.pool_calls.settle(reserved, finish)  # unless its finish's append settled it

    def _plan(self, action: Plan, reserved: Reserved) -> Event | None:
        def started(build: Build) -> list[Event]:
            events = self.pool_calls.start(reserved, partial(self.record, build))
            return events or []  # None: a pool had no room, nothing was recorded

        if action.plan_id is not None:
            plan_id, trigger = action.plan_id, self.view.plans[action.plan_id].trigger
            events = started(lambda v: record.continue_plan(v, plan_id=plan_id, at=self.now()))
            if not events:
                return None
            if events[-1].type == "plan.failed":
                self.progress(f"plan {plan_id} was lost too often; recorded as a charged failure")
                return events[-1]
            self.progress(f"plan {plan_id} ({trigger}) was lost; continuing it")
        else:
            plan_id, trigger = f"p{self.view.plans_used + 1}", action.trigger or "initial"
            if not started(
                partial(record.request_plan, plan_id=plan_id, trigger=trigger, at=self.now())
            ):
                return None
            self.progress(f"plan {plan_id} ({trigger}) requested")
        created = self.view.created
        assert created is not None
        info = CallInfo.of_planner(created, plan_id)
        with span("agent", info.metadata()) as current:
            events = self.pool_calls.finish(
                reserved,
                lambda along: self.guard.settle(
                    f"plan {plan_id}",
                    self._run_planner(plan_id, trigger, info),
                    lambda run: lambda v: plan_events(v, plan_id, run, self.now()),
                    lambda error: (
                        lambda v: record.plan_failed(
                            v,
                            plan_id=plan_id,
                            at=self.now(),
                            failure_class=None,
                            evidence=None,
                            error=error,
                        )
                    ),
                    lambda: (
                        plan_id in self.view.plans
                        and self.view.plans[plan_id].status == "requested"
                    ),
                    along=along,
                ),
            )
            if events and isinstance(events[-1], RunEvent):
                record_event(current, events[-1])
        if events:
            self.progress(f"plan {plan_id}: {describe_run(events[-1])}")
        return events[-1] if events else None

    def _run_planner(self, plan_id: str, trigger: str, info: CallInfo) -> Callable[[], PlannerRun]:
        return partial(self.caller.planner, plan_id, trigger, info)

    def apply(self, action: Apply) -> None:
        plan_id = action.plan_id
        events = self.guard.settle(
            f"plan {plan_id}",
            lambda: None,
            lambda _: lambda v: record.apply_plan(v, plan_id=plan_id, at=self.now()),
            lambda error: partial(
                verbs.reject_plan,
                plan_id=plan_id,
                reason=f"governor could not apply it: {error}",
                at=self.now(),
                actor="governor",
            ),
            lambda: plan_id in self.view.plans and self.view.plans[plan_id].status == "proposed",
        )
        if not events or events[-1].type == "plan.rejected":
            return
        n = len(events) - 1
        self.progress(
            f"plan {plan_id} applied: {n} work item{'s' if n != 1 else ''}"
            if events[-1].type == "plan.applied"
            else f"plan {plan_id}: the goal is complete"
        )

    def park(self, action: Park) -> None:
        """Record that the goal waits, uncharged, on a failing upstream."""
        if self.record(lambda v: park_goal(v, action.outage, at=self.now())):
            self.progress(action.outage.reason)

    def resume(self, action: Resume) -> None:
        """Record that the goal goes on now that its upstream is back."""
        events = self.record(lambda v: resume_goal(v, action.outage, at=self.now()))
        if events:
            self.progress(f"{action.outage.reason}; resumed ({len(events)} events)")

    def accept(self, action: Accept) -> None:
        for work_id in action.work_ids:
            if self.record(
                partial(verbs.accept_work, work_id=work_id, at=self.now(), actor="governor")
            ):
                self.progress(f"{work_id} accepted")

    def dispatch(self, action: Dispatch) -> None:
        """Start (or continue) attempts, each with its call's reservation against the
        goal's pools in the same append (SPEC §13.6), run the workers concurrently, record
        each finish with its settlement."""
        started: list[tuple[str, str]] = []
        reserved: dict[str, Reserved] = {}
        try:
            for work_id in action.work_ids:
                held = reserved[work_id] = self.pool_calls.hold(self._profile_of(work_id))
                start = self._start(work_id, held)
                if start == "refused":
                    break  # a pool has no room: the goal waits (or was granted: next step)
                if start is None:  # no call runs: a reservation recorded with it is released
                    self.pool_calls.settle(reserved.pop(work_id), None)
                else:
                    started.append(start)
            if not started:
                return
            runs = [self.threads.submit(partial(self._work, s)) for s in started]
            try:
                for (item, run_id), run in zip(started, runs, strict=True):
                    finish = self._finish(item, run_id, run, reserved[item])
                    self.pool_calls.settle(reserved.pop(item), finish)
            except BaseException as stop:
                if not isinstance(stop, Exception):  # SIGTERM, Ctrl-C: the wait below
                    self.agents.end_own("interrupted")  # would wait for the agents to end
                raise
            finally:
                wait(runs)  # no call outlives its dispatch
        finally:
            for held in reserved.values():  # an exception ended the dispatch: never ran
                self.pool_calls.settle(held, None)

    def _profile_of(self, work_id: str) -> str:
        """The profile that runs the item's attempts."""
        created = self.view.created
        default = created.worker if created is not None else ""
        return self.view.work[work_id].spec.profile or default

    def _finish(
        self, item: str, run_id: str, run: Future[WorkerRun], reserved: Reserved
    ) -> Event | None:
        """Record what an attempt's run came to (or the exception that ended it), with
        the settlement of its call's reservation."""
        events = self.pool_calls.finish(
            reserved,
            lambda along: self.guard.settle(
                f"{item} attempt {self.view.work[item].attempt}",
                run.result,
                lambda done: partial(
                    finish_events,
                    work_id=item,
                    run_id=run_id,
                    run=done,
                    at=self.now(),
                    decider=self.decider,
                ),
                lambda error: partial(
                    record_work.finish_attempt,
                    work_id=item,
                    run_id=run_id,
                    at=self.now(),
                    outcome="failed",
                    error=error,
                ),
                lambda: self.view.work[item].running and self.view.work[item].run_id == run_id,
                along=along,
            ),
        )
        if not events:
            return None
        self.progress(f"{item} attempt {self.view.work[item].attempt}: {describe_run(events[0])}")
        if events[-1].type == "work.accepted":
            self.progress(f"{item} accepted")
        return events[0]

    def crash_text(self, exc: BaseException) -> str:
        """An exception as a recordable error (``governor.drive.crashes``)."""
        return self.guard.crash_text(exc)

    def wait(self, action: Wait) -> bool:
        """Sleep through a cooldown of at most ``max_wait_s``; False for a longer (or no) end."""
        if action.until is None:
            return False
        delay = (action.until - self.clock()).total_seconds()
        if delay > self.settings.max_wait_s:
            return False
        what = (
            "its pool to renew"  # SPEC §13.6: parked on a spent pool
            if self.view.budget_request is not None and self.decide().blocked_on == "budget"
            else "the outside service (until the cooldown ends)"
        )
        self.progress(f"waiting {max(delay, 0):.1f}s for {what}")
        self.sleep(max(delay, 0.0))
        return True

    def ask(self, action: Ask) -> bool:
        """A runner has nobody to ask: the drive ends, and the question waits for an answer
        (``governor work retry`` / ``governor resume``, or the LangGraph graph's interrupt)."""
        return False

    def _start(
        self, work_id: str, reserved: Reserved
    ) -> tuple[str, str] | Literal["refused"] | None:
        """Start (or continue) the item's attempt with its reservation in the same append:
        the item and run id; ``"refused"`` when a pool had no room (nothing recorded);
        None when no call is to run."""
        item = self.view.work[work_id]
        run_id = self.ids()

        def started(build: Build) -> list[Event] | None:
            return self.pool_calls.start(reserved, partial(self.record, build))

        if item.running:
            events = started(
                lambda v: record_work.continue_attempt(
                    v, work_id=work_id, run_id=run_id, at=self.now()
                )
            )
            if events is None:
                return "refused"
            if not events:
                return None
            if events[-1].type == "attempt.finished":
                self.progress(
                    f"{work_id} attempt {item.attempt} was lost too often; finished as lost (charged)"
                )
                return None
            self.progress(f"{work_id} attempt {item.attempt} was lost; continuing it")
        else:
            events = started(
                lambda v: record_work.start_attempt(
                    v, work_id=work_id, run_id=run_id, at=self.now()
                )
            )
            if events is None:
                return "refused"
            if not events:
                return None
            self.progress(f"{work_id} attempt {self.view.work[work_id].attempt} started")
        return work_id, run_id

    def _work(self, started: tuple[str, str]) -> WorkerRun:
        return self.caller.worker(*started)

    def reprobe(self, decision: Decision) -> bool:
        """Clear every environment stop whose binary can start now — the one the decision
        names and any other item's (``governor.core.blockers``); True if one was cleared."""
        cleared = False
        for blocker in blockers(self.view, decision):
            if blocker.kind != "precondition" or not blocker.reprobed:
                continue
            back = self.environment_back(blocker.work_id)
            if back is None:
                continue
            if self.record(self._clearing(*back)):
                self.progress(back[1])
                cleared = True
        return cleared

    def _clearing(self, work_id: str | None, reason: str) -> Build:
        """What clears the environment stop of ``work_id`` (None: the planner's)."""
        return lambda view: recovered(view, work_id, reason, at=self.now())

    def environment_back(self, work_id: str | None) -> tuple[str | None, str] | None:
        """Whether the environment stop of ``work_id`` (None: of the planner) is gone
        (``governor.drive.reprobe.environment_back``)."""
        return environment_back(self.view, work_id, self.harnesses, self.settings)

    def call_planner(self, plan_id: str) -> PlannerRun:
        """Run the planner of the plan in flight (its request is recorded); what it came to."""
        created = self.view.created
        assert created is not None
        info = CallInfo.of_planner(created, plan_id)
        with span("agent", info.metadata()):
            return self._run_planner(plan_id, self.view.plans[plan_id].trigger, info)()

    def call_worker(self, work_id: str, run_id: str) -> WorkerRun:
        """Run the worker of the item's attempt in flight under ``run_id``; what it came to."""
        return self._work((work_id, run_id))
