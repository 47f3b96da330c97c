"""Issue 24, item 9: summary damage is found by ``governor store check`` and mended by
``--repair`` from the events, which are never changed.

Before: with the summary rows deleted ``list`` exited 0 showing no goal and nothing could
tell; an edited summary status was shown as if true. Read commands still trust the
summaries (they stay fast); ``store check`` is how an operator verifies them.
"""

from __future__ import annotations

import functools
import re
import sqlite3
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import orjson
import pytest

from governor.cli import live
from governor.cli.main import main
from governor.store.sqlite import SqliteEventStore
from governor.store.transfer import import_history
from tests.hardening.run import assert_one_line, governor

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
VALID_GOLDEN = sorted(p for p in GOLDEN.glob("*.jsonl") if not p.name.startswith("corrupt_"))
SOME = ("replans_exhausted", "awaiting_review_plan", "budget_raised_replans")


def store_of(tmp_path: Path, names: tuple[str, ...] | None = None) -> list[str]:
    """Import golden histories into ``tmp_path/s.db`` (the store ``governor`` reads there)."""
    paths = VALID_GOLDEN if names is None else [GOLDEN / f"{n}.jsonl" for n in names]
    with SqliteEventStore(tmp_path / "s.db") as store:
        return [import_history(store, path).goal_id for path in paths]


def edit(tmp_path: Path, sql: str, *params: object) -> None:
    with closing(sqlite3.connect(tmp_path / "s.db")) as raw, raw:
        raw.execute(sql, params)


def rows(tmp_path: Path, sql: str) -> list[tuple[Any, ...]]:
    with closing(sqlite3.connect(tmp_path / "s.db")) as raw:
        return raw.execute(sql).fetchall()


def listed(tmp_path: Path) -> dict[str, str]:
    result = governor(tmp_path, "list", "--json")
    assert result.returncode == 0, result.stderr
    return {r["goal_id"]: r["status"] for r in map(orjson.loads, result.stdout.splitlines())}


def test_every_golden_history_checks_clean(tmp_path: Path) -> None:
    """No false alarm: every valid golden history, as ``import`` stores it, is sound."""
    goals = store_of(tmp_path)
    result = governor(tmp_path, "store", "check")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().splitlines()[-1].startswith(f"checked {len(goals)} goals")
    assert result.stdout.strip().endswith(": 0 differences")


def test_deleted_summaries_are_found_and_rebuilt_from_the_events(tmp_path: Path) -> None:
    goals = store_of(tmp_path, SOME)
    before, events = listed(tmp_path), rows(tmp_path, "SELECT * FROM events")
    edit(tmp_path, "DELETE FROM goals")
    assert listed(tmp_path) == {}  # read commands trust the summaries ...

    check = governor(tmp_path, "store", "check")  # ... and the check does not
    assert_one_line(check, 7, "the store has 3 differences", "--repair")
    found = check.stdout.strip().splitlines()
    assert found[:-1] == [
        f"goals row '{g}': missing, though the goal has "
        f"{len(rows(tmp_path, f'SELECT 1 FROM events WHERE goal_id = {g!r}'))} events; "
        "--repair: rebuilt from its events"
        for g in sorted(goals)
    ]
    as_json = governor(tmp_path, "store", "check", "--json")
    assert as_json.returncode == 7
    records = [orjson.loads(line) for line in as_json.stdout.splitlines()]
    assert [r["key"] for r in records[:-1]] == [repr(g) for g in sorted(goals)]
    assert records[-1]["differences"] == 3
    assert not records[-1]["ok"]

    repaired = governor(tmp_path, "store", "check", "--repair")
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    assert repaired.stdout.count("repaired: rebuilt from its events") == 3
    assert listed(tmp_path) == before
    assert rows(tmp_path, "SELECT * FROM events") == events  # never touched
    assert governor(tmp_path, "store", "check").returncode == 0


def test_an_edited_status_is_found_and_rebuilt(tmp_path: Path) -> None:
    [goal] = store_of(tmp_path, ("replans_exhausted",))
    true = listed(tmp_path)[goal]
    assert true != "succeeded"
    edit(tmp_path, "UPDATE goals SET status = 'succeeded', next_action = 'none'")
    assert listed(tmp_path)[goal] == "succeeded"  # shown as it is stored
    check = governor(tmp_path, "store", "check")
    assert check.returncode == 7
    assert f"goals row '{goal}': status is 'succeeded', its events say '{true}'" in check.stdout
    assert governor(tmp_path, "store", "check", "--repair").returncode == 0
    assert listed(tmp_path)[goal] == true


