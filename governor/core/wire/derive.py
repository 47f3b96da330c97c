"""The compiled decoder's derivation: a msgspec struct for every event model (SPEC §11.1).

Rules:
    * The pydantic models in ``governor.core.events`` are the one definition of an event:
      each model's struct is derived from its own fields (types, defaults, aliases,
      constraints, nested models, unknown fields forbidden) on first use (``compiled``).
    * A field whose checks cannot be compiled (a new validator, an unknown constraint)
      makes the first use fail, naming the field: it never silently checks less.
    * A nested model with a ``mode="before"`` validator is kept raw and given to its own
      validators as written (``_AsWritten``: ``Policy``).
"""

from __future__ import annotations

import functools
import inspect
import operator
import types
from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any, Final, Literal, NamedTuple, Union, get_args, get_origin

import annotated_types
import msgspec
from pydantic import AfterValidator, BaseModel, BeforeValidator
from pydantic.fields import FieldInfo

from governor.core.event_fields import check_time_text, check_utc
from governor.core.events import EVENT_CLASSES
from governor.core.wire.checks import Convert, Doubt, pattern_check, utc_time
from governor.core.wire.forms import COMPILED, INLINE, CompiledModel, Form, OptionalForm, Value
from governor.core.wire.generate import build_function, finish_function, finishes_nothing


def _meta(constraints: list[Any], where: str) -> tuple[dict[str, Any], Convert | None]:
    """msgspec ``Meta`` arguments for pydantic constraints, and a check msgspec cannot do."""
    meta: dict[str, Any] = {}
    check: Convert | None = None
    for c in constraints:
        if isinstance(c, annotated_types.Ge | annotated_types.Gt | annotated_types.Le):
            name = type(c).__name__.lower()
            meta[name] = getattr(c, name)
        elif isinstance(c, annotated_types.MinLen | annotated_types.MaxLen):
            name = "min_length" if isinstance(c, annotated_types.MinLen) else "max_length"
            meta[name] = getattr(c, name)
        elif getattr(c, "pattern", None) is not None:
            check = pattern_check(c.pattern)
        elif getattr(c, "allow_inf_nan", None) is False:
            pass  # msgspec never decodes inf or nan from JSON
        elif isinstance(c, AfterValidator) and c.func is check_utc:
            check = utc_time
        elif isinstance(c, BeforeValidator) and c.func is check_time_text:
            pass  # a time is decoded from a string only, and every string msgspec reads as
            # a time is one it lets through
        else:
            raise TypeError(f"{where}: no compiled form of the constraint {c!r}")
    return meta, check


def _compile(hint: Any, where: str) -> Form:
    """How a pydantic annotation compiles (see ``Form``)."""
    origin = get_origin(hint)
    if origin is Annotated:
        return _compile_annotated(hint, where)
    if origin in (Union, types.UnionType):
        return _compile_optional(hint, where)
    if origin is tuple:
        return _compile_tuple(hint, where)
    if origin is dict:
        return _compile_dict(hint, where)
    if origin is Literal or hint in (str, int, float, bool):
        return Form(hint)
    if isinstance(hint, type) and issubclass(hint, BaseModel):
        return _compile_nested(hint)
    raise TypeError(f"{where}: no compiled form of {hint!r}")


def _compile_nested(model: type[BaseModel]) -> Form:
    if _reads_its_input(model):
        return Form(msgspec.Raw, _AsWritten(model))
    compiled = compiled_model(model)
    finish = None if finishes_nothing(compiled) else compiled.finish
    return Form(compiled.struct, finish, compiled.build)


def _reads_its_input(model: type[BaseModel]) -> bool:
    """Whether a ``mode="before"`` validator of the model reads its input as written
    (``Policy``'s: an omitted ``max_milestones`` is ``min(4, max_replans)``)."""
    validators = model.__pydantic_decorators__.model_validators.values()
    return any(d.info.mode == "before" for d in validators)


_decode_any = msgspec.json.decode
_convert = msgspec.convert


class _AsWritten:
    """The conversion of a nested model whose ``mode="before"`` validators read its input
    as written: its JSON, kept raw by msgspec, is decoded to plain values, the model's own
    before validators run on them in order (as pydantic runs them in JSON mode), and
    their result is converted to the model's struct (strictly, as a decode would) and
    finished and built like any nested model. Anything a step refuses is a doubt. It is
    one object per ``goal.created`` (the policy), never one per event."""

    __slots__ = ("before", "build", "finish", "struct")

    def __init__(self, model: type[BaseModel]) -> None:
        validators = model.__pydantic_decorators__.model_validators.values()
        self.before = [d.func for d in validators if d.info.mode == "before"]
        for before in self.before:
            if len(inspect.signature(before).parameters) != 1:
                raise TypeError(f"{model.__name__}: a before validator with info does not compile")
        compiled = compiled_model(model, before=True)
        self.struct, self.finish, self.build = compiled.struct, compiled.finish, compiled.build

    def __call__(self, raw: msgspec.Raw) -> Any:
        try:
            data = _decode_any(raw)
            for before in self.before:
                data = before(data)
            struct = _convert(data, self.struct)
        except (msgspec.DecodeError, msgspec.ValidationError, ValueError, AssertionError):
            raise Doubt from None
        return self.build(self.finish(struct))


def _compile_annotated(hint: Any, where: str) -> Form:
    base, *extras = get_args(hint)
    constraints = [m for e in extras for m in (e.metadata if isinstance(e, FieldInfo) else [e])]
    meta, check = _meta(constraints, where)
    if check is utc_time and base is datetime and not meta:
        return Form(str, check)
    inner = _compile(base, where)
    if (inner.finish or inner.build) and check is not None:
        raise TypeError(f"{where}: a check on a converted value does not compile")
    compiled = Annotated[inner.type, msgspec.Meta(**meta)] if meta else inner.type
    return Form(compiled, inner.finish or check, inner.build)


