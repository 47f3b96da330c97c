"""The store contract on a real PostgreSQL server, plus what only PostgreSQL has:
migrations, the due index at scale, per-goal locking, the pool, driver errors, and real
processes racing on one database. The server is ``tests/store/postgres_server.py``'s."""

from __future__ import annotations

import json
import threading
import time
import zlib
from datetime import timedelta
from typing import TYPE_CHECKING

import psycopg
import pytest

from governor.core.summary import ACTIVE_STATUSES, attention
from governor.errors import DamagedRowError, LeaseError, StoreError
from governor.store import listing, open_store
from governor.store.base import GoalQuery
from governor.store.postgres import _DUE, _GOALS, _SOONEST, PostgresEventStore
from governor.store.postgres_driver import describe_url, goal_lock_key
from governor.store.postgres_schema import MIGRATIONS, migrate
from tests.store.contract import StoreContract
from tests.store.contract_listing import COMBINATIONS
from tests.store.contract_pools import PooledAppendFailureCases
from tests.store.contract_procs import ProcessCases
from tests.store.contract_rows import DamagedRowCases
from tests.store.streams import FakeClock, MakeStore, resumed, story, summary
from tests.story import T0

if TYPE_CHECKING:  # imported by pytest as a plugin, so that its asserts are rewritten
    from tests.store.postgres_server import MakeUrl, PostgresServer

pytest_plugins = ["tests.store.postgres_server"]

_RANKED = next(v for v, m in enumerate(MIGRATIONS) if "ADD COLUMN attention" in m[0])
"""The migration that added the rank column (those after it rank rows again)."""


class TestPostgresStore(StoreContract, DamagedRowCases, PooledAppendFailureCases):
    far_time = "'infinity'::timestamptz"

    def edit(self, store, sql, *params):
        with psycopg.connect(store.url, autocommit=True) as raw:
            raw.execute(sql.replace("?", "%s"), params)

    def refuse_rows(self, store, table, event_type):
        self.edit(
            store,
            f"CREATE FUNCTION refuse_{table}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            f"IF NEW.type = '{event_type}' THEN RAISE EXCEPTION 'refused by the test'; END IF; "
            "RETURN NEW; END $$",
        )
        self.edit(
            store,
            f"CREATE TRIGGER refuse_{table} BEFORE INSERT ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION refuse_{table}()",
        )

    @pytest.fixture
    def make_store(self, postgres_url: MakeUrl, clock: FakeClock) -> MakeStore:
        return lambda: PostgresEventStore(postgres_url(), clock=clock)

    def damage(self, store, goal_id, seq, body, *, checksum):
        assert isinstance(store, PostgresEventStore)
        where = (goal_id, seq)
        with psycopg.connect(store.url, autocommit=True) as raw:
            if body is None:
                raw.execute("DELETE FROM events WHERE goal_id = %s AND seq = %s", where)
            elif checksum:
                raw.execute(
                    "UPDATE events SET body = %s, crc32 = %s WHERE goal_id = %s AND seq = %s",
                    (body.encode(), zlib.crc32(body.encode()), *where),
                )
            else:
                raw.execute(
                    "UPDATE events SET body = convert_to(%s, 'UTF8') "
                    "WHERE goal_id = %s AND seq = %s",
                    (body, *where),
                )

    # --- what only typed columns hold (issue 24, item 8) ----------------------------------

    @pytest.mark.parametrize(
        ("table", "column", "literal", "read"),
        [
            ("upstreams", "next_probe_at", "'infinity'", lambda s: s.upstreams()),
            ("upstreams", "probing_until", "'-infinity'", lambda s: s.upstreams()),
            ("upstreams", "updated_at", "'294276-12-31 00:00:00+00'", lambda s: s.upstreams()),
            ("upstreams", "failing_since", "'4713-01-01 00:00:00+00 BC'", lambda s: s.upstreams()),
            ("upstreams", "retry_after_s", "'NaN'::float8", lambda s: s.upstreams()),
            ("upstreams", "backoff_max_s", "'Infinity'::float8", lambda s: s.upstreams()),
            ("upstreams", "probes", str(-(2**31)), lambda s: s.upstreams()),
            ("leases", "token", str(2**63 - 1), lambda s: s.current_lease("g1")),
            ("leases", "expires_at", "'infinity'", lambda s: s.acquire_lease("g1", "x", ttl_s=5)),
            ("goals", "updated_at", "'infinity'", lambda s: s.goals()),
            ("goals", "not_before", "'-infinity'", lambda s: s.goals()),
            ("goals", "seq", "-1", lambda s: list(s.load("g1"))),
            ("workers", "started_at", "'-infinity'", lambda s: s.workers()),
            ("service_errors", "at", "'infinity'", lambda s: s.service_errors()),
            ("agents", "started_at", "'infinity'", lambda s: s.agents("g1")),
            ("agents", "pid", str(-(2**31)), lambda s: s.agents("g1")),
        ],
        ids=lambda v: v if isinstance(v, str) else "",
    )
    def test_values_a_typed_column_holds_but_governor_cannot_read_are_damaged_rows(
        self, store, table, column, literal, read
    ):
        """PostgreSQL's types hold what a ``datetime`` or governor's bounds cannot:
        ``infinity``, years past 9999 or before year 1, NaN, 64-bit extremes. The driver's
        failure is never the error: the row is named, as on SQLite."""
        self.fill(store)
        where = " WHERE goal_id = 'g1'" if table in ("goals", "leases", "agents") else ""
        self.edit(store, f"UPDATE {table} SET {column} = {literal}{where}")
        with pytest.raises(DamagedRowError) as caught:
            read(store)
        assert (caught.value.table, caught.value.column) == (table, column)
        found = list(store.check(repair=True))
        assert [(f.table, f.repaired) for f in found] == [(table, True)], found
        read(store)
        assert list(store.check()) == []


