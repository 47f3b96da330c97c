"""The compiled event decoder: msgspec structs derived from the event models, for hot reads.

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
import inspect
import itertools
import operator
import re
import types
import typing
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Annotated, Any, Final, Literal, NamedTuple, Union, get_args, get_origin

import annotated_types
import msgspec
from pydantic import AfterValidator, BaseModel, BeforeValidator
from pydantic.fields import FieldInfo

from governor.core.events import EVENT_CLASSES, Event, check_time_text, check_utc

Convert = Callable[[Any], Any]
"""Turns a decoded value into the model's value, or raises ``_Doubt``."""


class _Doubt(Exception):
    """The compiled path is not sure; pydantic decides."""


_MAX_TIME_LENGTH: Final = 27
"""``YYYY-MM-DDTHH:MM:SS.ffffffZ``: longer time strings (more than six fractional digits,
which msgspec rounds and pydantic truncates) go to pydantic."""
_SEEN_LIMIT: Final = 100_000

_to_datetime = msgspec.convert


def _doubt() -> Any:
    raise _Doubt


def _utc_time(value: str) -> datetime:
    """A short RFC 3339 time in UTC, else a doubt (generated code inlines the same test)."""
    if len(value) > _MAX_TIME_LENGTH:
        raise _Doubt
    try:
        parsed = _to_datetime(value, datetime)
    except msgspec.ValidationError:
        raise _Doubt from None
    if parsed.tzinfo is not UTC:  # msgspec gives the UTC singleton for every zero offset
        raise _Doubt
    return parsed


class _PatternCheck:
    """A check of a ``pattern`` that remembers what it let through (ids repeat a lot).

    Generated code tests ``value in check.seen`` inline and calls the check only for a
    string it has not seen.
    """

    __slots__ = ("fullmatch", "seen")

    def __init__(self, pattern: str) -> None:
        # pydantic matches patterns with Rust's regex, where ``$`` is the end of the text;
        # ``fullmatch`` without the anchors is the same (Python's ``$`` also takes a "\n").
        self.fullmatch = re.compile(pattern.removeprefix("^").removesuffix("$")).fullmatch
        self.seen: set[str] = set()

    def __call__(self, value: str) -> str:
        if value not in self.seen:
            if self.fullmatch(value) is None:
                raise _Doubt
            if len(self.seen) >= _SEEN_LIMIT:
                self.seen.clear()
            self.seen.add(value)
        return value


_PATTERN_CHECKS: dict[str, _PatternCheck] = {}


def _pattern_check(pattern: str) -> _PatternCheck:
    """One check per pattern, shared by every field that has it: a run id seen on
    ``attempt.started`` is not checked again on its ``attempt.finished``."""
    if pattern not in _PATTERN_CHECKS:
        _PATTERN_CHECKS[pattern] = _PatternCheck(pattern)
    return _PATTERN_CHECKS[pattern]


# --- deriving a msgspec type (and what to do after decoding) from a pydantic annotation ---


class _Form(NamedTuple):
    """How one annotation compiles.

    ``type`` is what msgspec decodes; ``finish`` turns a decoded value into the event's
    value in place of it (checks, conversions, nested structs finished; ``None``: the
    value as decoded); ``build`` turns a finished value into the model's (nested structs
    into nested models; ``None``: the value as it is).
    """

    type: Any
    finish: Convert | None = None
    build: Convert | None = None


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
            check = _pattern_check(c.pattern)
        elif getattr(c, "allow_inf_nan", None) is False:
            pass  # msgspec never decodes inf or nan from JSON
        elif isinstance(c, AfterValidator) and c.func is check_utc:
            check = _utc_time
        elif isinstance(c, BeforeValidator) and c.func is check_time_text:
            pass  # a time is decoded from a string only, and every string msgspec reads as
            # a time is one it lets through
        else:
            raise TypeError(f"{where}: no compiled form of the constraint {c!r}")
    return meta, check


