"""The compiled decoder's values: how an annotation, a field and a model compile.

Rules:
    * ``Form`` is one annotation compiled (what msgspec decodes, how it is finished and
      built); ``Value`` one field of a model; ``CompiledModel`` one model, its struct and
      the functions generated for it (``governor.core.wire.generate``).
    * ``COMPILED`` holds every model compiled so far; ``INLINE`` maps each model's finish
      function back to it, so generated code finishes a nested struct inline.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import msgspec
from pydantic import BaseModel

from governor.core.wire.checks import Convert


class Form(NamedTuple):
    """How one annotation compiles.

    ``type`` is what msgspec decodes; ``finish`` turns a decoded value into the event's
    value in place of it (checks, conversions, nested structs finished; ``None``: the
    value as decoded); ``build`` turns a finished value into the model's (nested structs
    into nested models; ``None``: the value as it is).
    """

    type: Any
    finish: Convert | None = None
    build: Convert | None = None


class OptionalForm:
    """The conversion of ``X | None``: ``None`` stays, anything else is converted.

    A class, not a closure, so that generated code can inline the ``None`` test.
    """

    __slots__ = ("convert",)

    def __init__(self, convert: Convert) -> None:
        self.convert = convert

    def __call__(self, value: Any) -> Any:
        return None if value is None else self.convert(value)


class Value:
    """How one field's value is taken from the decoded struct."""

    __slots__ = ("constant", "default", "form", "name")

    def __init__(
        self,
        name: str,
        form: Form | None = None,
        *,
        default: Any = None,
        constant: Any = None,
    ) -> None:
        if not name.isidentifier():
            raise TypeError(f"field name {name!r} is not an identifier")
        self.name, self.form, self.default, self.constant = (
            name,
            form or Form(None),
            default,
            constant,
        )


class CompiledModel:
    """One model's struct, the function that finishes a decoded struct in place (its
    values become the event's), and the one that turns a finished struct into the model.

    ``values`` and ``validators`` are what the finish function is generated from
    (``governor.core.wire.generate``): a caller that generates code of its own inlines
    the same statements (``finish_body``). ``finish`` and ``build`` are set once generated.
    """

    __slots__ = ("build", "finish", "struct", "validators", "values")

    finish: Convert
    build: Convert

    def __init__(
        self,
        struct: type[msgspec.Struct],
        values: list[Value],
        validators: list[Callable[[Any], Any]],
    ) -> None:
        self.struct, self.values, self.validators = struct, values, validators


COMPILED: dict[type[BaseModel], CompiledModel] = {}
INLINE: dict[Convert, CompiledModel] = {}
"""Each model's finish function -> its model: generated code finishes a nested struct
inline instead of calling it."""
