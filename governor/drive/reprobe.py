"""The environment re-probe: whether an environment stop's cause is gone, and what clears
it (SPEC §6.2; the runner before each decision, the Temporal workflow through an
activity).

A binary that was missing (``ENOENT``), not executable (``EACCES``) or of a format the
kernel refused (``ENOEXEC``) is looked at again — never run — by
``governor.exec.startable``; once the cause is gone the stop is cleared by ``governor``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Protocol

from governor.core import verbs
from governor.core.classify import ENVIRONMENT_ERRNOS
from governor.core.event_fields import Profile
from governor.core.events import Event
from governor.core.view import GoalView
from governor.exec.harness import Harness
from governor.exec.startable import startable


class Where(Protocol):
    """Where agents run: the folder and the environment (``RunnerSettings``)."""

    @property
    def workdir(self) -> Path: ...
    @property
    def env(self) -> Mapping[str, str]: ...


def environment_back(
    view: GoalView,
    work_id: str | None,
    harnesses: Callable[[Profile, Path], Harness],
    where: Where,
) -> tuple[str | None, str] | None:
    """Whether the environment stop of ``work_id`` (None: of the planner) is gone: the
    item (None for the planner) and the reason to record, or None."""
    item = view.work.get(work_id) if work_id else None
    failure = item.finish if item else (view.latest_plan.failure if view.latest_plan else None)
    created = view.created
    if (
        failure is None
        or created is None
        or failure.evidence is None
        or failure.evidence.ref not in ENVIRONMENT_ERRNOS
    ):
        return None
    cause = failure.evidence.ref
    profile = created.profiles[item.spec.profile if item else created.planner]
    binary = harnesses(profile, where.workdir).binary(profile)
    found = binary and startable(binary, where.env.get("PATH"), errno=cause)
    if not binary or not found:
        return None
    at = "" if found == binary else f" ({found})"
    now = {"ENOENT": "is there now", "EACCES": "is executable now"}.get(
        cause, "begins as a script or binary now"
    )
    reason = f"re-probed the environment ({cause} before): {binary} {now}{at}"
    return (item.work_id if item else None), reason


def recovered(view: GoalView, work_id: str | None, reason: str, *, at: datetime) -> list[Event]:
    """What clears an environment stop whose cause is gone (``environment_back``): the
    item's ``work.retried``, or ``goal.resumed`` for the planner, by ``governor``."""
    if work_id is None:
        return verbs.resume_goal(view, reason=reason, at=at, actor="governor")
    return verbs.retry_work(view, work_id=work_id, reason=reason, at=at, actor="governor")
