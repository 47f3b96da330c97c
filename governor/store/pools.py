"""Pools in the store: each pool's append-only stream of pool events and its folded state.

Rules (SPEC §13.6; the rules themselves are ``governor.core.pools``'):
    * A pool's events are its history: appended, never changed, numbered from 1 per pool
      (``pool_events``), so a pool can be exported and explained. Its folded state is kept
      beside them (``pools`` row: the state at its last seq), written in the same
      transaction, so a reservation reads one row, not the whole stream.
    * ``change_pools`` is the one write: in one transaction it locks the pools named (in
      name order, so two writers never wait on each other in a circle), reads their
      states, asks ``change`` for the events to append, and appends them with the new
      states. Anything ``change`` raises writes nothing. A reservation against every pool
      of a goal is one such transaction (``governor.drive.pools``).
    * A goal's append may carry a ``PoolWrite`` (``EventStore.append``'s ``pools``): the
      same change, made in the append's own transaction after its fencing and seq checks
      — a call's start and its reservation, or its finish and its settlement, land
      together or not at all (issue 33: one fsync per call, not three). The goal's lock
      is taken before the pools' (in name order), and no transaction takes a goal's lock
      after a pool's, so two writers never wait on each other in a circle.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from governor.errors import DamagedRowError

if TYPE_CHECKING:
    from pydantic import TypeAdapter

    from governor.core.pools import PoolEvent, PoolState

Tx = TypeVar("Tx")

PoolChange = Callable[["Mapping[str, PoolState]"], Mapping[str, Sequence[dict[str, Any]]]]
"""The pool events to append, given the pools' states: pool name -> the fields of each
event but ``pool`` and ``seq``. Anything it raises writes nothing."""


@dataclass(frozen=True, slots=True)
class PoolWrite:
    """A change of pools made in the transaction of a goal's append (``EventStore.append``)."""

    names: tuple[str, ...]
    change: PoolChange


PoolDraft = tuple[dict[str, "PoolState"], list[tuple["PoolEvent", str]]]
"""The pools' new states and the events (with their bodies) that lead there, unwritten."""


@cache
def _event_adapter() -> TypeAdapter[PoolEvent]:
    from pydantic import TypeAdapter  # noqa: PLC0415 - start-up: only pool commands need it

    from governor.core.pools import PoolEvent  # noqa: PLC0415

    return TypeAdapter(PoolEvent)


@cache
def _state_adapter() -> TypeAdapter[PoolState]:
    from pydantic import TypeAdapter  # noqa: PLC0415

    from governor.core.pools import PoolState  # noqa: PLC0415

    return TypeAdapter(PoolState)


def encode_pool_event(event: PoolEvent) -> str:
    return _event_adapter().dump_json(event, exclude_none=True).decode()


def decode_pool_event(body: str | bytes) -> PoolEvent:
    return _event_adapter().validate_json(body)


def decode_pool_state(name: str, text: object) -> PoolState:
    """The pool's state as its ``pools`` row holds it.

    Raises:
        DamagedRowError: the row's ``state`` is not a pool's state (a damaged store).
    """
    try:
        return _state_adapter().validate_json(text)  # type: ignore[arg-type]
    except (ValueError, TypeError) as exc:  # pydantic's ValidationError is a ValueError
        detail = str(exc).splitlines()[0][:200]
        raise DamagedRowError(
            "pools",
            repr(name),
            "state",
            f"is not a pool's state ({detail})",
            "restore the store from a backup (the pool's history is its pool_events rows)",
        ) from None


def encode_pool_state(state: PoolState) -> str:
    return _state_adapter().dump_json(state).decode()


