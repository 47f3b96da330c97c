"""Files a person names: read only when they are regular files, within bounds; written whole.

Rules:
    * Only a regular file is read. A FIFO would block the command until someone writes
      to it, a device such as ``/dev/zero`` never ends, a folder is not a file: each is
      refused with one line before a byte is read (the check runs on the opened file, so
      a name swapped in between cannot slip past it).
    * Nothing is read without a bound: a goal file holds at most ``MAX_GOAL_FILE_BYTES``,
      a line of a history at most ``MAX_LINE_BYTES`` (longer is refused naming the line,
      after reading no more than the bound).
    * A file to write is checked before anything is done (``writable``): its folder
      exists and it is not a folder.
    * A file is written whole or not at all (``write_atomically``): into a temporary file
      in the same folder, flushed to disk, then renamed over the target. A full disk or a
      crash leaves the previous file (or none), never a torn one.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from io import BytesIO
from pathlib import Path
from typing import BinaryIO, Final

from governor.errors import HistoryError, InputError, NotFoundError

MAX_GOAL_FILE_BYTES: Final = 1 << 20
"""The largest goal file read: 1 MiB (a goal with its profiles fits in a few KiB)."""

MAX_LINE_BYTES: Final = 16 << 20
"""The longest history line read: 16 MiB. Every text of an event is bounded far below it
(2,000 characters; a profile's instructions 20,000), escaped JSON included."""

READ_BUFFER: Final = 1 << 20

CHUNK_BYTES: Final = 1 << 16
"""What a chunk of history lines holds at most (``iter_line_chunks``), besides a line
carried over from the block before: 64 KiB, a few hundred events."""
CHUNK_LINES: Final = 1 << 12
"""The most lines a chunk holds (short lines)."""

_KINDS: Final = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def open_regular(path: str | Path, *, buffering: int = READ_BUFFER) -> BinaryIO:
    """Open a file a person named for reading, refusing anything but a regular file.

    The file is opened without blocking (a FIFO with no writer would block ``open``
    itself), checked with ``fstat``, then switched back to blocking reads.

    Raises:
        NotFoundError: when nothing is at ``path``.
        InputError: when it is a folder, FIFO, device or socket, or cannot be read.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise NotFoundError(f"{path}: no such file") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise InputError(f"{path}: is {_kind(mode)}, not a regular file; name a file")
        os.set_blocking(fd, True)
        return open(fd, "rb", buffering=buffering)
    except BaseException:
        os.close(fd)
        raise


def read_bounded(path: str | Path, limit: int) -> bytes:
    """The whole of a regular file of at most ``limit`` bytes.

    Raises:
        NotFoundError, InputError: as ``open_regular``; InputError also when the file
            is larger than ``limit`` (no more than ``limit + 1`` bytes are read).
    """
    with open_regular(path) as handle:
        try:
            data = handle.read(limit + 1)
        except OSError as exc:
            raise InputError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if len(data) > limit:
        raise InputError(f"{path}: is larger than {limit:,} bytes; that is not a goal file")
    return data


def iter_lines(path: str | Path, *, limit: int = MAX_LINE_BYTES) -> Iterator[bytes]:
    """The raw lines of a regular file, newline included, each at most ``limit`` bytes.

    Raises:
        NotFoundError, InputError: as ``open_regular``.
        HistoryError: naming the line that is longer than ``limit`` (read no further).
    """
    with open_regular(path) as handle:
        number = 0
        while line := handle.readline(limit + 1):
            number += 1
            if len(line) > limit:
                raise _too_long(path, limit, number)
            yield line


def _too_long(path: str | Path, limit: int, line: int) -> HistoryError:
    return HistoryError(
        f"the line is longer than {limit:,} bytes (no event is that long)",
        line=line,
        source=str(path),
    )


def iter_line_chunks(
    path: str | Path,
    *,
    limit: int = MAX_LINE_BYTES,
    size: int = CHUNK_BYTES,
    lines: int = CHUNK_LINES,
) -> Iterator[list[bytes]]:
    """The lines of ``iter_lines``, the same bytes in the same order, as lists: a block of
    ``size`` bytes read at a time, cut at its newlines, its last unfinished line carried
    over to the next block. A chunk holds at most ``lines`` lines and, besides the line
    carried over into it, ``size`` bytes; every line of it ends in its newline but the
    last line of a file that does not end in one (a chunk of its own).

    Raises:
        NotFoundError, InputError: as ``open_regular``.
        HistoryError: as ``iter_lines``, naming the line that is longer than ``limit``,
            after the chunks of every line before it (reading at most ``limit + 1``
            bytes of it).
    """
    size = min(size, limit)  # a line that starts and ends in one block is within the limit
    with open_regular(path, buffering=0) as handle:
        read = handle.read
        number = 0  # lines given so far
        rest: list[bytes] = []  # the unfinished line carried over, a piece per block
        held = 0  # its length
        while block := read(size if held + size <= limit else limit + 1 - held):
            chunk = BytesIO(block).readlines()
            tail = chunk.pop() if chunk[-1][-1:] != b"\n" else b""
            if rest and chunk:  # the line carried over ends in this block
                rest.append(chunk[0])
                chunk[0], rest, held = b"".join(rest), [], 0
                if len(chunk[0]) > limit:
                    raise _too_long(path, limit, number + 1)
            if tail:
                rest.append(tail)
                held += len(tail)
            for start in range(0, len(chunk), lines):
                yield chunk[start : start + lines]
            number += len(chunk)
            if held > limit:
                raise _too_long(path, limit, number + 1)
        if rest:
            yield [b"".join(rest)]


def writable(path: str | Path, *, append: bool = False) -> Path:
    """``path`` as a file governor may write: its folder exists and it is not a folder.

    With ``append`` the file is opened for appending once (and created when missing), so
    a file that cannot be written is refused now rather than when the first line is due.

    Raises:
        NotFoundError: when the folder does not exist.
        InputError: when ``path`` is a folder, or (``append``) cannot be opened to append.
    """
    target = Path(path)
    folder = target.parent
    try:
        if not folder.is_dir():
            raise NotFoundError(f"{target}: the folder {folder} does not exist")
        if target.is_dir():
            raise InputError(f"{target}: is a folder; name a file to write")
    except OSError as exc:  # a name longer than the file system allows, a loop of links
        raise InputError(f"{target}: cannot be written ({exc.strerror or exc})") from None
    if append:
        try:
            with open(target, "ab"):
                pass
        except OSError as exc:
            raise InputError(f"{target}: cannot be written ({exc.strerror or exc})") from None
    return target


@contextmanager
def write_atomically(path: str | Path, *, durable: bool = True) -> Iterator[BinaryIO]:
    """A file to write ``path`` through: it appears whole when the block ends, or not at all.

    ``durable`` flushes the file and the rename to disk before returning (``export``);
    a file rewritten every few seconds (the metrics) may skip it.

    Raises:
        NotFoundError: when the folder does not exist.
        InputError: when the folder cannot be written, the disk is full, or ``path`` is a
            folder; nothing is left behind.
    """
    target = writable(path)
    folder = target.parent
    try:
        # the name's first characters only: a name near the file system's limit still fits
        fd, temp = tempfile.mkstemp(dir=folder, prefix=f".{target.name[:32]}.", suffix=".part")
    except OSError as exc:
        raise InputError(f"{target}: cannot be written ({exc.strerror or exc})") from None
    try:
        with open(fd, "wb") as handle:
            os.fchmod(handle.fileno(), 0o666 & ~_umask())  # as open() would have made it
            yield handle
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.replace(temp, target)
        if durable:
            _fsync_folder(folder)
    except OSError as exc:
        _remove(temp)
        raise InputError(
            f"{target}: cannot be written ({exc.strerror or exc}); nothing was written"
        ) from None
    except BaseException:
        _remove(temp)
        raise


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _fsync_folder(folder: Path) -> None:
    """Make the rename durable (best effort: some file systems cannot sync a folder)."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        with suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def _remove(path: str) -> None:
    with suppress(OSError):
        os.unlink(path)
