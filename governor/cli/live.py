"""What a person watching a terminal sees while something runs: live rows, or plain lines.

Rules (issue 27):
    * On a terminal (stderr is a TTY and ``TERM`` is not ``dumb``): lines scroll above a
      few live rows that are redrawn in place — one per agent call in flight, or a
      progress meter — drawn by ``rich`` (imported here only, and only then: start-up).
    * Anywhere else (a file, a pipe, CI): plain lines only, never a carriage return nor
      an escape sequence; while something runs and nothing was printed for
      ``HEARTBEAT_S`` seconds, one heartbeat line says what is still running.
    * Every text an agent wrote is escaped (``governor.render.terminal.printable``) and
      never read as markup. Colour follows ``NO_COLOR`` (https://no-color.org): with it
      set, or off a terminal, no colour at all; the rows are still redrawn.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import IO, Any, Final, Protocol

from governor.render.terminal import printable

HEARTBEAT_S: Final = 30.0
"""The longest silence of plain output while something runs."""
REFRESH_PER_S: Final = 4
"""How often a terminal's live rows are redrawn."""

Rows = Callable[[], Sequence[str]]
"""What the live rows show now (one string each)."""
Beat = Callable[[], str | None]
"""The heartbeat line of plain output now (None: nothing runs)."""


class Screen(Protocol):
    """Where lines go while live rows (or heartbeats) show what runs."""

    def line(self, text: str) -> None:
        """Print one line above the live rows."""

    def close(self) -> None:
        """Stop redrawing; the rows disappear, the lines stay."""


def is_terminal(stream: IO[str]) -> bool:
    """Whether ``stream`` is a terminal that can redraw lines in place."""
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):  # a closed or replaced stream
        return False
    return tty and os.environ.get("TERM", "") != "dumb"


def terminal_width(stream: IO[str] | None = None) -> int | None:
    """The width of the terminal ``stream`` (stdout) writes to; None when it is none (a
    file or a pipe gets whole lines)."""
    where = stream or sys.stdout
    return shutil.get_terminal_size().columns if is_terminal(where) else None


def colour_allowed(stream: IO[str]) -> bool:
    """Colour only on a terminal, and never with ``NO_COLOR`` set (to anything but "")."""
    return is_terminal(stream) and not os.environ.get("NO_COLOR")


class PlainScreen:
    """Lines only; a heartbeat after ``heartbeat_s`` of silence while ``beat`` says something runs."""

    def __init__(
        self,
        stream: IO[str],
        beat: Beat,
        *,
        heartbeat_s: float = HEARTBEAT_S,
        clock: Callable[[], float] = time.monotonic,
        poll_s: float = 1.0,
    ) -> None:
        self._stream, self._beat, self._clock = stream, beat, clock
        self._heartbeat_s = heartbeat_s
        self._last = clock()
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._thread = threading.Thread(
            target=self._loop, args=(poll_s,), daemon=True, name="heartbeat"
        )
        self._thread.start()

    def line(self, text: str) -> None:
        with self._lock:
            self._stream.write(printable(text) + "\n")
            self._stream.flush()
            self._last = self._clock()

    def tick(self) -> None:
        """Print the heartbeat if it is due (the thread calls this every ``poll_s``)."""
        if self._clock() - self._last < self._heartbeat_s:
            return
        message = self._beat()
        if message:
            self.line(message)

    def _loop(self, poll_s: float) -> None:
        while not self._done.wait(poll_s):
            try:
                self.tick()
            except (OSError, ValueError):  # the stream went away (a closed pipe): stay quiet
                return

    def close(self) -> None:
        self._done.set()
        self._thread.join()


