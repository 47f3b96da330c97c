"""Every command that reads a history checks it (issue 9, item 8).

``replay --policy`` and ``explain`` used to fold any sequence of events they were given:
a reversed history, one with a seq gap, one whose time goes backwards got advice and
exit 0. Now each is refused (exit 3) with one line naming the file and the line, like
``validate`` and plain ``replay`` refuse them.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.hardening.run import assert_one_line, governor

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
SOURCE = GOLDEN / "replans_exhausted.jsonl"
"""A goal that stopped on a budget: explain has advice for it."""


def _reversed(lines: list[str]) -> list[str]:
    return lines[::-1]


def _gap(lines: list[str]) -> list[str]:
    return lines[:3] + lines[4:]


def _time_back(lines: list[str]) -> list[str]:
    return [*lines[:-1], lines[-1].replace('"at": "2026', '"at": "2025', 1)]


DAMAGE: dict[str, tuple[Callable[[list[str]], list[str]], str]] = {
    "reversed": (_reversed, "line 1"),
    "seq-gap": (_gap, "line 4"),
    "time-backwards": (_time_back, "goes back"),
}

COMMANDS = {
    "explain": ("explain",),
    "explain --json": ("explain", "--json"),
    "replay --policy": ("replay", "--policy", "max_replans=9"),
    "replay --policy --json": ("replay", "--policy", "max_replans=9", "--json"),
    "replay": ("replay",),
    "validate": ("validate",),
}


def test_the_source_history_is_valid_and_explained(tmp_path: Path) -> None:
    shutil.copy(SOURCE, tmp_path / "h.jsonl")
    explained = governor(tmp_path, "explain", "h.jsonl")
    assert explained.returncode == 0, explained.stderr
    assert "max_replans" in explained.stdout
    assert '"at": "2026' in SOURCE.read_text()
    assert len(SOURCE.read_text().splitlines()) == 5


@pytest.mark.parametrize("damage", sorted(DAMAGE))
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_broken_history_is_refused_by_every_reader(
    tmp_path: Path, command: str, damage: str
) -> None:
    change, where = DAMAGE[damage]
    lines = SOURCE.read_text().splitlines()
    (tmp_path / "h.jsonl").write_text("\n".join(change(lines)) + "\n")
    result = governor(tmp_path, *COMMANDS[command][:1], "h.jsonl", *COMMANDS[command][1:])
    assert_one_line(result, 3, "h.jsonl", where)
    if command != "replay":  # a plain replay streams the steps before the broken line
        assert result.stdout == ""
