"""The store contract on a real SQLite file, plus what only SQLite has: migrations,
pragmas, reopening, driver errors, and real processes racing on one database."""

from __future__ import annotations

import itertools
import sqlite3
import zlib
from contextlib import closing
from pathlib import Path

import pytest

from governor.core.summary import ACTIVE_STATUSES, Usage, attention
from governor.errors import StoreError
from governor.store import listing
from governor.store.base import GoalQuery
from governor.store.rows import to_rows
from governor.store.sqlite import _DUE, _GOALS, _SOONEST, SqliteEventStore
from governor.store.sqlite_schema import MIGRATIONS, migrate
from tests.store.contract import StoreContract
from tests.store.contract_listing import COMBINATIONS
from tests.store.contract_pools import PooledAppendFailureCases
from tests.store.contract_procs import ProcessCases
from tests.store.contract_rows import DamagedRowCases
from tests.store.streams import FakeClock, MakeStore, resumed, story

_RANKED = next(v for v, m in enumerate(MIGRATIONS) if "ADD COLUMN attention" in m[0])
"""The migration that added the rank column (those after it rank rows again)."""


class TestSqliteStore(StoreContract, DamagedRowCases, PooledAppendFailureCases):
    time_suffix = "_us"
    far_time = str(2**63 - 1)

    def edit(self, store, sql, *params):
        with closing(sqlite3.connect(store.path)) as raw, raw:
            raw.execute(sql, params)

    def refuse_rows(self, store, table, event_type):
        self.edit(
            store,
            f"CREATE TRIGGER refuse_{table} BEFORE INSERT ON {table} "
            f"WHEN NEW.type = '{event_type}' BEGIN SELECT RAISE(ABORT, 'refused by the test'); END",
        )

    @pytest.fixture
    def make_store(self, tmp_path: Path, clock: FakeClock) -> MakeStore:
        names = itertools.count()
        return lambda: SqliteEventStore(tmp_path / f"store-{next(names)}.db", clock=clock)

    def damage(self, store, goal_id, seq, body, *, checksum):
        assert isinstance(store, SqliteEventStore)
        with closing(sqlite3.connect(store.path)) as raw, raw:
            if body is None:
                raw.execute("DELETE FROM events WHERE goal_id = ? AND seq = ?", (goal_id, seq))
            elif checksum:
                crc = zlib.crc32(body.encode())
                raw.execute(
                    "UPDATE events SET body = ?, crc32 = ? WHERE goal_id = ? AND seq = ?",
                    (body, crc, goal_id, seq),
                )
            else:  # written as TEXT, as an edit with the sqlite3 shell would
                raw.execute(
                    "UPDATE events SET body = ? WHERE goal_id = ? AND seq = ?", (body, goal_id, seq)
                )


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "governor.db"


def versions(path: Path) -> list[tuple[int, str]]:
    with closing(sqlite3.connect(path)) as raw:
        return raw.execute(
            "SELECT version, applied_at FROM schema_version ORDER BY version"
        ).fetchall()


# --- durability settings and reopening -----------------------------------------------------


def test_the_database_is_wal_with_full_sync_and_a_busy_timeout(db):
    store = SqliteEventStore(db, busy_timeout_s=7)
    conn = store._conn
    assert conn is not None
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert conn.execute("PRAGMA synchronous").fetchone() == (2,)  # FULL
    assert conn.execute("PRAGMA busy_timeout").fetchone() == (7000,)
    store.close()


def test_everything_survives_closing_and_reopening(db):
    clock = FakeClock()
    store = SqliteEventStore(db, clock=clock)
    events = story().events
    store.append("g1", events, expected_seq=0)
    lease = store.acquire_lease("g1", "a", ttl_s=30)
    store.release_lease(lease)
    summaries = store.goals()
    store.close()
    again = SqliteEventStore(db, clock=clock)
    assert list(again.load("g1")) == events
    assert again.goals() == summaries
    assert again.acquire_lease("g1", "b", ttl_s=30).token == 2  # tokens outlive the process
    again.close()