def _compile(hint: Any, where: str) -> _Form:
    """How a pydantic annotation compiles (see ``_Form``)."""
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
        return _Form(hint)
    if isinstance(hint, type) and issubclass(hint, BaseModel):
        return _compile_nested(hint)
    raise TypeError(f"{where}: no compiled form of {hint!r}")


def _compile_nested(model: type[BaseModel]) -> _Form:
    if _reads_its_input(model):
        return _Form(msgspec.Raw, _AsWritten(model))
    compiled = _compiled_model(model)
    finish = None if compiled.finishes_nothing else compiled.finish
    return _Form(compiled.struct, finish, compiled.build)


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
        compiled = _compiled_model(model, before=True)
        self.struct, self.finish, self.build = compiled.struct, compiled.finish, compiled.build

    def __call__(self, raw: msgspec.Raw) -> Any:
        try:
            data = _decode_any(raw)
            for before in self.before:
                data = before(data)
            struct = _convert(data, self.struct)
        except (msgspec.DecodeError, msgspec.ValidationError, ValueError, AssertionError):
            raise _Doubt from None
        return self.build(self.finish(struct))


def _compile_annotated(hint: Any, where: str) -> _Form:
    base, *extras = get_args(hint)
    constraints = [m for e in extras for m in (e.metadata if isinstance(e, FieldInfo) else [e])]
    meta, check = _meta(constraints, where)
    if check is _utc_time and base is datetime and not meta:
        return _Form(str, check)
    inner = _compile(base, where)
    if (inner.finish or inner.build) and check is not None:
        raise TypeError(f"{where}: a check on a converted value does not compile")
    compiled = Annotated[inner.type, msgspec.Meta(**meta)] if meta else inner.type
    return _Form(compiled, inner.finish or check, inner.build)


def _compile_optional(hint: Any, where: str) -> _Form:
    options = [a for a in get_args(hint) if a is not type(None)]
    if len(options) != 1 or len(get_args(hint)) != 2:
        raise TypeError(f"{where}: only 'X | None' unions compile")
    inner = _compile(options[0], where)
    return _Form(inner.type | None, _optional(inner.finish), _optional(inner.build))


class _Optional:
    """The conversion of ``X | None``: ``None`` stays, anything else is converted.

    A class, not a closure, so that generated code can inline the ``None`` test.
    """

    __slots__ = ("convert",)

    def __init__(self, convert: Convert) -> None:
        self.convert = convert

    def __call__(self, value: Any) -> Any:
        return None if value is None else self.convert(value)


def _optional(convert: Convert | None) -> Convert | None:
    return None if convert is None else _Optional(convert)


def _each_item(convert: Convert | None) -> Convert | None:
    if convert is None:
        return None
    return lambda value: tuple([convert(v) for v in value])


def _each_value(convert: Convert | None) -> Convert | None:
    if convert is None:
        return None
    return lambda value: {k: convert(v) for k, v in value.items()}


def _compile_tuple(hint: Any, where: str) -> _Form:
    item_hint, *rest = get_args(hint)
    if rest != [Ellipsis]:
        raise TypeError(f"{where}: only tuple[X, ...] compiles")
    item = _compile(item_hint, where)
    compiled = types.GenericAlias(tuple, (item.type, ...))
    return _Form(compiled, _each_item(item.finish), _each_item(item.build))


def _compile_dict(hint: Any, where: str) -> _Form:
    key, item = (_compile(arg, where) for arg in get_args(hint))
    if key.finish is not None or key.build is not None:
        raise TypeError(f"{where}: dict keys with a check do not compile")
    compiled = types.GenericAlias(dict, (key.type, item.type))
    return _Form(compiled, _each_value(item.finish), _each_value(item.build))


class _Compiled:
    """One model's struct, the function that finishes a decoded struct in place (its
    values become the event's), and the one that turns a finished struct into the model.

    ``values`` and ``validators`` are what the finish function is generated from: a
    caller that generates code of its own inlines the same statements (``_finish_body``).
    """

    __slots__ = ("build", "finish", "struct", "validators", "values")

    def __init__(
        self,
        model: type[BaseModel],
        struct: type[msgspec.Struct],
        values: list[_Value],
        validators: list[Callable[[Any], Any]],
    ) -> None:
        self.struct, self.values, self.validators = struct, values, validators
        self.finish = _finish_function(self)
        self.build = _build_function(model, values)

    @property
    def finishes_nothing(self) -> bool:
        """Whether a decoded struct is finished as it is (no check, no conversion)."""
        return not _finish_body(self, "s", "", {})


