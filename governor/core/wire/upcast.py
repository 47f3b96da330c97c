"""Upcasters: pure ``dict -> dict`` upgrades of old event shapes.

Rules (SPEC §3, and the durable attempt budget of seed 001):
    * ``UPCASTERS`` maps ``(type, from_version)`` to a function that returns the shape
      of the next version. It is append-only; version 1 is the first shipped shape.
    * Legacy attempt events without an ``attempt`` number: an ``attempt.started``
      takes the next number of its item (so the first reads as attempt 1 and an old
      item retries at 2, never restarting its budget); an ``attempt.continued`` or
      ``attempt.finished`` refers to the item's latest attempt.
    * A ``goal.created`` policy recorded before SPEC §11.5 with ``max_milestones`` above
      ``max_replans`` reads with ``max_milestones`` lowered to ``max_replans``: a stored
      goal stays readable (decision record 0006). One that only breaks SPEC §12.1 (no
      planner call left for the completion review) is read as recorded, no upcast.
    * Every upcast is reported as a note, so ``governor validate`` can say what it did.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from governor.core.event_fields import SCHEMA_VERSION
from governor.core.events import Event
from governor.core.policy import Policy

Shape = dict[str, Any]

UPCASTERS: Final[dict[tuple[str, int], Callable[[Shape], Shape]]] = {}
"""``(type, from_version) -> upgrade``; empty while version 1 is the only version."""

_ATTEMPT_TYPES: Final = frozenset({"attempt.started", "attempt.continued", "attempt.finished"})


class Upcaster:
    """Upgrades legacy lines of one history, remembering what earlier lines said."""

    __slots__ = ("_latest",)

    def __init__(self) -> None:
        self._latest: dict[str, int] = {}

    @property
    def latest(self) -> dict[str, int]:
        """Work id -> its latest attempt number: what ``note`` remembers (a reader's hot
        loop may keep it up to date itself, as ``note`` does)."""
        return self._latest

    def note(self, event: Event) -> None:
        """Remember an event that needed no upcast (only attempt numbers matter)."""
        if event.type == "attempt.started":
            self._latest[event.work_id] = event.attempt

    def upcast(self, data: Shape) -> tuple[Shape, str | None]:
        """Return the upgraded shape and a note saying what changed (None: nothing did)."""
        notes: list[str] = []
        version = data.get("schema_version", SCHEMA_VERSION)
        event_type = data.get("type")
        if not isinstance(event_type, str):  # not an event at all: the models word it
            return data, None
        while isinstance(version, int) and version < SCHEMA_VERSION:
            step = UPCASTERS.get((event_type, version))
            if step is None:
                break
            data = step(data)
            notes.append(f"upgraded {event_type} from schema version {version}")
            version = data.get("schema_version", SCHEMA_VERSION)
        if event_type in _ATTEMPT_TYPES and "attempt" not in data:
            data, note = self._number_attempt(data)
            if note:
                notes.append(note)
        if event_type == "goal.created":
            data, note = _clamp_milestones(data)
            if note:
                notes.append(note)
        return data, "; ".join(notes) or None

    def _number_attempt(self, data: Shape) -> tuple[Shape, str | None]:
        work_id = data.get("work_id")
        if not isinstance(work_id, str):
            return data, None
        latest = self._latest.get(work_id, 0)
        if data["type"] == "attempt.started":
            number = latest + 1
            self._latest[work_id] = number
            return {
                **data,
                "attempt": number,
            }, f"legacy attempt.started without 'attempt' read as attempt {number}"
        if latest == 0:
            return data, None
        return (
            {**data, "attempt": latest},
            f"legacy {data['type']} without 'attempt' read as attempt {latest}",
        )


def _clamp_milestones(data: Shape) -> tuple[Shape, str | None]:
    """A recorded policy whose ``max_milestones`` exceeds its ``max_replans``, lowered to it."""
    policy = data.get("policy")
    if not isinstance(policy, dict):
        return data, None
    milestones = policy.get("max_milestones")
    replans = policy.get("max_replans", Policy.model_fields["max_replans"].default)
    whole = all(isinstance(n, int) and not isinstance(n, bool) for n in (milestones, replans))
    if not whole or milestones <= replans:
        return data, None
    clamped = {**data, "policy": {**policy, "max_milestones": replans}}
    return clamped, (
        f"goal.created: max_milestones {milestones} is above max_replans {replans}, "
        f"which a policy may no longer be (SPEC §11.5); read as {replans}"
    )
