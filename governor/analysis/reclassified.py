"""``governor reclassify``: today's classifier over a history's failures, and the goal
re-projected under today's charges (issue 25 §4).

Rules (decision records 0014 and 0023):
    * Every failure a history recorded (a ``plan.failed``, an ``attempt.finished`` that
      failed) is judged again from its recorded observation
      (``governor.core.reclassify.reclassify_event``); a failure recorded before
      observations were is judged from the legacy reading (``governor.analysis.legacy``),
      marked inferred; one with nothing to read is "not recorded" and keeps its verdict.
    * Timed-out, lost and abandoned runs are charged whatever their class: they keep theirs.
    * The history with today's verdicts in place of the recorded ones is re-folded under the
      recorded policy by the what-if (``Trace.under``): the recorded actions are checked
      against today's decisions, so the result says where the goal would have stopped (a
      known outcome) or parted from the record (censored), with its ledger.
    * Nothing is written: importing a reclassified history would be a separate, explicit
      step.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from governor.analysis.divergence import WhatIf
from governor.analysis.legacy import legacy_reading
from governor.analysis.whatif import Trace
from governor.core.events import Event, PlanFailed
from governor.core.evidence import Evidence, FailureClass, is_uncharged
from governor.core.reclassify import reclassify_event
from governor.core.work_events import AttemptFinished

Reading = Literal["recorded", "inferred", "not recorded"]
"""Where today's verdict came from: the recorded observation, the legacy reading, nothing."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """A failure's class, rule and charge."""

    failure_class: FailureClass | None
    rule: str | None
    charged: bool


@dataclass(frozen=True, slots=True)
class Judged:
    """One recorded failure, judged then and today."""

    seq: int
    event_type: str
    run: str
    """The plan id, or ``<work_id> attempt <n>``."""
    error: str | None
    recorded: Verdict
    today: Verdict
    reading: Reading
    read: tuple[str, ...] = ()
    """What the legacy reading read (inferred only)."""
    assumed: tuple[str, ...] = ()
    """What it assumed because it was never recorded (inferred only)."""

    @property
    def changed(self) -> bool:
        """Whether its charge, or the class the rules act on, changed (a renamed rule, or
        another class of a charged failure, is no change: ``effective_class``)."""
        r, t = self.recorded, self.today
        return (r.charged, r.charged or r.failure_class) != (
            t.charged,
            t.charged or t.failure_class,
        )


@dataclass(frozen=True, slots=True)
class Reclassification:
    """A history's failures judged again, and the goal re-projected under today's charges."""

    goal_id: str
    failures: tuple[Judged, ...]
    whatif: WhatIf


Failure = PlanFailed | AttemptFinished


def _run(event: Failure) -> str:
    if isinstance(event, PlanFailed):
        return event.plan_id
    return f"{event.work_id} attempt {event.attempt}"


def _verdict(
    outcome: str, failure_class: FailureClass | None, evidence: Evidence | None
) -> Verdict:
    rule = evidence.rule if evidence is not None else None
    return Verdict(failure_class, rule, not is_uncharged(outcome, failure_class, evidence))


def judge(event: Failure) -> tuple[Judged, Failure]:
    """A failure judged today, and the event as today's classifier would have recorded it."""
    outcome = "failed" if isinstance(event, PlanFailed) else event.outcome
    cls, evidence, error = event.failure_class, event.evidence, event.error
    recorded = _verdict(outcome, cls, evidence)
    head = (event.seq, event.type, _run(event), error, recorded)
    if outcome != "failed":  # charged whatever its class: nothing to judge
        return Judged(*head, recorded, "recorded"), event
    today = reclassify_event(cls, error, evidence)
    reading: Reading = "recorded"
    read: tuple[str, ...] = ()
    assumed: tuple[str, ...] = ()
    if today is None:
        legacy = legacy_reading(cls, error, evidence)
        if legacy is None:
            return Judged(*head, recorded, "not recorded"), event
        base = evidence or Evidence()
        observed = base.model_copy(update={"observation": legacy.observation})
        today = reclassify_event(cls, error, observed)
        assert today is not None  # an observation was given
        reading, read, assumed = "inferred", legacy.read, legacy.assumed
        today = (today[0], today[1].model_copy(update={"observation": None}), today[2])
    new_class, new_evidence, _ = today
    judged = Judged(*head, _verdict(outcome, new_class, new_evidence), reading, read, assumed)
    rewritten = event.model_copy(update={"failure_class": new_class, "evidence": new_evidence})
    return judged, rewritten


def reclassify_history(
    events: Callable[[], Iterable[Event]], *, now: datetime | None = None, source: str | None = None
) -> Reclassification:
    """Judge every failure of a history again and re-project the goal (see the module rules).

    Args:
        events: gives the history's events (called twice: the record, then today's).
        now: decide the final decisions at this time (None: at the last event).
        source: the history's name, for errors.

    Raises:
        HistoryError: the history breaks the format.
    """
    trace = Trace.of(events(), now=now, keep=False, source=source)
    failures: list[Judged] = []
    rewritten: list[Event] = []
    for event in events():
        if isinstance(event, PlanFailed) or (
            isinstance(event, AttemptFinished) and event.outcome != "succeeded"
        ):
            judged, event = judge(event)  # noqa: PLW2901 - today's version of it
            failures.append(judged)
        rewritten.append(event)
    result = trace.under(trace.policy, now=now, events=rewritten)
    return Reclassification(trace.goal_id, tuple(failures), result)
