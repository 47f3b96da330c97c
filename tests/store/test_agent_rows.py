"""The agents table's rows are committed without a sync, and only they (decision record
0026): a real SQLite file, the statements SQLite was given, and a real writer process
killed with SIGKILL right after its commit, whose rows a new process reads and
``governor store check`` accepts."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import textwrap
from contextlib import closing
from pathlib import Path

import pytest

from governor.errors import LeaseError
from governor.registry import AgentRecord
from governor.store.sqlite import SqliteEventStore
from tests.hardening.run import governor
from tests.store.streams import story
from tests.story import T0


def agent(pid: int = 4242) -> AgentRecord:
    return AgentRecord("g1", "host-1", "boot-1", pid, 99, "r-1", "runner-a", T0)


def statements(store: SqliteEventStore) -> list[str]:
    said: list[str] = []
    assert store._conn is not None
    store._conn.set_trace_callback(said.append)
    return said


def test_agent_rows_commit_at_normal_and_the_connection_goes_back_to_full(tmp_path: Path) -> None:
    store = SqliteEventStore(tmp_path / "s.db")
    said = statements(store)
    store.add_agent(agent())
    store.remove_agent(agent())
    for at in (0, len(said) // 2):
        assert said[at] == "PRAGMA synchronous = NORMAL"
        assert said[at + 1] == "BEGIN IMMEDIATE"
    assert said[len(said) // 2 - 2 :: len(said) // 2] == ["COMMIT", "COMMIT"]
    assert said[len(said) // 2 - 1 :: len(said) // 2] == ["PRAGMA synchronous = FULL"] * 2
    assert store._conn is not None
    assert store._conn.execute("PRAGMA synchronous").fetchone() == (2,)  # FULL again
    store.close()


def test_an_append_and_a_lease_never_lower_the_sync(tmp_path: Path) -> None:
    store = SqliteEventStore(tmp_path / "s.db")
    said = statements(store)
    store.append("g1", story().events, expected_seq=0)
    store.release_lease(store.acquire_lease("g1", "a", ttl_s=30))
    assert said
    assert not [s for s in said if s.startswith("PRAGMA synchronous")]
    store.close()


def test_a_failed_agent_write_still_leaves_the_connection_at_full(tmp_path: Path) -> None:
    store = SqliteEventStore(tmp_path / "s.db")
    store.append("g1", story().events, expected_seq=0)
    lease = store.acquire_lease("g1", "a", ttl_s=30)
    store.release_lease(lease)
    store.acquire_lease("g1", "b", ttl_s=30)
    with pytest.raises(LeaseError, match="not recorded"):
        store.add_agent(agent(), lease=lease)  # a lease taken over: refused
    assert store.agents("g1") == []
    assert store._conn is not None
    assert store._conn.execute("PRAGMA synchronous").fetchone() == (2,)
    store.close()


WRITER = """
import os, signal, sys
from governor.registry import AgentRecord
from governor.store.sqlite import SqliteEventStore
from tests.store.streams import story
from tests.story import T0

store = SqliteEventStore(sys.argv[1])
store.append("g1", story().events, expected_seq=0)
lease = store.acquire_lease("g1", "runner-a", ttl_s=600)
for pid in (4242, 4343):
    store.add_agent(
        AgentRecord("g1", "host-1", "boot-1", pid, 99, "r-1", "runner-a", T0), lease=lease
    )
store.remove_agent(AgentRecord("g1", "host-1", "boot-1", 4343, 99, "r-1", "runner-a", T0))
os.kill(os.getpid(), signal.SIGKILL)  # no close, no checkpoint: a runner killed mid-call
"""


def test_a_writer_killed_right_after_its_agent_rows_leaves_them_and_a_sound_store(
    tmp_path: Path,
) -> None:
    db = tmp_path / "s.db"
    writer = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(WRITER), str(db)],
        cwd=Path(__file__).parents[2],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert writer.returncode == -signal.SIGKILL, writer.stderr
    assert (tmp_path / "s.db-wal").exists()  # what the killed process committed is in the WAL
    with closing(sqlite3.connect(db)) as raw:
        rows = raw.execute("SELECT pid FROM agents WHERE goal_id = 'g1'").fetchall()
    assert rows == [(4242,)]  # the put survived the kill, and so did the delete
    check = governor(tmp_path, "store", "check")
    assert check.returncode == 0, check.stdout + check.stderr
    store = SqliteEventStore(db)
    assert [a.pid for a in store.agents("g1")] == [4242]
    assert list(store.load("g1")) == story().events
    store.close()
