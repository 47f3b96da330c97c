"""The live texts of a run or a watch: agent calls in flight, heartbeats, events as progress.

Pure: values in, text out. Agent text is returned raw; whoever prints it escapes it
(``governor.render.terminal.printable``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from governor.core.durations import format_duration
from governor.core.text import stamp

if TYPE_CHECKING:
    from governor.core.events import Event
    from governor.drive.calls import RunningCall


def _call_head(call: RunningCall) -> str:
    return f"{call.item} attempt {call.attempt}" if call.attempt is not None else call.item


def format_running(call: RunningCall) -> str:
    """One live row: ``p2-api attempt 2  1m05s  │ writing the form handler``."""
    row = f"  {_call_head(call)}  {format_duration(call.elapsed_s)}"
    return f"{row}  │ {call.last_line}" if call.last_line else f"{row}  │ (no output yet)"


def format_heartbeat(calls: Sequence[RunningCall]) -> str | None:
    """The heartbeat of plain output: what is still running, for how long, its last line."""
    if not calls:
        return None
    parts = []
    for call in calls:
        part = f"{_call_head(call)} for {format_duration(call.elapsed_s)}"
        parts.append(f"{part} (last output: {call.last_line[:120]})" if call.last_line else part)
    return "still running: " + "; ".join(parts)


def format_event_line(event: Event) -> str | None:  # noqa: PLR0911, PLR0912 - one case per event type
    """What a followed goal's event says, as ``governor run`` would have said it (None: an
    event a run prints nothing for)."""
    from governor.core import budget_events as b  # noqa: PLC0415 - start-up: the models
    from governor.core import events as e  # noqa: PLC0415 - start-up: the models
    from governor.core import work_events as w  # noqa: PLC0415 - start-up: the models
    from governor.core.charges import describe  # noqa: PLC0415 - start-up: the models

    match event:
        case e.PlanRequested():
            return f"plan {event.plan_id} ({event.trigger}) requested"
        case e.PlanContinued():
            return f"plan {event.plan_id} was lost; continuing it"
        case e.PlanProposed() | e.PlanFailed():
            return f"plan {event.plan_id}: {describe(event)}"
        case e.PlanApplied():
            n = len(event.work_ids)
            return f"plan {event.plan_id} applied: {n} work item{'s' if n != 1 else ''}"
        case e.PlanCompleted():
            return f"plan {event.plan_id}: the goal is complete"
        case w.AttemptStarted():
            return f"{event.work_id} attempt {event.attempt} started"
        case w.AttemptContinued():
            return f"{event.work_id} attempt {event.attempt} was lost; continuing it"
        case w.AttemptFinished():
            return f"{event.work_id} attempt {event.attempt}: {describe(event)}"
        case w.WorkAccepted():
            return f"{event.work_id} accepted"
        case w.WorkCancelled() | w.WorkReopened():
            return f"{event.work_id}: {event.type} by {event.actor}"
        case (
            e.PlanRejected()
            | w.WorkRetried()
            | e.GoalResumed()
            | e.GoalCancelled()
            | e.BudgetRaised()
        ):
            return f"{event.type} by {event.actor}" + (f": {event.reason}" if event.reason else "")
        case e.GoalParked():
            return f"parked on {event.upstream} (failing since {stamp(event.since)})"
        case b.BudgetRequested() | b.BudgetDeclined():
            return f"{event.type} ({event.budget}) by {event.actor}: {event.reason}"
        case b.BudgetGranted():
            rule = f" under {event.rule}" if event.rule else ""
            return f"budget.granted ({event.budget}) by {event.actor}{rule}: {event.reason}"
        case b.BudgetExpired():
            return f"budget.expired ({event.budget}): the grant's limit is gone"
        case _:
            return None
