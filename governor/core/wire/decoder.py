"""The compiled event decoder: msgspec structs derived from the event models, for hot reads.

The wire's decoder is four modules, bottom up: ``checks`` (doubts, times, patterns),
``forms`` (how an annotation, a field, a model compile), ``generate`` (each model's
generated finish and build), ``derive`` (the structs, ``compiled``); this one reads with
them (``decode_compiled``, ``decode_struct``, ``reader``) and holds replay's generated
line and chunk loops (``line_reader``, ``chunk_reader``): the generated-code half, over
the core's 300 lines by leave of issue 26.


Rules (SPEC §11.1):
    * The pydantic models in ``governor.core.events`` are the one definition of an event.
      This module *derives* a msgspec struct for every model on first use, from the models'
      own fields (types, defaults, aliases, constraints, nested models, unknown fields
      forbidden), and builds the same frozen pydantic objects from what it decodes, then
      runs the models' own ``mode="after"`` validators on them. Nothing is written twice.
    * It is a fast path, never a second judge: :func:`decode_compiled` returns an event
      only when it is sure the models accept the line *with the same values*; on any
      doubt it returns ``None`` and the caller validates with pydantic, which decides and
      words the error. So the codec accepts and rejects exactly what the models do
      (``tests/core/test_decoder.py`` checks it differentially).
    * Doubts, by design: anything pydantic accepts only in lax mode (``"5"`` for 5), the
      alias-less spelling ``failure_class``, a time that is not a short RFC 3339 UTC
      string, a number msgspec cannot hold. Canonical lines — what the
      codec writes — never hit them.
    * A nested model with a ``mode="before"`` validator sees its input as written, which
      a struct does not keep: its JSON is kept raw, decoded as written, given to the
      model's own ``mode="before"`` validators (as pydantic gives it), and what they
      return is converted to the model's struct and finished like any other (``Policy``,
      whose omitted ``max_milestones`` is ``min(4, max_replans)``; one per
      ``goal.created``). So reading a valid history builds no pydantic validator at all
      (start-up, issue 12). A policy the model refuses (a round-1 one with more
      milestones than replans) is a doubt, so the codec's upcasting path reads it, as
      without this module (decision record 0006).
    * A field whose checks this module cannot compile (a new validator, an unknown
      constraint) makes the first use fail, naming the field: it never silently checks less.

Strings with a ``pattern`` (ids) are checked with the pattern itself, remembering the
strings already seen (ids repeat on every line of a history); times are checked for UTC
here, inline, instead of in a per-event Python validator. Replay's line loop is generated
likewise (``line_reader``), with the finish of the attempt types inline in it.
"""

from __future__ import annotations

import functools
import itertools
import operator
import re
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any, Final

import msgspec
from pydantic import BaseModel

from governor.core.events import EVENT_CLASSES, Event
from governor.core.wire.checks import Convert, Doubt, PatternCheck, utc_time
from governor.core.wire.derive import compiled
from governor.core.wire.forms import COMPILED
from governor.core.wire.generate import finish_body, generated, indent


def decode_compiled(data: bytes | str) -> Event | None:
    """One event from a JSON object, or ``None`` when pydantic must decide (see the rules)."""
    decoder, finishers, builders = compiled()
    try:
        decoded = decoder.decode(data)
        event: Event = builders[type(decoded)](finishers[type(decoded)](decoded))
    except (msgspec.DecodeError, Doubt):
        return None
    return event


def decode_struct(data: bytes | str) -> Event | None:
    """One event *as its finished struct*, or ``None`` when pydantic must decide.

    The struct reads like the event (the same attributes, with equal values, ``type``
    included) but has none of the model's methods: the fold, the history checks and the
    decisions, which only read attributes, take it in place of the event, on the hot read
    paths only. :func:`event_of` makes the event of it for anything that leaves them.
    """
    decoder, finishers, _ = compiled()
    try:
        decoded = decoder.decode(data)
        read: Event = finishers[type(decoded)](decoded)
    except (msgspec.DecodeError, Doubt):
        return None
    return read