def _compile_optional(hint: Any, where: str) -> Form:
    options = [a for a in get_args(hint) if a is not type(None)]
    if len(options) != 1 or len(get_args(hint)) != 2:
        raise TypeError(f"{where}: only 'X | None' unions compile")
    inner = _compile(options[0], where)
    return Form(inner.type | None, _optional(inner.finish), _optional(inner.build))


def _optional(convert: Convert | None) -> Convert | None:
    return None if convert is None else OptionalForm(convert)


def _each_item(convert: Convert | None) -> Convert | None:
    if convert is None:
        return None
    return lambda value: tuple([convert(v) for v in value])


def _each_value(convert: Convert | None) -> Convert | None:
    if convert is None:
        return None
    return lambda value: {k: convert(v) for k, v in value.items()}


def _compile_tuple(hint: Any, where: str) -> Form:
    item_hint, *rest = get_args(hint)
    if rest != [Ellipsis]:
        raise TypeError(f"{where}: only tuple[X, ...] compiles")
    item = _compile(item_hint, where)
    compiled = types.GenericAlias(tuple, (item.type, ...))
    return Form(compiled, _each_item(item.finish), _each_item(item.build))


def _compile_dict(hint: Any, where: str) -> Form:
    key, item = (_compile(arg, where) for arg in get_args(hint))
    if key.finish is not None or key.build is not None:
        raise TypeError(f"{where}: dict keys with a check do not compile")
    compiled = types.GenericAlias(dict, (key.type, item.type))
    return Form(compiled, _each_value(item.finish), _each_value(item.build))


_IMMUTABLE: Final = (str, int, float, bool, tuple, type(None), frozenset)


def compiled_model(
    model: type[BaseModel], tag: str | None = None, *, before: bool = False
) -> CompiledModel:
    """``before``: the caller runs the model's ``mode="before"`` validators (``_AsWritten``)."""
    if model in COMPILED:
        return COMPILED[model]
    _refuse_unknown_validation(model, before=before)
    fields: list[tuple[str, Any, Any]] = []
    rename: dict[str, str] = {}
    values: list[Value] = []
    for name, info in model.model_fields.items():
        if name == "type" and tag is not None:
            values.append(Value(name, constant=tag))  # the union's tag, in the model's order
            continue
        where = f"{model.__name__}.{name}"
        hint = Annotated[info.annotation, *info.metadata] if info.metadata else info.annotation
        form = _compile(hint, where)
        if info.is_required():
            fields.append((name, form.type, msgspec.NODEFAULT))
            values.append(Value(name, form))
        elif isinstance(info.default, _IMMUTABLE):
            fields.append((name, form.type, info.default))
            values.append(Value(name, form))
        else:  # a model instance as default: decoded as UNSET, then the model's own default
            fields.append((name, form.type | msgspec.UnsetType, msgspec.UNSET))
            values.append(Value(name, form, default=info.default))
        if info.alias and info.alias != name:
            rename[name] = info.alias
    struct = msgspec.defstruct(
        f"Compiled{model.__name__}",
        fields,
        kw_only=True,
        forbid_unknown_fields=True,
        rename=rename or None,
        tag_field="type" if tag else None,
        tag=tag,
        namespace={"type": tag} if tag else None,  # read like the event: ``struct.type``
        # not tracked by the garbage collector (cheaper to make, one per event): an event
        # is a tree of values, never part of a reference cycle
        gc=False,
    )
    compiled = CompiledModel(struct, values, _after_validators(model))
    compiled.finish = finish_function(compiled)
    compiled.build = build_function(model, values)
    COMPILED[model] = compiled
    INLINE[compiled.finish] = compiled
    return compiled


def _after_validators(model: type[BaseModel]) -> list[Callable[[Any], Any]]:
    validators = model.__pydantic_decorators__.model_validators.values()
    return [d.func for d in validators if d.info.mode == "after"]


def _refuse_unknown_validation(model: type[BaseModel], *, before: bool = False) -> None:
    decorators = model.__pydantic_decorators__
    modes = {d.info.mode for d in decorators.model_validators.values()}
    known = {"after", "before"} if before else {"after"}
    if decorators.field_validators or decorators.root_validators or modes - known:
        raise TypeError(
            f"{model.__name__}: validators other than model 'after' ones do not compile"
        )
    if model.__private_attributes__ or model.__pydantic_post_init__ is not None:
        raise TypeError(f"{model.__name__}: private attributes or post-init do not compile")


class Compiled(NamedTuple):
    """The compiled decoder of every event: one JSON decoder over the tagged union of the
    event structs, and for each struct the function that finishes it and the one that
    builds its pydantic event."""

    decoder: msgspec.json.Decoder[Any]
    finishers: dict[type[msgspec.Struct], Convert]
    builders: dict[type[msgspec.Struct], Convert]


@functools.cache
def compiled() -> Compiled:
    """The compiled decoder, derived on first use (so commands that read no history do
    not pay for deriving it when they start)."""
    models = [compiled_model(cls, tag) for tag, cls in EVENT_CLASSES.items()]
    union = functools.reduce(operator.or_, (m.struct for m in models))  # StructA | StructB | …
    return Compiled(
        msgspec.json.Decoder(union),
        {m.struct: m.finish for m in models},
        {m.struct: m.build for m in models},
    )
