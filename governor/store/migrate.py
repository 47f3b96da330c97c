"""Schema migrations: one runner for every SQL backend, each bringing its own DDL and locking.

Rules (SPEC §8; LangGraph's ``MIGRATIONS``):
    * A backend's migrations are one append-only list: ``migrations[v]`` takes a database
      from version ``v - 1`` to ``v``. Never edit or reorder a shipped entry; add one.
    * ``schema_version`` records each version applied, stamped by the injected clock.
    * A current database is only read. Otherwise the missing versions are applied in
      one transaction that serialises migrators and reads the version again first, so
      two processes opening a new database at once migrate it once.
    * A database newer than the code is refused, never guessed at. One opened read-only
      is never migrated: it must already be current (``check_readable``).
    * A ``schema_version`` that lost rows while the tables stayed is read by what the
      tables show (``governor.store.schema_objects``): a read takes the database as the
      version it is built to, and a migration records the lost versions again instead of
      running their statements a second time (which would fail: the tables exist).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Protocol, TypeVar

from governor.clock import Clock
from governor.errors import StoreError
from governor.store.schema_objects import Catalogue, built_version

S_contra = TypeVar("S_contra", bound=str, contravariant=True)
"""A statement as the backend's driver takes it (PostgreSQL's: a ``LiteralString``)."""


class Schema(Protocol[S_contra]):
    """What the runner needs of a database: its dialect's few migration primitives."""

    def version(self) -> int:
        """The schema version; -1 for a database governor has never opened."""
        ...

    def migrating(self) -> AbstractContextManager[None]:
        """One transaction that excludes other migrators and has ``schema_version`` ready;
        it commits when the block ends and writes nothing when it raises."""
        ...

    def execute(self, statement: S_contra) -> None: ...

    def applied(self, version: int, at: datetime) -> None:
        """Record ``version`` in ``schema_version``."""
        ...

    def catalogue(self) -> Catalogue:
        """The tables, columns and indexes the database holds."""
        ...


def _version(schema: Schema[S_contra], migrations: Sequence[Sequence[str]]) -> int:
    """The recorded version, or the version the tables are built to when that is higher
    (``schema_version`` lost rows)."""
    found = schema.version()
    if found >= len(migrations) - 1:
        return found
    return max(found, built_version(schema.catalogue(), migrations))


def _check_not_newer(current: int, latest: int, where: str) -> None:
    if current > latest:
        raise StoreError(
            f"{where}: the database has schema version {current}, but this governor knows "
            f"versions up to {latest}; upgrade governor to open it"
        )


def check_readable(
    schema: Schema[S_contra], migrations: Sequence[Sequence[str]], *, where: str
) -> int:
    """The version of a database opened read-only, which is never migrated: it must
    already be a governor store at the latest version; returns that version.

    Raises:
        StoreError: for a database governor never set up, or one of another version.
    """
    latest = len(migrations) - 1
    found = _version(schema, migrations)
    if found == -1:
        raise StoreError(f"{where}: not a governor store (it holds no governor tables)")
    _check_not_newer(found, latest, where)
    if found < latest:
        raise StoreError(
            f"{where}: the database has schema version {found} and this governor reads "
            f"version {latest}; a read never upgrades it: run a governor command that writes "
            "to it once (governor tick, run, import or serve), then try again"
        )
    return latest


def migrate(
    schema: Schema[S_contra],
    migrations: Sequence[Sequence[S_contra]],
    *,
    where: str,
    now: Clock,
    restored: list[int] | None = None,
) -> int:
    """Bring the database to the latest version of ``migrations``; returns that version.

    The versions the tables already had but ``schema_version`` did not record are
    recorded again, not run, and appended to ``restored``.

    Raises:
        StoreError: when the database is newer than ``migrations`` knows.
    """
    latest = len(migrations) - 1
    found = schema.version()
    _check_not_newer(found, latest, where)
    if found == latest:
        return latest
    with schema.migrating():
        current = schema.version()
        _check_not_newer(current, latest, where)
        built = built_version(schema.catalogue(), migrations)
        for version in range(current + 1, latest + 1):
            if version > built:
                for statement in migrations[version]:
                    schema.execute(statement)
            elif restored is not None:
                restored.append(version)
            schema.applied(version, now())
    return latest
