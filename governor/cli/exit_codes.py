"""Exit codes of the ``governor`` command, in one table (documented in ``docs/cli.md``)."""

from __future__ import annotations

from enum import IntEnum
from typing import Final

from governor.errors import (
    CommandRefusedError,
    ConcurrencyConflictError,
    GovernorError,
    InputError,
    LeaseError,
    NotFoundError,
    StoreError,
    UnavailableError,
)


class ExitCode(IntEnum):
    """What the process exit status means."""

    OK = 0
    """Done; for goal commands: the goal succeeded."""
    FAILURE = 1
    """An unexpected internal error (a bug: please report it)."""
    USAGE = 2
    """The command line could not be parsed."""
    INVALID_INPUT = 3
    """A file, history, goal or policy given was not valid; nothing was stored."""
    NOT_FOUND = 4
    """No such file, goal, plan or work item."""
    REFUSED = 5
    """The rules refuse the command in the goal's current state."""
    CONFLICT = 6
    """Another runner holds the goal's lease, or appended first."""
    STORE_ERROR = 7
    """The event store failed."""
    AGENT_FAILED = 8
    """``probe``: the agent call failed; ``doctor``: a required binary is missing or broken."""
    UNAVAILABLE = 9
    """Something the command needs is not available: a port is taken, an extra not installed."""
    BLOCKED = 10
    """The goal stopped: blocked on the environment, a decision, an outside service or the work."""
    BUDGET_EXHAUSTED = 11
    """The goal stopped: a budget ledger is spent."""
    WAITING = 12
    """The goal waits (an outside service cooldown, or a run in flight) longer than allowed."""
    CANCELLED = 13
    """The goal was cancelled."""
    AWAITING_REVIEW = 14
    """The goal waits for an operator to review a plan or work."""
    INTERRUPTED = 130
    """Ctrl-C (SIGINT) ended the command; ``--watch``: watching stopped, the goal goes on."""
    TERMINATED = 143
    """SIGTERM ended ``run``: its lease released (said on stderr), the goal goes on with the
    next runner."""


ERROR_CODES: Final[tuple[tuple[type[GovernorError], ExitCode], ...]] = (
    (InputError, ExitCode.INVALID_INPUT),
    (NotFoundError, ExitCode.NOT_FOUND),
    (LeaseError, ExitCode.CONFLICT),
    (ConcurrencyConflictError, ExitCode.CONFLICT),
    (CommandRefusedError, ExitCode.REFUSED),
    (StoreError, ExitCode.STORE_ERROR),
    (UnavailableError, ExitCode.UNAVAILABLE),
)
"""Error class -> exit code; the first matching row wins (subclasses come first)."""

STATUS_CODES: Final[dict[str, ExitCode]] = {
    "succeeded": ExitCode.OK,
    "blocked": ExitCode.BLOCKED,
    "budget_exhausted": ExitCode.BUDGET_EXHAUSTED,
    "waiting": ExitCode.WAITING,
    "running": ExitCode.WAITING,
    "cancelled": ExitCode.CANCELLED,
    "awaiting_review": ExitCode.AWAITING_REVIEW,
    "ready": ExitCode.OK,
}
"""A goal's status after ``run`` -> exit code."""


def exit_code_for(error: GovernorError) -> ExitCode:
    """The exit code of an error, from the table."""
    for cls, code in ERROR_CODES:
        if isinstance(error, cls):
            return code
    return ExitCode.FAILURE
