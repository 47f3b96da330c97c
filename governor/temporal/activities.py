"""The activities of a goal's workflow: the store, the agents, the probes (SPEC §12.11).

Rules:
    * Store activities (load, append, the lease, the re-probe) are short and safe to
      retry (a run under ``steps.LEAN_HISTORY`` runs load, append and the lease as local
      activities: run again after a workflow task that failed). Each load, append and
      renewal first checks that the store still holds the event the workflow folded last
      (its seq and digest): a store behind the workflow (a restore, a lossy failover) is
      answered ``behind`` and the workflow fails (the store is the truth; SPEC §13.9).
      The append is idempotent on (goal, expected seq, content): a try whose commit
      landed but whose answer was lost finds its own events stored after the expected
      seq and answers ``done``; other events there are a conflict, answered with them so
      the workflow folds them and builds again. A store refusal of the
      events is answered, not raised; a lost lease names who holds it now.
    * A call runs one planner or worker run exactly as ``governor run`` does (the
      runner's ``call_planner`` / ``call_worker``: the same prompts, harnesses, in-agent
      retry, upstream observation, agents recorded under the goal's lease) and records
      nothing: it answers what the run came to. An exception while running is answered
      as ``crash`` (the workflow records the charged failure it is); only a store failure
      is raised, and Temporal never retries a call (``maximum_attempts=1``): the workflow
      continues the lost run (SPEC §6.3).
    * Before a continuation runs, the lost run's agents are gone: killed here when they
      run on this machine, waited for (``kill_grace_s``) when on another, whose worker
      kills them once it cannot reach the server (``governor.temporal.watch``).
    * A probe is claimed in the store, one per upstream per back-off step for the whole
      fleet; when it changed the record, the goals parked on that upstream are woken.
    * The pools' steps (reserve, settle, the pool's own grant) write only the pools the
      goal's ``goal.created`` names, through ``governor.drive.pools``; each is safe to run
      again (a call reserved or settled already, a grant made already, is left alone).
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

from temporalio import activity
from temporalio.client import Client

from governor.analysis.asking import need_in
from governor.clock import utc_now
from governor.core.event_fields import Profile
from governor.core.events import Event
from governor.core.fold import fold, project
from governor.core.pools import Figure, PoolGranted, asked_attempts, asked_usd
from governor.core.upstream import UpstreamHealth
from governor.core.view import GoalView
from governor.core.wire.codec import encode
from governor.drive import pools
from governor.drive.health import MonitorSettings, UpstreamMonitor
from governor.drive.runner import Runner, RunnerSettings
from governor.errors import ConcurrencyConflictError, GovernorError, LeaseError, StoreError
from governor.exec.harness import harness_for
from governor.exec.procinfo import this_machine
from governor.service.logs import JsonLog
from governor.service.observe import Counters, Observation
from governor.store.base import EventStore
from governor.store.url import open_store
from governor.temporal.names import (
    READY_SIGNAL,
    READY_UPDATE,
    WAKE_SIGNAL,
    Driver,
    workflow_id_of,
)
from governor.temporal.watch import Contact, supervise
from governor.temporal.wire import (
    Appended,
    AppendRequest,
    CallRequest,
    ExpectRequest,
    Health,
    LeaseAnswer,
    LeaseRequest,
    Loaded,
    LoadRequest,
    Observed,
    PoolGrantRequest,
    Probed,
    ProbeRequest,
    Recovery,
    ReprobeRequest,
    Reservations,
    ReserveRequest,
    SettleRequest,
    contents,
    digest,
)

START_POLL_S: Final = 0.02
"""How often a ready call of an old workflow looks for its start in the store."""
ASK_POLL_S: Final = 0.1
"""How often a call waiting for its workflow's answer looks whether it was killed."""
SIGNAL_TIMEOUT_S: Final = 60.0
VIEWS_KEPT: Final = 256
"""Goals whose latest view a worker process keeps."""