def test_the_due_query_walks_the_partial_index(db):
    store = SqliteEventStore(db)
    assert store._conn is not None
    plan = store._conn.execute(f"EXPLAIN QUERY PLAN {_DUE}", (0, 10)).fetchall()
    assert any("USING INDEX goals_due" in row[-1] for row in plan), plan
    store.close()


def test_the_sql_spells_the_active_statuses_as_the_code_does():
    literal = str(ACTIVE_STATUSES)
    assert literal in _DUE
    assert literal in " ".join(MIGRATIONS[0])


# --- driver errors are translated -------------------------------------------------------


def test_a_closed_store_raises_store_error(db):
    store = SqliteEventStore(db)
    store.close()
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.last_seq("g1")


def test_a_file_that_is_not_a_database_is_refused(db):
    db.write_bytes(b"this is not sqlite, just some text that is long enough" * 100)
    with pytest.raises(StoreError, match="not a SQLite database") as caught:
        SqliteEventStore(db)
    assert isinstance(caught.value.__cause__, sqlite3.DatabaseError)


def test_a_missing_folder_is_a_clear_error(tmp_path):
    with pytest.raises(StoreError, match="cannot open the database file"):
        SqliteEventStore(tmp_path / "nope" / "governor.db")


def test_a_writer_holding_the_lock_too_long_is_a_clear_error(db):
    SqliteEventStore(db).append("g1", story().events, expected_seq=0)
    with closing(sqlite3.connect(db, isolation_level=None)) as other:
        other.execute("BEGIN IMMEDIATE")
        store = SqliteEventStore(db, busy_timeout_s=0.05)
        with pytest.raises(StoreError, match="locked by another process"):
            store.append("g1", [resumed("g1", 10)], expected_seq=9)
        other.execute("ROLLBACK")
    assert store.last_seq("g1") == 9
    store.close()


# --- migrations -----------------------------------------------------------------------------


def test_a_new_database_is_migrated_to_the_latest_version(db):
    store = SqliteEventStore(db)
    assert store.schema_version == len(MIGRATIONS) - 1
    assert [v for v, _ in versions(db)] == list(range(len(MIGRATIONS)))
    store.close()


def test_reopening_does_not_migrate_again(db):
    clock = FakeClock()
    SqliteEventStore(db, clock=clock).close()
    before = versions(db)
    clock.advance(3600)
    SqliteEventStore(db, clock=clock).close()
    assert versions(db) == before


def test_a_database_newer_than_the_code_is_refused_untouched(db):
    SqliteEventStore(db).close()
    with closing(sqlite3.connect(db)) as raw, raw:
        raw.execute("INSERT INTO schema_version VALUES (?, 'the future')", (len(MIGRATIONS),))
    before = versions(db)
    with pytest.raises(StoreError, match=f"schema version {len(MIGRATIONS)}.*upgrade governor"):
        SqliteEventStore(db)
    assert versions(db) == before


def test_an_older_database_gets_only_the_missing_migrations(db):
    SqliteEventStore(db).close()
    newer = (*MIGRATIONS, ("CREATE TABLE notes (goal_id TEXT, note TEXT)",))
    with closing(sqlite3.connect(db, isolation_level=None)) as raw:
        assert migrate(raw, where="t", now=FakeClock(), migrations=newer) == len(MIGRATIONS)
        assert [v for (v,) in raw.execute("SELECT version FROM schema_version")] == list(
            range(len(newer))
        )
        raw.execute("SELECT * FROM notes")


def test_a_failing_migration_leaves_the_database_as_it_was(db):
    SqliteEventStore(db).close()
    before = versions(db)
    broken = (*MIGRATIONS, ("CREATE TABLE fine (x)", "THIS IS NOT SQL"))
    with closing(sqlite3.connect(db, isolation_level=None)) as raw:
        with pytest.raises(sqlite3.OperationalError):
            migrate(raw, where="t", now=FakeClock(), migrations=broken)
        assert raw.execute("SELECT name FROM sqlite_master WHERE name = 'fine'").fetchall() == []
    assert versions(db) == before


