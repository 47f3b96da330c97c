"""Fuzz family 5: damaged store rows, through every read command and ``tick``.

A real store — a goal that succeeded, a goal parked on its failing upstream (``command``
agents against a pretend vendor, run by the real ``governor``), a released lease, a worker
row, a service error, an agent row — is copied for each case, and one column of one table
is set behind the store's back to a hostile value: the wrong type (text in an integer,
a blob in text, text that is not UTF-8), 64-bit extremes, NULL, huge strings, invalid
JSON. Every column of every table is drawn from the database itself (``PRAGMA
table_info``), so a column added later is fuzzed without a change here. Then read
commands and ``tick`` run; the promise (``tests.fuzz.harness``): a documented exit code,
never 1, one line on stderr for a failure, no traceback. And where the value is one no
column of its kind may hold (a type no decoder takes, a time past year 9999), the command
that reads that row says so: exit 7 (issue 24, item 8).

PostgreSQL's columns are typed, so its family draws the values those types hold but
governor cannot read (``infinity``, year 294276, NaN, 64-bit extremes, text no decoder
takes) and checks the same promise on a copy of a PostgreSQL base store (``CREATE
DATABASE ... TEMPLATE``) on the real server fixture.
"""

from __future__ import annotations

import itertools
import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from governor.exec.procinfo import this_machine
from governor.registry import AgentRecord, ServiceError, WorkerBeat
from governor.store.url import open_store
from tests.e2e.cli import Project
from tests.e2e.test_upstream_health import BACKOFF, agent, project_with_vendor
from tests.fuzz.harness import Outcome, cases, check_outcome, governor, inside, tally
from tests.story import T0

if TYPE_CHECKING:
    from tests.store.postgres_server import PostgresServer

pytest_plugins = ["tests.store.postgres_server"]

READS: Final = (
    ("list",),
    ("list", "--json"),
    ("status",),
    ("status", "--json"),
    ("status", "first"),
    ("status", "done", "--json"),
    ("events", "first"),
    ("export", "done"),
    ("replay", "first"),
    ("explain", "first"),
    ("reclassify", "first"),
    ("upstreams",),
    ("upstreams", "--json"),
    ("service", "status"),
    ("service", "status", "--json"),
    ("store", "check"),
    ("store", "check", "--json"),
    ("tick", "first"),
    ("tick", "done"),
)
"""The commands a case may run (``tick`` steps the parked goal: it probes its upstream)."""
READER: Final = {
    "goals": ("list",),
    "leases": ("status", "first"),
    "upstreams": ("upstreams",),
    "workers": ("service", "status"),
    "service_errors": ("service", "status"),
    "agents": ("tick", "first"),
    "events": ("events", "first"),
    "pools": ("pool", "list", "--json"),
    "pool_events": ("pool", "list", "--json"),  # the base store has no pool (yet)
}
"""The command that reads every row of a table (each case runs it too)."""
UNREAD: Final = frozenset(
    {("events", "type"), ("events", "at_us"), ("goals", "due_us"), ("goals", "chain")}
)
"""Columns the command above does not decode: kept for queries by hand, for ordering, or
read by another command (a stream's chain by every full load)."""
BAD_UTF8: Final = b"\xff\xfe not UTF-8"
INT64: Final = (2**63 - 1, -(2**63))
SQLITE_VALUES: Any = st.one_of(
    st.sampled_from(
        [None, "", "abc", "x" * 100_000, "\x00\x1b[31m", "1e400", "{\"a\":", "[1, 2]",
         b"\xff\xfe", b"", 0, -1, 1, 2, 2**31, *INT64, 1.5, -0.0, 1e308, float("inf"),
         float("-inf"), BAD_UTF8]
    ),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.text(max_size=30),
)  # fmt: skip


@dataclass(frozen=True)
class Base:
    """The project folder (its agents' paths name the upstream) and its SQLite store."""

    project: Project
    db: Path
    columns: dict[str, list[tuple[str, str, bool]]]
    """Table -> (column, declared type, part of the key) for every column."""


