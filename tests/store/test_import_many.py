"""``governor import`` takes many files or folders in one command (issue 27 §5): each file
its own transaction, a meter on stderr, a file that fails named on one line while the
others go on, and the exit code of the first failure."""

from __future__ import annotations

import subprocess
from pathlib import Path

import orjson
import pytest

from tests.e2e.cli import GOVERNOR


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    made = subprocess.run(
        [GOVERNOR, "simulate", "--goals", "12", "--out", "corpus", "--seed", "3"],
        cwd=tmp_path, capture_output=True, timeout=300,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    return tmp_path


def governor(cwd: Path, *argv: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [GOVERNOR, "--store", "s.db", *argv], cwd=cwd, capture_output=True, timeout=300
    )


def test_a_folder_imports_every_history_with_a_meter(corpus: Path) -> None:
    imported = governor(corpus, "import", "corpus")
    assert imported.returncode == 0, imported.stderr
    lines = imported.stdout.decode().splitlines()
    assert len(lines) == 12
    assert all(line.startswith("imported sim-0000") for line in lines)
    assert b"importing: 12/12" in imported.stderr
    assert b"\r" not in imported.stderr
    listed = governor(corpus, "list", "--json")
    assert len(listed.stdout.splitlines()) == 12
    exported = governor(corpus, "export", "sim-000003")
    assert exported.stdout == (corpus / "corpus" / "sim-000003.jsonl").read_bytes()


def test_a_file_that_fails_is_one_line_and_the_others_go_on(corpus: Path) -> None:
    files = sorted((corpus / "corpus").glob("*.jsonl"))
    assert governor(corpus, "import", str(files[0])).returncode == 0  # already there
    broken = corpus / "broken.jsonl"
    broken.write_bytes(files[1].read_bytes()[:-30])  # a torn final line
    result = governor(corpus, "import", "--json", str(broken), "corpus")
    assert result.returncode == 3  # the first failure's code: an invalid history
    errors = result.stderr.decode().splitlines()
    problems = [line for line in errors if line.startswith("error: ")]
    assert len(problems) == 2
    assert problems[0].startswith(f"error: {broken}: ")
    assert f"error: {files[0].relative_to(corpus)}: " in problems[1]
    assert "already in the store" in problems[1]
    records = [orjson.loads(line) for line in result.stdout.splitlines()]
    assert len(records) == 11  # every other file of the folder
    assert set(records[0]) == {"goal_id", "events", "notes"}


def test_one_file_keeps_its_one_line_error_and_code(corpus: Path) -> None:
    missing = governor(corpus, "import", "nope.jsonl")
    assert missing.returncode == 4
    assert missing.stderr.decode().splitlines() == ["error: nope.jsonl: no such file"]
    (corpus / "empty-folder").mkdir()
    empty = governor(corpus, "import", "empty-folder")
    assert empty.returncode == 4
    assert empty.stderr.decode().splitlines() == [
        "error: empty-folder: the folder holds no *.jsonl history"
    ]
