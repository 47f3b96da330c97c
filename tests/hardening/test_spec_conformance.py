"""SPEC §7-§10 read line by line against the real command (audit B).

Each test names the sentence of the spec (or of docs/cli.md, which restates it) that the
command broke before, and drives the real ``governor`` in a temporary folder.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from tests.hardening.run import assert_one_line, governor


def test_upstreams_never_creates_a_store(tmp_path: Path) -> None:
    """docs/cli.md: every command that only reads "never creates or upgrades a store: with
    none there it exits 4 naming the store it looked for" (SPEC §10: nothing is changed)."""
    result = governor(tmp_path, "upstreams", env={"GOVERNOR_STORE": ""})
    assert_one_line(result, 4, "no store at .governor/governor.db", "never creates")
    as_json = governor(tmp_path, "upstreams", "--json", env={"GOVERNOR_STORE": ""})
    assert_one_line(as_json, 4, "no store at")
    assert list(tmp_path.iterdir()) == []


def test_upstreams_reads_an_existing_store(tmp_path: Path) -> None:
    golden = Path(__file__).resolve().parent.parent / "golden" / "replans_exhausted.jsonl"
    assert governor(tmp_path, "import", str(golden)).returncode == 0
    before = (tmp_path / "s.db").stat().st_mtime_ns
    result = governor(tmp_path, "upstreams", "--json")
    assert result.returncode == 0, result.stderr
    assert [orjson.loads(line) for line in result.stdout.splitlines()] == []
    assert (tmp_path / "s.db").stat().st_mtime_ns == before
