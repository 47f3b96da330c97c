"""The wire: events as bytes and back (SPEC §11.1).

Rules:
    * ``codec`` is the one JSON codec: nothing else turns events into bytes, and every
      read goes through it.
    * ``decoder`` is its compiled fast path (msgspec structs derived from the event models,
      deferring to pydantic whenever it is not sure); ``upcast`` upgrades old shapes.
    * Pure like the rest of the core: no I/O, no clock.
"""
