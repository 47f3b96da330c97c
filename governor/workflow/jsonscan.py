"""Finding the answer in a reply: its last top-level JSON object, in linear time.

Rules (SPEC §7 "Reply protocol"; docs/harnesses.md "How a reply is read"):
    * The answer is the last top-level JSON object of the reply; prose around it is
      tolerated. A candidate starts at a ``{`` outside any JSON string and is read by
      one strict RFC 8259 tokenizer (no ``NaN``, no lone surrogate escape, no control
      character in a string). A complete candidate is a top-level object and the search
      goes on after it; a candidate that turns out not to be JSON at some character
      gives the objects completed inside it (the last, outermost one counts) and the
      search goes on *at that character*. Every character is read a bounded number of
      times: the search is linear in the reply's length, whatever an agent writes.
    * An object nested deeper than ``MAX_DEPTH`` levels is not an answer: its
      candidate ends where it gets too deep (no recursion, so no ``RecursionError``).
    * Only the last ``MAX_REPLY_CHARS`` characters of a longer reply are searched (the
      answer comes last).
    * The answer is decoded by orjson, strict as the tokenizer; when even it cannot read
      the last object (a number too large for a double), that is the problem reported.
    * Nothing here raises for any text: every outcome is a value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

import orjson

MAX_REPLY_CHARS: Final = 1 << 20
"""A longer reply is searched in its last 1,048,576 characters only."""
MAX_DEPTH: Final = 64
"""Objects and arrays nested deeper than this are not read as an answer."""
MAX_TOKENS: Final = 200_000
"""The most JSON tokens read in one reply (a planner's proposal has a few thousand)."""

# The tokens that are more than one character; possessive quantifiers (Python 3.11+) so
# a long unterminated string fails in linear time instead of backtracking.
_STRING: Final = re.compile(
    r'"(?:[^"\\\x00-\x1f\ud800-\udfff]++'
    r"|\\[\"\\/bfnrt]"
    r"|\\u(?![dD][89a-fA-F])[0-9a-fA-F]{4}"
    r"|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"
    r')*+"'
)
_NUMBER: Final = re.compile(r"-?(?:0|[1-9][0-9]*+)(?:\.[0-9]++)?+(?:[eE][-+]?[0-9]++)?+")
_LITERAL: Final = re.compile(r"true|false|null")
_SPACE: Final = re.compile(r"[ \t\n\r]++")
_START: Final = re.compile(r'\{(?=[ \t\n\r]*+["}])')
"""Where a candidate may begin: a ``{`` before a key or ``}`` (any other is not JSON)."""

# What the tokenizer expects next.
_VALUE, _KEY_OR_CLOSE, _KEY, _COLON, _COMMA_OR_CLOSE, _VALUE_OR_CLOSE = range(6)
_VALUE_PLACES: Final = (_VALUE, _VALUE_OR_CLOSE)
_STRING_PLACES: Final = (_VALUE, _VALUE_OR_CLOSE, _KEY_OR_CLOSE, _KEY)
_CLOSABLE: Final = (_COMMA_OR_CLOSE, _KEY_OR_CLOSE, _VALUE_OR_CLOSE)
_OPEN: Final = ("{", "[")
_PAIR: Final = {"}": "{", "]": "["}
_PUNCTUATION: Final = {(":", _COLON): _VALUE, (",", _COMMA_OR_CLOSE): _KEY}
"""A colon or a comma where one may stand, and what comes next (in an array: a value)."""


@dataclass(frozen=True, slots=True)
class Answer:
    """What a reply holds: its last top-level JSON object, or why there is none."""

    value: dict[str, Any] | None
    problem: str | None = None
    passed_over: str | None = None
    """Why the last object begun is not the answer, when an object nested in it is: the
    answer's own problems alone would name the wrong object (a lone surrogate in a
    summary makes the reply's object unreadable, and the nested one then lacks fields)."""


@dataclass(frozen=True, slots=True)
class _Candidate:
    end: int
    """Where a complete candidate ends; -1 when it is not JSON."""
    stop: int
    """Where reading stopped: its end, or the character where it stopped being JSON."""
    inner: tuple[int, int] | None
    """The last object completed inside a candidate that is not JSON."""
    tokens: int
    why: str = ""


def find_answer(text: str) -> Answer:
    """The last top-level JSON object of ``text`` (see the module rules)."""
    offset = max(0, len(text) - MAX_REPLY_CHARS)
    if offset:
        text = text[offset:]
    found: tuple[int, int] | None = None
    broken: _Candidate | None = None
    budget = MAX_TOKENS
    start = _START.search(text)
    while start is not None:
        candidate = _scan(text, start.start(), budget)
        budget -= candidate.tokens
        if budget <= 0:
            return Answer(
                None,
                f"the reply holds more than {MAX_TOKENS:,} JSON tokens; answer with one "
                "short JSON object",
            )
        if candidate.end >= 0:
            found = (start.start(), candidate.end)
        else:
            found = candidate.inner or found
            broken = candidate
        start = _START.search(text, candidate.stop)
    if found is not None:
        answer = _decode(text, *found, offset)
        if broken is None or broken.stop < found[1] or answer.value is None:
            return answer
        return Answer(
            answer.value,
            passed_over=(
                f"the reply's last JSON object begun is not valid JSON ({_where(broken, offset)}), "
                f"so the object read is the one at character {found[0] + offset}"
            ),
        )
    if broken is not None:
        return Answer(
            None,
            "the reply holds no complete JSON object: the last one begun is not valid JSON "
            f"({_where(broken, offset)})",
        )
    return Answer(None, "the reply holds no JSON object")


def _where(broken: _Candidate, offset: int) -> str:
    return f"{broken.why} at character {broken.stop + offset}"


def _decode(text: str, start: int, end: int, offset: int) -> Answer:
    try:
        value = orjson.loads(text[start:end])
    except orjson.JSONDecodeError as exc:
        return Answer(
            None, f"the JSON object at character {start + offset} cannot be read: {exc.msg}"
        )
    assert isinstance(value, dict)  # the tokenizer read an object
    return Answer(value)


def _scan(text: str, start: int, budget: int) -> _Candidate:
    """Read the candidate object at ``start`` (``text[start] == "{"``), at most ``budget``
    tokens of it."""
    stack: list[tuple[str, int]] = []  # the open brackets and where they opened
    inner: tuple[int, int] | None = None
    expect, pos, size = _VALUE, start, len(text)
    for tokens in range(1, budget + 1):
        if pos < size and text[pos] in " \t\n\r":
            pos = _SPACE.match(text, pos).end()  # type: ignore[union-attr]
        char = text[pos] if pos < size else ""
        if char in _OPEN and expect in _VALUE_PLACES and len(stack) < MAX_DEPTH:
            stack.append((char, pos))
            expect, pos = (_KEY_OR_CLOSE if char == "{" else _VALUE_OR_CLOSE), pos + 1
        elif char in _PAIR and expect in _CLOSABLE and stack[-1][0] == _PAIR[char]:
            _, begun = stack.pop()
            pos += 1
            if not stack:
                return _Candidate(pos, pos, None, tokens)
            inner = (begun, pos) if char == "}" else inner
            expect = _COMMA_OR_CLOSE
        elif (char, expect) in _PUNCTUATION:
            expect, pos = _PUNCTUATION[char, expect], pos + 1
            if expect == _KEY and stack[-1][0] == "[":
                expect = _VALUE
        elif (match := _value(text, pos, char, expect)) is not None:
            expect = _COLON if expect in (_KEY_OR_CLOSE, _KEY) else _COMMA_OR_CLOSE
            pos = match.end()
        else:
            return _Candidate(-1, pos, inner, tokens, _why(text, pos, char, len(stack)))
    return _Candidate(-1, pos, inner, budget, "too many tokens")


def _value(text: str, pos: int, char: str, expect: int) -> re.Match[str] | None:
    """The string (key or value), number or literal at ``pos``, where one may stand."""
    if char == '"' and expect in _STRING_PLACES:
        return _STRING.match(text, pos)
    if char and expect in _VALUE_PLACES:
        return _NUMBER.match(text, pos) or _LITERAL.match(text, pos)
    return None


def _why(text: str, pos: int, char: str, depth: int) -> str:
    """Why the candidate stops being JSON at ``pos``."""
    if not char:
        return "the text ends"
    if char in _OPEN and depth >= MAX_DEPTH:
        return f"nested deeper than {MAX_DEPTH} levels"
    if char == '"':
        return (
            "a string that is not JSON (an unpaired surrogate, a raw control character, "
            "a bad escape or no closing quote)"
        )
    return f"unexpected {_shown(text, pos)}"


def _shown(text: str, at: int) -> str:
    """The token at ``at`` for a message: a few characters, escaped."""
    piece = text[at : at + 12]
    return ascii(piece + ("…" if len(text) > at + 12 else ""))
