"""The runner: one goal, its lease, and the effects behind each node of the planning graph.

Rules (SPEC §6.3, §8):
    * The store is the truth. ``refresh`` folds whatever was appended since; a failed
      append (a conflict, a lost lease) reloads the view from the store.
    * Link before execute: ``plan.requested`` / ``attempt.started`` are appended (and
      committed) before the agent starts.
    * A plan or attempt found started but unfinished was lost (nodes run to completion
      while the lease is held): it is continued under the same id or number, free,
      until ``max_continuations``.
    * Every append carries the lease, so a runner whose lease was taken over cannot write.
    * Events are built against the current view by a function, so a conflicting append
      (an operator verb landing meanwhile) is rebuilt on the fresh view, not replayed stale.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path

from governor.clock import utc_now
from governor.core import record, verbs
from governor.core.charges import RunEvent, describe
from governor.core.classify import ENVIRONMENT_ERRNOS
from governor.core.decide import decide
from governor.core.decision import Decision
from governor.core.events import Event, Profile
from governor.core.parking import park_goal, resume_goal
from governor.core.route import Accept, Apply, Dispatch, Park, Plan, Resume, Wait
from governor.core.summary import summarize
from governor.core.upstream import UpstreamHealth
from governor.core.view import WorkState, fold, project
from governor.drive.append import Build, append_built
from governor.drive.upstreams import MonitorSettings, OnChange, UpstreamMonitor
from governor.errors import CommandRefusedError, LeaseError
from governor.exec.harness import Harness, harness_for
from governor.exec.startable import startable
from governor.store.base import EventStore, Lease
from governor.workflow.agent import AgentCall
from governor.workflow.briefs import planner_prompt, worker_prompt
from governor.workflow.run import (
    Runtime,
    WorkerRun,
    attempt_events,
    plan_events,
    run_planner,
    run_worker,
)

HarnessFactory = Callable[[Profile, Path], Harness]
Progress = Callable[[str], None]
Observer = Callable[[Sequence[Event]], None]
"""Told of every batch of events the runner appended, after the append committed."""


def new_run_id() -> str:
    return f"r-{uuid.uuid4().hex[:16]}"


def holder_id(role: str = "") -> str:
    """This process as a lease holder (and a service worker's id): ``[role:]host:pid``."""
    where = f"{socket.gethostname()}:{os.getpid()}"
    return f"{role}:{where}" if role else where


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
    ) -> None:
        self.store, self.goal_id, self.settings = store, goal_id, settings
        self.harnesses, self.observer = harnesses, observer
        self.clock, self.sleep, self.ids = clock, sleep, ids
        self.runtime = runtime or Runtime(sleep=sleep)
        self.progress = progress or (lambda _message: None)
        self.view = project(store.load(goal_id))
        self.monitor = UpstreamMonitor(
            store,
            MonitorSettings(settings.workdir, self._env(), settings.holder),
            clock=clock,
            harnesses=harnesses,
            on_change=on_upstream,
        )
        self.lease: Lease | None = None
        self._lock = threading.RLock()
        self._heartbeat: threading.Event | None = None

    # ------------------------------------------------------------ plumbing

    def now(self) -> datetime:
        """The time for the next event: never earlier than the last one recorded."""
        now = self.clock()
        return max(now, self.view.last_at) if self.view.last_at else now

    @property
    def title(self) -> str:
        return self.view.created.title if self.view.created else self.goal_id

    def settle(self) -> Decision:
        """The decision now, after clearing environment stops whose binary came back and
        probing the failing upstream the goal is parked on when its probe is due."""
        decision = self.decide()
        while (decision.is_stopped and self.reprobe(decision)) or self.probe(decision):
            decision = self.decide()
        return decision

    def decide(self, *, with_ledger: bool = False) -> Decision:
        """The goal's decision now, given the shared health of its upstreams; the full
        ledger only when asked (routing never reads it)."""
        return decide(self.view, self.clock(), with_ledger=with_ledger, upstreams=self.upstreams())

    def upstreams(self) -> dict[str, UpstreamHealth]:
        """The shared health of the upstreams the goal's profiles reach (by profile name)."""
        created = self.view.created
        return self.monitor.health(created.profiles) if created is not None else {}

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

    def record(self, build: Build) -> list[Event]:
        """Build events on the current view and append them; rebuild on a conflict.

        Returns no events when the goal ended meanwhile (an operator cancelled it): nothing
        may follow its end, so what the run observed is not recorded.
        """
        with self._lock:
            try:
                self.view, events = append_built(
                    self.store, self.view, build, self.clock, lease=self.lease
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

    def acquire(self) -> Lease:
        """Take the goal's lease and keep it alive with a heartbeat thread."""
        self.lease = self.store.acquire_lease(
            self.goal_id, self.settings.holder, ttl_s=self.settings.lease_ttl_s
        )
        stop = self._heartbeat = threading.Event()
        threading.Thread(
            target=self._beat, args=(stop,), daemon=True, name=f"lease:{self.goal_id}"
        ).start()
        return self.lease

    def _beat(self, stop: threading.Event) -> None:
        while not stop.wait(self.settings.lease_ttl_s / 3):
            try:
                with self._lock:
                    if self.lease is not None:
                        self.lease = self.store.renew_lease(
                            self.lease, ttl_s=self.settings.lease_ttl_s
                        )
            except LeaseError:
                return  # the next append is refused by the fencing token; the run stops there

    def release(self) -> None:
        if self._heartbeat is not None:
            self._heartbeat.set()
        with self._lock:
            if self.lease is not None:
                self.store.release_lease(self.lease)
                self.lease = None

    # ------------------------------------------------------------ agents

    def _profile(self, name: str) -> Profile:
        created = self.view.created
        assert created is not None
        return created.profiles[name]

    def _env(self) -> dict[str, str]:
        env = dict(self.settings.env)
        if self.settings.state_dir is not None:
            env["GOVERNOR_SCRIPTED_STATE"] = str(self.settings.state_dir / self.goal_id)
        return env

    def _call(self, agent: str, profile_name: str, prompt: str) -> AgentCall:
        profile = self._profile(profile_name)
        backoff = self.view.policy.upstream_backoff
        harness = self.monitor.wrap(
            self.harnesses(profile, self.settings.workdir), profile, backoff
        )
        return AgentCall(
            agent,
            harness,
            profile,
            prompt,
            self.settings.workdir,
            self._env(),
            profile_name,
            parked=lambda: self.monitor.is_failing(profile),
        )

    # ------------------------------------------------------------ actions

    def plan(self, action: Plan) -> None:
        """Request a plan (or continue a lost one), run the planner, record its outcome."""
        if action.plan_id is not None:
            plan_id, trigger = action.plan_id, self.view.plans[action.plan_id].trigger
            events = self.record(lambda v: record.continue_plan(v, plan_id=plan_id, at=self.now()))
            if not events:
                return
            if events[-1].type == "plan.failed":
                self.progress(f"plan {plan_id} was lost too often; recorded as a charged failure")
                return
            self.progress(f"plan {plan_id} ({trigger}) was lost; continuing it")
        else:
            plan_id, trigger = f"p{self.view.plans_used + 1}", action.trigger or "initial"
            if not self.record(
                partial(record.request_plan, plan_id=plan_id, trigger=trigger, at=self.now())
            ):
                return
            self.progress(f"plan {plan_id} ({trigger}) requested")
        prompt = planner_prompt(self.view, trigger, self.clock())
        created = self.view.created
        assert created is not None
        run = run_planner(
            self._call("planner", created.planner, prompt), self.view, runtime=self.runtime
        )
        events = self.record(lambda v: plan_events(v, plan_id, run, self.now()))
        if events:
            self.progress(f"plan {plan_id}: {_describe(events[-1])}")

    def apply(self, action: Apply) -> None:
        plan_id = action.plan_id
        events = self.record(lambda v: record.apply_plan(v, plan_id=plan_id, at=self.now()))
        if not events:
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
        """Start (or continue) attempts, run the workers concurrently, record each finish."""
        starts = [self._start(w) for w in action.work_ids]
        started = [s for s in starts if s is not None]
        if not started:
            return
        with ThreadPoolExecutor(max_workers=len(started)) as pool:
            for (item, run_id), run in zip(started, pool.map(self._work, started), strict=True):
                events = self.record(
                    partial(attempt_events, work_id=item, run_id=run_id, run=run, at=self.now())
                )
                if not events:
                    continue
                self.progress(
                    f"{item} attempt {self.view.work[item].attempt}: {_describe(events[-1])}"
                )

    def wait(self, action: Wait) -> bool:
        """Sleep through a cooldown of at most ``max_wait_s``; False for a longer (or no) end."""
        if action.until is None:
            return False
        delay = (action.until - self.clock()).total_seconds()
        if delay > self.settings.max_wait_s:
            return False
        self.progress(
            f"waiting {max(delay, 0):.1f}s for the outside service (until the cooldown ends)"
        )
        self.sleep(max(delay, 0.0))
        return True

    def _start(self, work_id: str) -> tuple[str, str] | None:
        item = self.view.work[work_id]
        run_id = self.ids()
        if item.running:
            events = self.record(
                lambda v: record.continue_attempt(v, work_id=work_id, run_id=run_id, at=self.now())
            )
            if not events:
                return None
            if events[-1].type == "attempt.finished":
                self.progress(
                    f"{work_id} attempt {item.attempt} was lost too often; finished as lost (charged)"
                )
                return None
            self.progress(f"{work_id} attempt {item.attempt} was lost; continuing it")
        elif self.record(
            lambda v: record.start_attempt(v, work_id=work_id, run_id=run_id, at=self.now())
        ):
            self.progress(f"{work_id} attempt {self.view.work[work_id].attempt} started")
        else:
            return None
        return work_id, run_id

    def _work(self, started: tuple[str, str]) -> WorkerRun:
        work_id, _ = started
        with self._lock:
            item: WorkState = self.view.work[work_id]
            prompt = worker_prompt(self.view, item)
            profile = item.spec.profile
        return run_worker(
            self._call(f"worker:{work_id}", profile, prompt),
            item.spec.acceptance,
            runtime=self.runtime,
        )

    def reprobe(self, decision: Decision) -> bool:
        """Clear an environment stop whose binary can start now; True if cleared.

        A binary that was missing (``ENOENT``), not executable (``EACCES``) or of a format
        the kernel refused (``ENOEXEC``) is looked at again (never run) by
        ``governor.exec.startable``; once the cause is gone the stop is cleared.
        """
        if decision.blocked_on != "environment":
            return False
        item = self.view.work.get(decision.work_ids[0]) if decision.work_ids else None
        failure = (
            item.finish
            if item
            else (self.view.latest_plan.failure if self.view.latest_plan else None)
        )
        created = self.view.created
        if (
            failure is None
            or created is None
            or failure.evidence is None
            or failure.evidence.ref not in ENVIRONMENT_ERRNOS
        ):
            return False
        cause = failure.evidence.ref
        profile = self._profile(item.spec.profile if item else created.planner)
        binary = self.harnesses(profile, self.settings.workdir).binary(profile)
        path = self.settings.env.get("PATH")
        found = binary and startable(binary, path, errno=cause)
        if not binary or not found:
            return False
        where = "" if found == binary else f" ({found})"
        now = {"ENOENT": "is there now", "EACCES": "is executable now"}.get(
            cause, "begins as a script or binary now"
        )
        reason = f"re-probed the environment ({cause} before): {binary} {now}{where}"
        if item is None:
            self.record(
                lambda v: verbs.resume_goal(v, reason=reason, at=self.now(), actor="governor")
            )
        else:
            work_id = item.work_id
            self.record(
                lambda v: verbs.retry_work(
                    v, work_id=work_id, reason=reason, at=self.now(), actor="governor"
                )
            )
        self.progress(reason)
        return True


def _describe(event: Event) -> str:
    """The progress line's account of a finished run (charged or not, its tries)."""
    if isinstance(event, RunEvent):
        return describe(event)
    return event.type  # pragma: no cover - a run always ends in one of RunEvent
