"""The store contract, held by the in-memory backend."""

from __future__ import annotations

import zlib

import pytest

from governor.store.memory import MemoryEventStore
from tests.store.contract import StoreContract
from tests.store.streams import FakeClock, MakeStore


class TestMemoryStore(StoreContract):
    @pytest.fixture
    def make_store(self, clock: FakeClock) -> MakeStore:
        return lambda: MemoryEventStore(clock=clock)

    def damage(self, store, goal_id, seq, body, *, checksum):
        assert isinstance(store, MemoryEventStore)
        stream = store.streams[goal_id]
        index = next(i for i, row in enumerate(stream) if row.seq == seq)
        if body is None:
            del stream[index]
            return
        raw = body.encode()
        crc = zlib.crc32(raw) if checksum else stream[index].crc
        stream[index] = stream[index]._replace(body=raw, crc=crc)

    def forget_summary(self, store, goal_id):
        del store._summaries_by_goal[goal_id]
