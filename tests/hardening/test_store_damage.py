"""Issue 24, item 8: a damaged row of the store is one line naming it (exit 7), never a crash,
and ``governor store check --repair`` mends it so that its goals can be stepped again.

Each store is real: a goal parked on a real upstream health record (a ``command`` agent
that answers with a 503 envelope while its vendor is "down"), damaged behind the store's
back with ``sqlite3``, then read by the real ``governor`` process.

Before the fix a health record with ``next_probe_at_us`` or ``probing_until_us`` at
INT64_MAX (or very negative) made ``upstreams``, ``service status`` and ``tick`` of any goal
on that upstream exit 1 ("internal error: OverflowError"), a lease token stored as text
made ``tick`` exit 1, and a summary title stored as a blob made ``status --json`` exit 1.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from tests.e2e.cli import Project
from tests.e2e.test_upstream_health import BACKOFF, agent, project_with_vendor
from tests.hardening.run import assert_one_line

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)
HEALTH_READERS = (
    ("upstreams",),
    ("upstreams", "--json"),
    ("service", "status"),
    ("service", "status", "--json"),
    ("tick", "first"),
)


@pytest.fixture(scope="module")
def parked(tmp_path_factory: pytest.TempPathFactory) -> Project:
    """A project whose goal ``first`` is parked on its failing upstream (vendor down)."""
    project, vendor = project_with_vendor(tmp_path_factory.mktemp("parked"))
    project.goal("first", agent(vendor, "planner"), agent(vendor, "worker"), **BACKOFF)
    (vendor / "down").touch()
    project.gov("run", "first", "--max-wait", "0")
    assert project.status("first")["blocked_on"] == "upstream"
    return project


@pytest.fixture
def copy(parked: Project, tmp_path: Path) -> Project:
    """The parked project with a store of its own (the upstream's name is the agent's path,
    so the project folder stays; only the store is copied)."""
    project = Project(parked.root)
    project.env["GOVERNOR_STORE"] = str(tmp_path / "governor.db")
    (tmp_path / "governor.db").write_bytes((parked.root / "governor.db").read_bytes())
    return project


def db(project: Project) -> Path:
    return Path(project.env["GOVERNOR_STORE"])


def edit_copy(project: Project, sql: str, *params: object) -> None:
    with closing(sqlite3.connect(db(project))) as raw, raw:
        raw.execute(sql, params)


def upstream_name(project: Project) -> str:
    with closing(sqlite3.connect(db(project))) as raw:
        [(name,)] = raw.execute("SELECT name FROM upstreams").fetchall()
    return str(name)


@pytest.mark.parametrize("value", [INT64_MAX, INT64_MIN], ids=["INT64_MAX", "INT64_MIN"])
@pytest.mark.parametrize("column", ["next_probe_at_us", "probing_until_us"])
def test_a_damaged_health_record_is_one_line_naming_it_and_repair_lets_its_goal_go_on(
    copy: Project, column: str, value: int
) -> None:
    name = upstream_name(copy)
    edit_copy(copy, f"UPDATE upstreams SET {column} = ?", value)
    for args in HEALTH_READERS:
        result = copy.gov(*args)
        assert_one_line(result, 7, "upstreams row", name[:40], column, str(value))

    check = copy.gov("store", "check")
    assert check.returncode == 7, check.stderr
    assert f"upstreams row '{name}': {column} holds {value}" in check.stdout
    repaired = copy.gov("store", "check", "--repair")
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    assert "repaired: dropped" in repaired.stdout

    for args in HEALTH_READERS[:4]:
        assert copy.gov(*args).returncode == 0
    tick = copy.gov("tick", "first")  # the goal is stepped again: its upstream is re-learnt
    assert tick.returncode in (0, 10, 11, 12, 14), tick.stdout + tick.stderr
    assert "Traceback" not in tick.stderr
    assert "internal error" not in tick.stderr
    assert copy.gov("store", "check").returncode == 0


def test_a_lease_token_stored_as_text_is_one_line_naming_it(copy: Project) -> None:
    first = copy.gov("tick", "first")  # a tick leaves the goal's lease row, released
    assert first.returncode != 1, first.stderr
    edit_copy(copy, "UPDATE leases SET token = 'seven' WHERE goal_id = 'first'")
    for args in (("tick", "first"), ("status", "first"), ("status", "first", "--json")):
        assert_one_line(copy.gov(*args), 7, "leases row 'first'", "token holds 'seven'")
    repaired = copy.gov("store", "check", "--repair")
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    assert "leases row 'first': token holds 'seven'" in repaired.stdout
    assert copy.gov("tick", "first").returncode != 7
    with closing(sqlite3.connect(db(copy))) as raw:
        [(token,)] = raw.execute("SELECT token FROM leases WHERE goal_id = 'first'").fetchall()
    assert token > 10**15  # the repair's token is above any granted before


def test_a_summary_title_stored_as_a_blob_is_one_line_naming_it(copy: Project) -> None:
    edit_copy(copy, "UPDATE goals SET title = ? WHERE goal_id = 'first'", b"\xff\x00title")
    for args in (("status", "--json"), ("status",), ("list",), ("list", "--json")):
        assert_one_line(copy.gov(*args), 7, "goals row 'first'", "title holds a blob of 7 bytes")
    assert copy.gov("store", "check", "--repair").returncode == 0
    listed = copy.gov("list")
    assert listed.returncode == 0, listed.stderr
    assert "Goal first" in listed.stdout


def test_text_that_is_not_utf8_is_one_line_naming_its_row(copy: Project) -> None:
    edit_copy(copy, "UPDATE goals SET reason = CAST(? AS TEXT)", b"parked \xff\xfe")
    assert_one_line(copy.gov("list"), 7, "goals row 'first'", "reason holds", "not valid UTF-8")


def test_an_agent_row_whose_pid_is_a_process_group_of_the_system_is_refused(
    copy: Project,
) -> None:
    """``killpg(0)`` is the caller's own group and ``killpg(1)`` every process: a damaged
    agent row must never reach the takeover that kills its group."""
    edit_copy(
        copy,
        "INSERT INTO agents VALUES ('first', 'elsewhere', 'boot', 0, 1, 'p1', 'x', 0, NULL)",
    )
    assert_one_line(copy.gov("tick", "first"), 7, "agents row", "pid holds 0")
    assert copy.gov("store", "check", "--repair").returncode == 0
    assert copy.gov("tick", "first").returncode != 7
