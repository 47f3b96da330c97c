"""The signals ``serve`` and its workers answer: stop (relayed, never acted on in a handler).

Rules:
    * SIGTERM or SIGINT sets the ``stopping`` event; a second one calls ``at_once`` and
      ends the process (exit ``128 + signal``).
    * The Python signal handler does nothing (decision record 0013). Python runs a
      handler on the main thread between two bytecodes, wherever that thread is — also
      inside ``stopping.wait()``, holding the event's own lock: an ``Event.set()`` there
      waits for that lock for ever, and so does every thread that sets the event after
      it (a stop that never comes, seen as a worker that outlived its supervisor). So
      the signal number reaches a thread of its own through the wakeup file descriptor
      (``signal.set_wakeup_fd``), which Python's C-level handler writes the moment the
      signal arrives, whatever the main thread is doing (a long store call, an agent's
      output loop); that thread sets the event or ends the process.
    * ``SIGUSR1`` dumps the stack of every thread to stderr (``faulthandler``): what an
      operator asks a ``serve`` process or worker that seems stuck.
"""

from __future__ import annotations

import faulthandler
import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from types import FrameType
from typing import Final

STOP_SIGNALS: Final = (signal.SIGTERM, signal.SIGINT)
"""The signals that ask for a stop."""


Noticed = Callable[[signal.Signals, bool], None]
"""Told of each stop signal on the relay's thread: the signal, and whether it ends the
process at once (the second). What it raises is ignored."""


@contextmanager
def stop_signals(
    stopping: threading.Event, *, at_once: Callable[[], None], noticed: Noticed | None = None
) -> Iterator[None]:
    """SIGTERM/SIGINT set ``stopping``; a second one calls ``at_once`` and exits at once.

    Must be entered on the main thread. Inside, ``SIGUSR1`` dumps every thread's stack.
    ``noticed`` (e.g. a log line) is told of each stop signal before it is acted on.
    """
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)  # the C-level handler must never block on it
    relay = threading.Thread(
        target=_relay, args=(read_fd, stopping, at_once, noticed), daemon=True, name="stop-signals"
    )
    relay.start()
    # The pipe is in place before the handlers and stays until they are gone: no stop
    # signal ever meets a handler that does nothing with nobody told.
    previous_fd = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    previous = {sig: signal.signal(sig, _noted) for sig in STOP_SIGNALS}
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    try:
        yield
    finally:
        faulthandler.unregister(signal.SIGUSR1)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        signal.set_wakeup_fd(previous_fd)
        os.close(write_fd)  # the relay reads the end of the pipe and returns
        relay.join()
        os.close(read_fd)


def _noted(_signum: int, _frame: FrameType | None) -> None:
    """The Python-level handler: none of its work is done here (see the module rules)."""


def _relay(
    read_fd: int, stopping: threading.Event, at_once: Callable[[], None], noticed: Noticed | None
) -> None:
    """Act on each stop signal written to the wakeup pipe, until the pipe closes."""
    stops = {int(sig) for sig in STOP_SIGNALS}
    while data := os.read(read_fd, 64):
        for signum in data:
            if signum not in stops:
                continue  # another signal with a Python handler: not ours to act on
            second = stopping.is_set()
            if noticed is not None:
                with suppress(Exception):  # a log that cannot be written never holds a stop
                    noticed(signal.Signals(signum), second)
            if not second:
                stopping.set()
                continue
            try:
                at_once()
            finally:
                os._exit(128 + signum)
