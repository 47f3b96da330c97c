"""A goal's stored summary against a fold of its events: what ``governor store check`` compares.

Rules (docs/store.md "Checking a store"):
    * A summary caches ``summarize(view, now, health)`` as it was taken at an append or a
      reschedule, so what it may say depends on when it was written and on the health of
      the upstreams then. What the events alone decide is compared exactly: the title, the
      time of the last event, the goal-wide budget usage.
    * The decision — status, next action, what it is blocked on, the upstream it is parked
      on, its rule, and its reason unless the goal waits (a park's reason is rewritten as
      the upstream's health changes) — must be one the events give at a time the summary
      could have been written (the last event's time, or now), with or without the health
      of the upstream it names. A waiting goal's ``not_before`` may be earlier than theirs
      (it is stepped sooner, and decides again), never later than all of them and that
      upstream's next probe: a later one would hide the goal from the scheduler.
    * Usage, rule and reason are None in a row written before store schema version 2: they
      are not compared then (the next append fills them in).
    * Nothing here reads a clock or a store: ``now`` and the health are given.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING

from governor.core.summary import GoalSummary, Usage, summarize
from governor.core.text import stamp

if TYPE_CHECKING:
    from governor.core.upstream import UpstreamHealth
    from governor.core.view import GoalView

_DECIDED = ("status", "next_action", "blocked_on", "upstream", "rule")
"""The decision's fields a summary must hold as one candidate does (the reason too, unless
the goal waits)."""


def health_of(view: GoalView, record: UpstreamHealth | None) -> dict[str, UpstreamHealth] | None:
    """The health a runner would have given the decision: ``record`` (of the upstream the
    summary or the goal's park names) for every profile of the goal; None without one."""
    if record is None or view.created is None:
        return None
    return dict.fromkeys(view.created.profiles, record)


def rebuilt(view: GoalView, now: datetime, record: UpstreamHealth | None) -> GoalSummary:
    """The summary ``store check --repair`` writes: the decision now, with the health known."""
    return summarize(view, now, health_of(view, record))


def differences(
    stored: GoalSummary, view: GoalView, now: datetime, record: UpstreamHealth | None
) -> list[str]:
    """Each way ``stored`` differs from what the events say, as a phrase (empty: none)."""
    assert view.last_at is not None, "a stream with goal.created"
    health = health_of(view, record)
    contexts = [
        (when, upstreams)
        for when in dict.fromkeys((view.last_at, now))
        for upstreams in ((None, health) if health else (None,))
    ]
    problems: list[str] = []
    for index, (when, upstreams) in enumerate(contexts):  # the usual one first: often the only
        candidate = summarize(view, when, upstreams)
        if index == 0:
            problems += _exact(stored, candidate)
        due = [now, candidate.not_before, record.probe_due_at if record is not None else None]
        ceiling = max(d for d in due if d is not None)
        if _same_decision(stored, candidate, ceiling):
            return problems
    return problems + _decision_differences(stored, candidate, ceiling)


def _decision_differences(stored: GoalSummary, best: GoalSummary, ceiling: datetime) -> list[str]:
    """How the stored decision differs from the one the events give now: its fields, the
    reason and ``not_before`` only when the rest agrees (they follow from it)."""
    for names in (_DECIDED, ("reason", "not_before")):
        found = [
            differs(name, getattr(stored, name), getattr(best, name))
            for name in names
            if not _field_agrees(stored, best, name, ceiling)
        ]
        if found:
            return found
    return ["its decision is none the events give"]


def _exact(stored: GoalSummary, best: GoalSummary) -> Iterable[str]:
    """The fields the events alone decide."""
    if stored.title != best.title:
        yield differs("title", stored.title, best.title)
    if stored.updated_at != best.updated_at:
        yield differs("updated_at", stored.updated_at, best.updated_at)
    for name in ("replans", "attempts"):
        held = getattr(stored, name)
        if held is not None and held != getattr(best, name):
            yield differs(name, held, getattr(best, name))


def _same_decision(stored: GoalSummary, candidate: GoalSummary, ceiling: datetime) -> bool:
    return all(
        _field_agrees(stored, candidate, name, ceiling)
        for name in (*_DECIDED, "reason", "not_before")
    )


def _field_agrees(
    stored: GoalSummary, candidate: GoalSummary, name: str, ceiling: datetime
) -> bool:
    held, wanted = getattr(stored, name), getattr(candidate, name)
    waiting = stored.status == "waiting"
    if name in ("rule", "reason") and held is None:
        return True  # a row written before schema version 2
    if name == "reason" and waiting:
        return True  # a park's reason follows the upstream's health
    if name == "not_before" and waiting and candidate.status == "waiting":
        return held is not None and held <= ceiling
    return bool(held == wanted)


def differs(name: str, held: object, wanted: object) -> str:
    """``status is 'succeeded', its events say 'blocked'``."""
    return f"{name} is {shown_value(held)}, its events say {shown_value(wanted)}"


def shown_value(value: object) -> str:
    """A summary's value as a difference shows it."""
    if isinstance(value, datetime):
        return stamp(value)
    if isinstance(value, Usage):
        return f"{value.used} used, {value.charged} charged, limit {value.limit}"
    if value is None:
        return "none"
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 80 else f"{text[:77]}..."
