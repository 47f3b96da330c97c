"""A goal's steps in workflow code: governor's actions, built on the workflow's own view.

Rules (this runs inside the workflow, so it is deterministic):
    * Every event is built by the core (``record``, ``verbs``, ``parking``) on the
      workflow's view, at ``workflow.now()`` (never before the last event), and appended
      through the append activity under one lock: one writer, be it the main loop or an
      operator's update. A conflict folds what the store holds newer and builds again.
      Under ``LEAN_HISTORY`` the store's activities are local and a plan's outcome is
      appended with the recordings that follow it at once (``chained``).
    * A plan's or an attempt's start is recorded once its call is cleared to run
      (``calls.py``), before its agent runs. A call that fails (its worker lost, its
      heartbeat silent, cancelled) records nothing: the next decision finds the run in
      flight and continues it (SPEC §6.3), its old agent gone first.
    * The runner's crash-loop guard: a run whose outcome cannot be recorded is recorded
      as the charged failure it is; a run an operator settled meanwhile is dropped.
    * The store's failures are retried by Temporal (every store activity is safe to
      retry); one it cannot get past fails the workflow with its message, and the goal
      stays as the store has it, for ``governor temporal start`` to take up again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime, timedelta
from functools import partial
from typing import Any, Final, TypeVar

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, CancelledError

from governor.core import record
from governor.core.decision import Decision
from governor.core.events import Event
from governor.core.fold import fold
from governor.core.record_park import park_goal, resume_goal
from governor.core.route import Accept, Action, Apply, Dispatch, Park, Plan, Resume, route
from governor.core.rules.decider import Decider
from governor.core.summary import summarize
from governor.core.verbs import accept_work, reject_plan
from governor.core.view import GoalView
from governor.drive.reprobe import recovered
from governor.errors import (
    CommandRefusedError,
    GovernorError,
    InputError,
    NotFoundError,
)
from governor.temporal.calls import Build, Call, Run, crash_text, finishes, starts
from governor.temporal.names import agents_queue
from governor.temporal.pooling import Ask, Pools
from governor.temporal.wire import (
    Appended,
    AppendRequest,
    CallRequest,
    GoalStart,
    LeaseAnswer,
    LeaseRequest,
    Loaded,
    LoadRequest,
    Observed,
    Probed,
    ProbeRequest,
    Recovery,
    ReprobeRequest,
)
from governor.workflow.run import plan_events

T = TypeVar("T")
CONFLICT_BACKOFF: Final = "governor-conflict-backoff"
"""The patch (``workflow.patched``) that added the back-off between conflicting appends."""
LEAN_HISTORY: Final = "governor-lean-history"
"""The patch (issue 34) after which the store's own activities (``LOCAL``) run as local
activities — in the workflow task, no round trip through the server, in the history one
marker holding the answer (the events written are in the store, not carried again) —,
a plan's outcome is appended with the recordings that follow it at once (``chained``),
and the visibility is published once per decision that waits (``workflow.py``)."""
LOCAL: Final = frozenset(
    {
        "governor.load",
        "governor.append",
        "governor.lease",
        "governor.release",
        "governor.reserve",
        "governor.settle",
        "governor.pool_grant",
        "governor.expected",
    }
)
"""The store activities run as local activities (``LEAN_HISTORY``): short, on the
workflow's own task queue, safe to run again (each is idempotent or fenced). The pools'
steps (``pooling``) are issued only by goals that name a pool."""
STORE_RETRY: Final = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    maximum_interval=timedelta(seconds=30),
    non_retryable_error_types=[
        "NotFoundError",
        "InputError",
        "ValueError",
        "TypeError",
        "KeyError",
        "AttributeError",
        "AssertionError",
    ],
)
"""Store activities: tried until the store answers; a bug or a missing goal fails at once."""
CALL_TIMEOUT: Final = timedelta(days=7)
"""A call's own limit; its agents have theirs (``timeout_s``), and liveness is the heartbeat."""
REFUSALS: Final[dict[str, type[GovernorError]]] = {
    "NotFoundError": NotFoundError,
    "CommandRefusedError": CommandRefusedError,
    "BudgetExhaustedError": CommandRefusedError,
}