@dataclass(frozen=True, slots=True)
class WorkerConfig:
    """What one worker process needs, read once by the command line."""

    driver: Driver
    workdir: Path
    env: Mapping[str, str]
    store_url: str | None = None
    """The store (None: ``GOVERNOR_STORE``, else the default file)."""
    log_file: Path | None = None


class Activities:
    """The activities one worker process hosts; see the module rules."""

    def __init__(
        self, config: WorkerConfig, client: Client, contact: Contact, *, max_calls: int = 8
    ) -> None:
        self.config, self.client, self.contact = config, client, contact
        self.log = JsonLog(config.log_file, config.env, worker=config.driver.holder)
        self.observation = Observation(self.log, Counters())
        """Log lines as ``serve`` writes them: agent calls, upstreams down and up."""
        self.calls = ThreadPoolExecutor(max_calls, thread_name_prefix="call")
        """One thread per call slot: a call waits on its thread for its start to be recorded."""
        self.probes = ThreadPoolExecutor(4, thread_name_prefix="probe")
        self._local = threading.local()
        self._profiles: dict[str, Mapping[str, Profile]] = {}
        self._views: dict[str, GoalView] = {}
        """The latest view of each goal this process folded: a call copies it and folds
        only what was appended since (a goal of thousands of events is not re-read)."""
        self._views_lock = threading.Lock()

    # ---------------------------------------------------------------- plumbing

    def store(self) -> EventStore:
        """This thread's store (one connection per thread)."""
        store: EventStore | None = getattr(self._local, "store", None)
        if store is None:
            store = self._local.store = open_store(self.config.store_url)
        return store

    def settings(self, holder: str) -> RunnerSettings:
        workdir = self.config.workdir
        state_dir = workdir / ".governor" / "scripted"
        return RunnerSettings(
            workdir=workdir, env=self.config.env, holder=holder, state_dir=state_dir
        )

    def runner(self, goal_id: str, holder: str) -> Runner:
        """A runner of the goal, its view up to date (from this process's last one)."""
        with self._views_lock:
            known = self._views.get(goal_id)
            view = known.copy() if known is not None else None
        runner = Runner(
            self.store(),
            goal_id,
            self.settings(holder),
            progress=lambda text: self.log.write("progress", utc_now(), goal=goal_id, text=text),
            harnesses=harness_for,
            on_upstream=self.observation.upstream,
            view=view,
        )
        self.keep(runner.view)
        return runner

    def keep(self, view: GoalView) -> None:
        """Remember a copy of ``view`` if it is the newest of its goal."""
        with self._views_lock:
            known = self._views.pop(view.goal_id, None)
            self._views[view.goal_id] = known if known and known.seq >= view.seq else view.copy()
            if len(self._views) > VIEWS_KEPT:
                del self._views[next(iter(self._views))]  # the least recently used

    def monitor(self, store: EventStore) -> UpstreamMonitor:
        c = self.config
        return UpstreamMonitor(
            store,
            MonitorSettings(c.workdir, c.env, c.driver.holder),
            clock=utc_now,
            harnesses=harness_for,
            on_change=self.observation.upstream,
        )

    def profiles(self, store: EventStore, goal_id: str) -> Mapping[str, Profile]:
        """The goal's profiles (its ``goal.created`` never changes)."""
        if goal_id not in self._profiles:
            first = next(iter(store.load(goal_id)), None)
            created = first if first is not None and first.type == "goal.created" else None
            self._profiles[goal_id] = created.profiles if created is not None else {}
        return self._profiles[goal_id]

    def health(self, store: EventStore, goal_id: str) -> Health:
        return self.monitor(store).health(self.profiles(store, goal_id))

    # ---------------------------------------------------------------- the store

    @activity.defn(name="governor.load")
    def load(self, request: LoadRequest) -> Loaded:
        """A page of the goal's events after ``after_seq``, and its upstreams' health;
        ``behind`` when the store does not hold the event the workflow folded there."""
        store, goal_id, after = self.store(), request.goal_id, request.after_seq
        events: list[Event] = []
        stored = iter(store.load(goal_id, after_seq=max(after - 1, 0)))
        if after > 0:
            why = behind(store, goal_id, after, request.digest, next(stored, None))
            if why is not None:
                return Loaded([], False, {}, behind=why)
        more = False
        for event in stored:
            if len(events) == request.limit:
                more = True
                break
            events.append(event)
        last = digest(events[-1]) if events else request.digest
        return Loaded(events, more, self.health(store, goal_id), digest=last)

    @activity.defn(name="governor.append")
    def append(self, request: AppendRequest) -> Appended:
        """Append the workflow's events (idempotent, fenced; see the module rules)."""
        store, goal_id, expected = self.store(), request.goal_id, request.expected_seq
        if expected > 0:
            stored = iter(store.load(goal_id, after_seq=expected - 1))
            why = behind(store, goal_id, expected, request.digest, next(stored, None))
            if why is not None:
                return Appended(False, [], {}, behind=why)
        try:
            store.append(
                goal_id,
                request.events,
                expected_seq=expected,
                lease=request.lease,
                summary=request.summary,
            )
        except ConcurrencyConflictError:
            stored_after = list(store.load(goal_id, after_seq=expected))
            n = len(request.events)
            done = [encode(e) for e in stored_after[:n]] == [encode(e) for e in request.events]
            newer = stored_after[n:] if done else stored_after
            if not done and not newer:  # not ours, and nothing newer: the store moved back
                why = f"the store holds the goal up to seq {store.last_seq(goal_id)}"
                return Appended(False, [], {}, behind=why)
            last = digest(stored_after[-1]) if stored_after else request.digest
            content = contents(request.events) if done else None
            return Appended(done, newer, self.health(store, goal_id), digest=last, content=content)
        except LeaseError as exc:
            return Appended(False, [], {}, taken_over_by=exc.holder or "another runner")
        except StoreError:
            raise  # the store failed: Temporal tries again (the append is idempotent)
        except GovernorError as exc:  # the store refused the events: nothing was written
            return Appended(False, [], {}, refused=str(exc), refused_as=type(exc).__name__)
        self.observation.appended(request.events)
        last = digest(request.events[-1])
        return Appended(
            True, [], self.health(store, goal_id), digest=last, content=contents(request.events)
        )

    @activity.defn(name="governor.lease")
    def lease(self, request: LeaseRequest) -> LeaseAnswer:
        """Claim the goal's lease for this server's holder name, or renew the one given."""
        store = self.store()
        try:
            if request.lease is None:
                holder = self.config.driver.holder
                return LeaseAnswer(
                    store.acquire_lease(request.goal_id, holder, ttl_s=request.ttl_s)
                )
            if request.seq > 0:
                stored = store.load(request.goal_id, after_seq=request.seq - 1)
                first = next(stored, None)
                why = behind(store, request.goal_id, request.seq, request.digest, first)
                if why is not None:
                    return LeaseAnswer(request.lease, behind=why)
            return LeaseAnswer(store.renew_lease(request.lease, ttl_s=request.ttl_s))
        except LeaseError as exc:
            current = store.current_lease(request.goal_id)
            return LeaseAnswer(None, held_by=current.holder if current else exc.holder or "nobody")

    @activity.defn(name="governor.release")
    def release(self, request: LeaseRequest) -> None:
        if request.lease is not None:
            self.store().release_lease(request.lease)

    @activity.defn(name="governor.reprobe")
    def reprobe(self, request: ReprobeRequest) -> Recovery | None:
        """Whether the environment stop's cause is gone (the binary is there now)."""
        runner = self.runner(request.goal_id, self.config.driver.holder)
        back = runner.environment_back(request.work_id)
        return Recovery(*back) if back is not None else None

    @activity.defn(name="governor.cancelled_by")
    async def cancelled_by(self, run_id: str) -> str:
        """The identity that asked Temporal to cancel the calling workflow's run (its
        history's cancel request; ``unknown`` when it names none)."""
        workflow_id = activity.info().workflow_id
        if workflow_id is None:
            return "unknown"
        handle = self.client.get_workflow_handle(workflow_id, run_id=run_id)
        identity = ""
        async for event in handle.fetch_history_events():
            if event.HasField("workflow_execution_cancel_requested_event_attributes"):
                identity = event.workflow_execution_cancel_requested_event_attributes.identity
        return identity.strip() or "unknown"

    # ---------------------------------------------------------------- pools

    def view(self, store: EventStore, goal_id: str) -> GoalView:
        """The goal's view as the store holds it now (from this process's last one)."""
        with self._views_lock:
            known = self._views.get(goal_id)
            view = known.copy() if known is not None else None
        if view is None:
            view = project(store.load(goal_id))
        else:
            fold(view, store.load(goal_id, after_seq=view.seq))
        self.keep(view)
        return view

    @activity.defn(name="governor.reserve")
    def reserve(self, request: ReserveRequest) -> Reservations:
        """Reserve each call's expected figure against every pool the goal's
        ``goal.created`` names, in order, each in one transaction; stop at the first
        refusal (SPEC §13.6). A call reserved already (a try whose answer was lost) is
        not reserved again."""
        store, goal_id = self.store(), request.goal_id
        view = self.view(store, goal_id)
        names, created = pools.pools_of(view), view.created
        held: list[str] = []
        for call, profile in request.calls:
            given = created.profiles.get(profile) if created is not None else None
            ask = pools.expected_figure(view, profile, given.reserve_usd if given else None)
            states = [store.pool_state(name) for name in names]
            if names and all(s is not None and call in s.in_flight for s in states):
                held.append(call)
                continue
            refused = pools.reserve(store, names, goal_id, call, ask, now=utc_now())
            if refused is not None:
                state = store.pool_state(refused.pool)
                limits = state.limits if state is not None else None
                grants = limits.grants if limits else None
                return Reservations(held, refused, ask, grants, need_in(store)(view))
            held.append(call)
        return Reservations(held)

    @activity.defn(name="governor.expected")
    def expected(self, request: ExpectRequest) -> Figure:
        """What a call of the profile is expected to spend, as the runner sizes a request
        on the goal's own budget (``PoolCalls.own_budget``)."""
        store = self.store()
        view = self.view(store, request.goal_id)
        expected = pools.expected_figure(view, request.profile)
        if not request.asking:
            return expected
        need = need_in(store)(view)
        return Figure(usd=asked_usd(expected.usd, need), attempts=asked_attempts(need))

    @activity.defn(name="governor.settle")
    def settle(self, request: SettleRequest) -> None:
        """Settle (or release) each call's reservation on every pool of the goal (a call
        settled already is left alone: safe to run again)."""
        store = self.store()
        names = pools.pools_of(self.view(store, request.goal_id))
        for call, figure in request.figures:
            pools.settle(store, names, request.goal_id, call, figure, now=utc_now())

    @activity.defn(name="governor.pool_grant")
    def pool_grant(self, request: PoolGrantRequest) -> int:
        """Record the pool's grant by its own rule (``pool.granted``, actor ``policy``);
        its seq. A grant made by an earlier try (same goal, same time) is not made again."""
        store, r = self.store(), request
        if r.pool not in pools.pools_of(self.view(store, r.goal_id)):
            raise ValueError(f"goal {r.goal_id} does not name pool {r.pool}")
        for event in store.pool_events(r.pool):
            if isinstance(event, PoolGranted) and (event.goal_id, event.at) == (r.goal_id, r.at):
                return event.seq
        granted = pools.grant_pool(
            store, r.pool, r.figure, expires_s=r.expires_s, at=r.at, actor="policy",
            rule=r.rule, goal_id=r.goal_id, reason=f"at or under pool {r.pool}'s {r.rule}",
        )  # fmt: skip
        return granted.seq

    # ---------------------------------------------------------------- agents

    @activity.defn(name="governor.call")
    async def call(self, request: CallRequest) -> Observed:
        """One planner or worker run (see the module rules), heartbeating meanwhile."""
        loop = asyncio.get_running_loop()
        run = _Call(self, request, loop, activity.info().workflow_id or "")
        context = contextvars.copy_context()  # the thread heartbeats nothing, but logs and spans
        running = loop.run_in_executor(self.calls, context.run, run.run)
        return await supervise(running, run.kill, self.contact)

    # ---------------------------------------------------------------- upstreams

    @activity.defn(name="governor.probe")
    async def probe(self, request: ProbeRequest) -> Probed:
        """Claim and run the parked profile's upstream probe when it is due; wake the goals
        parked on that upstream when it changed the record."""
        loop = asyncio.get_running_loop()
        context = contextvars.copy_context()
        probed, after = await loop.run_in_executor(self.probes, context.run, self._probe, request)
        if after is not None:
            await self._wake(after, request.goal_id)
        return probed

    def _probe(self, request: ProbeRequest) -> tuple[Probed, UpstreamHealth | None]:
        store = self.store()
        profiles = self.profiles(store, request.goal_id)
        monitor = self.monitor(store)
        profile = profiles.get(request.profile)
        after = monitor.probe(profile) if profile is not None else None
        return Probed(after is not None, monitor.health(profiles)), after

    async def _wake(self, record: UpstreamHealth, prober: str) -> None:
        """Signal the workflows of the goals parked on ``record``'s upstream."""
        loop = asyncio.get_running_loop()

        def parked() -> list[str]:
            store = self.store()
            return [
                workflow_id_of(store, s.goal_id)
                for s in store.goals(statuses=["waiting"])
                if s.upstream == record.upstream and s.goal_id != prober
            ]

        for workflow in await loop.run_in_executor(self.probes, parked):
            handle = self.client.get_workflow_handle(workflow)
            try:
                await handle.signal(WAKE_SIGNAL)
            except Exception:  # noqa: S112 - a goal no workflow drives wakes at its own timer
                continue