def reader(*, structs: bool = False) -> Callable[[bytes | str], Event | None]:
    """:func:`decode_struct` (``structs``) or :func:`decode_compiled`, with the compiled
    decoder bound once: for a loop over the lines of a history (trailing whitespace, such
    as a line's newline, is JSON whitespace)."""
    decoder, finishers, builders = compiled()
    decode = decoder.decode

    def read_struct(data: bytes | str) -> Event | None:
        try:
            decoded = decode(data)
            read: Event = finishers[type(decoded)](decoded)
        except (msgspec.DecodeError, Doubt):
            return None
        return read

    def read_event(data: bytes | str) -> Event | None:
        try:
            decoded = decode(data)
            kind = type(decoded)
            event: Event = builders[kind](finishers[kind](decoded))
        except (msgspec.DecodeError, Doubt):
            return None
        return event

    return read_struct if structs else read_event


DOUBTS: Final = (msgspec.DecodeError, Doubt)
"""What a compiled read raises when pydantic must decide (for loops that inline a read)."""


HOT_TYPES: Final = ("attempt.started", "attempt.finished", "attempt.continued")
"""The event types a line reader finishes inline, in this order: two events in three of
a typical history are attempts (the others cost one call more each)."""

Remember = tuple[str, str, str]
"""``(type, key, value)``: for every event of ``type`` read, ``remembered[event.key] =
event.value`` (what ``Upcaster.note`` keeps: an item's latest attempt)."""

LineReader = Callable[..., Iterator[tuple[int, Event]]]


@functools.cache
def line_reader(remember: Remember) -> LineReader:
    """The hot loop of a history read as finished structs (replay): a generator function,
    generated once, with the finish of the ``HOT_TYPES`` inline.

    ``reader(lines, on_doubt, unterminated, too_deep, remembered, first=1)`` yields
    ``(line, struct)`` for raw lines that each end in a newline (numbered from ``first``);
    it calls ``on_doubt(raw, line)`` for what pydantic must decide (its event is yielded),
    ``unterminated(line)`` for a line without its newline, then stops (returning
    ``True``: a chunk reader stops with it), and raises
    ``too_deep(line)`` when the parser's depth limit was reached. It reads each line as
    ``decode_struct`` does: the same statements, without a call per line.
    """
    decoder, finishers, _ = compiled()
    scope: dict[str, Any] = {"decode": decoder.decode, "finishers": finishers, "DOUBTS": DOUBTS}
    branches: list[str] = []
    for n, tag in enumerate(HOT_TYPES):
        model = COMPILED[EVENT_CLASSES[tag]]
        scope[f"T{n}"] = model.struct
        body = finish_body(model, "s", f"h{n}_", scope)
        if tag == remember[0]:
            body.append(f"remembered[s.{remember[1]}] = s.{remember[2]}")
        branches += [f"{'el' if n else ''}if t is T{n}:", *indent(body or ["pass"])]
    tag, key, value = remember
    lines = [
        "for line, raw in enumerate(lines, first):",
        "    if raw[-1:] != b'\\n':",
        "        unterminated(line)",
        "        return True",
        "    try:",
        "        s = decode(raw)",
        "        t = type(s)",
        *indent(branches, 8),
        "        else:",
        "            s = finishers[t](s)",
        *(
            []
            if tag in HOT_TYPES
            else [
                f"            if s.type == {tag!r}:",
                f"                remembered[s.{key}] = s.{value}",
            ]
        ),
        "    except DOUBTS:",
        "        s = on_doubt(raw, line)",
        "    except RecursionError:",
        "        raise too_deep(line) from None",
        "    yield line, s",
    ]
    return generated(
        "read_lines",
        indent(lines),
        scope,
        "lines, on_doubt, unterminated, too_deep, remembered, first=1",
    )


# --- a chunk of lines at a time: the checks of the hot types' shared fields in bulk ---------

_CLASSES_ONLY: Final = re.compile(r"(?:\[(?!\^)[ -Z^-~]+\](?:\{\d+(?:,\d+)?\}|[*+?])?)+")
"""A pattern made of character classes alone (printable ASCII, no escape, no negation,
no ``[`` or ``]`` inside), each maybe repeated: it can never match a newline."""


