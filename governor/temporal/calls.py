"""Calls of a goal's workflow and the attempts they run, in workflow code (deterministic).

Rules:
    * A call is scheduled before its run is recorded. Once a worker has a slot for it,
      the call ends a lost run's agents and looks at its upstream's health: a failing
      one ends it at once (``held``: the goal parks, SPEC §11.10), a healthy one asks
      the workflow with an update (``names.READY_UPDATE``), whose answer comes once the
      start is recorded (calls of workflows whose code predates it signal ``ready`` and
      read the store until the start is there). So no start is recorded, and no request
      sent, for a call queued into a known outage; a call's wait for a slot is not
      charged as its run's time (as under ``serve``, whose goal waits for a worker
      before its step); and the run is linked before it executes.
    * Starts cleared together are built one after another on a scratch view and
      appended at once; so are finishes that arrive together, each under the runner's
      crash-loop guard (a reply the core cannot record is a charged failure; a run an
      operator settled meanwhile adds nothing).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import NamedTuple, Protocol

from temporalio import workflow
from temporalio.exceptions import ActivityError

from governor.core import record_work
from governor.core.classify import tail
from governor.core.events import Event
from governor.core.fold import fold
from governor.core.view import GoalView
from governor.drive.outcomes import finish_events
from governor.errors import CommandRefusedError
from governor.temporal.wire import Observed

Build = Callable[[GoalView], list[Event]]
"""Events built on a view (the goal's, or a scratch copy of it)."""


class Drive(Protocol):
    """What a call reads of the goal's drive (``steps.GoalDrive``)."""

    goal_id: str
    calls: dict[str, workflow.ActivityHandle[Observed]]
    ready: dict[str, bool]
    begun: dict[str, int]

    async def refresh(self) -> None: ...


class Call:
    """A call in flight: cleared to run (or not), then its result (the module rules)."""

    def __init__(self, drive: Drive, name: str, handle: workflow.ActivityHandle[Observed]) -> None:
        self.drive, self.name, self.handle = drive, name, handle

    def settled(self) -> bool:
        """Whether the call is cleared to run, or ended without being."""
        return self.name in self.drive.ready or self.handle.done()

    async def cleared(self) -> bool:
        """Wait until the call may start its run; False when it may not (held or lost)."""
        d = self.drive
        await workflow.wait_condition(self.settled)
        if self.name in d.ready:
            return True
        await self.result()
        await d.refresh()  # what stopped it (its upstream's failing record) decides next
        return False

    def cancel(self) -> None:
        self.handle.cancel()

    async def result(self) -> Observed | None:
        """What the run came to; None when it was lost, cancelled or held."""
        try:
            observed: Observed = await self.handle
        except ActivityError as exc:
            workflow.logger.info(
                "goal %s: call %s ended without an answer: %s", self.drive.goal_id, self.name, exc
            )
            return None
        finally:
            self.drive.calls.pop(self.name, None)
            self.drive.ready.pop(self.name, None)
            self.drive.begun.pop(self.name, None)
        return None if observed.held else observed


class Run(NamedTuple):
    """An attempt's run: its item, its run id, its call."""

    work_id: str
    run_id: str
    call: Call


def starts(runs: list[Run], at: datetime, begun: list[Run]) -> Build:
    """Build the runs' starts (continuations for items in flight) one after another on a
    scratch view; ``begun`` gets the runs that may go on (not refused, not finished as
    lost by a continuation over the bound)."""

    def build(view: GoalView) -> list[Event]:
        begun.clear()
        scratch, out = view.copy(), []
        for run in runs:
            w, r = run.work_id, run.run_id
            try:
                if scratch.work[w].running:
                    events = record_work.continue_attempt(scratch, work_id=w, run_id=r, at=at)
                else:
                    events = record_work.start_attempt(scratch, work_id=w, run_id=r, at=at)
            except CommandRefusedError:
                continue
            fold(scratch, events)
            out += events
            if events[-1].type != "attempt.finished":
                begun.append(run)
        return out

    return build


def finishes(done: list[tuple[Run, Observed]], at: datetime) -> Build:
    """Build the finishes of runs one after another on a scratch view, with the runner's
    crash-loop guard for each; a run settled meanwhile (an operator) adds nothing."""

    def build(view: GoalView) -> list[Event]:
        scratch, out = view.copy(), []
        for run, observed in done:
            events = _finish(scratch, run, observed, at)
            fold(scratch, events)
            out += events
        return out

    return build


def _finish(view: GoalView, run: Run, observed: Observed, at: datetime) -> list[Event]:
    item = view.work[run.work_id]
    if view.ended or not item.running or item.run_id != run.run_id:
        return []
    crash = observed.crash
    if observed.worker is not None:
        try:
            return finish_events(
                view, work_id=run.work_id, run_id=run.run_id, run=observed.worker, at=at
            )
        except Exception as exc:  # a reply the core cannot record: charged, not looped
            crash = crash_text(exc)
    return record_work.finish_attempt(
        view, work_id=run.work_id, run_id=run.run_id, at=at, outcome="failed", error=crash
    )


def crash_text(exc: BaseException) -> str:
    text = f"governor could not record the run ({type(exc).__name__}: {exc})"
    return tail(text.encode("utf-8", "backslashreplace").decode("utf-8"))