class TestPostgresProcesses(ProcessCases):
    @pytest.fixture
    def url(self, postgres_url: MakeUrl) -> str:
        return postgres_url()


@pytest.fixture
def url(postgres_url: MakeUrl) -> str:
    return postgres_url()


def sql(url: str, query: str, params: tuple = ()) -> list[tuple]:
    with psycopg.connect(url, autocommit=True) as raw:
        cursor = raw.execute(query, params)  # type: ignore[arg-type]  # a test's own SQL
        return cursor.fetchall() if cursor.description else []


def versions(url: str) -> list[int]:
    return [v for (v,) in sql(url, "SELECT version FROM schema_version ORDER BY version")]


# --- open_store, URLs, migrations ------------------------------------------------------------


def test_open_store_opens_postgresql_urls(url):
    store = open_store(url, clock=FakeClock())
    assert isinstance(store, PostgresEventStore)
    store.append("g1", story().events, expected_seq=0)
    assert store.last_seq("g1") == 9
    store.close()
    again = open_store(url.replace("postgresql://", "postgres://"))
    assert again.last_seq("g1") == 9
    again.close()


def test_messages_name_the_server_but_never_the_password():
    shown = describe_url("postgresql://ann:s3cret@db.example:5433/gov?sslmode=require")
    assert shown == "postgresql://ann@db.example:5433/gov"


def test_a_new_database_is_migrated_to_the_latest_version(url):
    store = PostgresEventStore(url)
    assert store.schema_version == len(MIGRATIONS) - 1
    assert versions(url) == list(range(len(MIGRATIONS)))
    store.close()


def test_reopening_does_not_migrate_again(url):
    clock = FakeClock()
    PostgresEventStore(url, clock=clock).close()
    before = sql(url, "SELECT version, applied_at FROM schema_version ORDER BY version")
    assert before[0][1] == T0  # the injected clock, not the server's now()
    clock.advance(3600)
    PostgresEventStore(url, clock=clock).close()
    assert sql(url, "SELECT version, applied_at FROM schema_version ORDER BY version") == before