_COMPILED: dict[type[BaseModel], _Compiled] = {}
_INLINE: dict[Convert, _Compiled] = {}
"""Each model's finish function -> its model: generated code finishes a nested struct
inline instead of calling it."""

_IMMUTABLE: Final = (str, int, float, bool, tuple, type(None), frozenset)


def _compiled_model(
    model: type[BaseModel], tag: str | None = None, *, before: bool = False
) -> _Compiled:
    """``before``: the caller runs the model's ``mode="before"`` validators (``_AsWritten``)."""
    if model in _COMPILED:
        return _COMPILED[model]
    _refuse_unknown_validation(model, before=before)
    hints = typing.get_type_hints(model, include_extras=True)
    fields: list[tuple[str, Any, Any]] = []
    rename: dict[str, str] = {}
    values: list[_Value] = []
    for name, info in model.model_fields.items():
        if name == "type" and tag is not None:
            values.append(_Value(name, constant=tag))  # the union's tag, in the model's order
            continue
        where = f"{model.__name__}.{name}"
        hint = Annotated[hints[name], *info.metadata] if info.metadata else hints[name]
        form = _compile(hint, where)
        if info.is_required():
            fields.append((name, form.type, msgspec.NODEFAULT))
            values.append(_Value(name, form))
        elif isinstance(info.default, _IMMUTABLE):
            fields.append((name, form.type, info.default))
            values.append(_Value(name, form))
        else:  # a model instance as default: decoded as UNSET, then the model's own default
            fields.append((name, form.type | msgspec.UnsetType, msgspec.UNSET))
            values.append(_Value(name, form, default=info.default))
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
    compiled = _Compiled(model, struct, values, _after_validators(model))
    _COMPILED[model] = compiled
    _INLINE[compiled.finish] = compiled
    return compiled


class _Value:
    """How one field's value is taken from the decoded struct."""

    __slots__ = ("constant", "default", "form", "name")

    def __init__(
        self,
        name: str,
        form: _Form | None = None,
        *,
        default: Any = None,
        constant: Any = None,
    ) -> None:
        if not name.isidentifier():
            raise TypeError(f"field name {name!r} is not an identifier")
        self.name, self.form, self.default, self.constant = (
            name,
            form or _Form(None),
            default,
            constant,
        )


def _generated(
    name: str, lines: list[str], scope: dict[str, Any], params: str = "s"
) -> Callable[..., Any]:
    exec("\n".join([f"def {name}({params}):", *lines]) + "\n", scope)  # noqa: S102 - our own identifiers, no outside text
    function: Callable[..., Any] = scope[name]
    return function


def _indent(lines: list[str], by: int = 4) -> list[str]:
    return [" " * by + line for line in lines]


def _finish_function(compiled: _Compiled) -> Convert:
    """The function that finishes a decoded struct of a model in place and returns it.

    Generated once per model, as ``dataclasses`` generates ``__init__``: each check and
    conversion inline, then the model's own ``mode="after"`` validators run on the struct
    (they read attributes, which the finished struct shares with the model). After it,
    every attribute holds the value the model would hold, nested structs finished alike.
    """
    scope: dict[str, Any] = {}
    lines = _indent([*_finish_body(compiled, "s", "", scope), "return s"])
    name = compiled.struct.__name__.removeprefix("Compiled")
    return _generated(f"finish_{name}", lines, scope)


