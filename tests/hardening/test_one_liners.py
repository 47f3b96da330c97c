"""Hostile one-liners end in one line and a documented exit code (issue 9, item 7).

Each command below used to print a Python traceback (or hang, or read without limit).
Now each ends with one line on stderr naming the problem and an exit code from
``governor.cli.exit_codes``; nothing is written to the store.
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import stat
from pathlib import Path

import pytest

from tests.hardening.run import DOCUMENTED, assert_one_line, governor

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
UPSTREAM = GOLDEN / "planner_upstream_bound.jsonl"
GOAL = "g-planner-upstream-bound"
BIG = str(2**64 + 1)


def imported(tmp_path: Path, source: Path = UPSTREAM) -> Path:
    result = governor(tmp_path, "import", str(source))
    assert result.returncode == 0, result.stderr
    return tmp_path / "s.db"


def stored_goals(db: Path) -> int:
    if not db.exists():
        return 0
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT count(*) FROM goals").fetchone()[0])


# -- histories -------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["validate", "import", "explain", "replay"])
@pytest.mark.parametrize(
    "text",
    [
        '{"type":{}}\n',
        '{"type":[1]}\n',
        '{"type":null}\n',
        "[]\n",
        "\n",
        "",
        '{"deep": ' + "[" * 100_000 + "]" * 100_000 + "}\n",
    ],
    ids=["type-object", "type-list", "type-null", "a-list", "blank-line", "empty", "deep"],
)
def test_a_history_that_is_no_history_is_one_line(tmp_path: Path, command: str, text: str) -> None:
    (tmp_path / "h.jsonl").write_text(text)
    assert_one_line(governor(tmp_path, command, "h.jsonl"), 3, "h.jsonl")
    assert stored_goals(tmp_path / "s.db") == 0


def year_9999(tmp_path: Path) -> Path:
    """The first five events of a goal waiting on an outage, dated in the last minute of
    year 9999: its next try falls after the end of time."""
    lines = UPSTREAM.read_text().splitlines()[:5]
    path = tmp_path / "late.jsonl"
    path.write_text(
        "\n".join(line.replace("2026-03-01T10:00:", "9999-12-31T23:59:") for line in lines) + "\n"
    )
    return path


@pytest.mark.parametrize(
    "command",
    [
        ("validate", "late.jsonl"),
        ("replay", "late.jsonl", "--json"),
        ("replay", "late.jsonl", "--policy", "max_replans=9", "--json"),
        ("explain", "late.jsonl", "--json"),
        ("status", GOAL, "--json"),
        ("tick", GOAL),
        ("export", GOAL),
    ],
    ids=lambda c: " ".join(c[:1] + c[2:]),
)
def test_a_history_dated_in_year_9999_reads(tmp_path: Path, command: tuple[str, ...]) -> None:
    imported(tmp_path, year_9999(tmp_path))
    result = governor(tmp_path, *command)
    waits = command[0] == "tick"  # the goal waits for the outage, until the end of time
    assert result.returncode == (12 if waits else 0), result.stderr
    assert "Traceback" not in result.stderr


def test_a_time_past_year_9999_in_utc_is_one_line(tmp_path: Path) -> None:
    result = governor(tmp_path, "replay", str(UPSTREAM), "--now", "9999-12-31T23:59:59-05:00")
    assert_one_line(result, 3, "--now", "9999")


# -- option values ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("events", GOAL, "--after", "-5"),
        ("events", GOAL, "--after", BIG, "--json"),
        ("replay", str(UPSTREAM), "--at", BIG, "--json"),
        ("replay", str(UPSTREAM), "--at", "0"),
        ("service", "status", "--errors", BIG, "--json"),
        ("service", "status", "--errors", "-1"),
        ("run", GOAL, "--lease-ttl", "0"),
        ("run", GOAL, "--lease-ttl", "nan"),
        ("run", GOAL, "--lease-ttl", "inf"),
        ("tick", GOAL, "--lease-ttl", "-1"),
        ("run", GOAL, "--max-wait", "1e400"),
        ("serve", "--lease-ttl", "nan"),
        ("serve", "--poll-s", "nan"),
        ("serve", "--poll-s", "inf"),
        ("serve", "--metrics-interval", "nan"),
        ("serve", "--metrics-interval", "0"),
        ("serve", "--error-backoff", "nan"),
        ("serve", "--error-backoff-max", "inf"),
        ("serve", "--metrics-port", "70000"),
        ("serve", "--metrics-port", "-1"),
        ("serve", "--workers", BIG),
        ("ui", "--port", "70000"),
        ("ui", "--page-size", "0"),
        ("ui", "--refresh-s", "nan"),
    ],
    ids=" ".join,
)
def test_an_out_of_range_option_is_a_usage_error(tmp_path: Path, args: tuple[str, ...]) -> None:
    imported(tmp_path)
    assert_one_line(governor(tmp_path, *args, timeout=60), 2, "error: argument")


@pytest.mark.parametrize("target", ["missing/dir/x.jsonl", "."])
def test_export_to_a_path_that_cannot_be_written_is_one_line(tmp_path: Path, target: str) -> None:
    imported(tmp_path)
    result = governor(tmp_path, "export", GOAL, "-o", target)
    assert result.returncode in (3, 4)
    assert_one_line(result, result.returncode, target.split("/", maxsplit=1)[0])
    assert [p.name for p in tmp_path.iterdir() if not p.name.startswith("s.db")] == []


# -- goal files ------------------------------------------------------------------------

GOAL_TOML = """id = "g1"
title = "A goal"
objective = "Do it"
planner = "p"
worker = "p"
[profiles.p]
harness = "scripted"
"""


def _deep_json(path: Path) -> None:
    path.write_text('{"title": ' + "[" * 100_000 + "]" * 100_000 + "}")


def _deep_toml(path: Path) -> None:
    path.write_text(GOAL_TOML + "x = " + "[" * 5_000 + "]" * 5_000 + "\n")


def _deep_yaml(path: Path) -> None:
    path.write_text("title: " + "[" * 5_000 + "]" * 5_000 + "\n")


def _not_utf8(path: Path) -> None:
    path.write_bytes(GOAL_TOML.encode() + b'\nnote = "\xff\xfe"\n')


def _digits(path: Path) -> None:
    path.write_text(json.dumps({"title": "t"})[:-1] + ', "n": ' + "9" * 5_000 + "}")


def _digits_toml(path: Path) -> None:
    path.write_text(GOAL_TOML.replace('harness = "scripted"', "max_attempts = " + "9" * 5_000))


def _huge(path: Path) -> None:
    with path.open("w") as handle:
        handle.write(GOAL_TOML + 'note = "')
        handle.write("x" * (2 << 20))
        handle.write('"\n')


def _binary(path: Path) -> None:
    path.write_bytes(random.Random(9).randbytes(4096))


GOAL_FILES = {
    "deep.json": _deep_json,
    "deep.toml": _deep_toml,
    "deep.yaml": _deep_yaml,
    "latin1.toml": _not_utf8,
    "digits.json": _digits,
    "digits.toml": _digits_toml,
    "huge.toml": _huge,
    "noise.toml": _binary,
}


@pytest.mark.parametrize("command", ["new", "doctor"])
@pytest.mark.parametrize("name", sorted(GOAL_FILES))
def test_a_hostile_goal_file_is_one_line(tmp_path: Path, command: str, name: str) -> None:
    GOAL_FILES[name](tmp_path / name)
    assert_one_line(governor(tmp_path, command, name, timeout=60), 3, name)
    assert stored_goals(tmp_path / "s.db") == 0


@pytest.mark.parametrize("command", ["new", "doctor"])
@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "folder"])
def test_a_goal_file_that_is_no_file_is_refused_at_once(
    tmp_path: Path, command: str, kind: str
) -> None:
    path = tmp_path / "g.toml"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    else:
        path.mkdir()
    result = governor(tmp_path, command, "g.toml", timeout=60)
    assert_one_line(result, 3, "g.toml", "not a regular file")
    assert stat.S_ISREG(os.stat("/dev/zero").st_mode) is False


# -- a damaged store -------------------------------------------------------------------

DAMAGE = {
    "summary status": "UPDATE goals SET status = 'x' || char(10) || 'y'",
    "summary time": "UPDATE goals SET updated_at_us = 'yesterday', due_us = 1e300",
    "summary seq": "UPDATE goals SET seq = 'abc'",
    "lease": "INSERT OR REPLACE INTO leases VALUES ('{goal}', 'one', 'h', 'never')",
    "lease expiry": "INSERT OR REPLACE INTO leases VALUES ('{goal}', 1, 'h', 9e18)",
    "worker": "INSERT INTO workers VALUES ('w', 'h', 'pid', 'x', 1e300, NULL, NULL)",
    "service error": "INSERT INTO service_errors VALUES (NULL, 'when', 'w', NULL, 'e')",
}
READERS = [
    ("list",),
    ("list", "--json"),
    ("status", GOAL),
    ("tick", GOAL),
    ("service", "status"),
    ("service", "status", "--json"),
]


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_row_is_one_line_for_every_reader(tmp_path: Path, damage: str) -> None:
    db = imported(tmp_path)
    with sqlite3.connect(db) as conn:
        conn.execute(DAMAGE[damage].format(goal=GOAL))
    for command in READERS:
        result = governor(tmp_path, *command)
        assert result.returncode in DOCUMENTED, (command, result.stderr)
        assert "Traceback" not in result.stderr, (command, result.stderr)
        assert len(result.stderr.strip().splitlines()) <= 1, (command, result.stderr)


@pytest.mark.parametrize("seed", range(6))
def test_random_byte_flips_in_the_store_file_are_one_line(tmp_path: Path, seed: int) -> None:
    db = imported(tmp_path)
    data = bytearray(db.read_bytes())
    rng = random.Random(seed)
    for _ in range(8):
        where = rng.randrange(100, len(data))
        data[where] ^= 1 << rng.randrange(8)
    db.write_bytes(bytes(data))
    for command in [*READERS, ("events", GOAL), ("export", GOAL), ("replay", GOAL)]:
        result = governor(tmp_path, *command)
        assert result.returncode in DOCUMENTED, (command, result.stderr)
        assert "Traceback" not in result.stderr, (command, result.stderr)
        assert len(result.stderr.strip().splitlines()) <= 1, (command, result.stderr)


@pytest.mark.parametrize("target", ["plot.5", "missing/plot.png"])
def test_a_plot_that_cannot_be_written_is_refused_before_the_tune(
    tmp_path: Path, target: str
) -> None:
    assert governor(tmp_path, "simulate", "--goals", "2", "--out", "sim").returncode == 0
    result = governor(
        tmp_path, "tune", "sim", "--grid", "max_replans=1..2", "--plot", target, "--quiet"
    )
    assert_one_line(result, 3, target)


@pytest.mark.parametrize("verb", [("cancel", GOAL, "--reason", "")])
def test_a_value_the_event_models_refuse_is_one_line(tmp_path: Path, verb: tuple[str, ...]) -> None:
    imported(tmp_path)
    assert_one_line(governor(tmp_path, *verb), 3, "reason")
    assert governor(tmp_path, "validate", str(UPSTREAM)).returncode == 0


@pytest.mark.parametrize("option", ["--log-file", "--metrics-file"])
@pytest.mark.parametrize(("target", "code"), [("missing/dir/out.txt", 4), (".", 3)])
def test_serve_refuses_an_output_it_cannot_write_before_any_worker_starts(
    tmp_path: Path, option: str, target: str, code: int
) -> None:
    """A log or metrics file in a missing folder, or a folder, was an internal error (exit 1)
    or a traceback from the metrics thread while serve went on; now one line, exit 4 or 3."""
    imported(tmp_path)
    result = governor(tmp_path, "serve", option, target, "--poll-s", "0.1", timeout=60)
    assert_one_line(result, code, target.split("/", maxsplit=1)[0])
    assert "worker.started" not in result.stderr