def test_processes_opening_a_new_database_at_once_migrate_it_once(url):
    opened: list[PostgresEventStore] = []
    failures: list[BaseException] = []
    start = threading.Barrier(6)

    def open_one() -> None:
        start.wait()
        try:
            opened.append(PostgresEventStore(url))
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert versions(url) == list(range(len(MIGRATIONS)))
    for store in opened:
        store.close()


def test_a_database_newer_than_the_code_is_refused_untouched(url):
    PostgresEventStore(url).close()
    sql(url, "INSERT INTO schema_version VALUES (%s, now())", (len(MIGRATIONS),))
    before = versions(url)
    with pytest.raises(StoreError, match=f"schema version {len(MIGRATIONS)}.*upgrade governor"):
        PostgresEventStore(url)
    assert versions(url) == before


def test_an_older_database_gets_only_the_missing_migrations(url):
    PostgresEventStore(url).close()
    newer = (*MIGRATIONS, ("CREATE TABLE notes (goal_id TEXT, note TEXT)",))
    with psycopg.connect(url, autocommit=True) as raw:
        assert migrate(raw, where="t", now=FakeClock(), migrations=newer) == len(MIGRATIONS)
    assert versions(url) == list(range(len(newer)))
    assert sql(url, "SELECT * FROM notes") == []


def test_a_failing_migration_leaves_the_database_as_it_was(url):
    PostgresEventStore(url).close()
    before = versions(url)
    broken = (*MIGRATIONS, ("CREATE TABLE fine (x INTEGER)", "THIS IS NOT SQL"))
    with psycopg.connect(url, autocommit=True) as raw, pytest.raises(psycopg.errors.SyntaxError):
        migrate(raw, where="t", now=FakeClock(), migrations=broken)
    assert sql(url, "SELECT to_regclass('fine')") == [(None,)]
    assert versions(url) == before


# --- the due index, ordering ------------------------------------------------------------------

GOALS = 100_000


def fill(url: str, goals: int) -> None:
    """``goals`` summaries, 1 % of them active (as bench/store.py): ready, running, waiting."""
    sql(
        url,
        """INSERT INTO goals
        SELECT 'g' || lpad(i::text, 6, '0'), 't', 1,
               CASE WHEN i %% 200 = 0 THEN 'waiting' WHEN i %% 200 = 1 THEN 'ready'
                    ELSE 'succeeded' END,
               'none', NULL, to_timestamp(i), to_timestamp(i), to_timestamp(i)
        FROM generate_series(0, %s - 1) AS i""",
        (goals,),
    )
    sql(url, "ANALYZE goals")  # what autovacuum does after a bulk change


