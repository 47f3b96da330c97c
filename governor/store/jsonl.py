"""History files: JSON Lines in and out, streamed, with every problem named by its line.

Rules (SPEC §3):
    * Read in bounded memory: a chunk of lines at a time (at most 64 KiB besides one line
      carried over, ``iter_line_chunks``), never the whole file, and only from a regular
      file, each line at most ``MAX_LINE_BYTES`` (``governor.store.files``).
    * A folder is read as its ``*.jsonl`` files in name order, one history each.
    * Writing produces exactly what the codec encodes, one event per ``\\n``-terminated line.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from governor.core.events import Event
from governor.core.wire.codec import LineDecoder, encode
from governor.errors import NotFoundError
from governor.store.files import iter_line_chunks, iter_lines


def history_files(path: str | Path) -> list[Path]:
    """The history files a path names: the file itself, or a folder's ``*.jsonl`` files.

    Raises:
        NotFoundError: when the path does not exist or a folder holds no history.
    """
    path = Path(path)
    if path.is_dir():
        files = sorted(p for p in path.glob("*.jsonl") if p.is_file())
        if not files:
            raise NotFoundError(f"{path}: the folder holds no *.jsonl history")
        return files
    if not path.exists():
        raise NotFoundError(f"{path}: no such file or folder")
    return [path]


def iter_raw_lines(path: str | Path) -> Iterator[bytes]:
    """The raw lines of a history file, newline included (bounded: see ``iter_lines``)."""
    return iter_lines(path)


def iter_raw_chunks(path: str | Path) -> Iterator[list[bytes]]:
    """The same lines in chunks of at most 64 KiB (bounded: see ``iter_line_chunks``)."""
    return iter_line_chunks(path)


def read_history(
    path: str | Path, *, allow_torn: bool = False, decoder: LineDecoder | None = None
) -> Iterator[tuple[int, Event]]:
    """Stream ``(line, event)`` from one history file, read in chunks of lines
    (``LineDecoder.chunks``: with a struct decoder, replay's, each chunk is decoded at once
    where it is sure; the same events, notes and errors as line by line).

    Raises:
        HistoryError: naming the file and the line of the first unreadable event.
    """
    decoder = decoder or LineDecoder(str(path))
    if decoder.source is None:
        decoder.source = str(path)
    return decoder.chunks(iter_raw_chunks(path), allow_torn=allow_torn)


def write_history(events: Iterable[Event], out: BinaryIO) -> int:
    """Write events as JSON Lines; returns how many were written."""
    count = 0
    for event in events:
        out.write(encode(event) + b"\n")
        count += 1
    return count
