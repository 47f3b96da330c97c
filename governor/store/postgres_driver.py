"""PostgreSQL's driver (psycopg 3): a goal's advisory lock key, a URL as messages show it,
and the one translation of the driver's errors into ``StoreError`` (never a password)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

import psycopg
from psycopg import errors
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import PoolClosed, PoolTimeout

from governor.errors import StoreError
from governor.store.masking import mask_password


def goal_lock_key(goal_id: str) -> int:
    """The advisory lock key of a goal: a signed 64-bit hash every client computes alike.

    Two goals may share a key; they then merely queue behind each other's writes.
    """
    digest = hashlib.blake2b(goal_id.encode(), digest_size=8, person=b"governor.goal").digest()
    return int.from_bytes(digest, "big", signed=True)


def describe_url(url: str) -> str:
    """The URL without its password, for messages: ``postgresql://user@host:port/dbname``.

    Raises:
        StoreError: when libpq cannot parse the URL.
    """
    try:
        params = conninfo_to_dict(url)
    except psycopg.Error as exc:
        raise StoreError(f"not a valid PostgreSQL URL: {mask_password(str(exc), url)}") from exc
    user = f"{params['user']}@" if params.get("user") else ""
    port = f":{params['port']}" if params.get("port") else ""
    return f"postgresql://{user}{params.get('host', '')}{port}/{params.get('dbname', '')}"


def translate(exc: psycopg.Error, where: str) -> StoreError:
    """The one translation of psycopg's errors into governor's."""
    text = " ".join(mask_password(str(exc)).split())  # one line, no password
    if isinstance(exc, PoolClosed):
        return StoreError(f"{where}: the store is closed")
    if isinstance(exc, PoolTimeout):
        return StoreError(
            f"{where}: no connection became free in time; every connection of the pool is "
            f"busy or the server is unreachable ({text})"
        )
    if isinstance(exc, errors.LockNotAvailable):
        return StoreError(
            f"{where}: the goal stayed locked by another writer for longer than the lock "
            f"timeout; try again ({text})"
        )
    if isinstance(exc, psycopg.OperationalError):
        return StoreError(
            f"{where}: cannot talk to PostgreSQL; is the server running, and do the URL's "
            f"user and database exist? ({text})"
        )
    return StoreError(f"{where}: {type(exc).__name__}: {text}")


@contextmanager
def translated(where: str) -> Iterator[None]:
    try:
        yield
    except psycopg.Error as exc:
        raise translate(exc, where) from exc


def same_time(when: datetime | None) -> datetime | None:
    """PostgreSQL stores times as they are (``TIMESTAMPTZ``)."""
    return when
