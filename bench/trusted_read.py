"""Experiment: a *trusted* read path for the store's own rows, measured against validation.

Run: ``.venv/bin/python -m bench.trusted_read [--events 100000] [--repeat 5]``

SPEC §3 allows the store to read its own rows without validating them. This is the
best such path we found: ``orjson.loads`` plus a constructor derived from the event
models by introspection (fields, defaults, aliases, UTC times, nested models, tuples),
which builds the same frozen pydantic objects without running pydantic's validators.
It is kept here, not in ``governor/store``, because it did not pay for itself (the
figures and the reasoning are in ``docs/store.md``):

    stream    decode each stored body and drop it (a fold's access pattern)
    list      decode every body into one list (``list(store.load(goal))``)

Each pass first checks that the trusted events equal the validated ones, encode to the
same bytes, and carry the same ``model_fields_set``.
"""

from __future__ import annotations

import argparse
import time
import types
import typing
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Annotated, Any, Final, Literal, Union, get_args, get_origin

import orjson
from pydantic import BaseModel

from bench.store import history
from governor.core.events import EVENT_CLASSES, Event
from governor.core.wire.codec import decode, encode

Convert = Callable[[Any], Any]


class _Untrusted(Exception):
    """The trusted path has a doubt; the validator decides."""


def _utc_time(text: str) -> datetime:
    value = datetime.fromisoformat(text)
    if value.tzinfo is not UTC:
        raise _Untrusted
    return value


def _optional(inner: Convert) -> Convert:
    return lambda value: None if value is None else inner(value)


def _tuple_of(inner: Convert | None) -> Convert:
    if inner is None:
        return tuple
    return lambda value: tuple(inner(item) for item in value)


def _dict_of(inner: Convert) -> Convert:
    return lambda value: {key: inner(item) for key, item in value.items()}


def _converter(hint: Any) -> Convert | None:  # noqa: PLR0911 - one case per kind of annotation
    """How to turn a JSON value into the field's Python value (None: it already is)."""
    origin = get_origin(hint)
    if origin is Annotated:
        return _converter(get_args(hint)[0])
    if origin in (Union, types.UnionType):
        options = [arg for arg in get_args(hint) if arg is not type(None)]
        if len(options) != 1:
            raise TypeError(f"no trusted reading of {hint}")
        inner = _converter(options[0])
        return None if inner is None else _optional(inner)
    if origin is tuple:
        return _tuple_of(_converter(get_args(hint)[0]))
    if origin is dict:
        inner = _converter(get_args(hint)[1])
        return None if inner is None else _dict_of(inner)
    if origin is Literal or hint in (str, int, bool):
        return None
    if hint is float:
        return float
    if hint is datetime:
        return _utc_time
    if isinstance(hint, type) and issubclass(hint, BaseModel):
        return _builder(hint)
    raise TypeError(f"no trusted reading of {hint}")


def _builder(cls: type[BaseModel]) -> Convert:
    """A constructor for ``cls`` from its own encoding, without validation."""
    if cls.__private_attributes__ or cls.__pydantic_post_init__ is not None:
        raise TypeError(f"no trusted reading of {cls.__name__}")
    hints = typing.get_type_hints(cls, include_extras=True)
    template: dict[str, Any] = {}
    required: set[str] = set()
    aliases: dict[str, str] = {}
    converters: list[tuple[str, Convert]] = []
    for name, info in cls.model_fields.items():
        template[name] = None if info.is_required() else info.get_default(call_default_factory=True)
        if isinstance(template[name], dict | list | set):
            raise TypeError(f"no trusted reading of {cls.__name__}.{name} (mutable default)")
        key = info.alias or name
        if info.is_required():
            required.add(key)
        if key != name:
            aliases[key] = name
        convert = _converter(hints[name])
        if convert is not None:
            converters.append((name, convert))
    known = frozenset(aliases) | frozenset(template)
    return _make_build(
        cls,
        template=template,
        required=frozenset(required),
        known=known,
        aliases=aliases,
        converters=tuple(converters),
    )


def _make_build(
    cls: type[BaseModel],
    *,
    template: dict[str, Any],
    required: frozenset[str],
    known: frozenset[str],
    aliases: dict[str, str],
    converters: tuple[tuple[str, Convert], ...],
) -> Convert:
    new, put = object.__new__, object.__setattr__

    def build(data: Any) -> BaseModel:
        if type(data) is not dict or not required <= data.keys() <= known:
            raise _Untrusted
        if aliases:
            for alias, name in aliases.items():
                if alias in data:
                    data[name] = data.pop(alias)
        values = template.copy()  # keeps the field order, which the encoder writes in
        values.update(data)
        for name, convert in converters:
            if name in data:
                values[name] = convert(values[name])
        model = new(cls)
        put(model, "__dict__", values)
        put(model, "__pydantic_fields_set__", set(data))
        put(model, "__pydantic_extra__", None)
        put(model, "__pydantic_private__", None)
        return model

    return build


def _event_builders() -> dict[str, Convert]:
    builders = {}
    for event_type, cls in EVENT_CLASSES.items():
        try:
            builders[event_type] = _builder(cls)
        except TypeError:
            continue  # this type is always validated; the trusted path never guesses
    return builders


TRUSTED_BUILDERS: Final[dict[str, Convert]] = _event_builders()
"""Event type -> trusted constructor; a type missing here is always validated."""


def _trusted(body: bytes | str) -> Event | None:
    """The event, or None when the trusted path has a doubt (then validate)."""
    try:
        data = orjson.loads(body)
        event: Event = TRUSTED_BUILDERS[data["type"]](data)
    except (_Untrusted, orjson.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError):
        return None
    return event


def check_equal(bodies: list[bytes]) -> None:
    """Trusted events equal validated ones, field sets included, and re-encode the same."""
    for body in bodies:
        validated, trusted = decode(body), _trusted(body)
        assert trusted is not None, body
        assert trusted == validated, body
        assert trusted.model_fields_set == validated.model_fields_set, body
        assert encode(trusted) == body, body


def rate(fn: Callable[[list[bytes]], object], bodies: list[bytes], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn(bodies)
        best = min(best, time.perf_counter() - start)
    return len(bodies) / best


def _stream(read: Callable[[bytes], object]) -> Callable[[list[bytes]], object]:
    def run(bodies: list[bytes]) -> None:
        for body in bodies:
            read(body)

    return run


def _listed(read: Callable[[bytes], object]) -> Callable[[list[bytes]], object]:
    return lambda bodies: [read(body) for body in bodies]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    bodies = [encode(event) for event in history(args.events)]
    check_equal(bodies)
    passes = {
        "bare orjson (stream)": _stream(orjson.loads),
        "validated (stream)": _stream(decode),
        "trusted (stream)": _stream(_trusted),
        "validated (list)": _listed(decode),
        "trusted (list)": _listed(_trusted),
    }
    figures = {name: rate(fn, bodies, args.repeat) for name, fn in passes.items()}
    print(f"{len(bodies):,} events, trusted == validated for every one")
    for name, value in figures.items():
        print(f"{name:24s} {value:>12,.0f} events/s")
    for mode in ("stream", "list"):
        ratio = figures[f"trusted ({mode})"] / figures[f"validated ({mode})"]
        print(f"trusted / validated ({mode}): {ratio:.2f}x")


if __name__ == "__main__":
    main()
