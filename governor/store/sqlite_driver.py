"""SQLite's driver as ``governor.store.sqlite`` meets it: how rows hold times (microseconds
since the epoch) and text (whose bytes may not be UTF-8: read back so the decoders name the
row), the one translation of its errors, the migration primitives, and when a store in a
folder nobody can write is read as immutable.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final

from governor.core.text import stamp
from governor.errors import StoreError
from governor.store.columns import Bad, Times, shown
from governor.store.schema_objects import Catalogue

_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)


def us(when: datetime) -> int:
    """A time as SQLite stores it: whole microseconds since the epoch."""
    return (when - _EPOCH) // timedelta(microseconds=1)


def _time(us: int) -> datetime:
    return _EPOCH + timedelta(microseconds=us)


def maybe_us(when: datetime | None) -> int | None:
    """``us``, or NULL."""
    return None if when is None else us(when)


def _decode_time(us: object) -> datetime:
    """A stored time (microseconds since the epoch), or ``Bad``."""
    if type(us) is not int:
        raise Bad(f"holds {shown(us)}, not a time (whole microseconds)")
    try:
        return _time(us)
    except OverflowError:
        raise Bad(f"holds {us}, outside the range of a time") from None


TIMES: Final = Times("_us", _decode_time)
"""SQLite's times: integer microseconds since the Unix epoch, in columns named ``*_us``."""


def _tolerant_text(raw: bytes) -> str:
    """Text as stored, its bytes that are not UTF-8 kept as lone surrogates (which the
    column decoders and ``read_row`` report as damage, naming the row)."""
    return raw.decode("utf-8", "surrogateescape")


def fetch(tx: sqlite3.Connection, query: str, params: Sequence[object] = ()) -> list[Any]:
    """The rows of a query; a text column whose bytes are not UTF-8 (SQLite refuses to
    decode it) is read again with its bytes kept, for the decoders to name the row."""
    try:
        return tx.execute(query, params).fetchall()
    except sqlite3.OperationalError as exc:
        if "decode to UTF-8" not in str(exc):
            raise
    tx.text_factory = _tolerant_text
    try:
        return tx.execute(query, params).fetchall()
    finally:
        tx.text_factory = str


_UNSHARED: Final = frozenset(
    {"SQLITE_CANTOPEN", "SQLITE_READONLY_DIRECTORY", "SQLITE_READONLY_CANTINIT"}
)
"""What SQLite says when it cannot make (or open) the shared-memory file of a WAL
database for a reader: a read-only mount, a folder only its owner may write."""


def unshareable(path: Path, exc: sqlite3.OperationalError) -> bool:
    """Whether a read-only open failed only because SQLite cannot share the file here, and
    reading it as immutable is honest: its folder cannot be written (a read-only mount, a
    folder of another user), so SQLite can make no shared-memory file beside it and no
    writer can be using it, and no write-ahead log holds commits the file lacks.

    Raises:
        StoreError: when a write-ahead log beside it holds commits that cannot be read.
    """
    if exc.sqlite_errorname not in _UNSHARED or os.access(path.parent, os.W_OK):
        return False
    wal = path.with_name(path.name + "-wal")
    if wal.exists() and wal.stat().st_size > 0:
        raise StoreError(
            f"{path}: its folder cannot be written, and its write-ahead log {wal.name} holds "
            "commits a read-only open cannot read without the shared-memory file; open the "
            "store once where its folder can be written, or copy the folder elsewhere"
        )
    return path.exists()


def translate(exc: sqlite3.Error, where: str) -> StoreError:
    """The one translation of SQLite's errors into governor's."""
    text = str(exc)
    if isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text):
        return StoreError(
            f"{where}: the database stayed locked by another process for longer than the "
            f"busy timeout; try again ({text})"
        )
    if isinstance(exc, sqlite3.DatabaseError) and "not a database" in text:
        return StoreError(f"{where}: not a SQLite database ({text})")
    if isinstance(exc, sqlite3.OperationalError) and text.startswith("no such index"):
        return StoreError(
            f"{where}: an index of the store is gone ({text}); "
            "`governor store check --repair` creates it again"
        )
    folder = Path(where).parent
    if (
        ("unable to open" in text or "readonly database" in text)
        and folder.is_dir()
        and not (os.access(folder, os.W_OK) and os.access(where, os.W_OK))
    ):
        return StoreError(
            f"{where}: the store cannot be written here (a read-only mount, or a file or "
            f"folder of another user); commands that only read it still work ({text})"
        )
    if isinstance(exc, sqlite3.OperationalError) and "unable to open" in text:
        return StoreError(
            f"{where}: cannot open the database file; does its folder exist? ({text})"
        )
    return StoreError(f"{where}: {type(exc).__name__}: {text}")


@contextmanager
def translated(where: str) -> Iterator[None]:
    try:
        yield
    except sqlite3.Error as exc:
        raise translate(exc, where) from exc


class Schema:
    """SQLite's migration primitives: ``BEGIN IMMEDIATE`` excludes other migrators."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def version(self) -> int:
        table = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
        if self.conn.execute(table).fetchone() is None:
            return -1
        (found,) = self.conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
        return -1 if found is None else int(found)

    @contextmanager
    def migrating(self) -> Iterator[None]:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            self.conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_version "
                "(version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)"
            )
            yield
        except BaseException:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def execute(self, statement: str) -> None:
        self.conn.execute(statement)

    def applied(self, version: int, at: datetime) -> None:
        self.conn.execute("INSERT INTO schema_version VALUES (?, ?)", (version, stamp(at)))

    def catalogue(self) -> Catalogue:
        return sqlite_catalogue(self.conn)


def sqlite_catalogue(conn: sqlite3.Connection) -> Catalogue:
    """The tables, columns and indexes of a SQLite database (its own, not SQLite's)."""
    rows = conn.execute(
        "SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"
    ).fetchall()
    tables = frozenset(name.lower() for kind, name in rows if kind == "table")
    columns = frozenset(
        (table, str(column).lower())
        for table in tables
        for (column,) in conn.execute("SELECT name FROM pragma_table_info(?)", (table,))
    )
    indexes = frozenset(name.lower() for kind, name in rows if kind == "index")
    return Catalogue(tables, columns, indexes)