def test_an_edited_due_time_that_hides_a_goal_is_found(tmp_path: Path) -> None:
    [goal] = store_of(tmp_path, ("replans_exhausted",))
    edit(tmp_path, "UPDATE goals SET due_us = 253402300799999999")  # 9999-12-31
    check = governor(tmp_path, "store", "check")
    assert check.returncode == 7
    assert f"goals row '{goal}': due is 9999-12-31" in check.stdout
    assert governor(tmp_path, "store", "check", "--repair").returncode == 0
    assert governor(tmp_path, "store", "check").returncode == 0


def test_an_edited_seq_is_rebuilt_when_the_chain_shows_the_rows_are_whole(tmp_path: Path) -> None:
    [goal] = store_of(tmp_path, ("replans_exhausted",))
    [(seq,)] = rows(tmp_path, "SELECT seq FROM goals")
    edit(tmp_path, "UPDATE goals SET seq = seq + 5")
    assert governor(tmp_path, "events", goal).returncode == 7  # the store says: deleted?
    check = governor(tmp_path, "store", "check", "--repair")
    assert check.returncode == 0, check.stdout + check.stderr
    assert f"seq is {seq + 5}, but the stream ends at event {seq}" in check.stdout
    assert governor(tmp_path, "events", goal).returncode == 0


@pytest.mark.parametrize("damage", ["a byte added", "the last row deleted"])
def test_damaged_events_are_reported_and_never_changed(tmp_path: Path, damage: str) -> None:
    [goal] = store_of(tmp_path, ("replans_exhausted",))
    [(last,)] = rows(tmp_path, "SELECT MAX(seq) FROM events")
    if damage == "a byte added":  # still valid JSON: only the checksum tells
        edit(tmp_path, "UPDATE events SET body = CAST(body AS TEXT) || ' ' WHERE seq = 3")
        expected = f"events row '{goal}': event 3: the body does not match its checksum"
    else:
        edit(tmp_path, "DELETE FROM events WHERE seq = ?", last)
        expected = f"the stream ends at event {last - 1}, but the store recorded {last}"
    before = rows(tmp_path, "SELECT * FROM events"), rows(tmp_path, "SELECT * FROM goals")
    for args in (("store", "check"), ("store", "check", "--repair")):
        result = governor(tmp_path, *args)
        assert result.returncode == 7, result.stdout + result.stderr
        assert expected in result.stdout
        assert "restore the store from a backup or an export" in result.stdout
    after = rows(tmp_path, "SELECT * FROM events"), rows(tmp_path, "SELECT * FROM goals")
    assert after == before


def test_a_check_without_repair_never_writes(tmp_path: Path) -> None:
    store_of(tmp_path, SOME)
    edit(tmp_path, "DELETE FROM goals")
    db = tmp_path / "s.db"
    before = db.read_bytes()
    assert governor(tmp_path, "store", "check").returncode == 7
    assert db.read_bytes() == before


def test_progress_off_a_terminal_is_plain_lines_without_carriage_returns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """A long check shows its progress on stderr: off a terminal (a log, a pipe) as plain
    lines, never a carriage return or an escape sequence. The heartbeat's silence (30 s) is
    shortened so that a short check shows it."""
    store_of(tmp_path, SOME)
    monkeypatch.setattr(
        live, "PlainScreen", functools.partial(live.PlainScreen, heartbeat_s=0, poll_s=0.001)
    )
    slow = SqliteEventStore._rows

    def rows(self: SqliteEventStore, *args: Any) -> Any:
        time.sleep(0.05)  # a long check, made of a short one
        return slow(self, *args)

    monkeypatch.setattr(SqliteEventStore, "_rows", rows)
    assert main(["store", "check", "--store", str(tmp_path / "s.db")]) == 0
    captured = capfd.readouterr()
    assert captured.out.strip().endswith(": 0 differences")
    assert re.search(r"^checked \d+ of about 3 goals \(\d+ events\)$", captured.err, re.M)
    assert "\r" not in captured.err
    assert "\x1b" not in captured.err