# --- real processes ------------------------------------------------------------------------


class TestSqliteProcesses(ProcessCases):
    @pytest.fixture
    def url(self, db: Path) -> str:
        return str(db)


def test_a_version_0_database_gains_the_service_registry_and_keeps_its_goals(db):
    with closing(sqlite3.connect(db, isolation_level=None)) as raw:
        migrate(raw, where="t", now=FakeClock(), migrations=MIGRATIONS[:1])
    with SqliteEventStore(db) as old:
        assert old.schema_version == len(MIGRATIONS) - 1
    with closing(sqlite3.connect(db)) as raw:
        tables = {name for (name,) in raw.execute("SELECT name FROM sqlite_master")}
    assert {"workers", "service_errors"} <= tables


def test_health_records_before_version_5_count_as_answered(db):
    """Every record written before SPEC §12.7 was made by a call the vendor answered or
    refused: the migration says it has answered, so a vendor gone since is an outage."""
    with closing(sqlite3.connect(db, isolation_level=None)) as raw:
        migrate(raw, where="t", now=FakeClock(), migrations=MIGRATIONS[:5])
        raw.execute(
            "INSERT INTO upstreams VALUES ('codex x m', 'codex', 'x', 'm', 0, 0, 0, 503, NULL,"
            " 30000000, 0, 1, NULL, NULL, 30, 2, 900, NULL, NULL, NULL)"
        )
    with SqliteEventStore(db) as store:
        [record] = store.upstreams()
    assert (record.healthy, record.answered) == (False, True)


def test_the_soonest_wakeup_query_walks_the_partial_index(db):
    SqliteEventStore(db).close()
    with closing(sqlite3.connect(db)) as raw:
        plan = " ".join(str(row[-1]) for row in raw.execute("EXPLAIN QUERY PLAN " + _SOONEST))
    assert "goals_due" in plan


def test_two_stores_on_one_file_share_the_registry(db):
    from governor.registry import ServiceError, WorkerBeat
    from tests.story import T0

    with SqliteEventStore(db) as one, SqliteEventStore(db) as two:
        one.heartbeat(WorkerBeat("w1", "h", 1, T0, T0))
        one.add_service_error(ServiceError(T0, "w1", "g1", "boom"))
        assert [w.worker_id for w in two.workers()] == ["w1"]
        assert two.service_errors()[0].error == "boom"


def test_a_version_1_database_keeps_its_summaries_and_the_next_append_fills_the_new_fields(db):
    events = story().events
    with closing(sqlite3.connect(db, isolation_level=None)) as raw:
        migrate(raw, where="t", now=FakeClock(), migrations=MIGRATIONS[:2])
        raw.executemany(
            "INSERT INTO events VALUES ('g1', ?, ?, 0, ?, ?)",
            [(r.seq, r.type, r.body, r.crc) for r in to_rows("g1", events[:7], 0)],
        )
        raw.execute(
            "INSERT INTO goals VALUES ('g1', 'Test goal', 7, 'running', 'wait', NULL, NULL, 0, 0)"
        )
    with SqliteEventStore(db) as store:
        (old,) = store.goals()
        assert (old.goal_id, old.status, old.rule, old.replans, old.attempts) == (
            "g1", "running", None, None, None,
        )  # fmt: skip
        assert list(store.load("g1")) == events[:7]  # no chain recorded yet: not checked
        store.append("g1", events[7:8], expected_seq=7)
        (new,) = store.goals()
        assert new.rule == "goal.7"  # p1-a passed: accept it
        assert new.attempts == Usage(used=1, charged=1, limit=100)
        assert list(store.load("g1")) == events[:8]  # the chain, computed once, holds


# --- read-only -------------------------------------------------------------------------------


