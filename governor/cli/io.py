"""Terminal I/O of the CLI: the one place it writes, and how it opens the store."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from governor.store.base import EventStore


def out(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def err(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def json_line(obj: Any) -> None:
    sys.stdout.buffer.write(orjson.dumps(obj, option=orjson.OPT_NON_STR_KEYS) + b"\n")
    sys.stdout.buffer.flush()


def write_lines(lines: Iterable[bytes]) -> None:
    """Write ready-made lines to stdout, buffered (a long stream is not flushed per line)."""
    write = sys.stdout.buffer.write
    for line in lines:
        write(line)
    sys.stdout.buffer.flush()


def progress(message: str) -> None:
    """One live progress line on stderr, stamped with the wall-clock time."""
    err(f"[{datetime.now(UTC).strftime('%H:%M:%S')}] {message}")


@contextmanager
def store_from(url: str | None) -> Iterator[EventStore]:
    """Open the store the ``--store`` option (or ``GOVERNOR_STORE``) names, and close it."""
    from governor.store.url import open_store  # noqa: PLC0415 - lazy: --help opens no store

    store = open_store(url)
    try:
        yield store
    finally:
        store.close()
