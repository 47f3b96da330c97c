"""The service registry's records: the workers of ``governor serve`` and the errors they met.

Rules:
    * ``governor serve``'s workers write these records (a heartbeat row each, and every
      infrastructure error of a step); ``governor service status`` reads them. The store
      keeps them for every machine to see, without interpreting them, and keeps only the
      ``ERRORS_KEPT`` most recent errors.
    * They are never events: nothing here is charged or replayed.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Final

ERRORS_KEPT: Final = 100
"""How many recent service errors the registry keeps (older ones are dropped)."""


@dataclass(frozen=True, slots=True)
class WorkerBeat:
    """One service worker's row of the registry: who it is, and what it is doing now.

    Written by the worker at every heartbeat; ``governor service status`` reads them.
    A row whose ``heartbeat_at`` is old belongs to a worker that died.
    """

    worker_id: str
    host: str
    pid: int
    started_at: datetime
    heartbeat_at: datetime
    goal_id: str | None = None
    """The goal the worker is stepping, None while it looks for work or sleeps."""
    step_started_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class ServiceError:
    """An infrastructure error a service worker met while stepping a goal (never an event)."""

    at: datetime
    worker_id: str
    goal_id: str | None
    error: str
