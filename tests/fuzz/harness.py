"""Run the real ``governor`` command in-process, case after case, and check the promise.

The promise (docs/reliability.md), checked after every case:

* the exit code is a documented one, and never 1 (an internal error is a bug);
* a failure (exit 2 to 9) is exactly one line on stderr; nothing prints a traceback;
* nothing invalid is stored: every goal in the store passes the history checks, and its
  summary row is at its last seq;
* no case hangs: each gets ``CASE_TIMEOUT_S`` of wall time (a SIGALRM), then fails.

In-process (``governor.cli.main.main``) so that thousands of cases fit in minutes; the
same code runs as in the ``governor`` process, with real files and a real SQLite store.
"""

from __future__ import annotations

import io
import json
import os
import signal
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Final

import pytest

from governor.cli.exit_codes import ExitCode
from governor.cli.main import main
from governor.core.history import check_history
from governor.store.url import open_store

CASE_TIMEOUT_S: Final = 60.0
"""Wall time one case may take: far above what any case needs, even on a loaded machine."""
OK_CODES: Final = frozenset(int(c) for c in ExitCode if c is not ExitCode.FAILURE)
ERROR_CODES: Final = frozenset(range(2, 10))
"""Exit codes of a refused command: usage, input, not found, refused, conflict, store,
agent, unavailable (10 and up are goal outcomes, printed on stdout)."""

COUNTS: Final = {"short": 25, "long": 2_000}
"""Cases per fuzz test: modest by default (CI), many with ``--fuzz-long``."""


def cases(config: pytest.Config, *, long: int = COUNTS["long"]) -> int:
    """How many cases a fuzz test runs: ``COUNTS['short']``, or ``long`` with --fuzz-long."""
    return long if config.getoption("--fuzz-long", default=False) else COUNTS["short"]


class Hang(BaseException):
    """A case ran past ``CASE_TIMEOUT_S`` (a BaseException: ``main`` must not catch it)."""


@contextmanager
def deadline(seconds: float = CASE_TIMEOUT_S) -> Iterator[None]:
    def alarm(signum: int, frame: FrameType | None) -> None:
        raise Hang(f"the case ran past {seconds} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass(frozen=True, slots=True)
class Outcome:
    argv: tuple[str, ...]
    code: int
    stdout: str
    stderr: str


def _stream() -> io.TextIOWrapper:
    """A text stream with a ``buffer``, strict UTF-8 like a terminal's stdout."""
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict", write_through=True)


def _text(stream: io.TextIOWrapper) -> str:
    stream.flush()
    buffer = stream.buffer
    assert isinstance(buffer, io.BytesIO)
    return buffer.getvalue().decode("utf-8", "backslashreplace")


def governor(argv: Sequence[str]) -> Outcome:
    """``governor ARGV`` in this process: its exit code and what it printed."""
    out, err = _stream(), _stream()
    with deadline(), redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as exc:  # argparse: usage errors and --help
            code = exc.code if isinstance(exc.code, int) else 2
    return Outcome(tuple(argv), code, _text(out), _text(err))


def check_outcome(outcome: Outcome) -> None:
    """The promise about what one command printed and returned."""
    where = f"governor {' '.join(outcome.argv)!r}"
    assert "Traceback" not in outcome.stderr, f"{where}: {outcome.stderr}"
    assert "internal error" not in outcome.stderr, f"{where}: {outcome.stderr}"
    assert outcome.code in OK_CODES, f"{where}: exit {outcome.code}: {outcome.stderr}"
    if outcome.code in ERROR_CODES:
        lines = outcome.stderr.strip().splitlines()
        assert len(lines) == 1, f"{where}: exit {outcome.code}, stderr: {outcome.stderr!r}"


def check_store(url: str) -> int:
    """Every goal of the store at ``url`` passes the history checks, and its summary is at
    its last seq; returns how many goals there are (0 when there is no store)."""
    if not Path(url).exists():
        return 0
    store = open_store(url, read_only=True)
    try:
        rows = store.goals()
        for row in rows:
            count = 0
            for _line, event, _view in check_history(
                enumerate(store.load(row.goal_id), start=1), source=row.goal_id
            ):
                count = event.seq
            assert row.seq == count == store.last_seq(row.goal_id), row
        return len(rows)
    finally:
        store.close()


@dataclass
class Tally:
    """Cases run by one fuzz test, for docs/reliability.md (``GOVERNOR_FUZZ_REPORT``)."""

    family: str
    test: str
    cases: int = 0
    exits: dict[int, int] | None = None

    def add(self, outcome: Outcome) -> None:
        self.cases += 1
        self.exits = self.exits or {}
        self.exits[outcome.code] = self.exits.get(outcome.code, 0) + 1

    def write(self) -> None:
        report = os.environ.get("GOVERNOR_FUZZ_REPORT")
        if report:
            line = {"family": self.family, "test": self.test, "cases": self.cases}
            with open(report, "a", encoding="utf-8") as handle:
                handle.write(json.dumps({**line, "exits": self.exits or {}}) + "\n")


@contextmanager
def tally(family: str, request: pytest.FixtureRequest) -> Iterator[Tally]:
    counted = Tally(family, request.node.name)
    yield counted
    counted.write()


@contextmanager
def inside(folder: Path) -> Iterator[Path]:
    """Run the cases with ``folder`` as the working directory (a fresh one per test)."""
    before = Path.cwd()
    os.chdir(folder)
    try:
        yield folder
    finally:
        os.chdir(before)
