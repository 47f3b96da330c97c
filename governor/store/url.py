"""Store URLs: which backend a URL names, and ``open_store``, the one place settings are read.

Rules (SPEC §8):
    * No URL: ``GOVERNOR_STORE`` if set, else SQLite at ``.governor/governor.db`` in the
      current directory (the folder is created).
    * ``sqlite:///abs/path.db``, ``sqlite:relative.db`` or a plain path ending in ``.db``,
      ``.sqlite`` or ``.sqlite3``: SQLite. ``memory:``: in memory.
      ``postgresql://…`` or ``postgres://…``: PostgreSQL (the ``postgres`` extra; its
      driver is imported only when such a URL is opened).
    * The environment and the clock are read here and injected; no store reads them.
    * A read-only open never creates a store: a missing SQLite file is ``NotFoundError``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

from governor.clock import Clock, utc_now
from governor.errors import NotFoundError, StoreError
from governor.store.base import EventStore
from governor.store.masking import mask_password
from governor.store.sqlite import SqliteEventStore

ENV_VAR: Final = "GOVERNOR_STORE"
DEFAULT_PATH: Final = Path(".governor") / "governor.db"
SQLITE_SUFFIXES: Final = (".db", ".sqlite", ".sqlite3")
POSTGRES_SCHEMES: Final = ("postgresql://", "postgres://")
USAGE: Final = (
    "use sqlite:///abs/path.db, sqlite:relative.db, a path ending in .db, memory:, "
    "or postgresql://user@host/dbname"
)


def sqlite_path(url: str) -> Path | None:
    """The database file a SQLite URL or path names; None when it names no SQLite file.

    Raises:
        StoreError: for a ``sqlite:`` URL without a path, or with a host.
    """
    if url.startswith("sqlite://"):
        rest = url.removeprefix("sqlite://")
        if not rest.startswith("/"):
            raise StoreError(f"store URL {mask_password(url)!r} names a host; {USAGE}")
        path = rest
    elif url.startswith("sqlite:"):
        path = url.removeprefix("sqlite:")
    elif "://" not in url and url.lower().endswith(SQLITE_SUFFIXES):
        path = url
    else:
        return None
    if not path.strip("/"):
        raise StoreError(f"store URL {mask_password(url)!r} names no database file; {USAGE}")
    return Path(path)


def describe_store(url: str | None) -> str:
    """The store a URL (or, for None, ``GOVERNOR_STORE`` or the default) names, as messages
    show it: a SQLite file as an absolute path, any other URL without its password."""
    url = url or os.environ.get(ENV_VAR) or None
    if url is None:
        return str(DEFAULT_PATH.resolve())
    try:
        path = sqlite_path(url)
    except StoreError:
        path = None
    return str(path.resolve()) if path is not None else mask_password(url)


def _postgres(url: str, clock: Clock, read_only: bool) -> EventStore:
    """The PostgreSQL store; its driver is imported here, so SQLite users never need it."""
    try:
        from governor.store.postgres import PostgresEventStore  # noqa: PLC0415 - optional extra
    except ImportError as exc:
        raise StoreError(
            f"PostgreSQL support needs the postgres extra: pip install 'governor[postgres]' ({exc})"
        ) from exc
    return PostgresEventStore(url, clock=clock, read_only=read_only)


def _existing(path: Path) -> Path:
    """The database file a read-only open names, which must already exist."""
    if not path.is_file():
        raise NotFoundError(
            f"no store at {path}: a read never creates one; create a goal with governor new "
            "first, or name an existing store with --store URL or $GOVERNOR_STORE"
        )
    return path


def open_store(
    url: str | None = None, *, clock: Clock | None = None, read_only: bool = False
) -> EventStore:
    """Open the event store a URL names (see the module docstring for the forms).

    Args:
        url: the store URL; None reads ``GOVERNOR_STORE``, then falls back to the default.
        clock: the store's only time source (lease expiry, derived summaries); UTC now
            by default.
        read_only: open an existing store for reading only: nothing is created or
            migrated, and the backend itself refuses writes (SQLite opens the file
            read-only, PostgreSQL sessions are read-only). ``memory:`` is refused: a new
            process would find it empty.

    Raises:
        StoreError: for an unknown URL, a backend that is not installed, or a store
            that cannot be opened.
        NotFoundError: with ``read_only``, for a SQLite file that does not exist.
    """
    clock = clock or utc_now
    if url is None:
        url = os.environ.get(ENV_VAR) or None
    if url is None:
        if read_only:
            return SqliteEventStore(_existing(DEFAULT_PATH), clock=clock, read_only=True)
        DEFAULT_PATH.parent.mkdir(parents=True, exist_ok=True)
        return SqliteEventStore(DEFAULT_PATH.resolve(), clock=clock)
    if url == "memory:":
        if read_only:
            raise StoreError("memory: holds nothing another process could read; name a store")
        from governor.store.memory import MemoryEventStore  # noqa: PLC0415 - start-up

        return MemoryEventStore(clock=clock)
    if url.startswith(POSTGRES_SCHEMES):
        return _postgres(url, clock, read_only)
    path = sqlite_path(url)
    if path is None:
        raise StoreError(f"unknown store URL {mask_password(url)!r}; {USAGE}")
    if read_only:
        return SqliteEventStore(_existing(path), clock=clock, read_only=True)
    return SqliteEventStore(path, clock=clock)


def one_line(message: str, store_url: str | None = None) -> str:
    """An error message as the one line it is printed as: whitespace runs (a driver's
    multi-line text) become one space, and no store password survives (the named store's,
    ``$GOVERNOR_STORE``'s, or any URL's). The CLI and the web view print errors so."""
    for url in (store_url, os.environ.get(ENV_VAR)):
        message = mask_password(message, url)
    return " ".join(message.split())