class LiveScreen:
    """Lines above rows redrawn in place by ``rich``'s ``Live``."""

    def __init__(self, stream: IO[str], rows: Rows) -> None:
        from rich.console import Console  # noqa: PLC0415 - a terminal only (start-up)
        from rich.live import Live  # noqa: PLC0415 - a terminal only (start-up)

        self._rows = rows
        console = Console(
            file=stream,
            markup=False,
            emoji=False,
            highlight=False,
            soft_wrap=True,
            no_color=bool(os.environ.get("NO_COLOR")) or None,
        )
        self._console = console
        self._live = Live(
            get_renderable=self._render,
            console=console,
            refresh_per_second=REFRESH_PER_S,
            transient=True,
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self._live.start()

    def _render(self) -> Any:
        from rich.text import Text  # noqa: PLC0415 - imported with the console above

        width = max(self._console.width - 1, 20)
        lines = [_cut(printable(row), width) for row in self._rows()]
        return Text("\n".join(lines), no_wrap=True, overflow="ellipsis")

    def line(self, text: str) -> None:
        from rich.text import Text  # noqa: PLC0415 - imported with the console above

        self._live.refresh()  # the rows under the line are today's, not the last frame's
        self._console.print(Text(printable(text)))

    def close(self) -> None:
        self._live.stop()


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def open_screen(rows: Rows, beat: Beat, *, stream: IO[str] | None = None) -> Screen:
    """A ``LiveScreen`` on a terminal, a ``PlainScreen`` anywhere else."""
    where = stream or sys.stderr
    if is_terminal(where):
        return LiveScreen(where, rows)
    return PlainScreen(where, beat)


@contextmanager
def screen(rows: Rows, beat: Beat, *, stream: IO[str] | None = None) -> Iterator[Screen]:
    """``open_screen``, closed at the end (also on Ctrl-C or an error)."""
    opened = open_screen(rows, beat, stream=stream)
    try:
        yield opened
    finally:
        opened.close()


class Meter:
    """A progress meter (``tune``, ``simulate``, ``import``): a live row on a terminal,
    a plain line at most every ``HEARTBEAT_S`` elsewhere, and its last state as a line
    when done (or left: use it as a context manager)."""

    def __init__(self, what: str, *, quiet: bool = False, stream: IO[str] | None = None) -> None:
        self.what, self.start = what, time.monotonic()
        self.done, self.total = 0, 0
        self._quiet, self._stream = quiet, stream
        self._screen: Screen | None = None

    def text(self) -> str:
        elapsed = max(time.monotonic() - self.start, 1e-9)
        rate = self.done / elapsed
        left = (self.total - self.done) / rate if rate else 0.0
        return f"{self.what}: {self.done}/{self.total} ({rate:,.0f}/s, {left:,.0f}s left)"

    def __call__(self, done: int, total: int) -> None:
        self.done, self.total = done, total
        if self._screen is None and not self._quiet:
            self._screen = open_screen(lambda: [self.text()], self.text, stream=self._stream)

    def __enter__(self) -> Meter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the meter, leaving its last state as a line (once)."""
        if self._screen is not None:
            self._screen.close()
            self._screen.line(self.text())
            self._screen = None


def coloured(text: str, stream: IO[str]) -> None:
    """Print ``text`` (escaped) with each goal status before its ``/`` in colour."""
    from rich.console import Console  # noqa: PLC0415 - a terminal only (start-up)
    from rich.text import Text  # noqa: PLC0415 - a terminal only (start-up)

    shown = Text(printable(text))
    for pattern, style in STATUS_STYLES:
        shown.highlight_regex(pattern, style)
    Console(file=stream, markup=False, emoji=False, highlight=False, soft_wrap=True).print(shown)


STATUS_STYLES: Final[Sequence[tuple[str, str]]] = (
    (r"\bsucceeded(?=/)", "bold green"),
    (r"\b(?:running|ready)(?=/)", "cyan"),
    (r"\b(?:waiting|awaiting_review)(?=/)", "yellow"),
    (r"\b(?:blocked|budget_exhausted)(?=/)", "bold red"),
    (r"\bcancelled(?=/)", "dim"),
)
"""Each status word of a decision (``status/next_action``) and its style."""
