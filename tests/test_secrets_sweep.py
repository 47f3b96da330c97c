"""The suite's sweep finds a vendor key in a store or a log, and only there."""

from __future__ import annotations

import sqlite3
import tempfile
from pathlib import Path

from tests.fakevendor.clis import FAKE_ANTHROPIC_KEY, FAKE_OPENAI_KEY
from tests.secrets_sweep import holders


def test_a_key_in_a_sqlite_store_or_a_log_is_found() -> None:
    # planted outside the suite's temporary folder, which the sweep itself reads
    with tempfile.TemporaryDirectory() as folder:
        _plant_and_find(Path(folder))


def _plant_and_find(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / "governor.db")
    db.execute("create table events (body text)")
    db.execute("insert into events values (?)", (f"error: key {FAKE_OPENAI_KEY} refused",))
    db.commit()
    db.close()
    (tmp_path / "serve.log").write_text(f'{{"line": "{FAKE_ANTHROPIC_KEY}"}}\n')
    found = {(path.name, key) for path, key in holders(tmp_path)}
    assert found == {("governor.db", FAKE_OPENAI_KEY), ("serve.log", FAKE_ANTHROPIC_KEY)}


def test_a_clis_own_home_and_other_files_are_not_swept(tmp_path: Path) -> None:
    sessions = tmp_path / "home" / ".codex" / "sessions"
    sessions.mkdir(parents=True)
    (sessions / "rollout.jsonl").write_text(f"my key is {FAKE_OPENAI_KEY}\n")
    (tmp_path / "agent.py").write_text(f"KEY = {FAKE_OPENAI_KEY!r}\n")
    (tmp_path / "clean.jsonl").write_text('{"type": "goal.created"}\n')
    assert list(holders(tmp_path)) == []