def test_the_due_query_walks_the_partial_index_over_100000_goals(url):
    store = PostgresEventStore(url)
    fill(url, GOALS)
    now = T0.replace(year=1970) + timedelta(seconds=GOALS // 2)
    ((plan,),) = sql(url, f"EXPLAIN (ANALYZE, FORMAT JSON) {_DUE}", (now, 100))
    text = json.dumps(plan)
    assert '"Index Name": "goals_due"' in text, text
    assert "Seq Scan" not in text, text
    start = time.perf_counter()
    due = store.due(now, limit=100)
    elapsed = time.perf_counter() - start
    assert len(due) == 100
    assert [g.goal_id for g in due[:3]] == ["g000000", "g000001", "g000200"]
    assert elapsed < 1.0, f"due() took {elapsed:.3f} s over {GOALS:,} goals"
    ((plan,),) = sql(url, f"EXPLAIN (FORMAT JSON) {_SOONEST}")
    assert "Seq Scan" not in json.dumps(plan), plan
    assert store.soonest_wakeup() == T0.replace(year=1970)  # g000000 waits since the epoch
    store.close()


def test_the_sql_spells_the_active_statuses_as_the_code_does():
    literal = str(ACTIVE_STATUSES)
    assert literal in _DUE
    assert literal in " ".join(MIGRATIONS[0])


def test_goal_ids_order_by_code_point_whatever_the_database_collation(
    postgres_server: PostgresServer,
):
    name = f"icu_{time.monotonic_ns()}"
    url = postgres_server.create_database(
        name, "TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C'"
    )
    store = PostgresEventStore(url)
    for goal_id in ("b", "B", "a", "A1"):
        store.append(goal_id, story(goal_id).events[:1], expected_seq=0)
    assert [g.goal_id for g in store.goals()] == ["A1", "B", "a", "b"]
    assert sql(url, "SELECT 'a' < 'B'") == [(True,)]  # the database's own order is not
    store.close()
    postgres_server.sql(f"DROP DATABASE {name}")


# --- per-goal locking ---------------------------------------------------------------------------


def test_a_writer_waits_for_the_goal_lock_and_gives_up_after_the_lock_timeout(url):
    seed = PostgresEventStore(url)
    seed.append("g1", story().events, expected_seq=0)
    seed.close()
    store = PostgresEventStore(url, lock_timeout_s=0.1)
    with psycopg.connect(url) as other:
        other.execute("SELECT pg_advisory_xact_lock(%s)", (goal_lock_key("g1"),))
        with pytest.raises(StoreError, match="locked by another writer") as caught:
            store.append("g1", [resumed("g1", 10)], expected_seq=9)
        assert isinstance(caught.value.__cause__, psycopg.errors.LockNotAvailable)
        store.append("g2", story("g2").events, expected_seq=0)  # other goals do not wait
        other.rollback()
    assert store.append("g1", [resumed("g1", 10)], expected_seq=9) == 10
    store.close()


def test_writes_run_at_read_committed_whatever_the_database_default(url):
    sql(
        url,
        "ALTER DATABASE "
        + url.rsplit("/", 1)[1]
        + " SET default_transaction_isolation = 'serializable'",
    )
    store = PostgresEventStore(url)
    with store._write("g1") as tx:
        assert tx.execute("SHOW transaction_isolation").fetchone() == ("read committed",)
    store.close()


def test_racing_claims_of_one_lease_grant_it_once_with_rising_tokens(url):
    stores = [PostgresEventStore(url, clock=FakeClock()) for _ in range(6)]
    tokens: list[int] = []
    refused: list[str] = []
    for _round in range(5):
        start = threading.Barrier(len(stores))

        def claim(store: PostgresEventStore, name: str, start: threading.Barrier = start) -> None:
            start.wait()
            try:
                tokens.append(store.acquire_lease("g1", name, ttl_s=30).token)
            except LeaseError as exc:
                refused.append(str(exc.holder))

        threads = [threading.Thread(target=claim, args=(s, f"w{i}")) for i, s in enumerate(stores)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        lease = stores[0].current_lease("g1")
        assert lease is not None
        stores[0].release_lease(lease)
    assert tokens == [1, 2, 3, 4, 5]  # one winner per round, tokens never reused
    assert len(refused) == 5 * (len(stores) - 1)
    for store in stores:
        store.close()


# --- the pool and driver errors --------------------------------------------------------------


def test_one_store_serves_many_threads_through_its_pool(url):
    store = PostgresEventStore(url, max_size=3)
    errors: list[BaseException] = []

    def work(goal_id: str) -> None:
        try:
            store.append(goal_id, story(goal_id).events, expected_seq=0)
            assert len(list(store.load(goal_id))) == 9
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(f"g{i}",)) for i in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(store.goals()) == 12
    store.close()


def test_connections_the_server_dropped_are_replaced(url):
    store = PostgresEventStore(url)
    store.append("g1", story().events, expected_seq=0)
    sql(
        url,
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
        "WHERE datname = current_database() AND pid <> pg_backend_pid()",
    )
    assert store.last_seq("g1") == 9
    store.close()


def test_a_closed_store_raises_store_error(url):
    store = PostgresEventStore(url)
    store.close()
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.last_seq("g1")


def test_an_unreachable_server_is_a_clear_error_without_the_password(postgres_server):
    with pytest.raises(StoreError, match="cannot talk to PostgreSQL") as caught:
        PostgresEventStore("postgresql://governor:hunter2@127.0.0.1:1/nope", timeout_s=2)
    assert "hunter2" not in str(caught.value)
    assert "postgresql://governor@127.0.0.1:1/nope" in str(caught.value)
    assert isinstance(caught.value.__cause__, psycopg.OperationalError)


def test_a_missing_database_is_a_clear_error(postgres_server):
    with pytest.raises(StoreError, match='database "no_such_database" does not exist'):
        PostgresEventStore(postgres_server.url("no_such_database"))


def test_summaries_and_leases_survive_reopening(url):
    clock = FakeClock()
    store = PostgresEventStore(url, clock=clock)
    store.append(
        "w", story("w").events[:1], expected_seq=0, summary=summary("w", "waiting", not_before_s=9)
    )
    lease = store.acquire_lease("w", "a", ttl_s=30)
    store.release_lease(lease)
    summaries = store.goals()
    store.close()
    again = PostgresEventStore(url, clock=clock)
    assert again.goals() == summaries
    assert again.goals()[0].not_before == T0 + timedelta(seconds=9)
    assert again.acquire_lease("w", "b", ttl_s=30).token == 2  # tokens outlive the process
    again.close()


# --- read-only ---------------------------------------------------------------------------


def test_a_read_only_open_of_an_empty_database_creates_no_table(url):
    with pytest.raises(StoreError, match="not a governor store"):
        open_store(url, read_only=True)
    assert sql(url, "SELECT tablename FROM pg_tables WHERE schemaname = 'public'") == []


def test_a_read_only_store_reads_and_the_server_refuses_its_writes(url):
    events = story().events
    with PostgresEventStore(url) as writer:
        writer.append("g1", events, expected_seq=0)
    reader = open_store(url, read_only=True)
    assert isinstance(reader, PostgresEventStore)
    assert list(reader.load("g1")) == events
    with pytest.raises(StoreError, match="open read-only; nothing was written"):
        reader.append("g1", [resumed("g1", 10)], expected_seq=9)
    with reader._pool.connection() as conn, pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
        conn.execute("DELETE FROM goals")
    reader.close()
    assert sql(url, "SELECT COUNT(*) FROM goals") == [(1,)]


def test_health_records_before_version_5_count_as_answered(url):
    with psycopg.connect(url, autocommit=True) as raw:
        migrate(raw, where="t", now=FakeClock(), migrations=MIGRATIONS[:5])
        raw.execute(
            "INSERT INTO upstreams VALUES ('codex x m', 'codex', 'x', 'm', false, now(), now(),"
            " 503, NULL, now(), 0, 1, NULL, NULL, 30, 2, 900, NULL, NULL, NULL)"
        )
    store = open_store(url)
    [record] = store.upstreams()
    store.close()
    assert (record.healthy, record.answered) == (False, True)


def test_a_read_only_open_never_migrates(url):
    with psycopg.connect(url, autocommit=True) as raw:
        migrate(raw, where="t", now=FakeClock(), migrations=MIGRATIONS[:2])
    with pytest.raises(StoreError, match="a read never upgrades it"):
        open_store(url, read_only=True)
    assert versions(url) == [0, 1]


# --- the test server's own finder ----------------------------------------------------------


def test_the_server_binaries_are_found_on_path_first_then_in_the_newest_debian_folder(
    tmp_path, monkeypatch
):
    import tests.store.postgres_server as server

    def install(folder):
        folder.mkdir(parents=True)
        for tool in ("initdb", "pg_ctl", "postgres"):
            (folder / tool).write_text("")
            (folder / tool).chmod(0o755)
        return folder

    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr(server, "DEBIAN_BINARIES", tmp_path / "lib")
    assert server.find_bindir() is None
    install(tmp_path / "lib" / "9" / "bin")
    newest = install(tmp_path / "lib" / "16" / "bin")
    assert server.find_bindir() == newest
    mine = install(tmp_path / "mine")
    monkeypatch.setenv("PATH", str(mine))
    assert server.find_bindir() == mine


# --- listings for people: the attention order walks an index (issue 27) ----------------------


@pytest.mark.parametrize(
    "query",
    [
        GoalQuery(order="attention"),
        GoalQuery(needs_person=True, order="attention"),
        GoalQuery(statuses=("succeeded",), order="attention"),
    ],
    ids=["every goal", "needs a person", "one status"],
)
def test_a_page_by_attention_walks_an_index_over_100000_goals_without_sorting(url, query):
    store = PostgresEventStore(url)
    fill(url, GOALS)
    asking = "UPDATE goals SET status = 'blocked', blocked_on = 'decision' WHERE seq = 1 AND goal_id LIKE '%%7'"
    sql(url, asking)  # a tenth of the goals ask a person
    sql(url, MIGRATIONS[_RANKED][1])  # rank them as the migration ranks rows it finds
    sql(url, "ANALYZE goals")
    statement, values = listing.select(_GOALS, query, "postgres")
    ((plan,),) = sql(url, f"EXPLAIN (FORMAT JSON) {statement}", (*values, 50, 400))
    text = json.dumps(plan)
    assert '"Index Name": "goals_attention"' in text or "goals_status_attention" in text, text
    assert '"Node Type": "Sort"' not in text, text  # the planner's choice of the two indexes
    page = store.goals(
        statuses=query.statuses,
        needs_person=query.needs_person,
        order="attention",
        offset=400,
        limit=50,
    )
    assert len(page) == 50
    assert all(query.matches(row) for row in page)
    store.close()


def test_the_migration_ranks_the_rows_it_finds_as_the_code_does(url):
    with psycopg.connect(url, autocommit=True) as raw:
        migrate(raw, where="t", now=FakeClock(), migrations=MIGRATIONS[:_RANKED])
        for i, (status, blocked_on) in enumerate(COMBINATIONS):
            raw.execute(
                "INSERT INTO goals (goal_id, title, seq, status, next_action, blocked_on, "
                "updated_at, due_at) VALUES (%s, 't', 1, %s, 'none', %s, now(), now())",
                (f"g{i}", status, blocked_on),
            )
        migrate(raw, where="t", now=FakeClock())
    ranks = dict(sql(url, "SELECT goal_id, attention FROM goals"))
    assert ranks == {f"g{i}": attention(*pair) for i, pair in enumerate(COMBINATIONS)}


# --- store check: the schema (issue 35) ---------------------------------------------------


def test_store_check_finds_and_mends_lost_schema_rows_a_dropped_index_and_summaries(url):
    store = PostgresEventStore(url, clock=FakeClock())
    store.append("g1", story().events, expected_seq=0)
    store.close()
    sql(url, "DELETE FROM schema_version")
    sql(url, "DROP INDEX goals_due")
    sql(url, "DELETE FROM goals")
    reader = PostgresEventStore(url, read_only=True)  # a read opens it by what its tables show
    found = {(f.table, f.key): f for f in reader.check()}
    reader.close()
    assert found[("schema_version", f"versions 0-{len(MIGRATIONS) - 1}")].fix == "recorded again"
    assert found[("index", "goals_due")].fix == "created again"
    assert found[("goals", "'g1'")].fix == "rebuilt from its events"
    assert not any(f.repaired for f in found.values())
    writer = PostgresEventStore(url, clock=FakeClock())  # a write no longer fails
    repaired = list(writer.check(repair=True))
    assert {f.table for f in repaired} == {"schema_version", "index", "goals"}
    assert all(f.repaired for f in repaired)
    assert versions(url) == list(range(len(MIGRATIONS)))
    assert sql(url, "SELECT 1 FROM pg_indexes WHERE indexname = 'goals_due'") == [(1,)]
    assert list(writer.check()) == []
    assert [s.goal_id for s in writer.goals()] == ["g1"]
    writer.close()
