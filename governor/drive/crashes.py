"""The crash-loop guard of a runner's runs.

Rules:
    * Once a plan or attempt is in flight, an exception raised while running its agent or
      recording what it came to (agent output governor cannot record, a bug) is recorded
      as a charged failure of that run, with the exception as its error, so the next
      step does not continue the run for free and fail the same way.
    * A store error is not the run's fault: it propagates, the run stays in flight.
    * A run an operator settled meanwhile (an abandon, a review) records nothing more.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from governor.core.classify import tail
from governor.core.events import Event
from governor.drive.append import Along, Build
from governor.errors import CommandRefusedError, StoreError
from governor.exec.environment import Redactor

R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class CrashGuard:
    """Records a run's outcome, or the exception that ended it (the module rules)."""

    record: Callable[[Build, Along | None], list[Event]]
    """Builds events on the goal's current view and appends them, with the pool events
    ``along`` gives in the same transaction (``Runner.record``)."""
    progress: Callable[[str], None]
    env: Mapping[str, str]
    """The environment whose secrets an error must not carry."""

    def crash_text(self, exc: BaseException) -> str:
        """An exception as a recordable error: redacted, surrogate-free, tail-preserved."""
        text = f"governor could not record the run ({type(exc).__name__}: {exc})"
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
        return tail(Redactor(self.env)(text))

    def settle(
        self,
        what: str,
        run: Callable[[], R],
        outcome: Callable[[R], Build],
        failure: Callable[[str], Build],
        in_flight: Callable[[], bool],
        *,
        along: Along | None = None,
    ) -> list[Event]:
        """Record ``outcome(run())``, or ``failure`` of the exception that ended it.

        Args:
            what: the run, for the progress line ("p1", "p1-a attempt 2").
            run: runs the agent (or waits for its thread) and returns what it came to.
            outcome: builds the events that record it.
            failure: builds the charged failure that records an exception instead.
            in_flight: whether the run is still unrecorded (on the reloaded view).
            along: pool events to write with what is recorded (the call's settlement).
        """
        try:
            return self.record(outcome(run()), along)
        except StoreError:
            raise
        except Exception as exc:
            if not in_flight():
                if isinstance(exc, CommandRefusedError):
                    self.progress(f"{what} was settled meanwhile; its outcome is not recorded")
                    return []
                raise
            error = self.crash_text(exc)
            self.progress(f"{what}: {error}; recorded as a charged failure")
            return self.record(failure(error), along)
