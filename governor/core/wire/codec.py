"""The one JSON codec for events, and the line reader of the history format.

Rules (SPEC §3):
    * A history is JSON Lines: one event object per line, UTF-8, ``\\n``-terminated.
    * Every problem is reported with the line it is on: unknown type, unknown field,
      bad value, invalid JSON, non-UTF-8, an empty line, a torn final line.
    * Encoding writes aliases (``class``) and omits nulls; reading accepts either.
    * Reading tries the compiled decoder (``governor.core.wire.decoder``) first; whatever it
      is not sure of is validated by the pydantic models, which decide and word the error.

This module only turns bytes into events and back; opening files is the shell's job.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from itertools import chain
from typing import Any, Final

import orjson
from pydantic import ConfigDict, TypeAdapter, ValidationError

from governor.core.events import EVENT_TYPES, Event
from governor.core.spelling import did_you_mean
from governor.core.wire.decoder import (
    chunk_reader,
    decode_compiled,
    decode_struct,
    line_reader,
    reader,
)
from governor.core.wire.encoder import encoder_for
from governor.core.wire.upcast import Upcaster
from governor.errors import HistoryError

EVENT_ADAPTER: Final[TypeAdapter[Event]] = TypeAdapter(Event, config=ConfigDict(defer_build=True))
"""The models' validator and serializer of any event, built on first use: a command that
reads only valid rows (the compiled decoder reads them) never builds it (start-up)."""


def encode(event: Event) -> bytes:
    """One event as a JSON object (no trailing newline): the models' own JSON
    (``dump_json(by_alias=True, exclude_none=True)``), written by the compiled encoder
    (``governor.core.wire.encoder``); what it has no encoder of, or orjson refuses, by
    pydantic's serializer."""
    made = encoder_for(type(event))
    if made is not None:
        try:
            return orjson.dumps(made(event), option=orjson.OPT_UTC_Z)
        except orjson.JSONEncodeError:
            pass
    return EVENT_ADAPTER.dump_json(event, by_alias=True, exclude_none=True)


def to_dict(event: Event) -> dict[str, Any]:
    """One event as plain JSON-compatible values, the same fields :func:`encode` writes."""
    values: dict[str, Any] = orjson.loads(encode(event))
    return values


def decode(data: bytes | str) -> Event:
    """One event from a JSON object; raises ``ValidationError`` when it is not valid.

    The compiled decoder reads it first, even for one event: deriving it (~10 ms, once)
    costs less than building the models' validators (which it does without), so a short
    read such as ``governor status`` starts fast too. Both accept and reject alike
    (SPEC §11.1)."""
    return decode_compiled(data) or EVENT_ADAPTER.validate_json(data)


def decode_upgraded(data: bytes | str) -> Event | None:
    """One event of an old shape a stateless upcaster upgrades, or None if none applies.

    For a store's own rows: they are written valid, but by any earlier version (a policy
    recorded before SPEC §11.5). Legacy attempt numbering needs the whole history: only
    ``LineDecoder`` reads it.
    """
    try:
        raw = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(raw, dict):
        return None
    upcast, note = Upcaster().upcast(raw)
    if note is None:
        return None
    try:
        return EVENT_ADAPTER.validate_python(upcast)
    except ValidationError:
        return None


def describe(exc: ValidationError) -> str:  # noqa: PLR0911 - one sentence per kind of problem
    """The first problem of a validation error as one short sentence."""
    err = exc.errors(include_url=False)[0]
    loc = [str(part) for part in err["loc"]]
    kind = err["type"]
    if loc and loc[0] in EVENT_TYPES:
        event_type, loc = loc[0], loc[1:]
        where = f" in {event_type}"
    else:
        where = ""
    path = ".".join(loc)
    if kind == "union_tag_invalid":
        return f"unknown event type {err.get('ctx', {}).get('tag')!r}"
    if kind == "union_tag_not_found":
        return "missing field 'type'"
    if kind == "extra_forbidden":
        return f"unknown field '{path}'{where}"
    if kind == "missing":
        return f"missing field '{path}'{where}"
    if kind == "json_invalid":
        return f"not valid JSON ({err['ctx'].get('error', 'parse error')})"
    if kind in ("model_type", "model_attributes_type", "dict_type") and not path:
        return "an event must be a JSON object"
    message = err["msg"].removeprefix("Value error, ")
    if kind == "literal_error" and isinstance(err.get("input"), str):  # a typo'd name
        message += did_you_mean(err["input"], re.findall(r"'([^']*)'", err["ctx"]["expected"]))
    return f"field '{path}'{where}: {message}" if path else f"{message}{where}"


def _is_json_error(exc: ValidationError) -> bool:
    return exc.errors(include_url=False)[0]["type"] == "json_invalid"


