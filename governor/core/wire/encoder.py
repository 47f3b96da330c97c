"""The compiled event encoder: the codec's bytes of an event without pydantic's serializer.

Rules (SPEC §11.1):
    * The pydantic models in ``governor.core.events`` are the one definition of an event:
      each model's encoder is *derived* from its own fields on first use (``encoder_for``),
      as the compiled decoder's structs are (``governor.core.wire.derive``), never written
      by hand.
    * It writes exactly pydantic's ``dump_json(by_alias=True, exclude_none=True)`` bytes:
      the fields in the model's order under their aliases, a field whose value is None
      left out (at any depth of nested models; a None *inside* a tuple or a dict stays,
      as pydantic keeps it), nested models as objects, tuples as arrays, times as
      ``YYYY-MM-DDTHH:MM:SS[.ffffff]Z``. Each model's function builds the plain values
      (one dict per model, in field order); orjson writes them. orjson, not msgspec:
      msgspec writes ``1e16`` where pydantic (and orjson) write ``1e+16``.
      ``tests/core/test_encoder.py`` holds the two equal for every event class.
    * A field it cannot derive (a serializer of its own, an excluded or computed field, a
      type it has no form of) makes the first use fail, naming the field: it never
      silently writes something else. A value orjson refuses (an int beyond 64 bits, a
      lone surrogate) is left to pydantic by the caller (``codec.encode``).
    * Pure like the rest of the core: no I/O, no clock.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel

from governor.core.events import EVENT_CLASSES
from governor.core.wire.generate import generated, indent

Encoder = Callable[[Any], dict[str, Any]]
"""A model's encoder: an instance to the plain values orjson writes as pydantic would."""

_PLAIN: tuple[Any, ...] = (str, int, float, bool, datetime)
"""Types orjson writes as pydantic does (a time: with ``OPT_UTC_Z``; every event's time
is UTC, which the models check)."""

_MADE: dict[type[BaseModel], Encoder] = {}


def encoder_of(model: type[BaseModel]) -> Encoder:
    """The generated encoder of one model (and of the models nested in it), made once."""
    if model in _MADE:
        return _MADE[model]
    _refuse_own_serialization(model)
    scope: dict[str, Any] = {}
    lines: list[str] = []
    shown: list[str] = []  # the leading fields never left out: one dict display
    for n, (name, info) in enumerate(model.model_fields.items()):
        where = f"{model.__name__}.{name}"
        if info.exclude or any("Serializer" in type(m).__name__ for m in info.metadata):
            raise TypeError(f"{where}: a field serialized its own way does not compile")
        key = info.serialization_alias or info.alias or name
        hint = Annotated[info.annotation, *info.metadata] if info.metadata else info.annotation
        value = _expression(hint, f"v{n}", scope, where, 0)
        maybe_none = _admits_none(hint) or info.default is None
        if not maybe_none and not lines:
            shown.append(
                f"{key!r}: {_expression(hint, f'e.{name}', scope, where, 0) or f'e.{name}'}"
            )
            continue
        if not lines:
            lines.append(f"d = {{{', '.join(shown)}}}")
        if maybe_none:
            lines += [f"if (v{n} := e.{name}) is not None:", f"    d[{key!r}] = {value or f'v{n}'}"]
        else:
            lines += [f"v{n} = e.{name}", f"d[{key!r}] = {value or f'v{n}'}"]
    if not lines:
        lines.append(f"d = {{{', '.join(shown)}}}")
    made: Encoder = generated(f"encode_{model.__name__}", indent([*lines, "return d"]), scope, "e")
    _MADE[model] = made
    return made


def _refuse_own_serialization(model: type[BaseModel]) -> None:
    decorators = model.__pydantic_decorators__
    if decorators.field_serializers or decorators.model_serializers:
        raise TypeError(f"{model.__name__}: a serializer of its own does not compile")
    if model.model_computed_fields or model.model_config.get("extra") == "allow":
        raise TypeError(f"{model.__name__}: computed or extra fields do not compile")


def _admits_none(hint: Any) -> bool:
    origin = get_origin(hint)
    if origin is Annotated:
        return _admits_none(get_args(hint)[0])
    return origin in (Union, types.UnionType) and type(None) in get_args(hint)


def _expression(hint: Any, var: str, scope: dict[str, Any], where: str, depth: int) -> str | None:
    """The expression of ``var``'s plain value (``None``: the value as it is), with the
    nested encoders it calls added to ``scope``."""
    origin = get_origin(hint)
    if origin is Annotated:
        return _expression(get_args(hint)[0], var, scope, where, depth)
    if origin in (Union, types.UnionType):
        options = [a for a in get_args(hint) if a is not type(None)]
        if len(options) != 1:
            raise TypeError(f"{where}: only 'X | None' unions compile")
        inner = _expression(options[0], var, scope, where, depth)
        return None if inner is None else f"(None if {var} is None else {inner})"
    if origin is tuple:
        item, *rest = get_args(hint)
        if rest != [Ellipsis]:
            raise TypeError(f"{where}: only tuple[X, ...] compiles")
        inner = _expression(item, f"x{depth}", scope, where, depth + 1)
        return None if inner is None else f"[{inner} for x{depth} in {var}]"
    if origin is dict:
        key, item = get_args(hint)
        if _expression(key, "k", scope, where, depth) is not None:
            raise TypeError(f"{where}: only plain dict keys compile")
        inner = _expression(item, f"x{depth}", scope, where, depth + 1)
        return (
            None
            if inner is None
            else f"{{k{depth}: {inner} for k{depth}, x{depth} in {var}.items()}}"
        )
    if origin is Literal or hint in _PLAIN:
        return None
    if isinstance(hint, type) and issubclass(hint, BaseModel):
        name = f"encode_{hint.__name__}"
        scope[name] = encoder_of(hint)
        return f"{name}({var})"
    raise TypeError(f"{where}: no compiled encoding of {hint!r}")


_EVENT_CLASSES: frozenset[type[BaseModel]] = frozenset(EVENT_CLASSES.values())


def encoder_for(cls: type[Any]) -> Encoder | None:
    """The encoder of an event class, derived the first time an event of it is written (a
    command derives only the encoders of the types it writes); None for any other class."""
    made = _MADE.get(cls)
    if made is None and cls in _EVENT_CLASSES:
        made = encoder_of(cls)
    return made


def encoders() -> dict[type[BaseModel], Encoder]:
    """Every event class's encoder (deriving those not derived yet)."""
    return {cls: encoder_of(cls) for cls in EVENT_CLASSES.values()}
