"""Leases in the store: granted, renewed, released, and the fencing check every write
under a lease makes (``BaseEventStore`` includes it).

Rules (SPEC §8):
    * One lease per goal. A free or expired lease may be taken; a takeover gets the next
      token, and tokens never repeat (the row stays, holder NULL, after a release).
    * A lease is renewed only while it is still the goal's current one, even expired;
      a release of a lease taken over is a no-op.
    * Every append (and every agent recorded) under a lease checks it is still current,
      in the same transaction (``_check_current``): a runner whose lease was taken over
      cannot write.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from contextlib import AbstractContextManager
from dataclasses import replace
from datetime import timedelta
from typing import Generic, TypeVar

from governor.clock import Clock
from governor.core.text import stamp
from governor.errors import LeaseError
from governor.store.base import Lease
from governor.store.stored import LeaseRecord

Tx = TypeVar("Tx")


def _same(current: Lease | None, lease: Lease) -> bool:
    return current is not None and (current.holder, current.token) == (lease.holder, lease.token)


def _whereabouts(current: Lease | None) -> str:
    if current is None:
        return "it was released"
    return f"{current.holder} took it over with token {current.token}"


def _check_ttl(ttl_s: float) -> None:
    if not ttl_s > 0:
        raise ValueError(f"a lease needs a positive ttl_s, not {ttl_s}")


class LeaseRecords(ABC, Generic[Tx]):
    """The lease half of a store (the module rules)."""

    _clock: Clock

    @abstractmethod
    def _write(self, goal_id: str) -> AbstractContextManager[Tx]: ...

    @abstractmethod
    def _read(self) -> AbstractContextManager[Tx]: ...

    @abstractmethod
    def _lease_record(self, tx: Tx, goal_id: str) -> LeaseRecord | None: ...

    @abstractmethod
    def _put_lease(self, tx: Tx, goal_id: str, record: LeaseRecord) -> None: ...

    def acquire_lease(self, goal_id: str, holder: str, *, ttl_s: float) -> Lease:
        """Take the goal's lease when it is free or expired (a takeover gets a new token).

        Raises:
            LeaseError: naming the holder and the expiry of a lease still live.
        """
        _check_ttl(ttl_s)
        if not holder:
            raise ValueError("a lease holder needs a name")
        with self._write(goal_id) as tx:
            now = self._clock()
            record = self._lease_record(tx, goal_id)
            current = record.lease if record else None
            if current is not None and not current.is_expired(now):
                raise LeaseError(
                    goal_id,
                    f"the lease is held by {current.holder} until {stamp(current.expires_at)}",
                    holder=current.holder,
                )
            token = (record.token if record else 0) + 1
            lease = Lease(goal_id, holder, token, now + timedelta(seconds=ttl_s))
            self._put_lease(tx, goal_id, LeaseRecord(token, lease))
        return lease

    def renew_lease(self, lease: Lease, *, ttl_s: float) -> Lease:
        """Extend a lease that is still the goal's current one, even if it has expired.

        Raises:
            LeaseError: when it was taken over or released.
        """
        _check_ttl(ttl_s)
        with self._write(lease.goal_id) as tx:
            self._check_current(
                tx, lease, f"cannot renew the lease of {lease.holder} (token {lease.token}): {{}}"
            )
            renewed = replace(lease, expires_at=self._clock() + timedelta(seconds=ttl_s))
            self._put_lease(tx, lease.goal_id, LeaseRecord(lease.token, renewed))
        return renewed

    def release_lease(self, lease: Lease) -> None:
        """Give the lease up (its token stays spent); a no-op once it was taken over."""
        with self._write(lease.goal_id) as tx:
            if _same(self._current(tx, lease.goal_id), lease):
                self._put_lease(tx, lease.goal_id, LeaseRecord(lease.token, None))

    def current_lease(self, goal_id: str) -> Lease | None:
        """The goal's lease, expired or not, until it is released or taken over."""
        with self._read() as tx:
            return self._current(tx, goal_id)

    def _check_current(self, tx: Tx, lease: Lease, message: str) -> None:
        """Refuse unless ``lease`` is still the goal's current lease (the fencing check).

        ``message`` says what was refused; ``{}`` in it becomes where the lease went.
        """
        current = self._current(tx, lease.goal_id)
        if not _same(current, lease):
            raise LeaseError(
                lease.goal_id,
                message.format(_whereabouts(current)),
                holder=current.holder if current else None,
            )

    def _current(self, tx: Tx, goal_id: str) -> Lease | None:
        record = self._lease_record(tx, goal_id)
        return record.lease if record else None
