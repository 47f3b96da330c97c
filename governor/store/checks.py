"""``governor store check``: every stream against its checksums, every summary against its
events, every other row against its columns; ``--repair`` mends what is derived.

Rules (docs/store.md "Checking a store"; decision record 0018):
    * Read commands trust the summary rows (a list of 100,000 goals reads no event); this
      check is how an operator verifies them. It walks every stream the ``events`` table
      holds — not the summaries, which may be the damaged part — a page at a time, so a
      store of any size is checked in bounded memory.
    * A stream is sound when its rows are numbered 1..n without a gap, each reads back
      (checksum, goal, seq; ``governor.store.rows``), and they reproduce the checksum chain
      and the last seq its summary recorded. Its summary is compared with a fold of them
      (``governor.store.compare``). Every other table's rows are decoded as every read
      decodes them (``governor.store.tables``).
    * Each difference is one ``Finding``. ``repair`` mends only what the events (or
      nothing) determine: a summary is rebuilt from its stream, a damaged lease is
      released under a token above any granted before, and a damaged health record,
      registry row or agent row is dropped. Events are never written: a stream whose rows
      are damaged, missing or replaced stays as it is, and its summary with it, so nothing
      takes a shorter or other history for the real one.
    * Each repair is its own transaction, under the same lock a writer of that goal (or
      record) takes, and re-reads what it mends: a goal that moved on meanwhile is left
      for the next check.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Generic, TypeVar

from governor.clock import Clock
from governor.errors import CorruptEventError, DamagedRowError
from governor.store.columns import Table, Times, shown
from governor.store.compare import differences, rebuilt, shown_value
from governor.store.findings import CheckTally, Finding
from governor.store.schema_objects import (
    Catalogue,
    built_version,
    missing_indexes,
    spans,
    unrecorded,
)
from governor.store.stored import LeaseRecord, StreamHead, chain
from governor.store.tables import (
    AGENTS,
    LEASES,
    SERVICE_ERRORS,
    SUMMARIES,
    SUMMARY_EXTRA,
    UPSTREAMS,
    WORKERS,
    agent_of,
    error_of,
    lease_of,
    summary_of,
    upstream_of,
    worker_of,
)

if TYPE_CHECKING:
    from governor.core.summary import GoalSummary
    from governor.core.upstream import UpstreamHealth
    from governor.core.view import GoalView

Tx = TypeVar("Tx")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
REBUILD = "rebuilt from its events"
_UNRECORDED = "not recorded, though the tables they made are there"
_RECORD = "recorded again"
RETRIES = 3
"""Walks of a goal a check makes at most while a runner keeps writing it."""
_BUILDERS: dict[str, Callable[[Sequence[object], Times], object]] = {
    UPSTREAMS.name: upstream_of,
    WORKERS.name: worker_of,
    SERVICE_ERRORS.name: error_of,
    AGENTS.name: agent_of,
}


@dataclass(slots=True)
class _Stream:
    """What a walk of one stream found."""

    last: int = 0
    chain: int = 0
    view: GoalView | None = None
    """The fold of the stream; None when a row of it could not be read."""
    broken: Finding | None = None


class StoreChecks(ABC, Generic[Tx]):
    """The check half of a store (``BaseEventStore`` includes it)."""

    _clock: Clock
    page_size: int
    migrations: Sequence[Sequence[str]]
    """The backend's migrations (``MIGRATIONS``)."""
    schema_restored: list[int]
    """Versions opening the store recorded again (``governor.store.migrate``), to report."""
    times: Times
    """How the backend stores times (``governor.store.columns.Times``)."""

    @abstractmethod
    def _write(self, goal_id: str) -> AbstractContextManager[Tx]: ...

    @abstractmethod
    def _read(self) -> AbstractContextManager[Tx]: ...

    def check(
        self,
        *,
        repair: bool = False,
        tally: CheckTally | None = None,
    ) -> Iterator[Finding]:
        """Check every stream, summary and row of the store (see the module rules), with
        ``repair`` mending what can be; yields each finding as it is made, and counts what
        it looked at in ``tally`` as it goes (a progress display reads it meanwhile)."""
        tally = tally if tally is not None else CheckTally()
        for finding in self._check_schema(repair):
            yield tally.add(finding)
        with self._read() as tx:
            tally.expected_goals = self._summary_count(tx)
        after: object = ""
        while True:
            with self._read() as tx:
                ids = self._stream_ids(tx, after, self.page_size)
            for goal_id in ids:
                for finding in self._check_goal(goal_id, repair, tally):
                    yield tally.add(finding)
                tally.goals += 1
            if len(ids) < self.page_size:
                break
            after = ids[-1]
        for finding in self._check_orphans(repair):
            yield tally.add(finding)
        for table in (UPSTREAMS, WORKERS, SERVICE_ERRORS, AGENTS):
            for finding in self._check_rows(table, repair, tally):
                yield tally.add(finding)

    def unsummarised(self) -> int:
        """How many goals have events but no summary row (``list`` cannot show them):
        one index seek per goal, no event read."""
        with self._read() as tx:
            return self._unsummarised_count(tx)

    # --- the schema ----------------------------------------------------------------------

    def _check_schema(self, repair: bool) -> Iterator[Finding]:
        """``schema_version`` rows the tables outlived, and indexes a migration made that
        are gone (``governor.store.schema_objects``); a repair records the one and runs
        the other's ``CREATE INDEX`` again."""
        restored, self.schema_restored = self.schema_restored, []
        if restored:  # opening the store for the repair recorded them (governor.store.migrate)
            yield Finding(
                "schema_version", f"versions {spans(restored)}", _UNRECORDED, _RECORD, True
            )
        with self._read() as tx:
            recorded, catalogue = self._recorded_versions(tx), self._catalogue(tx)
        built = built_version(catalogue, self.migrations)
        if lost := unrecorded(recorded, built):
            done = repair and self._record_versions(lost)
            yield Finding("schema_version", f"versions {spans(lost)}", _UNRECORDED, _RECORD, done)
        for name, statement in missing_indexes(catalogue, self.migrations, built):
            done = repair and self._run_schema(statement)
            yield Finding(
                "index", name, "missing (queries that use it fail)", "created again", done
            )

    def _record_versions(self, versions: Sequence[int]) -> bool:
        with self._write("service:schema") as tx:
            have = set(self._recorded_versions(tx))
            for version in versions:
                if version not in have:
                    self._record_version(tx, version, self._clock())
        return True

    def _run_schema(self, statement: str) -> bool:
        with self._write("service:schema") as tx:
            self._execute(tx, statement)
        return True

    # --- one goal ----------------------------------------------------------------------

    def _check_goal(self, goal_id: object, repair: bool, tally: CheckTally) -> Iterator[Finding]:
        if not isinstance(goal_id, str):
            yield Finding("events", shown(goal_id), "goal_id is not a goal id", None)
            return
        key = repr(goal_id)
        snapshot = self._snapshot(goal_id, tally)
        if snapshot is None:  # a runner keeps writing it: it is not compared this time
            tally.busy += 1
            return
        stream, raw, lease = snapshot
        if stream.broken is not None:
            yield stream.broken
        problems, fixable = self._summary_problems(goal_id, raw, stream)
        fix = REBUILD if fixable and stream.view is not None else None
        done = bool(problems) and fix is not None and repair and self._rebuild(goal_id, stream)
        yield from (Finding("goals", key, p, fix, done) for p in problems)
        if lease is not None:
            yield from self._check_lease(goal_id, lease, repair)

    def _snapshot(
        self, goal_id: str, tally: CheckTally
    ) -> tuple[_Stream, Sequence[object] | None, Sequence[object] | None] | None:
        """The stream, its summary row and its lease row as one state of the goal: read
        again when a runner wrote the goal meanwhile (every append rewrites its summary
        row), so that a check beside a running service never takes an append for damage;
        None when the goal was written during each of ``RETRIES`` walks."""
        for _ in range(RETRIES):
            with self._read() as tx:
                before = self._summary_raw(tx, goal_id)
            stream = self._walk(goal_id, tally)
            with self._read() as tx:
                raw, lease = self._summary_raw(tx, goal_id), self._lease_raw(tx, goal_id)
            if raw == before:
                return stream, raw, lease
        return None

    def _walk(self, goal_id: str, tally: CheckTally) -> _Stream:
        """Read the whole stream: numbering, checksums, goal and seq of each row, its fold."""
        from governor.core.fold import evolve  # noqa: PLC0415 - the check only
        from governor.core.view import GoalView  # noqa: PLC0415 - the check only
        from governor.store.rows import read_row  # noqa: PLC0415 - start-up: imports models

        found = _Stream(view=GoalView())
        while rows := self._page(goal_id, found.last):
            for seq, body, crc in rows:
                tally.events += 1
                try:
                    if seq != found.last + 1:
                        raise CorruptEventError(goal_id, found.last + 1, "the row is missing")
                    event = read_row(goal_id, seq, body, crc)
                except CorruptEventError as exc:
                    found.broken = Finding(
                        "events", repr(goal_id), f"event {exc.seq}: {exc.detail}", None
                    )
                    found.view = None
                    return found
                assert found.view is not None
                evolve(found.view, event)
                found.last, found.chain = seq, chain(found.chain, (crc,))
        return found

    def _page(self, goal_id: str, after: int) -> list[tuple[int, bytes | str, int]]:
        with self._read() as tx:
            return self._rows(tx, goal_id, after, self.page_size)

    def _summary_problems(
        self, goal_id: str, raw: Sequence[object] | None, stream: _Stream
    ) -> tuple[list[str], bool]:
        """What is wrong with the goal's summary row, and whether a rebuild mends it all."""
        if raw is None:
            return [f"missing, though the goal has {stream.last} events"], True
        try:
            stored = summary_of(raw[: len(SUMMARIES.columns)], self.times)
            (_, due, recorded_chain) = SUMMARY_EXTRA.decode(
                (raw[0], *raw[len(SUMMARIES.columns) :]), self.times
            )
        except DamagedRowError as exc:
            return [f"{exc.column} {exc.detail}"], True
        if stream.view is None:
            return [], False  # the stream's own finding says what is wrong
        if stored.seq != stream.last or (
            recorded_chain is not None and recorded_chain != stream.chain
        ):
            return _head_problems(stored.seq, recorded_chain, stream)
        problems = differences(stored, stream.view, self._clock(), self._record(stored, stream))
        if not problems and due != stored.due_at:
            held, wanted = shown_value(due), shown_value(stored.due_at)
            problems.append(f"due is {held}, its status and not_before say {wanted}")
        return problems, True

    def _record(self, stored: GoalSummary | None, stream: _Stream) -> UpstreamHealth | None:
        """The health record of the upstream the summary or the goal's park names."""
        parked = stream.view.parked if stream.view is not None else None
        name = (stored.upstream if stored is not None else None) or (
            parked.upstream if parked is not None else None
        )
        if name is None:
            return None
        try:
            return self.upstream_health([name]).get(name)
        except DamagedRowError:
            return None  # reported with its table

    def _rebuild(self, goal_id: str, stream: _Stream) -> bool:
        """Write the goal's summary from its events, if its stream still ends where the walk
        ended; False when it moved on meanwhile."""
        assert stream.view is not None
        summary = rebuilt(stream.view, self._clock(), self._record(None, stream))
        with self._write(goal_id) as tx:
            if self._stream_end(tx, goal_id) != stream.last:
                return False
            self._put_summary(tx, summary, stream.chain)
        return True

    def _check_lease(self, goal_id: str, row: Sequence[object], repair: bool) -> Iterator[Finding]:
        try:
            lease_of(goal_id, row, self.times)
        except DamagedRowError as exc:
            fix = "released (a runner that held it is refused at its next write)"
            done = repair and self._release(goal_id)
            yield Finding(LEASES.name, repr(goal_id), f"{exc.column} {exc.detail}", fix, done)

    def _release(self, goal_id: str) -> bool:
        """Release a damaged lease under a token above any granted before: the clock's
        microseconds since the epoch (one grant per microsecond never reaches them)."""
        token = (self._clock() - _EPOCH) // timedelta(microseconds=1)
        with self._write(goal_id) as tx:
            self._put_lease(tx, goal_id, LeaseRecord(token, None))
        return True

    # --- the rest of the store -----------------------------------------------------------

    def _check_orphans(self, repair: bool) -> Iterator[Finding]:
        """Summary rows of no stream: a key that is no goal id is dropped; a goal whose
        events are all gone keeps its row (its id stays taken, its loads say so)."""
        with self._read() as tx:
            keys = self._orphan_summaries(tx)
        for key in keys:
            if isinstance(key, str):
                yield Finding("goals", repr(key), "the goal has no events: they were deleted", None)
            else:
                done = repair and self._drop(SUMMARIES, (key,), "service:check")
                yield Finding("goals", shown(key), "goal_id is not a goal id", "dropped", done)

    def _check_rows(self, table: Table, repair: bool, tally: CheckTally) -> Iterator[Finding]:
        with self._read() as tx:
            rows = self._table_rows(tx, table)
        tally.rows[table.name] = len(rows)
        build = _BUILDERS[table.name]
        for row in rows:
            try:
                build(row, self.times)
            except DamagedRowError as exc:
                lock = f"upstream:{row[0]}" if table is UPSTREAMS else "service:registry"
                done = repair and self._drop(table, row, lock)
                yield Finding(table.name, exc.key, f"{exc.column} {exc.detail}", "dropped", done)

    def _drop(self, table: Table, row: Sequence[object], lock: str) -> bool:
        with self._write(lock) as tx:
            self._delete_row(tx, table, [row[i] for i in table.key])
        return True

    # --- storage primitives ----------------------------------------------------------------

    @abstractmethod
    def _recorded_versions(self, tx: Tx) -> list[int]:
        """The versions ``schema_version`` holds a row of."""

    @abstractmethod
    def _catalogue(self, tx: Tx) -> Catalogue:
        """The tables, columns and indexes the database holds."""

    @abstractmethod
    def _record_version(self, tx: Tx, version: int, at: datetime) -> None:
        """Add ``version``'s row to ``schema_version``."""

    @abstractmethod
    def _execute(self, tx: Tx, statement: str) -> None:
        """Run one of the migrations' statements."""

    @abstractmethod
    def _rows(
        self, tx: Tx, goal_id: str, after_seq: int, limit: int
    ) -> list[tuple[int, bytes | str, int]]: ...

    @abstractmethod
    def _head(self, tx: Tx, goal_id: str) -> StreamHead: ...

    @abstractmethod
    def _put_summary(self, tx: Tx, summary: GoalSummary, chain: int) -> None: ...

    @abstractmethod
    def _put_lease(self, tx: Tx, goal_id: str, record: LeaseRecord) -> None: ...

    @abstractmethod
    def upstream_health(self, names: Collection[str]) -> dict[str, UpstreamHealth]: ...

    @abstractmethod
    def _summary_count(self, tx: Tx) -> int:
        """How many summary rows there are."""

    @abstractmethod
    def _stream_ids(self, tx: Tx, after: object, limit: int) -> list[object]:
        """Up to ``limit`` goal ids of the ``events`` table above ``after``, in order (raw:
        a damaged one may be no text)."""

    @abstractmethod
    def _stream_end(self, tx: Tx, goal_id: str) -> object:
        """The highest seq of the goal's rows (0 when none)."""

    @abstractmethod
    def _summary_raw(self, tx: Tx, goal_id: str) -> Sequence[object] | None:
        """The goal's summary row as stored: ``SUMMARIES``' columns, then its due time and
        chain head (``SUMMARY_EXTRA``'s after the key); None when there is none."""

    @abstractmethod
    def _lease_raw(self, tx: Tx, goal_id: str) -> Sequence[object] | None:
        """The goal's lease row as stored (token, holder, expiry); None when there is none."""

    @abstractmethod
    def _unsummarised_count(self, tx: Tx) -> int:
        """How many streams of the ``events`` table have no summary row."""

    @abstractmethod
    def _orphan_summaries(self, tx: Tx) -> list[object]:
        """The keys of summary rows no event row shares (raw)."""

    @abstractmethod
    def _table_rows(self, tx: Tx, table: Table) -> list[Sequence[object]]:
        """Every row of ``table``, its columns as stored."""

    @abstractmethod
    def _delete_row(self, tx: Tx, table: Table, key: Sequence[object]) -> None:
        """Delete the row of ``table`` whose key columns hold ``key`` (raw values)."""


def _head_problems(
    recorded: int, recorded_chain: int | None, stream: _Stream
) -> tuple[list[str], bool]:
    """The summary's recorded seq or chain head is not the stream's."""
    if recorded_chain is not None and recorded_chain == stream.chain:  # the seq was edited
        return [f"seq is {recorded}, but the stream ends at event {stream.last}"], True
    if stream.last < recorded:
        return [
            f"the stream ends at event {stream.last}, but the store recorded {recorded}: "
            "its last rows were deleted"
        ], False
    if stream.last > recorded:
        return [
            f"the stream goes on past event {recorded}, the last one the store recorded: "
            "rows were added behind its back"
        ], False
    return [
        "the stream does not match the checksum chain the store recorded: rows were "
        "replaced behind its back"
    ], False