def test_a_read_only_store_reads_and_sqlite_itself_refuses_its_writes(db):
    events = story().events
    with SqliteEventStore(db) as store:
        store.append("g1", events, expected_seq=0)
    before = db.read_bytes()
    with SqliteEventStore(db, read_only=True) as reader:
        assert list(reader.load("g1")) == events
        assert [g.goal_id for g in reader.goals()] == ["g1"]
        with pytest.raises(StoreError, match="open read-only; nothing was written"):
            reader.append("g1", [resumed("g1", 10)], expected_seq=9)
        with pytest.raises(StoreError, match="read-only"):
            reader.acquire_lease("g1", "me", ttl_s=5)
        conn = reader._conn
        assert conn is not None
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            conn.execute("DELETE FROM goals")
    assert db.read_bytes() == before


def test_a_read_only_store_sees_what_a_writer_appends_later(db):
    events = story().events
    with SqliteEventStore(db) as writer, SqliteEventStore(db, read_only=True) as reader:
        writer.append("g1", events[:4], expected_seq=0)
        assert reader.last_seq("g1") == 4
        writer.append("g1", events[4:], expected_seq=4)
        assert reader.last_seq("g1") == len(events)


def test_a_read_only_open_never_migrates(db):
    with closing(sqlite3.connect(db, isolation_level=None)) as raw:
        migrate(raw, where="t", now=FakeClock(), migrations=MIGRATIONS[:2])
    with pytest.raises(StoreError, match="a read never upgrades it: run a governor command"):
        SqliteEventStore(db, read_only=True)
    assert [v for v, _ in versions(db)] == [0, 1]


def test_a_read_only_open_of_a_database_governor_never_set_up_is_refused(db):
    with closing(sqlite3.connect(db)) as raw:
        raw.execute("CREATE TABLE other (x)")
    with pytest.raises(StoreError, match="not a governor store"):
        SqliteEventStore(db, read_only=True)


# --- listings for people: the attention order walks an index (issue 27) ----------------------


@pytest.mark.parametrize(
    ("query", "index"),
    [
        (GoalQuery(order="attention"), "goals_attention"),
        (GoalQuery(needs_person=True, order="attention"), "goals_attention"),
        (GoalQuery(statuses=("blocked",), order="attention"), "goals_status_attention"),
    ],
    ids=["every goal", "needs a person", "one status"],
)
def test_a_page_by_attention_walks_an_index_without_sorting(db, query, index):
    store = SqliteEventStore(db)
    assert store._conn is not None
    sql, values = listing.select(_GOALS, query, "sqlite")
    plan = " | ".join(
        row[-1] for row in store._conn.execute(f"EXPLAIN QUERY PLAN {sql}", (*values, 50, 0))
    )
    assert f"USING INDEX {index}" in plan, plan
    assert "TEMP B-TREE" not in plan, plan
    store.close()


def test_the_migration_ranks_the_rows_it_finds_as_the_code_does(db):
    with closing(sqlite3.connect(db, isolation_level=None)) as raw:
        migrate(raw, where="t", now=FakeClock(), migrations=MIGRATIONS[:_RANKED])
        raw.executemany(
            "INSERT INTO goals (goal_id, title, seq, status, next_action, blocked_on, "
            "updated_at_us, due_us) VALUES (?, 't', 1, ?, 'none', ?, 0, 0)",
            [(f"g{i}", status, blocked_on) for i, (status, blocked_on) in enumerate(COMBINATIONS)],
        )
        migrate(raw, where="t", now=FakeClock())
        ranks = dict(raw.execute("SELECT goal_id, attention FROM goals").fetchall())
    assert ranks == {f"g{i}": attention(*pair) for i, pair in enumerate(COMBINATIONS)}


def test_a_search_reads_the_table_once_and_sorts_what_matched(db):
    store = SqliteEventStore(db)
    assert store._conn is not None
    sql, values = listing.select(_GOALS, GoalQuery(search="db", order="attention"), "sqlite")
    plan = " | ".join(
        row[-1] for row in store._conn.execute(f"EXPLAIN QUERY PLAN {sql}", (*values, 50, 0))
    )
    assert "SCAN goals" in plan, plan
    assert "goals_attention" not in plan, plan  # no lookup of each row in the index's order
    store.close()