class PoolRecords(ABC, Generic[Tx]):
    """The pools half of a store (``BaseEventStore`` includes it)."""

    @abstractmethod
    def _write(self, goal_id: str) -> AbstractContextManager[Tx]: ...

    @abstractmethod
    def _read(self) -> AbstractContextManager[Tx]: ...

    def pool_events(self, name: str) -> list[PoolEvent]:
        """The pool's events in order (empty for a pool never set)."""
        with self._read() as tx:
            return [decode_pool_event(body) for body in self._pool_bodies(tx, name)]

    def pool_state(self, name: str) -> PoolState | None:
        """The pool's folded state, or None for a pool never set."""
        with self._read() as tx:
            found = self._pool_snapshots(tx, [name])
        return decode_pool_state(name, found[name]) if name in found else None

    def pool_states(self) -> list[PoolState]:
        """Every pool's state (deleted ones too), by name."""
        with self._read() as tx:
            found = self._pool_snapshots(tx, None)
        return [decode_pool_state(n, found[n]) for n in sorted(found)]

    def change_pools(
        self, names: Sequence[str], change: Callable[..., Any]
    ) -> dict[str, PoolState]:
        """Append what ``change(states)`` returns (pool name -> event fields without
        ``pool`` and ``seq``) in one transaction; the pools' new states."""
        wanted = sorted(set(names))
        if not wanted:
            return {}
        with self._write(f"pool:{wanted[0]}") as tx:
            for name in wanted[1:]:
                self._lock_pool(tx, name)
            draft = self._draft_pools(tx, wanted, change)
            self._write_pools(tx, draft)
        return draft[0]

    @contextmanager
    def _write_pooled(
        self, goal_id: str, names: Sequence[str]
    ) -> Iterator[tuple[Tx, dict[str, str]]]:
        """The goal's write transaction holding the pools' locks too (the goal's first,
        then the pools' in the order given: name order), and the pools' stored states
        read under them. A backend may do it in one round trip."""
        with self._write(goal_id) as tx:
            for name in names:
                self._lock_pool(tx, name)
            yield tx, self._pool_snapshots(tx, names) if names else {}

    def _draft_pools(
        self, tx: Tx, wanted: Sequence[str], change: PoolChange, found: dict[str, str] | None = None
    ) -> PoolDraft:
        """Read the pools' states (their locks held; ``found``: read already) and build,
        check and fold the events ``change`` asks for; nothing is written."""
        from governor.core.pools import PoolState, evolve_pool  # noqa: PLC0415

        if found is None:
            found = self._pool_snapshots(tx, wanted)
        states = {
            n: decode_pool_state(n, found[n]) if n in found else PoolState(name=n) for n in wanted
        }
        drafts = change(states)
        written: list[tuple[PoolEvent, str]] = []
        for name, fields in drafts.items():
            state = states[name]
            for draft in fields:
                event = _event_adapter().validate_python(
                    {**draft, "pool": name, "seq": state.seq + 1}
                )
                evolve_pool(state, event)
                written.append((event, encode_pool_event(event)))
        return states, written

    def _write_pools(self, tx: Tx, draft: PoolDraft) -> None:
        """Write drafted pool events and the states they lead to."""
        states, written = draft
        for event, body in written:  # every event built and checked before any write
            self._put_pool_event(tx, event, body)
        for name in sorted({event.pool for event, _ in written}):
            self._put_pool_state(tx, name, states[name].seq, encode_pool_state(states[name]))

    @abstractmethod
    def _lock_pool(self, tx: Tx, name: str) -> None:
        """Hold the pool's lock until the transaction ends (a no-op where a write
        transaction already excludes every other writer)."""

    @abstractmethod
    def _pool_bodies(self, tx: Tx, name: str) -> list[str]:
        """The stored bodies of the pool's events, by seq."""

    @abstractmethod
    def _pool_snapshots(self, tx: Tx, names: Sequence[str] | None) -> dict[str, str]:
        """Pool name -> its stored state (every pool when None)."""

    @abstractmethod
    def _put_pool_event(self, tx: Tx, event: PoolEvent, body: str) -> None:
        """Insert one pool event (a duplicate ``(pool, seq)`` fails the transaction)."""

    @abstractmethod
    def _put_pool_state(self, tx: Tx, name: str, seq: int, state: str) -> None:
        """Insert or replace the pool's state row."""
