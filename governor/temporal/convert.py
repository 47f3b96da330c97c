"""The data converter of governor's Temporal clients: pydantic's, with its type adapters
built once per process.

Rules:
    * The payloads are ``temporalio.contrib.pydantic``'s, byte for byte (``json/plain``,
      written by ``pydantic_core.to_json``): histories recorded with either converter
      replay with the other.
    * Temporal makes a new payload converter for every workflow run it hosts, and the
      pydantic converter caches its type adapters per converter; so each goal's run
      (and each run continued as new) built the adapters of ``Appended``, ``Observed``
      and the rest again — a schema of every event type, tens of milliseconds each, in
      the workflow task (issue 34's profile: most of a worker's workflow time). Here
      the adapters live in one cache per process, shared by every run (``governor`` is
      passed through the sandbox, so a type is the same object in every run). A type
      adapter validates without side effects: sharing it changes no outcome.
"""

from __future__ import annotations

import functools
from typing import Any, Final

import temporalio.api.common.v1
from pydantic import TypeAdapter
from temporalio.contrib.pydantic import PydanticJSONPlainPayloadConverter
from temporalio.converter import (
    CompositePayloadConverter,
    DataConverter,
    DefaultPayloadConverter,
    JSONPlainPayloadConverter,
)

ADAPTERS_KEPT: Final = 256
"""Type adapters one process keeps (a workflow and its activities use about a dozen)."""


@functools.lru_cache(maxsize=ADAPTERS_KEPT)
def adapter(hint: Any) -> TypeAdapter[Any]:
    """The type adapter of ``hint``, built once per process."""
    return TypeAdapter(hint)


class SharedAdapters(PydanticJSONPlainPayloadConverter):
    """Pydantic's JSON converter, reading with the process's type adapters (``adapter``)."""

    def from_payload(
        self, payload: temporalio.api.common.v1.Payload, type_hint: type | None = None
    ) -> Any:
        hint = type_hint if type_hint is not None else Any
        try:
            found = adapter(hint)
        except TypeError:  # an unhashable hint: pydantic's own path
            return super().from_payload(payload, type_hint)
        return found.validate_json(payload.data)


class PayloadConverter(CompositePayloadConverter):
    """Temporal's default converters, with ``SharedAdapters`` in place of plain JSON's."""

    def __init__(self) -> None:
        shared = SharedAdapters()
        super().__init__(
            *(
                shared if isinstance(c, JSONPlainPayloadConverter) else c
                for c in DefaultPayloadConverter.default_encoding_payload_converters
            )
        )


data_converter: Final = DataConverter(payload_converter_class=PayloadConverter)
"""The data converter ``client.connect`` gives every client (and so every worker)."""
