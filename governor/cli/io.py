"""Terminal I/O of the CLI: the one place it writes, and how it opens the store."""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from itertools import islice
from typing import TYPE_CHECKING, Any, Final, NoReturn

from governor.render.terminal import printable

if TYPE_CHECKING:
    from governor.store.base import EventStore


def out(text: str, *, colour: bool = False) -> None:
    """Print a line of text output; control characters an agent wrote are escaped.

    ``colour``: the goal statuses in it are coloured, on a terminal without ``NO_COLOR``.
    """
    if colour and sys.stdout.isatty() and not os.environ.get("NO_COLOR"):
        from governor.cli.live import colour_allowed, coloured  # noqa: PLC0415 - rich: a TTY only

        if colour_allowed(sys.stdout):
            coloured(text, sys.stdout)
            return
    sys.stdout.write(printable(text) + "\n")
    sys.stdout.flush()


def err(text: str) -> None:
    """Print a line on stderr; control characters are escaped as ``out`` escapes them."""
    sys.stderr.write(printable(text) + "\n")
    sys.stderr.flush()


def one_line(message: str, store_url: str | None = None) -> str:
    """``governor.store.url.one_line``, imported when an error is printed (start-up)."""
    from governor.store.url import one_line as joined  # noqa: PLC0415 - lazy: start-up

    return joined(message, store_url)


_INVALID_CHOICE: Final = re.compile(
    r"invalid choice: '(?P<word>[^']*)' \(choose from (?P<choices>.*)\)"
)
"""argparse's message for a word not among a closed set of choices."""


class Parser(argparse.ArgumentParser):
    """The argument parser of every command: a usage error is one line (exit 2)."""

    def error(self, message: str) -> NoReturn:
        typo = _INVALID_CHOICE.search(message)
        if typo:  # argparse names the word and the choices: suggest the closest
            from governor.core.spelling import did_you_mean  # noqa: PLC0415 - errors only

            choices = re.findall(r"'([^']*)'", typo["choices"])
            message += did_you_mean(typo["word"], choices)
        line = one_line(f"{self.prog}: error: {message} (see {self.prog} --help)")
        self.exit(2, printable(line) + "\n")


def json_line(obj: Any) -> None:
    import orjson  # noqa: PLC0415 - start-up: importing it takes ~15 ms; text output needs none

    sys.stdout.buffer.write(orjson.dumps(obj, option=orjson.OPT_NON_STR_KEYS) + b"\n")
    sys.stdout.buffer.flush()


_BATCH: Final = 1 << 18
"""Bytes of lines ``write_lines`` gathers before one write (a write per line of a long
stream costs more than making the line)."""
_MOST_LINES: Final = 4096
"""Lines ``write_lines`` takes at most in one run."""


def write_lines(lines: Iterable[bytes]) -> None:
    """Write ready-made lines to stdout, buffered (a long stream is not flushed per line).

    The lines are taken in runs (``islice``: no Python step per line) of about ``_BATCH``
    bytes, each written at once; the lines read before a failure are written too.
    """
    write = sys.stdout.buffer.write
    rest, take = iter(lines), 16
    batch: list[bytes] = []
    try:
        while True:
            batch.extend(islice(rest, take))  # (a failure keeps the lines taken before it)
            taken = len(batch)
            if not taken:
                return
            joined = b"".join(batch)
            batch.clear()
            write(joined)
            if taken < take:
                return
            take = max(1, min(_MOST_LINES, take * _BATCH // max(len(joined), 1)))
    finally:  # the lines before a failure (a broken history) are printed all the same
        if batch:
            write(b"".join(batch))
        sys.stdout.buffer.flush()


def write_text(lines: Iterable[str]) -> None:
    """Print lines of text output as ``out`` prints each (control characters escaped),
    buffered as ``write_lines`` writes (a long replay is not flushed per line)."""
    sys.stdout.flush()  # what ``out`` printed before comes first
    encoding, errors = sys.stdout.encoding or "utf-8", sys.stdout.errors or "strict"
    write_lines((printable(line) + "\n").encode(encoding, errors) for line in lines)


def stamped(message: str) -> str:
    """A progress line: the wall-clock time (UTC), then the message."""
    return f"[{datetime.now(UTC).strftime('%H:%M:%S')}] {message}"


def progress(message: str) -> None:
    """One progress line on stderr, stamped with the wall-clock time (UTC)."""
    err(stamped(message))


@contextmanager
def store_from(url: str | None, *, read_only: bool = False) -> Iterator[EventStore]:
    """Open the store the ``--store`` option (or ``GOVERNOR_STORE``) names, and close it.

    ``read_only`` for every command that only reads: it never creates, migrates or
    writes a store (a missing one is ``NotFoundError``, naming it).
    """
    from governor.store.url import open_store  # noqa: PLC0415 - lazy: --help opens no store

    store = open_store(url, read_only=read_only)
    try:
        yield store
    finally:
        store.close()