MAX_CONFLICTS: Final = 20
"""Appends in a row the store refuses as conflicting before the workflow gives up."""


class StoreBehind(Exception):
    """The store does not hold what the workflow folded: it fails (the store is the truth)."""


def behind_message(goal_id: str, why: str) -> str:
    return (
        f"goal {goal_id}: the store is behind this workflow ({why}): it was restored or "
        "failed over with loss. The store is the truth: restart the goal from it with "
        f"governor temporal start {goal_id} (governor temporal doctor {goal_id} explains)"
    )


class TakenOver(Exception):
    """The goal's lease is someone else's now: this workflow must stop driving it."""

    def __init__(self, holder: str) -> None:
        self.holder = holder
        super().__init__(f"the goal's lease was taken over by {holder}")


def refused(error: str, kind: str | None) -> GovernorError:
    """A store's refusal (``Appended.refused``) as the governor error it was."""
    return REFUSALS.get(kind or "", InputError)(error)


class GoalDrive:
    """The workflow's hold on one goal: its view, its lease, its calls in flight."""

    def __init__(self, start: GoalStart) -> None:
        self.goal_id, self.settings, self.lease = start.goal_id, start.settings, start.lease
        self.decider = Decider()
        """The goal as the workflow folded it, and the decisions taken on it."""
        self.health: dict[str, Any] = {}
        self.loaded = False
        self.lock = asyncio.Lock()
        self.calls: dict[str, workflow.ActivityHandle[Observed]] = {}
        self.ready: dict[str, bool] = {}
        """Calls that signalled they may run (``Call``)."""
        self.begun: dict[str, int] = {}
        """Calls cleared to run whose start the workflow recorded (the seq to read up to)
        or refused (0): the answer to their ``names.READY_UPDATE``."""
        self.taken_over: str | None = None
        self.cancelling = False
        self.digest: str | None = None
        """The digest of the last event the workflow folded (``wire.digest``), as the
        store's activities read it; None until one told it."""
        self.behind: str | None = None
        """Set when the store was found behind the workflow (``StoreBehind``)."""
        """Temporal asked to cancel the workflow: no call may run any more."""
        self.pools = Pools(self)
        """The goal's calls' reservations against its pools (none without pools)."""

    # ------------------------------------------------------------ time and decisions

    def at(self) -> datetime:
        """The time for the next event: never earlier than the last one recorded."""
        now = workflow.now()
        return max(now, self.view.last_at) if self.view.last_at else now

    @property
    def view(self) -> GoalView:
        return self.decider.view

    def decide(self, *, with_ledger: bool = False) -> Decision:
        return self.decider.decide(workflow.now(), with_ledger=with_ledger, upstreams=self.health)

    # ------------------------------------------------------------ activities

    async def store(self, name: str, arg: Any, result: type[T], summary: str | None = None) -> T:
        """Run a store activity (local once ``LEAN_HISTORY`` holds; see ``LOCAL``)."""
        timeout = timedelta(seconds=self.settings.store_timeout_s)
        shown = summary or _SUMMARIES.get(name)
        try:
            if name in LOCAL and workflow.patched(LEAN_HISTORY):
                answer: T = await workflow.execute_local_activity(
                    name,
                    arg,
                    result_type=result,
                    start_to_close_timeout=timeout,
                    retry_policy=STORE_RETRY,
                    summary=shown,
                )
            else:
                answer = await workflow.execute_activity(
                    name,
                    arg,
                    result_type=result,
                    start_to_close_timeout=timeout,
                    retry_policy=STORE_RETRY,
                    summary=shown,
                )
        except ActivityError as exc:
            if isinstance(exc.cause, CancelledError):
                raise asyncio.CancelledError from exc  # the waiting task was cancelled
            cause = exc.cause.message if isinstance(exc.cause, ApplicationError) else str(exc)
            raise ApplicationError(
                f"goal {self.goal_id}: {name} failed: {cause}", non_retryable=True
            ) from exc
        return answer

    async def begin(self) -> None:
        """Hold the goal's lease (claimed now when the starter gave none), then load it."""
        while self.lease is None:
            answer = await self.store(
                "governor.lease", LeaseRequest(self.goal_id, self.settings.lease_ttl_s), LeaseAnswer
            )
            self.lease = answer.lease
            if self.lease is None:  # another runner drives it now: wait for it to let go
                workflow.logger.info("goal %s is held by %s; waiting", self.goal_id, answer.held_by)
                await workflow.sleep(max(self.settings.lease_ttl_s / 10, 1.0))
        await self.renew()
        await self.refresh()
        self.loaded = True

    def found_behind(self, why: str) -> StoreBehind:
        """Stop everything: the store is behind the workflow (its calls are cancelled)."""
        self.behind = self.behind or behind_message(self.goal_id, why)
        self.cancel_calls()
        return StoreBehind(self.behind)

    def check(self) -> None:
        """Raise ``StoreBehind`` once the store was found behind."""
        if self.behind is not None:
            raise StoreBehind(self.behind)

    async def renew(self) -> None:
        """Renew the lease; ``TakenOver`` when it is someone else's now, ``StoreBehind``
        when the store no longer holds what the workflow folded."""
        assert self.lease is not None
        request = LeaseRequest(
            self.goal_id,
            self.settings.lease_ttl_s,
            self.lease,
            seq=self.view.seq if self.digest is not None else 0,
            digest=self.digest,
        )
        answer = await self.store("governor.lease", request, LeaseAnswer)
        if answer.behind is not None:
            raise self.found_behind(answer.behind)
        if answer.lease is None:
            self.taken_over = answer.held_by or "another runner"
            raise TakenOver(self.taken_over)
        self.lease = answer.lease

    async def release(self) -> None:
        if self.lease is not None:
            request = LeaseRequest(self.goal_id, self.settings.lease_ttl_s, self.lease)
            await self.store("governor.release", request, type(None))
            self.lease = None

    async def refresh(self) -> None:
        """Fold what the store holds after the view, and take the upstreams' health."""
        async with self.lock:
            more = True
            while more:
                self.check()
                request = LoadRequest(self.goal_id, self.view.seq, digest=self.digest)
                summary = f"load after seq {self.view.seq}"
                page = await self.store("governor.load", request, Loaded, summary)
                if page.behind is not None:
                    raise self.found_behind(page.behind)
                fold(self.view, page.events)
                self.health, more = page.health, page.more
                self.digest = page.digest or self.digest

    async def record(self, build: Build) -> list[Event]:
        """Build events on the view and append them; on a conflict fold and build again.

        Raises:
            GovernorError: as ``build`` raises it, or the store's refusal of the events.
            TakenOver: the goal's lease is someone else's.
        """
        async with self.lock:
            conflicts = 0
            while True:
                self.check()
                events = build(self.view)
                if not events:
                    return []
                if self.taken_over:
                    raise TakenOver(self.taken_over)
                assert self.lease is not None
                after = self.decider.copy()
                fold(after.view, events)
                summary = summarize(after.view, workflow.now(), self.health)
                request = AppendRequest(
                    self.goal_id, self.view.seq, events, self.lease, summary, self.digest
                )
                first, last = self.view.seq + 1, self.view.seq + len(events)
                seqs = f"seq {first}" if first == last else f"seq {first}\u2013{last}"
                answer = await self.store("governor.append", request, Appended, f"append {seqs}")
                if answer.behind is not None:
                    raise self.found_behind(answer.behind)
                if answer.taken_over_by is not None:
                    self.taken_over = answer.taken_over_by
                    raise TakenOver(answer.taken_over_by)
                if answer.refused is not None:
                    raise refused(answer.refused, answer.refused_as)
                self.health = answer.health or self.health
                self.digest = answer.digest or self.digest
                if answer.done:
                    self.decider = after
                    fold(after.view, answer.newer)
                    return events
                fold(self.view, answer.newer)
                conflicts += 1
                await self.back_off(conflicts)

    async def back_off(self, conflicts: int) -> None:
        """After a second conflict in a row, wait longer each time; give up after
        ``MAX_CONFLICTS`` (the workflow never loops on the store without an exit)."""
        if conflicts >= MAX_CONFLICTS:
            raise ApplicationError(
                f"goal {self.goal_id}: the store refused {conflicts} appends in a row as "
                "conflicting (another writer?); the store is the truth: governor temporal "
                f"doctor {self.goal_id}",
                type="StoreConflicts",
                non_retryable=True,
            )
        if conflicts > 1 and workflow.patched(CONFLICT_BACKOFF):
            await workflow.sleep(min(0.25 * 2 ** (conflicts - 2), 10.0))

    def lean(self) -> bool:
        """Whether this run keeps its history lean (``LEAN_HISTORY``; memoized by Temporal:
        a run recorded before the patch keeps the old commands to its end)."""
        return workflow.patched(LEAN_HISTORY)

    def chained(self, build: Build) -> Build:
        """``build``, then the events of the decisions that follow at once and only record
        (apply a proposed plan, accept finished work), in one append: what the next turns
        of the loop would record one append each (on a run recorded before
        ``LEAN_HISTORY``: ``build`` alone). A recording the rules refuse ends the chain;
        the loop then decides it as before."""
        if not self.lean():
            return build

        def chain(view: GoalView) -> list[Event]:
            events = build(view)
            scratch = self.decider.copy()
            fold(scratch.view, events)
            for _ in range(8):
                if not events or scratch.view.ended is not None:
                    break
                action = route(scratch.decide(workflow.now(), upstreams=self.health))
                more = _recording(action, scratch.view, self.at_on(scratch.view))
                if not more:
                    break
                fold(scratch.view, more)
                events = [*events, *more]
            return events

        return chain

    def at_on(self, view: GoalView) -> datetime:
        """``at`` for events built on ``view`` (a scratch view ahead of the goal's)."""
        now = workflow.now()
        return max(now, view.last_at) if view.last_at else now

    def launch(self, request: CallRequest, trigger: str | None = None) -> Call:
        """Schedule a call; it runs once it has a slot on a worker (see ``Call``)."""
        name = request.run_id or request.plan_id or ""
        handle = workflow.start_activity(
            "governor.call",
            request,
            summary=self.call_summary(request, trigger),
            result_type=Observed,
            task_queue=agents_queue(workflow.info().task_queue),
            start_to_close_timeout=CALL_TIMEOUT,
            heartbeat_timeout=timedelta(seconds=self.settings.call_heartbeat_s),
            retry_policy=RetryPolicy(maximum_attempts=1),
            cancellation_type=workflow.ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
        )
        self.calls[name] = handle
        if self.cancelling:
            handle.cancel()
        return Call(self, name, handle)

    def call_summary(self, request: CallRequest, trigger: str | None = None) -> str:
        """What Temporal's UI shows of a call: ``worker p1-api attempt 2``, ``planner p3
        (milestone)``; a continuation says so."""
        again = " continued" if request.lost else ""
        if request.work_id is not None:
            item = self.view.work.get(request.work_id)
            used = item.attempts_used if item is not None else 0
            n = used if item is not None and item.running else used + 1
            return f"worker {request.work_id} attempt {n}{again}"
        return f"planner {request.plan_id} ({trigger or 'initial'}){again}"

    def cancel_calls(self, runs: set[str] | None = None) -> None:
        """Cancel the calls in flight (those of ``runs`` when given): their agents die."""
        for name, handle in list(self.calls.items()):
            if runs is None or name in runs:
                handle.cancel()

    def request(self, **fields: Any) -> CallRequest:
        assert self.lease is not None
        return CallRequest(
            self.goal_id,
            self.lease,
            kill_grace_s=self.settings.kill_grace_s,
            ready_update=True,
            **fields,
        )

    # ------------------------------------------------------------ the actions

    async def act(self, action: Action) -> None:
        """Perform one acting action (``governor.core.route.ACTING``)."""
        match action:
            case Plan():
                await self.plan(action)
            case Apply():
                await self.apply(action.plan_id)
            case Dispatch():
                await self.dispatch(action.work_ids)
            case Accept():
                for work_id in action.work_ids:
                    await self.quietly(partial(_accept, work_id=work_id, at=self.at()))
            case Park():
                await self.quietly(lambda v: park_goal(v, action.outage, at=self.at()))
            case Resume():
                await self.quietly(lambda v: resume_goal(v, action.outage, at=self.at()))

    async def quietly(self, build: Build) -> list[Event]:
        """Record, or nothing when the rules refuse it now (someone else acted first)."""
        try:
            return await self.record(build)
        except CommandRefusedError:
            return []

    async def plan(self, action: Plan) -> None:
        """Ask the planner (a new plan, or the lost one continued) once its call has a slot
        and its upstream is not known to be failing; record what it came to."""
        plan_id = action.plan_id or f"p{self.view.plans_used + 1}"
        lost = (plan_id,) if action.plan_id is not None else ()
        known = self.view.plans.get(plan_id)
        trigger = action.trigger or (known.trigger if known is not None else None)
        call = self.launch(self.request(plan_id=plan_id, lost=lost), trigger)
        if not await call.cleared():
            return
        created = self.view.created
        planner = created.planner if created is not None else ""
        if not await self.pools.reserve([Ask(plan_id, planner, plan_id=plan_id)]):
            self.begun[plan_id] = 0  # a pool has no room: the call does not start
            call.cancel()
            await call.result()  # it is gone before the goal waits (a rest continues as new)
            return
        try:
            await self.run_plan(action, plan_id, call)
        finally:
            await self.pools.settle([plan_id])

    async def run_plan(self, action: Plan, plan_id: str, call: Call) -> None:
        """Record the plan's request (or continuation), run the call, record its outcome."""
        begun = False
        try:
            if action.plan_id is not None:
                events = await self.quietly(
                    lambda v: record.continue_plan(v, plan_id=plan_id, at=self.at())
                )
                begun = bool(events) and events[-1].type != "plan.failed"
            else:
                trigger = action.trigger or "initial"
                build = partial(record.request_plan, plan_id=plan_id, trigger=trigger, at=self.at())
                begun = bool(await self.quietly(build))
        finally:
            self.begun[plan_id] = self.view.seq if begun else 0  # the call's update answer
        if not begun:
            call.cancel()
            return
        observed = await call.result()
        if observed is None or (observed.planner is None and observed.crash is None):
            return
        run = observed.planner
        await self.finish(
            None
            if run is None
            else self.chained(lambda v: plan_events(v, plan_id, run, self.at())),
            lambda error: (
                lambda v: record.plan_failed(
                    v, plan_id=plan_id, at=self.at(), failure_class=None, evidence=None, error=error
                )
            ),
            lambda: plan_id in self.view.plans and self.view.plans[plan_id].status == "requested",
            observed.crash,
        )

    async def apply(self, plan_id: str) -> None:
        await self.finish(
            lambda v: record.apply_plan(v, plan_id=plan_id, at=self.at()),
            lambda error: partial(
                reject_plan,
                plan_id=plan_id,
                reason=f"governor could not apply it: {error}",
                at=self.at(),
                actor="governor",
            ),
            lambda: plan_id in self.view.plans and self.view.plans[plan_id].status == "proposed",
        )

    async def dispatch(self, work_ids: tuple[str, ...]) -> None:
        """Start (or continue) the items' attempts as their calls get slots (in the order
        they do: a call holding a slot never waits on one that has none), run them at
        once, record the finishes in plan order. Starts cleared together are recorded in
        one append, and so are finishes that arrive together."""
        pending = []
        for work_id in work_ids:
            item = self.view.work[work_id]
            run_id = f"r-{workflow.uuid4().hex[:16]}"
            lost = (item.run_id,) if item.running and item.run_id is not None else ()
            call = self.launch(self.request(work_id=work_id, run_id=run_id, lost=lost))
            pending.append(Run(work_id, run_id, call))
        try:
            await self.run_dispatch(work_ids, pending)
        finally:  # a reservation never outlives its dispatch (released if never settled)
            await self.pools.settle(list(self.pools.held))

    async def run_dispatch(self, work_ids: tuple[str, ...], pending: list[Run]) -> None:
        """``dispatch`` once the calls are scheduled: reserve, start, finish, settle."""
        started: list[Run] = []
        refused = [False]
        while pending:
            await workflow.wait_condition(lambda: any(r.call.settled() for r in pending))
            ready = [r for r in pending if r.call.settled()]
            pending[:] = [r for r in pending if r not in ready]
            cleared = [r for r in ready if await r.call.cleared()]
            held = await self.reserve_runs(cleared, refused)
            started += await self.begin_runs(held)
            await self.pools.settle(r.call.name for r in held if r not in started)
        order = sorted(started, key=lambda r: work_ids.index(r.work_id))
        while order:
            batch = [order.pop(0)]
            observed = [await batch[0].call.result()]
            while order and order[0].call.handle.done():
                batch.append(order.pop(0))
                observed.append(await batch[-1].call.result())
            done = [
                (r, o) for r, o in zip(batch, observed, strict=True) if o and (o.worker or o.crash)
            ]
            await self.finish_runs(done)
            await self.pools.settle(r.call.name for r in batch)

    async def reserve_runs(self, runs: list[Run], refused: list[bool]) -> list[Run]:
        """The runs whose reservations against the goal's pools fit (all of them without
        pools); the others are told they may not start. After a refusal in this dispatch
        (``refused``) no other run is reserved: the goal decides again."""
        if not runs or not self.pools.pooled():
            return runs
        names: list[str] = []
        if not refused[0]:
            asks = [Ask(r.call.name, self.profile_of(r.work_id), work_id=r.work_id) for r in runs]
            names = await self.pools.reserve(asks)
            refused[0] = len(names) < len(runs)
        refused_runs = [r for r in runs if r.call.name not in names]
        for run in refused_runs:
            self.begun[run.call.name] = 0
            run.call.cancel()
        for run in refused_runs:  # gone before the goal waits (a rest continues as new)
            await run.call.result()
        return [r for r in runs if r.call.name in names]

    def profile_of(self, work_id: str) -> str:
        """The profile that runs the item's attempts."""
        created = self.view.created
        default = created.worker if created is not None else ""
        return self.view.work[work_id].spec.profile or default

    async def begin_runs(self, runs: list[Run]) -> list[Run]:
        """Record the starts (or continuations) of cleared runs in one append; the runs
        that may go on (the others' calls are cancelled)."""
        begun: list[Run] = []
        try:
            if runs:
                await self.record(starts(runs, self.at(), begun))
        finally:
            for run in runs:
                self.begun[run.call.name] = self.view.seq if run in begun else 0
        for run in runs:
            if run not in begun:
                run.call.cancel()
        return list(begun)

    async def finish_runs(self, done: list[tuple[Run, Observed]]) -> None:
        """Record what the runs came to, in one append (one at a time if the store refuses
        the batch: the one it refuses is then recorded as the charged failure it is)."""
        if not done:
            return
        at = self.at()
        try:
            await self.quietly(self.chained(finishes(done, at)))
        except InputError as exc:  # the store refused an event (it would not read back)
            if len(done) > 1:
                for one in done:
                    await self.finish_runs([one])
                return
            run, _ = done[0]
            crash = crash_text(exc)
            await self.quietly(finishes([(run, Observed(crash=crash))], at))

    async def finish(
        self,
        outcome: Build | None,
        failure: Callable[[str], Build],
        in_flight: Callable[[], bool],
        crash: str | None = None,
    ) -> list[Event]:
        """Record a run's outcome (or its crash); see the crash-loop guard in the rules."""
        if outcome is not None:
            try:
                return await self.record(outcome)
            except TakenOver:
                raise
            except GovernorError as exc:
                if not in_flight():
                    return []  # settled meanwhile (an operator's abandon, review or cancel)
                crash = crash_text(exc)
            except Exception as exc:  # a reply the core cannot record: charged, not looped
                if not in_flight():
                    return []
                crash = crash_text(exc)
        if crash is None or not in_flight():
            return []
        return await self.quietly(failure(crash))

    # ------------------------------------------------------------ settling a decision

    async def settle(self) -> Decision:
        """The decision now, after clearing an environment stop whose binary came back,
        probing the upstream the goal waits parked on when its probe is due, and asking
        for more of the goal's own budget under a ``grants`` policy (as ``Runner.settle``)."""
        decision = await self.settle_upstreams()
        for _ in range(4):
            if not await self.pools.own_budget(decision):
                break
            decision = await self.settle_upstreams()
        return decision

    async def settle_upstreams(self) -> Decision:
        """The decision after the environment's re-probe and the parked upstream's probe."""
        decision = self.decide()
        for _ in range(8):
            if decision.is_stopped and decision.blocked_on == "environment":
                work_id = decision.work_ids[0] if decision.work_ids else None
                back = await self.store(
                    "governor.reprobe", ReprobeRequest(self.goal_id, work_id), _RECOVERY
                )
                if back is not None and await self.quietly(
                    partial(recovered, work_id=back.work_id, reason=back.reason, at=self.at())
                ):
                    decision = self.decide()
                    continue
            profile = _parked_profile(decision)
            health = self.health.get(profile) if profile else None
            if profile is None or health is None or not health.probe_claimable(workflow.now()):
                return decision
            probed = await self.store("governor.probe", ProbeRequest(self.goal_id, profile), Probed)
            async with self.lock:
                self.health = probed.health
            decision = self.decide()
            if not probed.probed:
                return decision
        return decision