class _Call:
    """One call's run on its thread, and the way to kill its agent from the event loop.

    The run: end a lost run's agents; if the upstream the call would reach is known to
    fail, end at once (``held``: the workflow parks the goal); else ask the workflow to
    record its start (``ask_ready``; a call of a workflow whose code predates it signals
    and reads the store until the start is there: ``wait_started``), then run the agent.
    """

    def __init__(
        self,
        activities: Activities,
        request: CallRequest,
        loop: asyncio.AbstractEventLoop,
        workflow_id: str,
    ) -> None:
        self.activities, self.request, self.loop = activities, request, loop
        self.workflow_id = workflow_id
        self.run_name = request.run_id or request.plan_id or ""
        self.runner: Runner | None = None
        self.killed: str | None = None

    def kill(self, why: str) -> None:
        self.killed = why
        runner = self.runner
        if runner is not None:
            runner.agents.end_own(why, runs={self.run_name})

    def run(self) -> Observed:
        r = self.request
        runner = self.activities.runner(r.goal_id, r.lease.holder)
        runner.lease = r.lease  # agents are recorded under the workflow's lease
        self.runner = runner
        if r.lost:
            self.end_lost(runner)
        failing = self.failing(runner)
        if failing is not None:
            return Observed(held=failing)
        begun = self.ask_ready(runner) if r.ready_update else self.wait_started(runner)
        if not begun or not _in_flight(runner.view, r):
            return Observed()  # cancelled, or settled meanwhile: nothing runs
        try:
            if r.work_id is not None and r.run_id is not None:
                return Observed(worker=replace(runner.call_worker(r.work_id, r.run_id), prompt=""))
            assert r.plan_id is not None
            return Observed(planner=replace(runner.call_planner(r.plan_id), prompt=""))
        except StoreError:
            raise
        except Exception as exc:  # the crash-loop guard (runner.py): a charged failure
            return Observed(crash=runner.crash_text(exc))

    def failing(self, runner: Runner) -> str | None:
        """The upstream this call would reach, when it is known to be failing."""
        created, r = runner.view.created, self.request
        if created is None:
            return None
        item = runner.view.work.get(r.work_id) if r.work_id else None
        profile = created.profiles[item.spec.profile if item else created.planner]
        if not runner.monitor.is_failing(profile):
            return None
        return runner.monitor.upstream(profile).name

    def ask_ready(self, runner: Runner) -> bool:
        """Ask the workflow to record this call's start (``names.READY_UPDATE``) and fold
        the store up to it; False when the run may not go on (the workflow said so, the
        call was cancelled, the workflow did not answer)."""
        handle = self.activities.client.get_workflow_handle(self.workflow_id)
        asking = handle.execute_update(READY_UPDATE, self.run_name, result_type=int)
        answer = asyncio.run_coroutine_threadsafe(asking, self.loop)
        deadline = time.monotonic() + SIGNAL_TIMEOUT_S
        seq = 0
        while self.killed is None and time.monotonic() < deadline:
            try:
                seq = answer.result(timeout=ASK_POLL_S)
                break
            except TimeoutError:
                continue
            except Exception:  # the workflow is gone or refused the update: nothing runs
                return False
        else:
            answer.cancel()
            return False
        if seq <= 0:
            return False
        fold(
            runner.view,
            self.activities.store().load(self.request.goal_id, after_seq=runner.view.seq),
        )
        return True

    def wait_started(self, runner: Runner) -> bool:
        """Signal ``ready``, then fold the store into the runner's view until it holds this
        call's start; False when the call was cancelled first (a call of a workflow whose
        code predates ``ask_ready``)."""
        handle = self.activities.client.get_workflow_handle(self.workflow_id)
        signal = handle.signal(READY_SIGNAL, self.run_name)
        asyncio.run_coroutine_threadsafe(signal, self.loop).result(timeout=SIGNAL_TIMEOUT_S)
        store, r = self.activities.store(), self.request
        while self.killed is None:
            events = list(store.load(r.goal_id, after_seq=runner.view.seq))
            fold(runner.view, events)
            if any(_starts(e, r) for e in events):
                return True
            time.sleep(START_POLL_S)
        return False

    def end_lost(self, runner: Runner) -> None:
        """Make sure the lost runs' agents are gone (the module rules)."""
        r, store = self.request, self.activities.store()
        host, _ = this_machine()
        deadline = time.monotonic() + r.kill_grace_s
        while time.monotonic() < deadline and any(
            a.run in r.lost and a.host != host for a in store.agents(r.goal_id)
        ):
            time.sleep(0.2)
        runner.agents.end_previous(runs=set(r.lost))