def build(project: Project, store: str) -> None:
    """The goals, run by the real command, and the registry rows the library writes."""
    project.env["GOVERNOR_STORE"] = store
    vendor = project.root / "vendor"
    (vendor / "down").unlink(missing_ok=True)
    for goal_id in ("done", "first"):
        project.goal(goal_id, agent(vendor, "planner"), agent(vendor, "worker"), **BACKOFF)
    assert project.gov("run", "done", "--max-wait", "5").returncode == 0
    (vendor / "down").touch()
    project.gov("run", "first", "--max-wait", "0")
    with closing(open_store(store)) as opened:
        opened.heartbeat(WorkerBeat("w1", "host-1", 4242, T0, T0, "first", T0))
        opened.add_service_error(ServiceError(T0, "w1", "first", "lost the database"))
        # an agent of this machine long gone (no process ever started at that tick): a
        # takeover reads the row, finds nothing to end, and drops it
        host, boot = this_machine()
        opened.add_agent(AgentRecord("first", host, boot, 4242, 2**62, "p1", "x", T0))


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Base:
    project, _vendor = project_with_vendor(tmp_path_factory.mktemp("rows"))
    db = project.root / "base.db"
    build(project, str(db))
    with closing(sqlite3.connect(db)) as raw:
        tables = [t for (t,) in raw.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        columns = {
            t: [(c[1], c[2], bool(c[5])) for c in raw.execute(f"PRAGMA table_info({t})")]
            for t in tables
            if t not in ("schema_version", "sqlite_sequence")
        }
    return Base(project, db, columns)


def apply(db: Path, table: str, column: str, value: object) -> bool:
    """Set the column in every row of the table (one row of ``events``); False when the
    database refuses the value (NOT NULL, a key taken twice) or the table has no row to
    damage (the base store has no pool)."""
    target = "CAST(? AS TEXT)" if value == BAD_UTF8 else "?"
    where = " WHERE goal_id = 'first' AND seq = 2" if table == "events" else ""
    with closing(sqlite3.connect(db)) as raw:
        try:
            with raw:
                changed = raw.execute(f"UPDATE {table} SET {column} = {target}{where}", (value,))
        except sqlite3.IntegrityError:
            return False
    return changed.rowcount > 0


def unreadable(declared: str, column: str, value: object) -> bool:
    """Whether no column of this kind may hold ``value``: every reader must refuse it."""
    if value == BAD_UTF8 or isinstance(value, bytes):
        return declared != "BLOB"
    if declared in ("INTEGER", "REAL") and isinstance(value, str):
        try:
            float(value)
        except ValueError:
            return True
        return False
    return column.endswith("_us") and value in INT64


def run(base: Base, store: str, argv: tuple[str, ...]) -> Outcome:
    with inside(base.project.root):
        return governor([*argv, "--store", store])


def test_every_table_the_store_keeps_is_fuzzed(base: Base) -> None:
    """A table added later must say which command reads it (``READER``)."""
    assert set(base.columns) == set(READER)


def test_damaged_rows_of_every_table_keep_the_promise(
    base: Base, tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GOVERNOR_STORE", raising=False)
    counter = itertools.count()
    every = [(t, c) for t, cols in sorted(base.columns.items()) for c in cols]

    @settings(
        max_examples=cases(request.config, long=1_000),
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(
        where=st.sampled_from(every),
        value=SQLITE_VALUES,
        argv=st.lists(st.sampled_from(READS), min_size=1, max_size=3),
    )
    def case(where: tuple[str, tuple[str, str, bool]], value: object, argv: list[Any]) -> None:
        table, (column, declared, key) = where
        db = tmp_path / f"c{next(counter)}.db"
        shutil.copy(base.db, db)
        if not apply(db, table, column, value):
            return
        for args in (READER[table], *argv):
            outcome = run(base, str(db), args)
            counted.add(outcome)
            check_outcome(outcome)
            strict = not key and (table, column) not in UNREAD
            if args == READER[table] and strict and unreadable(declared, column, value):
                assert outcome.code == 7, (table, column, value, outcome)
                named = "is corrupt" if table == "events" else f"{table} row"
                assert named in outcome.stderr, outcome.stderr
        db.unlink()

    with tally("store rows", request) as counted:
        case()


# --- PostgreSQL: the values its typed columns hold -----------------------------------------

PG_VALUES: Final = {
    "timestamp with time zone": [
        "'infinity'", "'-infinity'", "'294276-12-31 00:00:00+00'", "'4713-01-01 00:00:00+00 BC'",
        "'0001-01-01 00:00:00+00'", "'9999-12-31 23:59:59.999999+00'",
    ],
    "bigint": [str(2**63 - 1), str(-(2**63)), "-1", "0"],
    "integer": [str(2**31 - 1), str(-(2**31)), "-1", "0"],
    "double precision": ["'NaN'", "'Infinity'", "'-Infinity'", "-1", "1e308"],
    "text": ["''", "'bogus'", "repeat('x', 100000)", "E'\\x1b[31m'", "'{\"a\":'"],
    "boolean": ["NULL"],
    "bytea": ["'\\x00'::bytea", "''::bytea", "convert_to('{\"a\":', 'UTF8')"],
}  # fmt: skip
"""Values PostgreSQL's types hold that a ``datetime``, a bound or a decoder refuses."""


@pytest.fixture(scope="module")
def pg_base(base: Base, postgres_server: PostgresServer) -> Iterator[tuple[str, dict[str, Any]]]:
    """The same goals in a PostgreSQL database (the template of each case), its columns."""
    name = "fuzz_rows_base"
    url = postgres_server.create_database(name)
    build(Project(base.project.root), url)
    with psycopg.connect(url, autocommit=True) as raw:
        rows = raw.execute(
            "SELECT c.table_name, c.column_name, c.data_type, c.is_nullable, "
            "  EXISTS (SELECT 1 FROM information_schema.key_column_usage k "
            "          WHERE k.table_name = c.table_name AND k.column_name = c.column_name) "
            "FROM information_schema.columns c WHERE c.table_schema = 'public' "
            "AND c.table_name <> 'schema_version' AND c.is_identity = 'NO' ORDER BY 1, 2"
        ).fetchall()
    columns: dict[str, Any] = {}
    for table, column, kind, nullable, key in rows:
        columns.setdefault(table, []).append((column, kind, nullable == "YES", key))
    yield name, columns
    postgres_server.sql(f'DROP DATABASE "{name}" WITH (FORCE)')


def test_damaged_rows_of_a_postgresql_store_keep_the_promise(
    base: Base,
    pg_base: tuple[str, dict[str, Any]],
    postgres_server: PostgresServer,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("GOVERNOR_STORE", raising=False)
    template, columns = pg_base
    counter = itertools.count()
    every = [
        (t, c, kind, key)
        for t, cols in sorted(columns.items())
        for c, kind, nullable, key in cols
        if kind in PG_VALUES and (kind != "boolean" or nullable)
    ]

    @settings(
        max_examples=cases(request.config, long=500),
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(
        where=st.sampled_from(every),
        pick=st.integers(min_value=0),
        argv=st.lists(st.sampled_from(READS), min_size=1, max_size=2),
    )
    def case(where: tuple[str, str, str, bool], pick: int, argv: list[Any]) -> None:
        table, column, kind, _key = where
        literal = PG_VALUES[kind][pick % len(PG_VALUES[kind])]
        name = f"fuzz_rows_{next(counter)}"
        url = postgres_server.create_database(name, f'TEMPLATE "{template}"')
        try:
            rows = " WHERE goal_id = 'first' AND seq = 2" if table == "events" else ""
            with psycopg.connect(url, autocommit=True) as raw:
                try:
                    raw.execute(f"UPDATE {table} SET {column} = {literal}{rows}")  # type: ignore[arg-type]
                except psycopg.errors.IntegrityError:
                    return
                except psycopg.errors.DataError:
                    return  # a value this column's type cannot take after all
            for args in (READER[table], *argv):
                outcome = run(base, url, args)
                counted.add(outcome)
                check_outcome(outcome)
        finally:
            postgres_server.sql(f'DROP DATABASE "{name}" WITH (FORCE)')

    with tally("store rows (PostgreSQL)", request) as counted:
        case()
