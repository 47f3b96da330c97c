"""Agent text never drives the reader's terminal (issue 9, item 11).

An agent's error text is recorded as it was written. ``events``, ``explain`` and the
other text outputs used to print it raw, so an agent could clear the screen, retitle
the window, or hide text behind a carriage return or a bidirectional override. Now
every such character is printed as its escape; ``--json`` was always escaped.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest

from governor.render.terminal import printable
from tests.hardening.run import governor

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
GOAL = "g-replans-exhausted"
HOSTILE = "\x1b]0;owned\x07\x1b[2J\x1b[31mred\rover\u202eevil\x9b1m\x00"
RAW = ("\x1b", "\x07", "\r", "\u202e", "\x9b", "\x00")


def hostile_history(tmp_path: Path) -> Path:
    path = tmp_path / "h.jsonl"
    shutil.copy(GOLDEN / "replans_exhausted.jsonl", path)
    text = path.read_text().replace("reply is not valid JSON", orjson.dumps(HOSTILE).decode()[1:-1])
    path.write_text(text)
    assert governor(tmp_path, "import", "h.jsonl").returncode == 0
    return path


@pytest.mark.parametrize(
    "command",
    [
        ("events", GOAL),
        ("explain", "h.jsonl"),
        ("explain", GOAL),
        ("status", GOAL),
        ("replay", "h.jsonl", "--all"),
    ],
    ids=" ".join,
)
def test_agent_text_is_printed_escaped(tmp_path: Path, command: tuple[str, ...]) -> None:
    hostile_history(tmp_path)
    result = governor(tmp_path, *command)
    assert result.returncode in (0, 11), result.stderr
    shown = result.stdout + result.stderr
    for char in RAW:
        assert char not in shown, (char, shown)
    if command[0] in ("events", "explain"):  # explain shows the error's last line
        assert "\\u202eevil\\x9b1m\\x00" in shown
    if command[0] == "events":
        assert "\\x1b]0;owned\\x07\\x1b[2J" in shown


def test_json_output_keeps_the_text_exactly(tmp_path: Path) -> None:
    hostile_history(tmp_path)
    result = governor(tmp_path, "events", GOAL, "--json")
    errors = [orjson.loads(line).get("error") for line in result.stdout.splitlines()]
    assert HOSTILE in errors


def test_printable_keeps_text_and_escapes_controls() -> None:
    assert printable("plain text\twith tabs\nand lines, ünïcødé, 日本") == (
        "plain text\twith tabs\nand lines, ünïcødé, 日本"
    )
    assert printable("a\x1b[2Jb\rc\x7f\udfff") == "a\\x1b[2Jb\\x0dc\\x7f\\udfff"
