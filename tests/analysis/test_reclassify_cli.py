"""``governor reclassify`` as a user runs it: a real process on histories the OLD main
(d821a1e, before SPEC §12.6 and §12.8) recorded with the real claude and codex CLIs
against the fake vendor (``tests/fixtures/old_main/record.py``), on golden histories and
on a goal in a store."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.e2e.cli import Project

OLD_MAIN = Path(__file__).resolve().parent.parent / "fixtures" / "old_main"
CLAUDE = OLD_MAIN / "claude-overload-in-200.jsonl"
CODEX = OLD_MAIN / "codex-insufficient-quota.jsonl"
GOLDEN = Path(__file__).resolve().parent.parent / "golden"


def reclassify(tmp_path: Path, *args: str) -> dict[str, Any]:
    result = Project(tmp_path).gov("reclassify", *args, "--json")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    return orjson.loads(result.stdout)  # type: ignore[no-any-return]


def test_claude_overloads_charged_by_old_main_are_uncharged_today_and_the_goal_goes_on(
    tmp_path: Path,
) -> None:
    record = reclassify(tmp_path, str(CLAUDE))
    failures = record["failures"]
    assert [f["seq"] for f in failures] == [3, 7]
    for failure in failures:
        assert failure["recorded"] == {"class": None, "rule": "upstream-text", "charged": True}
        assert failure["today"] == {"class": "upstream", "rule": "upstream-text", "charged": False}
        assert failure["reading"] == "inferred"
        assert failure["changed"] is True
        assert any("message_start" in a for a in failure["assumed"])
    assert record["changed"] == 2
    # old main stopped with its charged replans spent; today two of them were free
    assert record["recorded_final"]["status"] == "budget_exhausted"
    assert record["recorded_final"]["ledger"]["replans"]["charged"] == 3
    assert (record["final"]["status"], record["final"]["next_action"]) == ("ready", "plan")
    assert record["final"]["ledger"]["replans"]["charged"] == 1
    assert record["final"]["ledger"]["replans"]["uncharged"] == 2
    assert (record["outcome"], record["known"]) == ("censored", False)
    assert record["written"] is False


def test_a_codex_insufficient_quota_parked_by_old_main_stops_at_once_today(
    tmp_path: Path,
) -> None:
    record = reclassify(tmp_path, str(CODEX))
    [failure] = record["failures"]
    assert failure["recorded"] == {"class": "upstream", "rule": "vendor-status", "charged": False}
    assert failure["today"] == {"class": "environment", "rule": "billing", "charged": False}
    assert failure["reading"] == "inferred"
    assert "the CLI's own words for insufficient_quota" in failure["read"]
    assert failure["assumed"] == []
    assert (record["recorded_final"]["status"], record["recorded_final"]["blocked_on"]) == (
        "waiting",
        "upstream",
    )
    assert (record["final"]["status"], record["final"]["blocked_on"]) == (
        "blocked",
        "environment",
    )
    assert (record["outcome"], record["known"]) == ("stopped_earlier", True)


def test_the_text_names_both_verdicts_the_inference_and_that_nothing_was_written(
    tmp_path: Path,
) -> None:
    result = Project(tmp_path).gov("reclassify", str(CLAUDE))
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert "2 recorded failures judged again by today's classifier, 2 changed" in text
    assert "recorded: no class (upstream-text), charged" in text
    assert "today:    upstream (upstream-text), uncharged" in text
    assert "inferred: no observation was recorded with it; read from its evidence and text" in text
    assert "assumed: the 2 output tokens were message_start placeholders" in text
    assert "recorded:    budget_exhausted/none [replans exhausted]" in text
    assert "today:       ready/plan" in text
    assert "replans   1/3 (+2 uncharged)" in text
    assert "`governor import`" in text
    assert "never writes" in text


def test_a_folder_and_a_goal_in_the_store_and_the_store_is_not_written(tmp_path: Path) -> None:
    folder = tmp_path / "histories"
    folder.mkdir()
    for path in (CLAUDE, CODEX):
        shutil.copy(path, folder)
    project = Project(tmp_path)
    result = project.gov("reclassify", str(folder), "--json")
    assert result.returncode == 0, result.stderr
    records = [orjson.loads(line) for line in result.stdout.splitlines()]
    assert [r["goal_id"] for r in records] == ["claude-overload-in-200", "codex-insufficient-quota"]
    assert project.gov("import", str(CODEX)).returncode == 0
    before = project.gov("export", "codex-insufficient-quota").stdout
    stored = reclassify(tmp_path, "codex-insufficient-quota")
    assert stored["failures"][0]["today"]["class"] == "environment"
    assert project.gov("export", "codex-insufficient-quota").stdout == before


def test_a_golden_history_keeps_its_verdicts(tmp_path: Path) -> None:
    record = reclassify(tmp_path, str(GOLDEN / "planner_upstream_bound.jsonl"))
    assert record["failures"]
    assert record["changed"] == 0
    assert record["outcome"] == "same"


@pytest.mark.parametrize(
    ("args", "code", "says"),
    [
        (["missing.jsonl"], 4, "no such file"),
        (["bad.jsonl"], 3, "line 1"),
        (["empty.jsonl"], 3, "empty"),
        (["--now", "yesterday", "CLAUDE"], 3, "--now"),
        ([], 2, "required"),
    ],
    ids=[
        "a missing file",
        "a file that is not a history",
        "an empty file",
        "a bad time",
        "no history",
    ],
)
def test_bad_input_is_one_line_and_a_documented_exit_code(
    tmp_path: Path, args: list[str], code: int, says: str
) -> None:
    (tmp_path / "bad.jsonl").write_text("not json\n")
    (tmp_path / "empty.jsonl").write_text("")
    argv = [str(CLAUDE) if a == "CLAUDE" else a for a in args]
    result = Project(tmp_path).gov("reclassify", *argv)
    assert result.returncode == code, result.stderr
    assert says in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