class _Many:
    """A pattern check (``PatternCheck``) of every value of a chunk at once.

    One value throughout (a goal's id; an item's id over its run of attempts) is checked
    once, as a line would check it. Other values are joined by newlines and matched by
    one regex (the pattern, then the pattern after each newline): exact only for a
    pattern that never matches a newline (``_CLASSES_ONLY``) and values that hold none
    (counted), for then each value is exactly one stretch between newlines.
    """

    __slots__ = ("check", "fullmatch")

    def __init__(self, check: PatternCheck, core: str) -> None:
        self.check = check
        self.fullmatch = re.compile(f"(?:{core})(?:\n(?:{core}))*").fullmatch

    def __call__(self, values: list[str]) -> None:
        if not values:
            return
        first = values[0]
        if values == [first] * len(values):  # stops at the first other value
            self.check(first)
            return
        joined = "\n".join(values)
        if joined.count("\n") != len(values) - 1 or self.fullmatch(joined) is None:
            raise Doubt


def _many(check: Convert | None) -> _Many | None:
    """The bulk form of a field's check, if it has one."""
    if not isinstance(check, PatternCheck):
        return None
    core = check.fullmatch.__self__.pattern  # type: ignore[attr-defined]
    return _Many(check, core) if _CLASSES_ONLY.fullmatch(core) else None


_SHAPES: Final = (
    # the shapes of the codec's times (``_finish_lines``), as (position, character) pairs
    (20, ((4, "-"), (7, "-"), (10, "T"), (13, ":"), (16, ":"), (19, "Z"))),
    (27, ((4, "-"), (7, "-"), (10, "T"), (13, ":"), (16, ":"), (19, "."), (26, "Z"))),
)
_from_iso = datetime.fromisoformat


def _utc_times(values: list[str]) -> list[datetime]:
    """The UTC times of a chunk's time strings, each as the finish reads it (a doubt, or a
    ``ValueError`` of ``fromisoformat``, otherwise).

    When every string has one of the codec's shapes (checked on the strings joined: their
    lengths, then each separator column as one slice), ``fromisoformat`` reads them all
    in one ``map``; otherwise each is read as the finish reads it.
    """
    count = len(values)
    joined = "".join(values)
    for length, shape in _SHAPES:
        if (
            len(joined) == length * count
            and min(map(len, values), default=length) == length
            and all(joined[at::length] == char * count for at, char in shape)
        ):
            return list(map(_from_iso, values))
    return list(map(_utc_time_one, values))


def _utc_time_one(value: str) -> datetime:
    """One time as the generated finish reads it (``_finish_lines``)."""
    size = len(value)
    if (size == 20 and value[4:20:3] == "--T::Z") or (
        size == 27 and value[4:20:3] == "--T::." and value[26] == "Z"
    ):
        try:
            return _from_iso(value)
        except ValueError:
            raise Doubt from None
    return utc_time(value)


ChunkReader = Callable[..., Iterator[tuple[int, Event]]]

_CHUNK_DOUBTS: Final = (Doubt, ValueError, RecursionError)
"""What makes a chunk be read line by line (``msgspec.DecodeError`` is a ``ValueError``)."""