class LineDecoder:
    """Decodes history lines one at a time, upcasting legacy shapes as it goes.

    Keep one decoder per history: legacy upcasting needs what earlier lines said.
    ``compiled=False`` validates every line with pydantic alone (the reference the
    differential test compares the compiled path with). ``structs=True`` yields each
    event the compiled path reads as its finished struct (``decoder.decode_struct``), for
    the hot read paths that only fold and check: replay and validate.
    """

    __slots__ = ("compiled", "notes", "source", "structs", "torn_line", "upcaster")

    def __init__(
        self, source: str | None = None, *, compiled: bool = True, structs: bool = False
    ) -> None:
        self.source = source
        self.compiled, self.structs = compiled, structs
        self.upcaster = Upcaster()
        self.notes: list[str] = []
        self.torn_line: int | None = None

    def decode(self, raw: bytes, line: int) -> Event:
        """Decode one line (without its newline); raises ``HistoryError`` naming the line."""
        try:
            event = None
            if self.compiled:
                event = decode_struct(raw) if self.structs else decode_compiled(raw)
            if event is None:
                event = self._validate(raw, line)
        except RecursionError:
            raise self._too_deep(line) from None
        self.upcaster.note(event)
        return event

    def lines(
        self, lines: Iterable[bytes], *, allow_torn: bool = False
    ) -> Iterator[tuple[int, Event]]:
        """``decode`` over raw lines, each ending in ``\n`` (see :func:`decode_lines`),
        with the compiled decoder bound once for the whole stream."""
        if self.compiled and self.structs:
            return self._struct_lines(lines, allow_torn=allow_torn)
        return self._event_lines(lines, allow_torn=allow_torn)

    def chunks(
        self, chunks: Iterable[list[bytes]], *, allow_torn: bool = False
    ) -> Iterator[tuple[int, Event]]:
        """``lines`` over the lines of ``chunks`` (lists of raw lines, in order: every line
        ends in ``\n`` but maybe the very last, as a file's chunked reader gives them),
        yielding, calling back and raising exactly as ``lines`` does for the same lines.
        With ``structs`` (replay) a chunk is decoded and checked at once where it is sure
        (``decoder.chunk_reader``); the line numbers run on across chunks."""
        if self.compiled and self.structs:
            read = chunk_reader(_REMEMBER)
            unterminated = self._torn_allowed if allow_torn else self._torn
            return read(chunks, self._doubt, unterminated, self._too_deep, self.upcaster.latest)
        return self.lines(chain.from_iterable(chunks), allow_torn=allow_torn)

    def _event_lines(
        self, lines: Iterable[bytes], *, allow_torn: bool
    ) -> Iterator[tuple[int, Event]]:
        fast = reader() if self.compiled else None
        latest = self.upcaster.latest  # ``Upcaster.note``, inline: it runs on every line
        for line_no, raw in enumerate(lines, start=1):
            if raw[-1:] != b"\n":
                if allow_torn:
                    self.torn_line = line_no
                    return
                raise HistoryError(TORN, line=line_no, source=self.source)
            try:
                event = fast(raw) if fast is not None else None
                if event is None:
                    event = self._validate(raw[:-1], line_no)
            except RecursionError:
                raise self._too_deep(line_no) from None
            if event.type == "attempt.started":
                latest[event.work_id] = event.attempt
            yield line_no, event

    def _struct_lines(
        self, lines: Iterable[bytes], *, allow_torn: bool
    ) -> Iterator[tuple[int, Event]]:
        """``_event_lines`` reading finished structs: the hot loop of replay, generated
        with the compiled read inline (``decoder.line_reader``)."""
        read = line_reader(_REMEMBER)
        unterminated = self._torn_allowed if allow_torn else self._torn
        return read(lines, self._doubt, unterminated, self._too_deep, self.upcaster.latest)

    def _doubt(self, raw: bytes, line: int) -> Event:
        """What pydantic makes of a line the compiled read was not sure of (newline
        included), noted for the upcaster."""
        try:
            event = self._validate(raw[:-1], line)
        except RecursionError:
            raise self._too_deep(line) from None
        self.upcaster.note(event)
        return event

    def _torn(self, line: int) -> None:
        raise HistoryError(TORN, line=line, source=self.source)

    def _torn_allowed(self, line: int) -> None:
        self.torn_line = line

    def _too_deep(self, line: int) -> HistoryError:
        """A parser's depth limit was reached: no event nests anywhere near it."""
        return HistoryError("nested too deeply to be an event", line=line, source=self.source)

    def _validate(self, raw: bytes, line: int) -> Event:
        """What pydantic (and, for an old shape, the upcaster) makes of a line."""
        try:
            event: Event = EVENT_ADAPTER.validate_json(raw)
        except ValidationError as exc:
            event = self._decode_slow(raw, line, exc)
        return event

    def _decode_slow(self, raw: bytes, line: int, first: ValidationError) -> Event:
        if not raw.strip():
            raise HistoryError("empty line", line=line, source=self.source)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise HistoryError(
                f"not valid UTF-8 (byte {exc.start})", line=line, source=self.source
            ) from None
        try:
            data = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            # pydantic read the JSON (it takes 1e400 and Infinity) and named the bad field
            detail = f"not valid JSON ({exc})" if _is_json_error(first) else describe(first)
            raise HistoryError(detail, line=line, source=self.source) from None
        if not isinstance(data, dict):
            raise HistoryError("an event must be a JSON object", line=line, source=self.source)
        upcast, note = self.upcaster.upcast(data)
        if note is None:
            raise HistoryError(describe(first), line=line, source=self.source) from None
        try:
            event = EVENT_ADAPTER.validate_python(upcast)
        except ValidationError as exc:
            raise HistoryError(describe(exc), line=line, source=self.source) from None
        self.notes.append(f"line {line}: {note}")
        return event


TORN: Final = "torn final line (no trailing newline)"
_REMEMBER: Final = ("attempt.started", "work_id", "attempt")
"""What ``Upcaster.note`` remembers, for the generated line reader to keep inline."""


def decode_lines(
    lines: Iterable[bytes],
    *,
    source: str | None = None,
    allow_torn: bool = False,
    decoder: LineDecoder | None = None,
) -> Iterator[tuple[int, Event]]:
    """Decode raw lines (each ending in ``\\n`` except maybe a torn last one).

    Yields ``(line_number, event)``. A final line without its newline is a torn write:
    it raises ``HistoryError`` unless ``allow_torn`` is true, in which case it is skipped
    and recorded in ``decoder.torn_line`` (pass your own decoder to read it and the notes).
    """
    return (decoder or LineDecoder(source)).lines(lines, allow_torn=allow_torn)