def behind(
    store: EventStore, goal_id: str, seq: int, folded: str | None, stored: Event | None
) -> str | None:
    """Why the store does not hold what a workflow folded up to ``seq`` (its event's
    digest ``folded``; ``stored``: the store's event at ``seq``, if any), or None."""
    if stored is None or stored.seq != seq:
        return f"the store holds the goal up to seq {store.last_seq(goal_id)}, the workflow folded {seq}"
    if folded is not None and digest(stored) != folded:
        return f"the store's event {seq} is not the one the workflow folded"
    return None


def _starts(event: Event, request: CallRequest) -> bool:
    """Whether ``event`` records the start (or continuation) of the request's run."""
    if request.work_id is not None:
        return (
            event.type in ("attempt.started", "attempt.continued")
            and event.run_id == request.run_id
        )
    return event.type in ("plan.requested", "plan.continued") and event.plan_id == request.plan_id


def _in_flight(view: GoalView, request: CallRequest) -> bool:
    """Whether the store still has the call's run in flight (else someone settled it)."""
    if request.work_id is not None:
        item = view.work.get(request.work_id)
        return (
            item is not None and item.running and item.run_id == request.run_id and not view.ended
        )
    plan = view.plans.get(request.plan_id or "")
    return plan is not None and plan.status == "requested" and not view.ended


def activities_of(hosted: Activities) -> tuple[list[Any], list[Any]]:
    """The store activities (the workflow's task queue) and the agent calls (its twin)."""
    store = [
        hosted.load,
        hosted.append,
        hosted.lease,
        hosted.release,
        hosted.reprobe,
        hosted.probe,
        hosted.cancelled_by,
        hosted.reserve,
        hosted.settle,
        hosted.pool_grant,
        hosted.expected,
    ]
    return store, [hosted.call]
