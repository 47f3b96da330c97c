"""A damaged ``pools`` row is a damaged store, said as one (``DamagedRowError``: exit 7),
never an input error nor a traceback."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

import pytest

from governor.core.pool_limits import PoolLimits
from governor.drive.pools import set_pool
from governor.errors import DamagedRowError
from governor.store.sqlite import SqliteEventStore

AT = datetime(2026, 12, 7, tzinfo=UTC)


@pytest.mark.parametrize("state", ["garbage", b"\xff\xfe"], ids=["text", "bytes"])
def test_a_damaged_pool_state_is_a_damaged_row(tmp_path: Path, state: object) -> None:
    db = tmp_path / "governor.db"
    with SqliteEventStore(db) as store:
        set_pool(store, "team", PoolLimits(usd=1.0), at=AT, actor="t", reason=None)
        assert store.pool_state("team") is not None
    with closing(sqlite3.connect(db)) as raw, raw:
        raw.execute("UPDATE pools SET state = ?", (state,))
    with SqliteEventStore(db) as store:
        for read in (store.pool_states, lambda: store.pool_state("team")):
            with pytest.raises(DamagedRowError, match="pools row 'team' is damaged: state"):
                read()
