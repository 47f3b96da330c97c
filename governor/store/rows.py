"""Events to stored rows and back: batch checks on the way in, decoding on the way out.

Rules (SPEC §3, §8):
    * Writing validates: a batch is numbered ``expected_seq + 1 ..``, carries one goal id,
      and only a new stream may (and must) start with ``goal.created``. The body is what
      the one codec encodes, and it is read back with ``read_row`` (the code every load
      runs) before it is written: a body that a load would call corrupt, or that would
      read back as another event, is refused (``InvalidEventError``), never stored.
    * Secrets never reach a stream: a body that holds a key shape
      (``governor.core.credentials.KEY_SHAPES``, after every redaction upstream) is
      refused the same way. One regex search per body (``docs/reliability.md``).
    * Every row carries the CRC-32 of its body. A body that does not match it was not
      written by the store (a torn write, a damaged disk, an edit behind its back),
      even when it still parses: a flipped digit in a ``seq`` or an ``attempt`` would
      otherwise change a budget silently.
    * Reading validates every row through the one codec. (A trusted read path that
      skips validation was measured and not kept: see ``docs/store.md``.) A row of an
      older shape is upgraded by the codec's upcasters (``decode_upgraded``).
    * A row that cannot be read raises ``CorruptEventError`` naming goal and seq.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from governor.core.credentials import find_key
from governor.core.events import Event, GoalCreated
from governor.core.wire.codec import decode, decode_upgraded, describe, encode
from governor.errors import CorruptEventError, InvalidEventError
from governor.store.stored import StoredEvent

__all__ = ["StoredEvent", "read_row", "to_rows"]


def to_rows(goal_id: str, events: Sequence[Event], expected_seq: int) -> list[StoredEvent]:
    """Check a batch for appending after ``expected_seq`` and encode it.

    Raises:
        ValueError: when the batch is empty, misnumbered, names another goal, or places
            ``goal.created`` anywhere but at the start of a new stream.
        InvalidEventError: when an event would not read back as itself.
    """
    if expected_seq < 0:
        raise ValueError(f"expected_seq must be >= 0, not {expected_seq}")
    if not events:
        raise ValueError(f"goal {goal_id}: nothing to append")
    rows = []
    for offset, event in enumerate(events, start=1):
        want = expected_seq + offset
        if event.goal_id != goal_id:
            raise ValueError(f"goal {goal_id}: event {want} belongs to goal {event.goal_id}")
        if event.seq != want:
            raise ValueError(
                f"goal {goal_id}: event {offset} of the batch has seq {event.seq}, expected {want}"
            )
        if isinstance(event, GoalCreated) != (want == 1):
            raise ValueError(
                f"goal {goal_id}: a stream starts with goal.created, exactly once (seq {want} is {event.type})"
            )
        rows.append(_checked_row(goal_id, want, event))
    return rows


def _checked_row(goal_id: str, seq: int, event: Event) -> StoredEvent:
    """The row of one event, read back the way a load will read it before it is written."""
    try:
        body = encode(event)
    except PydanticSerializationError as exc:
        raise InvalidEventError(goal_id, seq, f"{event.type} cannot be encoded ({exc})") from None
    if (key := find_key(body)) is not None:
        raise InvalidEventError(
            goal_id,
            seq,
            f"{event.type} holds what looks like {key}, and secrets never go into a "
            "goal's history: remove it",
        )
    crc = zlib.crc32(body)
    try:
        back = read_row(goal_id, seq, body, crc)
    except CorruptEventError as exc:
        raise InvalidEventError(goal_id, seq, exc.detail) from None
    if back != event:
        raise InvalidEventError(goal_id, seq, f"{event.type} would read back as a different event")
    return StoredEvent(seq, event.type, event.at, body, crc)


def read_row(goal_id: str, seq: int, body: bytes | str, crc: int) -> Event:
    """The event a row holds, checked against the row's checksum, goal and seq.

    Raises:
        CorruptEventError: when the body is not a valid event of this goal at this seq,
            or not the body the store wrote.
    """
    if isinstance(body, str):  # a row edited as text behind the store's back
        body = body.encode("utf-8", "surrogateescape")
    elif not isinstance(body, bytes):  # a number or NULL: SQLite's columns hold any type
        raise CorruptEventError(goal_id, seq, f"the body holds {body!r:.60}, not an event")
    if type(crc) is not int:
        raise CorruptEventError(goal_id, seq, f"the checksum holds {crc!r:.60}, not a number")
    try:
        event = decode(body)
    except ValidationError as exc:
        upgraded = decode_upgraded(body)
        if upgraded is None:
            raise CorruptEventError(goal_id, seq, describe(exc)) from None
        event = upgraded
    if zlib.crc32(body) != crc:
        raise CorruptEventError(goal_id, seq, "the body does not match its checksum")
    if event.goal_id != goal_id or event.seq != seq:
        raise CorruptEventError(
            goal_id, seq, f"the row holds event {event.seq} of goal {event.goal_id}"
        )
    return event