def _finish_body(
    compiled: _Compiled,
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
    scope.update(UNSET=msgspec.UNSET, Doubt=_Doubt)
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


def _finish_lines(n: str, value: _Value, var: str, scope: dict[str, Any]) -> list[str]:
    """The statements that finish one field (none for a value taken as decoded)."""
    finish, attr = value.form.finish, f"{var}.{value.name}"
    if value.constant is not None or (finish is None and value.default is None):
        return []
    nested = _INLINE.get(finish.convert if isinstance(finish, _Optional) else finish)  # type: ignore[arg-type]
    if nested is not None:  # a nested struct, finished inline (in place)
        body = _finish_body(nested, f"v{n}", f"{n}_", scope)
        if not body and value.default is None:
            return []
        if isinstance(finish, _Optional):
            body = [f"if (v{n} := {attr}) is not None:", *_indent(body or ["pass"])]
        else:
            body = [f"v{n} = {attr}", *body]
    elif isinstance(finish, _PatternCheck):  # ``_PatternCheck.__call__``, inline
        scope.update({f"m{n}": finish.fullmatch, f"seen{n}": finish.seen, "LIMIT": _SEEN_LIMIT})
        body = [
            f"if (v{n} := {attr}) not in seen{n}:",
            f"    if m{n}(v{n}) is None:",
            "        raise Doubt",
            f"    if len(seen{n}) >= LIMIT:",
            f"        seen{n}.clear()",
            f"    seen{n}.add(v{n})",
        ]
    elif isinstance(finish, _Optional):
        scope[f"c{n}"] = finish.convert
        body = [f"if (v{n} := {attr}) is not None:", f"    {attr} = c{n}(v{n})"]
    elif finish is _utc_time:  # inline: a time on every event, a call saved on each
        scope.update(
            to_datetime=_to_datetime,
            from_iso=datetime.fromisoformat,
            datetime=datetime,
            UTC=UTC,
            doubt=_doubt,
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
            f"    {attr} = (t{n} if k{n} <= {_MAX_TIME_LENGTH} "
            f"and (t{n} := to_datetime(v{n}, datetime)).tzinfo is UTC else doubt())",
        ]
    elif finish is not None:
        scope[f"c{n}"] = finish
        body = [f"{attr} = c{n}({attr})"]
    else:
        body = ["pass"]
    if value.default is not None:
        scope[f"d{n}"] = value.default
        body = [f"if {attr} is UNSET:", f"    {attr} = d{n}", "else:", *_indent(body)]
    return body


def _build_function(model: type[BaseModel], values: list[_Value]) -> Convert:
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
    return _generated(f"build_{model.__name__}", lines, scope)


def _value_expression(n: int, value: _Value, scope: dict[str, Any]) -> str:
    """``'name': <expression>`` for one field of the generated dict display."""
    if value.constant is not None:
        scope[f"k{n}"] = value.constant
        return f"{value.name!r}: k{n}"
    build, expr = value.form.build, f"s.{value.name}"
    if isinstance(build, _Optional):
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
    models = [_compiled_model(cls, tag) for tag, cls in EVENT_CLASSES.items()]
    union = functools.reduce(operator.or_, (m.struct for m in models))  # StructA | StructB | …
    return Compiled(
        msgspec.json.Decoder(union),
        {m.struct: m.finish for m in models},
        {m.struct: m.build for m in models},
    )


def decode_compiled(data: bytes | str) -> Event | None:
    """One event from a JSON object, or ``None`` when pydantic must decide (see the rules)."""
    decoder, finishers, builders = compiled()
    try:
        decoded = decoder.decode(data)
        event: Event = builders[type(decoded)](finishers[type(decoded)](decoded))
    except (msgspec.DecodeError, _Doubt):
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
    except (msgspec.DecodeError, _Doubt):
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
        except (msgspec.DecodeError, _Doubt):
            return None
        return read

    def read_event(data: bytes | str) -> Event | None:
        try:
            decoded = decode(data)
            kind = type(decoded)
            event: Event = builders[kind](finishers[kind](decoded))
        except (msgspec.DecodeError, _Doubt):
            return None
        return event

    return read_struct if structs else read_event


DOUBTS: Final = (msgspec.DecodeError, _Doubt)
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
        model = _COMPILED[EVENT_CLASSES[tag]]
        scope[f"T{n}"] = model.struct
        body = _finish_body(model, "s", f"h{n}_", scope)
        if tag == remember[0]:
            body.append(f"remembered[s.{remember[1]}] = s.{remember[2]}")
        branches += [f"{'el' if n else ''}if t is T{n}:", *_indent(body or ["pass"])]
    tag, key, value = remember
    lines = [
        "for line, raw in enumerate(lines, first):",
        "    if raw[-1:] != b'\\n':",
        "        unterminated(line)",
        "        return True",
        "    try:",
        "        s = decode(raw)",
        "        t = type(s)",
        *_indent(branches, 8),
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
    return _generated(
        "read_lines",
        _indent(lines),
        scope,
        "lines, on_doubt, unterminated, too_deep, remembered, first=1",
    )


# --- a chunk of lines at a time: the checks of the hot types' shared fields in bulk ---------

_CLASSES_ONLY: Final = re.compile(r"(?:\[(?!\^)[ -Z^-~]+\](?:\{\d+(?:,\d+)?\}|[*+?])?)+")
"""A pattern made of character classes alone (printable ASCII, no escape, no negation,
no ``[`` or ``]`` inside), each maybe repeated: it can never match a newline."""


class _Many:
    """A pattern check (``_PatternCheck``) of every value of a chunk at once.

    One value throughout (a goal's id; an item's id over its run of attempts) is checked
    once, as a line would check it. Other values are joined by newlines and matched by
    one regex (the pattern, then the pattern after each newline): exact only for a
    pattern that never matches a newline (``_CLASSES_ONLY``) and values that hold none
    (counted), for then each value is exactly one stretch between newlines.
    """

    __slots__ = ("check", "fullmatch")

    def __init__(self, check: _PatternCheck, core: str) -> None:
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
            raise _Doubt


def _many(check: Convert | None) -> _Many | None:
    """The bulk form of a field's check, if it has one."""
    if not isinstance(check, _PatternCheck):
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
            raise _Doubt from None
    return _utc_time(value)


ChunkReader = Callable[..., Iterator[tuple[int, Event]]]

_CHUNK_DOUBTS: Final = (_Doubt, ValueError, RecursionError)
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
    models = [_COMPILED[EVENT_CLASSES[tag]] for tag in HOT_TYPES]
    if remember[0] not in HOT_TYPES:
        raise TypeError(f"the chunk reader remembers hot types only, not {remember[0]!r}")
    shared: dict[str, tuple[str, Any]] = {}  # field -> ("many", _Many) | ("time", None)
    for value in models[0].values:
        others = [next((v for v in m.values if v.name == value.name), None) for m in models]
        finish = value.form.finish
        if any(o is None or o.form.finish is not finish or o.default is not None for o in others):
            continue
        if finish is _utc_time:
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
        body = _finish_body(model, "s", f"h{n}_", scope, skip)
        if body:
            checks += [f"for s in compress(hot, map(is{n}, kinds)):", *_indent(body)]
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
        *_indent(checks, 8),
        "    except CHUNK_DOUBTS:",
        "        if (yield from read_lines(chunk, on_doubt, unterminated, too_deep, remembered, first)):",
        "            return",
        "        first += len(chunk)",
        "        continue",
        "    if hot is structs:",
        f"        for line, s, {each or '_'} in zip(count(first), structs, {lists or 'structs'}):",
        *_indent(sets, 12),
        "            yield line, s",
        "    else:",
        f"        for s, {each or '_'} in zip(hot, {lists or 'hot'}):",
        *_indent(sets or ["pass"], 12),
        "        yield from zip(count(first), structs)",
        "    first += len(chunk)",
    ]
    return _generated(
        "read_chunks", _indent(lines), scope, "chunks, on_doubt, unterminated, too_deep, remembered"
    )


def event_of(read: Event) -> Event:
    """The pydantic event of what a reader read: a finished struct is built into its
    model, an event is itself."""
    if isinstance(read, BaseModel):
        return read
    event: Event = compiled().builders[type(read)](read)
    return event
