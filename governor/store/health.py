"""Upstream health in the store: one record per upstream, changed by the core's transitions.

Rules (SPEC §11.10; the transitions are ``governor.core.upstream``'s):
    * A record changes by a pure transition of the core
      (``governor.core.upstream``), in one transaction keyed ``upstream:<name>``, and only
      when the transition changes it: the common case — a call answered by a healthy
      upstream — is one read and no write. In the same transaction every goal parked on
      that upstream is moved to when its state may change next (now once it is back, the
      next probe while it fails), so no parked goal is stepped for nothing.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Generic, TypeAlias, TypeVar

from governor.clock import Clock

if TYPE_CHECKING:  # imported where used: reading summaries imports no model (start-up)
    from governor.core.upstream import UpstreamHealth

Tx = TypeVar("Tx")

Transition: TypeAlias = "Callable[[UpstreamHealth | None], UpstreamHealth | None]"
"""A change of one upstream's record: the new record, or None when nothing changes."""


class HealthRecords(ABC, Generic[Tx]):
    """The upstream-health half of a store (``BaseEventStore`` includes it)."""

    _clock: Clock

    @abstractmethod
    def _write(self, goal_id: str) -> AbstractContextManager[Tx]: ...

    @abstractmethod
    def _read(self) -> AbstractContextManager[Tx]: ...

    def upstreams(self) -> list[UpstreamHealth]:
        """Every upstream's record, by name, each with the number of goals parked on it."""
        with self._read() as tx:
            records, parked = self._upstream_records(tx, None), self._parked_counts(tx)
        return [replace(r, parked=parked.get(r.upstream, 0)) for r in records]

    def upstream_health(self, names: Collection[str]) -> dict[str, UpstreamHealth]:
        """The records of the upstreams named (those that have one)."""
        if not names:
            return {}
        with self._read() as tx:
            return {r.upstream: r for r in self._upstream_records(tx, sorted(set(names)))}

    def change_upstream(self, name: str, change: Transition) -> UpstreamHealth | None:
        """Apply ``change`` to the upstream's record in one transaction; returns the new
        record, or None when it changed nothing (then nothing was written)."""
        with self._read() as tx:
            found = self._upstream_records(tx, [name])
        if change(found[0] if found else None) is None:
            return None
        with self._write(f"upstream:{name}") as tx:
            found = self._upstream_records(tx, [name])
            record = change(found[0] if found else None)
            if record is None:
                return None
            self._put_upstream(tx, record)
            from governor.core.outage_text import parked_reason, recovery_text  # noqa: PLC0415

            if record.healthy:
                due, reason = self._clock(), f"{recovery_text(record)}; resume"
            else:
                due, reason = record.probe_due_at or self._clock(), parked_reason(record)
            self._move_parked(tx, name, due, reason)
        return record

    @abstractmethod
    def _upstream_records(self, tx: Tx, names: Sequence[str] | None) -> list[UpstreamHealth]:
        """The records of the upstreams named (every record when None), by name."""

    @abstractmethod
    def _put_upstream(self, tx: Tx, record: UpstreamHealth) -> None:
        """Insert or replace the upstream's record (its ``parked`` count is not stored)."""

    @abstractmethod
    def _move_parked(self, tx: Tx, upstream: str, due: datetime, reason: str) -> None:
        """Set ``not_before`` and the due time of every goal waiting parked on ``upstream``
        to ``due``, and their reason to ``reason``."""

    @abstractmethod
    def _parked_counts(self, tx: Tx) -> dict[str, int]:
        """Upstream name -> goals waiting parked on it (only upstreams with some)."""


def as_row(record: UpstreamHealth, when: Callable[[datetime | None], Any]) -> tuple[Any, ...]:
    """A record as stored values, its times through ``when`` (a backend's time encoding)."""
    r, b = record, record.backoff
    return (
        r.upstream, r.harness, r.endpoint, r.model_family, r.healthy, when(r.updated_at),
        when(r.failing_since), r.last_status, r.retry_after_s, when(r.next_probe_at), r.probes,
        r.refusals, when(r.probing_until), r.prober, b.initial_s, b.factor, b.max_s,
        when(r.outage_started), when(r.recovered_at), r.recovered_by, r.answered,
    )  # fmt: skip
