"""A history file read a chunk of lines at a time (``iter_line_chunks``, what replay reads)
gives the lines of ``iter_lines``, byte for byte, and refuses a line that is too long at
the same line, after every line before it: whatever the block size, the line limit,
the line ends (``\\n``, ``\\r\\n``, a last line without one) or the file (empty, one
line, lines longer than a block).

And replay's whole read (``read_history`` with a struct decoder) yields the events of
every line before a refused one, then the same error as the line by line read.
"""

from __future__ import annotations

import random
from itertools import chain
from pathlib import Path

import orjson
import pytest

from bench.history_gen import events
from governor.core.wire.codec import LineDecoder
from governor.errors import HistoryError
from governor.store.files import iter_line_chunks, iter_lines
from governor.store.jsonl import read_history


def _lines(path: Path, **bounds: int) -> tuple[list[bytes], str | None]:
    got: list[bytes] = []
    error = None
    try:
        got.extend(iter_lines(path, **bounds))
    except HistoryError as exc:
        error = str(exc)
    return got, error


def _chunks(path: Path, **bounds: int) -> tuple[list[list[bytes]], str | None]:
    got: list[list[bytes]] = []
    error = None
    try:
        got.extend(iter_line_chunks(path, **bounds))
    except HistoryError as exc:
        error = str(exc)
    return got, error


def _contents(seed: int) -> bytes:
    rng = random.Random(seed)
    lines = []
    for _ in range(rng.randrange(0, 40)):
        body = bytes(rng.choice(b"ab{}\r") for _ in range(rng.choice([0, 1, 2, 5, 9, 30])))
        lines.append(body + rng.choice([b"\n", b"\r\n", b"\n"]))
    data = b"".join(lines)
    if rng.random() < 0.3:
        data += b"torn" * rng.randrange(1, 5)
    return data


@pytest.mark.parametrize("seed", range(60))
@pytest.mark.parametrize("size", [1, 2, 3, 8, 64, 1 << 16])
def test_chunks_hold_the_lines_and_the_error_of_the_line_reader(
    tmp_path: Path, seed: int, size: int
) -> None:
    path = tmp_path / "h.jsonl"
    path.write_bytes(_contents(seed))
    for limit in (4, 10, 33, 1 << 20):
        expected = _lines(path, limit=limit)
        chunks, error = _chunks(path, limit=limit, size=size, lines=5)
        assert (list(chain.from_iterable(chunks)), error) == expected, (limit, size)
        for chunk in chunks:
            assert chunk, "no empty chunk"
            assert 1 <= len(chunk) <= 5
            assert sum(map(len, chunk[1:])) <= size  # besides a line carried over
            assert all(line.endswith(b"\n") for line in chunk[:-1])
        assert all(chunk[-1].endswith(b"\n") for chunk in chunks[:-1])


def test_an_empty_file_has_no_chunk(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    path.write_bytes(b"")
    assert list(iter_line_chunks(path)) == []


def test_a_line_longer_than_the_limit_is_refused_after_the_lines_before_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "h.jsonl"
    path.write_bytes(b"ab\ncd\n" + b"x" * 50 + b"\nef\n")
    got, error = _chunks(path, limit=20, size=8)
    assert list(chain.from_iterable(got)) == [b"ab\n", b"cd\n"]
    assert error is not None
    assert error.endswith(
        "h.jsonl: line 3: the line is longer than 20 bytes (no event is that long)"
    )


def _history(tmp_path: Path, lines: list[bytes]) -> Path:
    path = tmp_path / "h.jsonl"
    path.write_bytes(b"".join(lines))
    return path


def _replay_read(path: Path, **bounds: int) -> tuple[list[int], str | None]:
    decoder = LineDecoder(str(path), structs=True)
    numbers: list[int] = []
    error = None
    try:
        if bounds:
            source = iter_line_chunks(path, **bounds)
            numbers.extend(n for n, _ in decoder.chunks(source))
        else:
            numbers.extend(n for n, _ in read_history(path, decoder=decoder))
    except HistoryError as exc:
        error = str(exc)
    return numbers, error


def _line_read(path: Path, **bounds: int) -> tuple[list[int], str | None]:
    decoder = LineDecoder(str(path), structs=True)
    numbers: list[int] = []
    error = None
    try:
        limit = {"limit": bounds["limit"]} if bounds else {}
        numbers.extend(n for n, _ in decoder.lines(iter_lines(path, **limit)))
    except HistoryError as exc:
        error = str(exc)
    return numbers, error


@pytest.mark.parametrize("where", [0, 1, 9, 10, 11, 30, -1])
@pytest.mark.parametrize("size", [1, 300, 1000, 5000])
def test_replay_reads_every_event_before_a_line_too_long_then_refuses_it(
    tmp_path: Path, where: int, size: int
) -> None:
    lines = [orjson.dumps(event) + b"\n" for event in events(60, cycles=2)]
    longest = max(map(len, lines))
    lines[where] = b'{"reason": "' + b"x" * (longest + 10) + b'"}\n'
    path = _history(tmp_path, lines)
    bounds = {"limit": longest + 5, "size": size, "lines": 7}
    numbers, error = _replay_read(path, **bounds)
    assert (numbers, error) == _line_read(path, **bounds)
    number = where % len(lines) + 1
    assert numbers == list(range(1, number))
    assert error is not None
    assert error.startswith(f"{path}: line {number}: the line is longer than")


@pytest.mark.parametrize("torn", [False, True])
def test_replay_reads_a_history_file_as_the_line_reader_does(tmp_path: Path, torn: bool) -> None:
    lines = [orjson.dumps(event) + b"\n" for event in events(400, cycles=3)]
    lines[57] = b"{}\n"
    if torn:
        lines = lines[:57]
        lines[-1] = lines[-1][:-1]
    path = _history(tmp_path, lines)
    assert _replay_read(path) == _line_read(path)
