"""Hypothesis strategies that damage histories and goal files the way people and disks do."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

SPECIAL_NUMBERS: Any = st.sampled_from(
    [
        0,
        -1,
        1,
        2**31,
        2**63 - 1,
        2**63,
        2**64 + 1,
        -(2**63) - 1,
        10**30,
        1e308,
        -1e308,
        5e-324,
        0.5,
        -0.0,
        float("inf"),
        float("-inf"),
        float("nan"),
    ]
)
HOSTILE_TEXT: Any = st.sampled_from(
    [
        "",
        " ",
        "\x00",
        "\x1b[2J\x1b]0;t\x07",
        "\udfff",
        "\u202e",
        "9999-12-31T23:59:59Z",
        "0001-01-01T00:00:00Z",
        "2026-13-45T99:99:99Z",
        "goal.created",
        "plan.completed",
        "attempt.started",
        "x" * 3000,
        "../../etc/passwd",
        "${HOME}",
        "1e400",
        "Infinity",
        "NaN",
    ]
)
LEAVES: Any = st.one_of(
    st.none(),
    st.booleans(),
    SPECIAL_NUMBERS,
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    HOSTILE_TEXT,
    st.text(max_size=40),
)
VALUES: Any = st.recursive(
    LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.text(max_size=12), inner, max_size=4),
    ),
    max_leaves=12,
)


def deep(depth: int) -> Any:
    """A list nested ``depth`` levels deep (a parser's recursion limit)."""
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


def _paths(value: Any, limit: int = 30) -> list[tuple[Any, ...]]:
    """Every node's path, at most ``limit`` levels down (walked without recursion)."""
    found: list[tuple[Any, ...]] = []
    stack: list[tuple[Any, tuple[Any, ...]]] = [(value, ())]
    while stack:
        node, prefix = stack.pop()
        found.append(prefix)
        if len(prefix) >= limit:
            continue
        if isinstance(node, dict):
            stack.extend((item, (*prefix, key)) for key, item in node.items())
        elif isinstance(node, list):
            stack.extend((item, (*prefix, index)) for index, item in enumerate(node))
    return found


def _set(root: Any, path: tuple[Any, ...], value: Any, *, delete: bool = False) -> Any:
    if not path:
        return value
    parent = root
    for key in path[:-1]:
        parent = parent[key]
    if delete:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return root


def loads(line: bytes) -> Any:
    """The JSON of a line, or None when it is not JSON a test can walk."""
    try:
        return json.loads(line)
    except (ValueError, RecursionError):
        return None


def dumps(value: Any) -> bytes:
    """JSON as a careless writer makes it: NaN and Infinity allowed, surrogates kept."""
    try:
        return json.dumps(value, allow_nan=True).encode("utf-8", "surrogatepass")
    except (ValueError, RecursionError):
        return b'{"deep": ' + b"[" * 5000 + b"]" * 5000 + b"}"


@st.composite
def mutated_value(draw: st.DrawFn, value: Any) -> Any:
    """``value`` (parsed JSON) with one node replaced, deleted, or added to."""
    paths = _paths(value)
    path = draw(st.sampled_from(paths))
    how = draw(st.sampled_from(["replace", "replace", "delete", "add", "deep"]))
    if how == "delete" and path:
        return _set(value, path, None, delete=True)
    if how == "add":
        parent = value
        for key in path:
            parent = parent[key]
        if isinstance(parent, dict):
            parent[draw(st.sampled_from(["extra", "seq", "type", "at", "policy", "x"]))] = draw(
                VALUES
            )
            return value
    if how == "deep":
        return _set(value, path, deep(draw(st.sampled_from([20, 200, 2000, 100_000]))))
    return _set(value, path, draw(VALUES))


@st.composite
def mutated_lines(draw: st.DrawFn, lines: list[bytes]) -> bytes:
    """A history (JSON Lines) damaged by one to three edits of its lines or bytes."""
    lines = list(lines)
    for _ in range(draw(st.integers(1, 3))):
        how = draw(
            st.sampled_from(
                [
                    "field",
                    "field",
                    "field",
                    "drop",
                    "duplicate",
                    "swap",
                    "reverse",
                    "tear",
                    "flip",
                    "insert",
                    "seq",
                    "type",
                    "at",
                    "blank",
                ]
            )
        )
        if not lines:
            lines = [b"{}"]
        i = draw(st.integers(0, len(lines) - 1))
        j = draw(st.integers(0, len(lines) - 1))
        if how == "field":
            parsed = loads(lines[i])
            if parsed is None:
                continue
            lines[i] = dumps(draw(mutated_value(parsed)))
        elif how == "drop":
            del lines[i]
        elif how == "duplicate":
            lines.insert(j, lines[i])
        elif how == "swap":
            lines[i], lines[j] = lines[j], lines[i]
        elif how == "reverse":
            lines.reverse()
        elif how == "tear":
            lines[i] = lines[i][: draw(st.integers(0, max(len(lines[i]) - 1, 0)))]
        elif how == "flip":
            line = bytearray(lines[i])
            if line:
                k = draw(st.integers(0, len(line) - 1))
                line[k] ^= 1 << draw(st.integers(0, 7))
            lines[i] = bytes(line)
        elif how == "insert":
            lines.insert(i, draw(st.one_of(st.binary(max_size=60), VALUES.map(dumps))))
        elif how in ("seq", "type", "at"):
            parsed = loads(lines[i])
            if isinstance(parsed, dict):
                parsed[how] = draw(
                    {
                        "seq": st.one_of(SPECIAL_NUMBERS, st.integers(-3, 30)),
                        "type": st.one_of(HOSTILE_TEXT, VALUES),
                        "at": st.one_of(HOSTILE_TEXT, st.datetimes().map(str)),
                    }[how]
                )
                lines[i] = dumps(parsed)
        else:
            lines.insert(i, b"")
    torn = draw(st.booleans()) and draw(st.booleans())
    return b"\n".join(lines) + (b"" if torn else b"\n")
