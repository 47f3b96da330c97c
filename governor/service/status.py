"""``service_status``: what the workers sharing a store are doing, read from the store alone:
workers, goals by status, the soonest wake-up, each upstream's health, recent errors.

Rules:
    * Everything comes from the store (the registry rows, the goal summaries), so the
      report is the same from any machine that can open the store.
    * A worker whose last heartbeat is older than ``STALE_AFTER_S`` is reported as
      stale: it died, or is stuck. Rows older than ``FORGET_AFTER_S`` are dropped when
      a service starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

from governor.core.upstream import UpstreamHealth
from governor.registry import ServiceError, WorkerBeat
from governor.store.base import EventStore

STALE_AFTER_S: Final = 30.0
"""A worker silent this long (six heartbeats at most) is reported as stale."""
FORGET_AFTER_S: Final = 3600.0
"""A worker silent this long is dropped from the registry when a service starts."""
DUE_SHOWN: Final = 1000
"""``due_now`` counts up to this many goals (then says ``1000+``)."""


@dataclass(frozen=True, slots=True)
class WorkerState:
    """One worker's registry row, and how it looks from ``now``."""

    beat: WorkerBeat
    silent_s: float
    """Seconds since its last heartbeat."""
    stale: bool


@dataclass(frozen=True, slots=True)
class ServiceStatus:
    """The service at a glance: workers, goals by status, the soonest wake-up, errors."""

    at: datetime
    workers: tuple[WorkerState, ...]
    goals: dict[str, int]
    due_now: int
    """Goals a worker could step right now (at most ``DUE_SHOWN``)."""
    soonest_wakeup: datetime | None
    """The earliest ``not_before`` among waiting goals."""
    errors: tuple[ServiceError, ...]
    """The most recent infrastructure errors, newest first."""
    upstreams: tuple[UpstreamHealth, ...] = ()
    """Each upstream's shared health, with the goals parked on it (SPEC §11.10)."""
    reprobed: int = 0
    """Goals stopped on a missing precondition (``blocked`` on ``environment``): due at
    serve's next re-probe (``ServiceSettings.reprobe_s``; at most ``DUE_SHOWN``)."""


def service_status(store: EventStore, now: datetime, *, errors: int = 10) -> ServiceStatus:
    """Read the service's state from the store."""
    workers = tuple(
        WorkerState(beat, silent, silent > STALE_AFTER_S)
        for beat in store.workers()
        for silent in [(now - beat.heartbeat_at).total_seconds()]
    )
    return ServiceStatus(
        at=now,
        workers=workers,
        goals=store.goal_counts(),
        due_now=len(store.due(now, limit=DUE_SHOWN)),
        soonest_wakeup=store.soonest_wakeup(),
        errors=tuple(store.service_errors(limit=errors)),
        upstreams=tuple(store.upstreams()),
        reprobed=sum(
            s.blocked_on == "environment"
            for s in store.goals(statuses=("blocked",), limit=DUE_SHOWN)
        ),
    )


def forget_stale_workers(store: EventStore, now: datetime) -> list[str]:
    """Drop registry rows silent for ``FORGET_AFTER_S``; returns their worker ids."""
    cutoff = now - timedelta(seconds=FORGET_AFTER_S)
    gone = [w.worker_id for w in store.workers() if w.heartbeat_at < cutoff]
    for worker in gone:
        store.remove_worker(worker)
    return gone
