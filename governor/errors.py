"""Every exception governor raises, in one dependency-free module.

Expected outcomes (a failed attempt, a vendor refusal, an exhausted budget) are
*events*, not exceptions. Exceptions are for input that cannot be accepted, for
commands that the rules refuse, and for failed I/O::

    GovernorError
    ├── InputError                      bad input from a person or a file
    │   ├── HistoryError                a history line that cannot be read or is invalid
    │   ├── PolicyError                 a policy override that is unknown or out of range
    │   ├── GoalFileError               a goal file that cannot be read or is invalid
    │   └── InvalidEventError           an event the store refused to write (it would not read back)
    ├── CommandRefusedError             the rules refuse a command in this state
    │   └── BudgetExhaustedError        ... because a budget is spent
    ├── NotFoundError                   no such goal, plan, work item or file
    ├── UnavailableError                something needed is not there: a free port, an extra
    └── StoreError                      the event store failed
        ├── CorruptEventError           a stored event cannot be read back
        ├── DamagedRowError             a summary, lease, health or registry row cannot be read back
        ├── ConcurrencyConflictError    another writer appended first (retryable)
        └── LeaseError                  the goal's lease is held or was lost

Every error carries structured fields so that nobody parses its message, and a
``retryable`` class attribute that says whether doing the same thing again can help.
"""

from __future__ import annotations

from collections.abc import Iterable
from difflib import get_close_matches


class GovernorError(Exception):
    """Base of every error governor raises."""

    retryable: bool = False


class InputError(GovernorError):
    """Input that cannot be accepted: the message names what is wrong and where."""


class HistoryError(InputError):
    """A history line that cannot be read or breaks a rule of the history format.

    Attributes:
        line: 1-based line number in the input (or the event's position), if known.
        detail: what is wrong, without the location prefix.
        source: the file (or store) the line came from, if known.
    """

    def __init__(self, detail: str, *, line: int | None = None, source: str | None = None):
        self.line = line
        self.detail = detail
        self.source = source
        where = f"line {line}: " if line is not None else ""
        prefix = f"{source}: " if source else ""
        super().__init__(f"{prefix}{where}{detail}")


class PolicyError(InputError):
    """A policy field that is unknown or whose value is out of range."""

    def __init__(self, detail: str, *, field: str | None = None):
        self.field = field
        self.detail = detail
        super().__init__(detail)


class GoalFileError(InputError):
    """A goal file that cannot be read or does not describe a valid goal."""


class InvalidEventError(InputError):
    """An event the store refused to append, because reading it back would fail.

    The store checks what it is about to write with the code that reads it, so nothing
    that a later read would call corrupt is ever stored. Nothing of the batch was written.

    Attributes:
        goal_id: the goal the batch was for.
        seq: the sequence number the event would have had.
        detail: what is wrong with it.
    """

    def __init__(self, goal_id: str, seq: int, detail: str):
        self.goal_id = goal_id
        self.seq = seq
        self.detail = detail
        super().__init__(
            f"goal {goal_id}: event {seq} was not stored: {detail}; nothing was written"
        )


class CommandRefusedError(GovernorError):
    """The rules refuse this command in the goal's current state.

    Attributes:
        goal_id: the goal the command was aimed at.
        detail: why it was refused, as a sentence a person understands.
    """

    def __init__(self, detail: str, *, goal_id: str | None = None):
        self.goal_id = goal_id
        self.detail = detail
        super().__init__(f"{goal_id}: {detail}" if goal_id else detail)


class BudgetExhaustedError(CommandRefusedError):
    """A command was refused because a budget ledger is spent.

    Attributes:
        ledger: the ledger that ran out (``replans``, ``plan_records``, ``attempts``,
            ``total_attempts``, ``runtime`` or ``cost``).
    """

    def __init__(self, detail: str, *, ledger: str, goal_id: str | None = None):
        self.ledger = ledger
        super().__init__(detail, goal_id=goal_id)


class NotFoundError(GovernorError):
    """No such goal, plan, work item or file."""


class UnavailableError(GovernorError):
    """Something the command needs is not available: a port already taken, an optional
    extra not installed. Doing the same again helps once it is (``retryable``).

    Attributes:
        what: what is missing, e.g. ``port 8765`` or ``the ui extra``.
    """

    retryable = True

    def __init__(self, detail: str, *, what: str):
        self.what = what
        super().__init__(detail)


class StoreError(GovernorError):
    """The event store failed (a lost connection, a corrupt row, a full disk)."""


class CorruptEventError(StoreError):
    """A stored event cannot be read back: a torn, edited or damaged row.

    Attributes:
        goal_id: the goal whose stream holds the row.
        seq: the sequence number of the row.
        detail: what is wrong with it.
    """

    def __init__(self, goal_id: str, seq: int, detail: str):
        self.goal_id = goal_id
        self.seq = seq
        self.detail = detail
        super().__init__(
            f"goal {goal_id}: event {seq} in the store is corrupt: {detail}; "
            "restore the store from a backup or an export"
        )


class DamagedRowError(StoreError):
    """A row of a table the store derives or keeps beside the events (a goal's summary, a
    lease, an upstream's health, a registry row) holds a value its column cannot hold.

    Attributes:
        table: the table (``goals``, ``leases``, ``upstreams``, ``workers``, ...).
        key: the row's key as it is shown (quoted, shortened).
        column: the column that holds the bad value.
        detail: what it holds, and why that cannot be read.
        remedy: what mends it (``governor store check --repair`` ...).
    """

    def __init__(self, table: str, key: str, column: str, detail: str, remedy: str):
        self.table = table
        self.key = key
        self.column = column
        self.detail = detail
        self.remedy = remedy
        super().__init__(f"the store's {table} row {key} is damaged: {column} {detail}; {remedy}")


class ConcurrencyConflictError(StoreError):
    """Another writer appended to the goal first; reload and decide again."""

    retryable = True

    def __init__(self, goal_id: str, *, expected_seq: int, actual_seq: int):
        self.goal_id = goal_id
        self.expected_seq = expected_seq
        self.actual_seq = actual_seq
        super().__init__(
            f"{goal_id}: expected the stream to end at seq {expected_seq}, "
            f"but it ends at {actual_seq}; reload and decide again"
        )


class LeaseError(StoreError):
    """The goal's lease is held by someone else, or ours was taken over."""

    def __init__(self, goal_id: str, detail: str, *, holder: str | None = None):
        self.goal_id = goal_id
        self.holder = holder
        super().__init__(f"{goal_id}: {detail}")


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the known name closest to a misspelt one, else ``""``."""
    close = get_close_matches(word, sorted(known), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""
