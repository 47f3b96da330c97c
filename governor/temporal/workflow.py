"""The goal's Temporal workflow: governor's pure core in workflow code (SPEC §12.11).

Rules (decision record 0020):
    * One workflow per goal; its id is the goal id. It holds the goal's lease (taken by
      ``governor temporal start``; claimed here when the starter gave none), renews it
      every third of its TTL, and releases it when the goal ended. Another driver taking
      the lease over ends the workflow.
    * The loop is ``governor run``'s: settle (re-probe an environment stop, probe the
      upstream the goal is parked on when due), decide, route, act; ``now`` is
      ``workflow.now()``. Waits are Temporal timers: a cooldown or a parked wait until
      its ``not_before``, a stop until an operator's update (or, for a missing binary,
      the next re-probe). A signal wakes a parked goal when its upstream's health
      changed; ``governor.step`` makes a waiting goal look again now.
    * Operator verbs are updates: the validator runs the same pure verb the CLI runs
      (``governor.core.commands``) on the workflow's view, so a refusal goes back to the
      caller with nothing recorded; the handler records it as the one writer. ``cancel``
      cancels every call in flight (their agents die), ``work abandon`` that attempt's.
    * Before the Temporal history grows long, and after every rest (a wait that ran out
      with nothing happening: at most a lease TTL, decision record 0029), the workflow
      continues as new with the lease, and the next run loads the goal from the store
      (the truth) again: a goal blocked for days wakes on the workers' current code.
    * Visibility: search attributes ``GovernorStatus``, ``GovernorBlockedOn``,
      ``GovernorRule`` and a memo with the ledger, kept as the decision changes.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from typing import Any, Final

from temporalio import workflow
from temporalio.common import SearchAttributeKey
from temporalio.exceptions import ApplicationError

from governor.analysis.unblock import unblocking
from governor.core.commands import OperatorVerb, apply_verb
from governor.core.decision import Decision
from governor.core.events import Event
from governor.core.route import Accept, Action, Apply, Park, Resume, Stop, Wait, acts, route
from governor.core.summary import summarize
from governor.core.verbs import cancel_goal
from governor.core.view import GoalView
from governor.errors import GovernorError
from governor.render.records import status_record
from governor.temporal.names import (
    READY_SIGNAL,
    READY_UPDATE,
    SEARCH_ATTRIBUTES,
    STATUS_QUERY,
    STEP_UPDATE,
    VERB_UPDATE,
    WAKE_SIGNAL,
    WORKFLOW,
)
from governor.temporal.steps import GoalDrive, StoreBehind, TakenOver
from governor.temporal.wire import GoalOutcome, GoalStart

CONTINUE_AFTER_REST: Final = "governor-continue-after-rest"
"""The patch that continues a resting workflow as new (``new_run_after_rest``)."""
CANCEL_CLOSES_ATTEMPTS: Final = "governor-cancel-closes-attempts"
"""The patch after which a cancel finishes each running attempt ``abandoned`` before
``goal.cancelled`` (issue 35); a history recorded before it replays writing
``goal.cancelled`` alone, as it did."""
RECORDS_ONLY: Final = (Apply, Accept, Park, Resume)
"""Actions that only record (no call, no wait): the loop decides again at once, so a run
under ``steps.LEAN_HISTORY`` publishes that next decision, not this one."""
STATUS, BLOCKED_ON, RULE = (SearchAttributeKey.for_keyword(name) for name in SEARCH_ATTRIBUTES)


def verb_events(
    verb: OperatorVerb, view: GoalView, at: datetime, closes_attempts: bool
) -> list[Event]:
    """The events an operator verb records (``apply_verb``), but for a cancel replayed from
    a history recorded before ``CANCEL_CLOSES_ATTEMPTS``: ``goal.cancelled`` alone."""
    if verb.verb == "cancel" and not closes_attempts:
        return cancel_goal(view, at=at, actor=verb.actor, reason=verb.reason, close_running=False)
    return apply_verb(verb, view, at)


def refusal(exc: GovernorError | TakenOver | StoreBehind) -> ApplicationError:
    """A governor error as the update's failure: its one line and its class name."""
    return ApplicationError(str(exc), type=type(exc).__name__, non_retryable=True)


