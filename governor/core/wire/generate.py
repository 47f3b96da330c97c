"""The compiled decoder's generated code: each model's finish and build functions.

Rules:
    * Generated once per model, as ``dataclasses`` generates ``__init__``: each check and
      conversion inline (``finish_body``), then the model's own ``mode="after"``
      validators; the build is one dict display in the model's field order.
    * Only our own identifiers reach the generated source, never outside text.
    * The line and chunk loops of ``governor.core.wire.decoder`` inline the same bodies.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Final

import msgspec
from pydantic import BaseModel

from governor.core.wire.ahead import made
from governor.core.wire.checks import (
    MAX_TIME_LENGTH,
    SEEN_LIMIT,
    Convert,
    Doubt,
    PatternCheck,
    doubt,
    to_datetime,
    utc_time,
)
from governor.core.wire.forms import INLINE, CompiledModel, OptionalForm, Value


def generated(
    name: str, lines: list[str], scope: dict[str, Any], params: str = "s"
) -> Callable[..., Any]:
    """The function ``name`` of ``lines`` over ``scope``: written ahead when its source is
    (``governor.core.wire.ahead``), else compiled from its source now."""
    source = "\n".join([f"def {name}({params}):", *lines]) + "\n"
    ahead = made(name, source, scope)
    if ahead is not None:
        return ahead
    exec(source, scope)  # noqa: S102 - our own identifiers, no outside text
    function: Callable[..., Any] = scope[name]
    return function


def indent(lines: list[str], by: int = 4) -> list[str]:
    return [" " * by + line for line in lines]


def finish_function(compiled: CompiledModel) -> Convert:
    """The function that finishes a decoded struct of a model in place and returns it.

    Generated once per model, as ``dataclasses`` generates ``__init__``: each check and
    conversion inline, then the model's own ``mode="after"`` validators run on the struct
    (they read attributes, which the finished struct shares with the model). After it,
    every attribute holds the value the model would hold, nested structs finished alike.
    """
    scope: dict[str, Any] = {}
    lines = indent([*finish_body(compiled, "s", "", scope), "return s"])
    name = compiled.struct.__name__.removeprefix("Compiled")
    return generated(f"finish_{name}", lines, scope)


def finish_body(
    compiled: CompiledModel,
    var: str,
    prefix: str,
    scope: dict[str, Any],
    skip: frozenset[str] = frozenset(),
) -> list[str]:
    """The statements that finish the struct named ``var`` in place (none when it is taken
    as decoded), unindented, with the names they use added to ``scope``. Every name they
    make carries ``prefix`` (but the shared ones: ``UNSET``, ``Doubt``, ``LIMIT``, the time
    converters), so that the bodies of several models, or of a nested one, can share a
    function. The fields named in ``skip`` are left to the caller (a chunk's, in bulk)."""
    scope.update(UNSET=msgspec.UNSET, Doubt=Doubt)
    lines: list[str] = []
    for n, value in enumerate(compiled.values):
        if value.name in skip:
            continue
        lines += _finish_lines(f"{prefix}{n}", value, var, scope)
    for n, validator in enumerate(compiled.validators):
        scope[f"validator{prefix}{n}"] = validator
        lines += [
            "try:",
            f"    validator{prefix}{n}({var})",
            "except ValueError:",
            "    raise Doubt from None",
        ]
    return lines


def _finish_lines(n: str, value: Value, var: str, scope: dict[str, Any]) -> list[str]:
    """The statements that finish one field (none for a value taken as decoded)."""
    finish, attr = value.form.finish, f"{var}.{value.name}"
    if value.constant is not None or (finish is None and value.default is None):
        return []
    nested = INLINE.get(finish.convert if isinstance(finish, OptionalForm) else finish)  # type: ignore[arg-type]
    if nested is not None:  # a nested struct, finished inline (in place)
        body = finish_body(nested, f"v{n}", f"{n}_", scope)
        if not body and value.default is None:
            return []
        if isinstance(finish, OptionalForm):
            body = [f"if (v{n} := {attr}) is not None:", *indent(body or ["pass"])]
        else:
            body = [f"v{n} = {attr}", *body]
    elif isinstance(finish, PatternCheck):  # ``PatternCheck.__call__``, inline
        scope.update({f"m{n}": finish.fullmatch, f"seen{n}": finish.seen, "LIMIT": SEEN_LIMIT})
        body = [
            f"if (v{n} := {attr}) not in seen{n}:",
            f"    if m{n}(v{n}) is None:",
            "        raise Doubt",
            f"    if len(seen{n}) >= LIMIT:",
            f"        seen{n}.clear()",
            f"    seen{n}.add(v{n})",
        ]
    elif isinstance(finish, OptionalForm):
        scope[f"c{n}"] = finish.convert
        body = [f"if (v{n} := {attr}) is not None:", f"    {attr} = c{n}(v{n})"]
    elif finish is utc_time:  # inline: a time on every event, a call saved on each
        scope.update(
            to_datetime=to_datetime,
            from_iso=datetime.fromisoformat,
            datetime=datetime,
            UTC=UTC,
            doubt=doubt,
        )
        # the shapes the codec writes (``YYYY-MM-DDTHH:MM:SS[.ffffff]Z``, every separator
        # in its place) are read by ``fromisoformat``, which takes nothing else of that
        # shape but ASCII digits and gives the same value; any other time by msgspec
        body = [
            f"if ((k{n} := len(v{n} := {attr})) == 20 and v{n}[4:20:3] == '--T::Z') or ("
            f"k{n} == 27 and v{n}[4:20:3] == '--T::.' and v{n}[26] == 'Z'):",
            "    try:",
            f"        {attr} = from_iso(v{n})",
            "    except ValueError:",
            "        raise Doubt from None",
            "else:",
            f"    {attr} = (t{n} if k{n} <= {MAX_TIME_LENGTH} "
            f"and (t{n} := to_datetime(v{n}, datetime)).tzinfo is UTC else doubt())",
        ]
    elif finish is not None:
        scope[f"c{n}"] = finish
        body = [f"{attr} = c{n}({attr})"]
    else:
        body = ["pass"]
    if value.default is not None:
        scope[f"d{n}"] = value.default
        body = [f"if {attr} is UNSET:", f"    {attr} = d{n}", "else:", *indent(body)]
    return body


def build_function(model: type[BaseModel], values: list[Value]) -> Convert:
    """The function that builds ``model`` from its finished struct.

    Generated once per model: one dict display in the model's field order (pydantic
    encodes a model's fields in its ``__dict__`` order), then the frozen instance set up
    as pydantic sets it up. No loop and no extra call per field and event; nothing is
    checked again (the struct was finished).
    """
    scope: dict[str, Any] = {
        "new": object.__new__,
        "model": model,
        # One set shared by every instance: the models are frozen, so nothing adds to it in
        # place (``model_copy`` copies it first). pydantic's own set holds only the keys the
        # line had; no code of governor reads it (nothing dumps with ``exclude_unset``).
        "fields_set": set(model.model_fields),
        **_SLOT_SETTERS,
    }
    items = [_value_expression(n, value, scope) for n, value in enumerate(values)]
    lines = [
        f"    values = {{{', '.join(items)}}}",
        "    instance = new(model)",
        "    set_dict(instance, values)",
        "    set_fields_set(instance, fields_set)",
        "    set_extra(instance, None)",
        "    set_private(instance, None)",
        "    return instance",
    ]
    return generated(f"build_{model.__name__}", lines, scope)


def _value_expression(n: int, value: Value, scope: dict[str, Any]) -> str:
    """``'name': <expression>`` for one field of the generated dict display."""
    if value.constant is not None:
        scope[f"k{n}"] = value.constant
        return f"{value.name!r}: k{n}"
    build, expr = value.form.build, f"s.{value.name}"
    if isinstance(build, OptionalForm):
        scope[f"b{n}"] = build.convert
        expr = f"(None if (v{n} := {expr}) is None else b{n}(v{n}))"
    elif build is not None:
        scope[f"b{n}"] = build
        expr = f"b{n}({expr})"
    if build is not None and value.default is not None:  # the default is a model already
        scope[f"d{n}"] = value.default
        expr = f"(d{n} if s.{value.name} is d{n} else {expr})"
    return f"{value.name!r}: {expr}"


_SLOT_SETTERS: Final = {
    # BaseModel's slots, set through their descriptors (cheaper than object.__setattr__)
    "set_dict": BaseModel.__dict__["__dict__"].__set__,
    "set_fields_set": BaseModel.__dict__["__pydantic_fields_set__"].__set__,
    "set_extra": BaseModel.__dict__["__pydantic_extra__"].__set__,
    "set_private": BaseModel.__dict__["__pydantic_private__"].__set__,
}


def finishes_nothing(compiled: CompiledModel) -> bool:
    """Whether a decoded struct of the model is finished as it is (no check, no conversion)."""
    return not finish_body(compiled, "s", "", {})
