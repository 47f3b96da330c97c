"""How governor's payloads look inside Temporal: the data converter and its payload codec.

Rules (issue 34, docs/deployment.md "Payloads in Temporal"):
    * Payloads are pydantic JSON (``governor.temporal.convert``); a **codec** turns each
      into other bytes on the way to the server and back: ``zlib`` (built in: every
      payload compressed), or ``MODULE:NAME`` — a ``temporalio.converter.PayloadCodec``
      instance, or a class or function that returns one when called without arguments
      (encryption with your own keys lives there; the key never passes through governor).
    * The codec is named by ``--codec``, else ``$GOVERNOR_TEMPORAL_CODEC``. Every client
      of a namespace — workers, ``temporal start``, the CLI's verbs, the web view — must
      name the same one: a payload a client cannot decode is Temporal's decode error,
      never a guess.
    * A codec that cannot be loaded is one ``InputError`` line naming it.
"""

from __future__ import annotations

import dataclasses
import importlib
import zlib
from collections.abc import Sequence
from typing import Final

from temporalio.api.common.v1 import Payload
from temporalio.converter import DataConverter, PayloadCodec

from governor.errors import InputError
from governor.temporal.convert import data_converter as plain

CODEC_VARIABLE: Final = "GOVERNOR_TEMPORAL_CODEC"
"""The environment variable that names the codec when ``--codec`` does not."""
ZLIB_ENCODING: Final = b"binary/zlib"
"""The ``encoding`` of a payload the built-in codec compressed."""


class ZlibCodec(PayloadCodec):
    """Every payload compressed whole (its metadata too); other payloads pass unchanged."""

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [
            Payload(
                metadata={"encoding": ZLIB_ENCODING},
                data=zlib.compress(p.SerializeToString()),
            )
            for p in payloads
        ]

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [
            Payload.FromString(zlib.decompress(p.data))
            if p.metadata.get("encoding") == ZLIB_ENCODING
            else p
            for p in payloads
        ]


def load_codec(spec: str) -> PayloadCodec:
    """The codec ``spec`` names (the module rules).

    Raises:
        InputError: it cannot be imported, or is not a ``PayloadCodec``.
    """
    if spec == "zlib":
        return ZlibCodec()
    module_name, _, name = spec.partition(":")
    if not module_name or not name:
        raise InputError(f"codec '{spec}': expected zlib or MODULE:NAME")
    try:
        found = getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError) as exc:
        raise InputError(f"codec '{spec}' cannot be loaded: {exc}") from None
    try:
        codec = found() if callable(found) and not isinstance(found, PayloadCodec) else found
    except Exception as exc:  # the operator's own factory failed: say so, in one line
        raise InputError(f"codec '{spec}' cannot be made: {type(exc).__name__}: {exc}") from None
    if not isinstance(codec, PayloadCodec):
        raise InputError(f"codec '{spec}' is not a temporalio PayloadCodec")
    return codec


def data_converter(spec: str | None) -> DataConverter:
    """Governor's data converter (``governor.temporal.convert``), with the codec ``spec``
    names (none when None or empty)."""
    if not spec:
        return plain
    return dataclasses.replace(plain, payload_codec=load_codec(spec))