_RECOVERY: Final[Any] = Recovery | None
_SUMMARIES: Final = {
    "governor.lease": "lease",
    "governor.release": "release the lease",
    "governor.reprobe": "look for the missing binary again",
    "governor.probe": "probe the upstream",
    "governor.cancelled_by": "who cancelled",
}
"""What Temporal's UI shows of a store activity (load and append say their seqs)."""


def _accept(view: GoalView, *, work_id: str, at: datetime) -> list[Event]:
    return accept_work(view, work_id=work_id, at=at, actor="governor")


def _recording(action: Action, view: GoalView, at: datetime) -> list[Event]:
    """The events of an action that only records (apply a plan, accept work) built on
    ``view``; none for another action, or when the rules refuse it (the loop then
    decides it again and records what it comes to, as without a chain)."""
    try:
        match action:
            case Apply():
                return record.apply_plan(view, plan_id=action.plan_id, at=at)
            case Accept():
                scratch, out = view.copy(), []
                for work_id in action.work_ids:
                    events = _accept(scratch, work_id=work_id, at=at)
                    fold(scratch, events)
                    out += events
                return out
    except Exception:  # the loop decides it again and records what it comes to
        return []
    return []


def _parked_profile(decision: Decision) -> str | None:
    """The profile whose upstream a parked wait waits on (None for another decision)."""
    outage = decision.outage
    if decision.next_action != "wait" or outage is None or not outage.profiles:
        return None
    return outage.profiles[0]