@functools.cache
def chunk_reader(remember: Remember) -> ChunkReader:
    """The hot loop of a history read as finished structs, a chunk of lines at a time.

    ``reader(chunks, on_doubt, unterminated, too_deep, remembered)`` reads lists of raw
    lines (every line ends in its newline but maybe the last line of the last chunk) and
    yields what ``line_reader`` yields for the same lines, in the same order, with the
    same callbacks. Each chunk is first read whole, on the sure path: every line decoded
    (one ``map``), the fields every ``HOT_TYPES`` event has and checks alike checked in
    bulk (ids: one regex over the values joined, ``_Many``; times: ``_utc_times``), the
    other fields and the other types finished as ``line_reader`` finishes them. Only if
    all of it succeeds are its events yielded (and the attempts remembered); at the first
    doubt, error or short line anywhere in the chunk, the chunk is read again by
    ``line_reader`` from its first line, which yields, calls back and raises line by line
    exactly as it does for any line. So nothing of a chunk is yielded before all of it
    is known sure, and nothing else changes: only how many lines are decoded at once.
    """
    decoder, finishers, _ = compiled()
    models = [COMPILED[EVENT_CLASSES[tag]] for tag in HOT_TYPES]
    if remember[0] not in HOT_TYPES:
        raise TypeError(f"the chunk reader remembers hot types only, not {remember[0]!r}")
    shared: dict[str, tuple[str, Any]] = {}  # field -> ("many", _Many) | ("time", None)
    for value in models[0].values:
        others = [next((v for v in m.values if v.name == value.name), None) for m in models]
        finish = value.form.finish
        if any(o is None or o.form.finish is not finish or o.default is not None for o in others):
            continue
        if finish is utc_time:
            shared[value.name] = ("time", None)
        elif (many := _many(finish)) is not None:
            shared[value.name] = ("many", many)
    skip = frozenset(shared)
    scope: dict[str, Any] = {
        "decode": decoder.decode,
        "finishers": finishers,
        "HOT": frozenset(m.struct for m in models),
        "compress": itertools.compress,
        "count": itertools.count,
        "not_": operator.not_,
        "utc_times": _utc_times,
        "read_lines": line_reader(remember),
        "CHUNK_DOUBTS": _CHUNK_DOUBTS,
    }
    checks: list[str] = []
    times: list[tuple[int, str]] = []  # (n, field): the times converted in bulk, set back
    for n, (name, (kind, many)) in enumerate(shared.items()):
        scope[f"get{n}"] = operator.attrgetter(name)
        if kind == "time":
            checks.append(f"times{n} = utc_times(list(map(get{n}, hot)))")
            times.append((n, name))
        else:
            scope[f"many{n}"] = many
            checks.append(f"many{n}(list(map(get{n}, hot)))")
    for n, model in enumerate(models):
        scope[f"is{n}"] = functools.partial(operator.is_, model.struct)
        body = finish_body(model, "s", f"h{n}_", scope, skip)
        if body:
            checks += [f"for s in compress(hot, map(is{n}, kinds)):", *indent(body)]
    tag, key, kept = remember
    scope["get_remembered"] = operator.attrgetter(key, kept)
    started = f"compress(hot, map(is{HOT_TYPES.index(tag)}, kinds))"
    checks.append(f"remembered.update(map(get_remembered, {started}))")
    lists = ", ".join(f"times{n}" for n, _ in times)
    each = ", ".join(f"t{n}" for n, _ in times)
    sets = [f"s.{name} = t{n}" for n, name in times]
    lines = [
        "first = 1",
        "for chunk in chunks:",
        "    if not chunk:",
        "        continue",
        "    try:",
        "        if chunk[-1][-1:] != b'\\n':",
        "            raise Doubt",
        "        structs = list(map(decode, chunk))",
        "        kinds = list(map(type, structs))",
        "        if HOT.issuperset(kinds):",
        "            hot = structs",
        "        else:",
        "            mask = list(map(HOT.__contains__, kinds))",
        "            hot, kinds = list(compress(structs, mask)), list(compress(kinds, mask))",
        "            for s in compress(structs, map(not_, mask)):",
        "                finishers[type(s)](s)",
        *indent(checks, 8),
        "    except CHUNK_DOUBTS:",
        "        if (yield from read_lines(chunk, on_doubt, unterminated, too_deep, remembered, first)):",
        "            return",
        "        first += len(chunk)",
        "        continue",
        "    if hot is structs:",
        f"        for line, s, {each or '_'} in zip(count(first), structs, {lists or 'structs'}):",
        *indent(sets, 12),
        "            yield line, s",
        "    else:",
        f"        for s, {each or '_'} in zip(hot, {lists or 'hot'}):",
        *indent(sets or ["pass"], 12),
        "        yield from zip(count(first), structs)",
        "    first += len(chunk)",
    ]
    return generated(
        "read_chunks", indent(lines), scope, "chunks, on_doubt, unterminated, too_deep, remembered"
    )


def event_of(read: Event) -> Event:
    """The pydantic event of what a reader read: a finished struct is built into its
    model, an event is itself."""
    if isinstance(read, BaseModel):
        return read
    event: Event = compiled().builders[type(read)](read)
    return event
