"""SIGTERM as an exception for a command that holds something to give back (``run``'s lease).

Rules (issue 35):
    * By default SIGTERM ends the process at once: no ``finally`` runs, so ``run`` kept its
      lease until it expired and an immediate rerun was refused. Inside ``terminable`` it
      raises ``Terminated`` in the main thread instead, so every ``finally`` on the way out
      runs (the runner releases its lease; its agents are ended as on any exit).
    * The previous handler is put back when the block ends.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


class Terminated(BaseException):
    """SIGTERM arrived inside ``terminable``: a ``BaseException``, like ``KeyboardInterrupt``,
    so no ``except Exception`` on the way out takes it for a failure of the run."""


def _raise(signum: int, frame: FrameType | None) -> None:
    raise Terminated


@contextmanager
def terminable() -> Iterator[None]:
    """Within the block, SIGTERM raises ``Terminated`` (only in the main thread)."""
    previous = signal.signal(signal.SIGTERM, _raise)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