@workflow.defn(name=WORKFLOW)
class GoalWorkflow:
    """One goal, driven to its end; see the module rules."""

    @workflow.init
    def __init__(self, start: GoalStart) -> None:
        self.start = start
        self.drive = GoalDrive(start)
        self.changed = False
        self.idle = False
        self.cycles = 0
        self.shown: tuple[Any, ...] = ()
        self.keeping: asyncio.Future[None] | None = None
        """The task renewing the lease (``keep_lease``)."""

    @workflow.run
    async def run(self, start: GoalStart) -> GoalOutcome:
        driving = asyncio.ensure_future(self.drive_goal())
        try:
            await workflow.wait_condition(driving.done)
        except asyncio.CancelledError:  # Temporal's cancel request (only this task gets it)
            await asyncio.shield(self.cancelled(driving))
            raise
        return driving.result()

    async def drive_goal(self) -> GoalOutcome:
        """The goal's loop, as ``governor run``'s (the module rules)."""
        d = self.drive
        try:
            await d.begin()
            self.keeping = asyncio.ensure_future(self.keep_lease())
            while d.view.ended is None and d.taken_over is None and not d.cancelling:
                decision = await d.settle()
                self.cycles += 1
                action = route(decision)
                if not (isinstance(action, RECORDS_ONLY) and d.lean()):
                    self.publish(decision)  # a recording's next decision is shown instead
                if acts(action):
                    await d.act(action)
                    rested = False
                else:
                    rested = await self.pause(action, decision)
                renew = self.history_is_long() or (rested and self.new_run_after_rest())
                if renew and d.view.ended is None and not d.cancelling:
                    self.keeping.cancel()
                    await workflow.wait_condition(workflow.all_handlers_finished)
                    workflow.continue_as_new(GoalStart(d.goal_id, d.settings, d.lease))
            if d.taken_over is not None:
                raise TakenOver(d.taken_over)
            if d.cancelling:  # Temporal's cancel: ``cancelled`` records it, not this loop
                raise asyncio.CancelledError
        except TakenOver as exc:
            d.cancel_calls()
            return GoalOutcome(d.goal_id, "taken_over", str(exc), taken_over_by=exc.holder)
        except StoreBehind as exc:  # the store is the truth: fail with its one message
            raise ApplicationError(str(exc), type="StoreBehind", non_retryable=True) from None
        self.keeping.cancel()
        await workflow.wait_condition(workflow.all_handlers_finished)
        await d.release()
        decision = d.decide()
        self.publish(decision)
        return GoalOutcome(d.goal_id, decision.status, decision.reason)

    async def cancelled(self, driving: asyncio.Future[GoalOutcome]) -> None:
        """Temporal's cancel is ``governor cancel`` (SPEC §13.9): kill the calls, record
        ``goal.cancelled`` (actor ``temporal:<identity of the requester>``), stop the loop,
        release the lease. Runs shielded: the workflow then ends Cancelled."""
        d = self.drive
        d.cancelling = True
        d.cancel_calls()
        if self.keeping is not None:
            self.keeping.cancel()
        identity = await d.store("governor.cancelled_by", workflow.info().run_id, str)
        reason = workflow.cancellation_reason() or "cancelled from Temporal"
        actor = f"temporal:{identity}"[:200]
        try:
            if d.lease is not None:
                await d.refresh()
                closes = workflow.patched(CANCEL_CLOSES_ATTEMPTS)
                await d.quietly(
                    lambda v: cancel_goal(
                        v, at=d.at(), actor=actor, reason=reason, close_running=closes
                    )
                )
        except TakenOver:
            pass  # another driver holds the goal: it is theirs to cancel
        d.cancel_calls()
        driving.cancel()
        await workflow.wait_condition(driving.done)
        await d.pools.settle(list(d.pools.held))  # what the cancelled action left reserved
        await d.release()
        self.publish(d.decide())

    async def keep_lease(self) -> None:
        """Renew the goal's lease every third of its TTL while the workflow runs."""
        d = self.drive
        try:
            while True:
                await workflow.sleep(timedelta(seconds=d.settings.lease_ttl_s / 3))
                await d.renew()
        except TakenOver:
            d.cancel_calls()  # nothing of ours may run beside the new holder
            self.changed = True
        except StoreBehind:
            self.changed = True  # the loop fails the workflow
        except asyncio.CancelledError:
            return  # the run ends or continues as new

    async def pause(self, action: Action, decision: Decision) -> bool:
        """Wait for the cooldown's end, an operator, a wake-up or the next re-probe — at
        most a lease TTL, so a long wait still looks at the store and continues as new.
        True when the wait ran out with nothing happening (a rest)."""
        d = self.drive
        rested = False
        seconds = d.settings.lease_ttl_s
        if isinstance(action, Wait) and action.until is not None:
            seconds = min(seconds, (action.until - workflow.now()).total_seconds())
        elif isinstance(action, Stop) and decision.blocked_on == "environment":
            seconds = min(seconds, d.settings.reprobe_s)
        if seconds > 0:
            self.idle = True
            try:
                await workflow.wait_condition(
                    lambda: self.changed or d.taken_over is not None or d.behind is not None,
                    timeout=timedelta(seconds=seconds),
                )
            except TimeoutError:
                rested = not self.changed
            finally:
                self.idle = False
        self.changed = False
        d.check()
        await d.refresh()
        return rested

    def new_run_after_rest(self) -> bool:
        """Whether to continue as new after a rest (decision record 0029): always, once no
        call is in flight, so a goal waiting for days wakes on the workers' current code;
        histories recorded before this rule replay without it (the patch)."""
        return not self.drive.calls and workflow.patched(CONTINUE_AFTER_REST)

    def history_is_long(self) -> bool:
        info = workflow.info()
        long = info.get_current_history_length() >= self.drive.settings.max_history
        return long or info.is_continue_as_new_suggested()

    def publish(self, decision: Decision) -> None:
        """Keep the search attributes and the memo in step with the decision."""
        d = self.drive
        if not d.settings.visibility:
            return
        summary = summarize(d.view, workflow.now(), d.health)
        memo = {
            "status": decision.status,
            "reason": decision.reason,
            "seq": d.view.seq,
            "replans": _usage(summary.replans),
            "attempts": _usage(summary.attempts),
            "runtime_s": round(d.view.runtime_s, 1),
            "cost_usd": round(d.view.cost_usd, 4),
        }
        workflow.set_current_details(f"{decision.status}: {decision.reason}")
        shown = (decision.status, decision.blocked_on, decision.rule, memo)
        if shown == self.shown:
            return
        if shown[:3] != self.shown[:3]:
            workflow.upsert_search_attributes(
                [
                    STATUS.value_set(decision.status),
                    BLOCKED_ON.value_set(decision.blocked_on or "none"),
                    RULE.value_set(decision.rule),
                ]
            )
        if not self.shown or memo != self.shown[3]:
            workflow.upsert_memo({"ledger": memo})
        self.shown = shown

    @workflow.query(name=STATUS_QUERY)
    def status(self) -> dict[str, Any]:
        """What ``governor status GOAL --json`` prints, from the workflow's own view (each
        blocker's commands name no ``--store``: the workflow does not know how its reader
        names the store)."""
        d = self.drive
        decision = d.decide(with_ledger=True)
        found = unblocking(d.view, decision, d.at())
        return status_record(d.view, decision, d.lease, found)

    # ------------------------------------------------------------ operators

    @workflow.update(name=VERB_UPDATE)
    async def verb(self, verb: OperatorVerb) -> None:
        """Record an operator verb (the validator has checked it); end the calls it settles."""
        d = self.drive
        await workflow.wait_condition(lambda: d.loaded)
        try:
            closes = verb.verb != "cancel" or workflow.patched(CANCEL_CLOSES_ATTEMPTS)
            events = await d.record(lambda view: verb_events(verb, view, d.at(), closes))
        except (GovernorError, TakenOver, StoreBehind) as exc:
            raise refusal(exc) from exc
        if verb.verb == "cancel":
            d.cancel_calls()
        elif verb.verb == "work abandon":
            d.cancel_calls({e.run_id for e in events if e.type == "attempt.finished"})
        self.changed = True

    @verb.validator
    def check_verb(self, verb: OperatorVerb) -> None:
        """Refuse, with the CLI's message, what the rules refuse now (nothing is recorded)."""
        d = self.drive
        if not d.loaded:
            return  # the handler checks again once the goal is loaded
        try:
            apply_verb(verb, d.view, d.at())
        except GovernorError as exc:
            raise refusal(exc) from exc

    @workflow.update(name=STEP_UPDATE)
    async def step(self) -> None:
        """Look again now (a re-probe, fresh health); returns once the goal was decided."""
        d = self.drive
        if not self.idle:
            return
        after = self.cycles + 1
        self.changed = True
        await workflow.wait_condition(
            lambda: self.cycles >= after or d.view.ended is not None or d.taken_over is not None
        )

    @workflow.signal(name=READY_SIGNAL)
    def ready(self, run: str) -> None:
        """A call has its slot and its upstream is not failing: its run may be recorded
        (a call that reads the store for its start; ``call_ready`` answers the others)."""
        self.drive.ready[run] = True

    @workflow.update(name=READY_UPDATE)
    async def call_ready(self, run: str) -> int:
        """A call has its slot and its upstream is not failing: once its start is recorded
        (or the workflow decided it may not run) answer the seq to read the store up to, 0
        when the run may not go on. No reading the store over and over for the start."""
        d = self.drive
        if run in d.calls:
            d.ready[run] = True
        await workflow.wait_condition(
            lambda: (
                run in d.begun
                or run not in d.calls
                or d.cancelling
                or d.taken_over is not None
                or d.behind is not None
            )
        )
        return d.begun.get(run, 0)

    @workflow.signal(name=WAKE_SIGNAL)
    def wake(self) -> None:
        """An upstream the goal may be parked on changed its health: look again."""
        self.changed = True


def _usage(usage: Any) -> str | None:
    return (
        None if usage is None else f"{usage.charged} charged of {usage.limit} ({usage.used} used)"
    )
