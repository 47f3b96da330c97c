"""The ``governor`` command as a user runs it: a real process, real files, real exit codes."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from governor.cli.main import build_parser
from governor.core.wire.codec import encode
from tests.story import Story

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "login-page.jsonl"


def governor(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("governor", path=str(Path(sys.executable).parent)) or "governor"
    return subprocess.run(
        [exe, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=60,
        env={**os.environ, "PYTHONWARNINGS": "error"},
    )


def write(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"".join(lines))
    return path


def lines_of(story: Story) -> list[bytes]:
    return [encode(e) + b"\n" for e in story.events]


def test_validate_accepts_the_example() -> None:
    result = governor("validate", str(EXAMPLE))
    assert result.returncode == 0, result.stderr
    assert "ok:" in result.stdout
    assert "succeeded" in result.stdout
    assert "note:" not in result.stdout + result.stderr  # the example is a current history


def bad_histories(tmp: Path) -> dict[str, tuple[Path, str]]:
    good = lines_of(Story())
    return {
        "torn": (write(tmp / "torn.jsonl", [good[0].rstrip(b"\n")]), "line 1: torn final line"),
        "unknown type": (
            write(tmp / "type.jsonl", [good[0].replace(b'"goal.created"', b'"goal.made"')]),
            "line 1: unknown event type 'goal.made'",
        ),
        "non-utf8": (
            write(tmp / "bytes.jsonl", [good[0], b'{"a": "\xfe"}\n']),
            "line 2: not valid UTF-8",
        ),
        "seq gap": (
            write(tmp / "gap.jsonl", [good[0], good[0].replace(b'"seq":1', b'"seq":3')]),
            "line 2: ",
        ),
    }


@pytest.mark.parametrize("kind", ["torn", "unknown type", "non-utf8", "seq gap"])
def test_validate_names_the_bad_line_and_writes_nothing(tmp_path: Path, kind: str) -> None:
    path, message = bad_histories(tmp_path)[kind]
    before = sorted(p.name for p in tmp_path.iterdir())
    result = governor("validate", str(path), cwd=tmp_path)
    assert result.returncode == 3
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_validate_a_missing_file_is_not_found(tmp_path: Path) -> None:
    result = governor("validate", str(tmp_path / "nope.jsonl"))
    assert result.returncode == 4
    assert "no such file" in result.stderr


def test_validate_json_reports_each_file(tmp_path: Path) -> None:
    bad, _ = bad_histories(tmp_path)["torn"]
    result = governor("validate", "--json", str(EXAMPLE), str(bad))
    assert result.returncode == 3
    first, second = (orjson.loads(line) for line in result.stdout.splitlines())
    assert first["valid"] is True
    assert first["status"] == "succeeded"
    assert second == {
        "file": str(bad),
        "valid": False,
        "line": 1,
        "error": "torn final line (no trailing newline)",
    }


def test_replay_json_prints_the_contract_shape() -> None:
    result = governor("replay", str(EXAMPLE), "--json")
    assert result.returncode == 0, result.stderr
    records = [orjson.loads(line) for line in result.stdout.splitlines()]
    assert [r["seq"] for r in records] == list(range(1, len(records) + 1))
    assert list(records[0]) == [
        "seq",
        "type",
        "status",
        "next_action",
        "blocked_on",
        "exhausted",
        "reason",
        "not_before",
        "ledger",
    ]
    assert list(records[0]["ledger"]) == ["replans", "attempts", "work", "runtime_s", "cost_usd"]
    assert list(records[0]["ledger"]["replans"]) == [
        "used",
        "charged",
        "uncharged",
        "consecutive_uncharged",
        "limit",
        "remaining",
    ]
    assert list(records[0]["ledger"]["attempts"]) == ["used", "charged", "limit", "remaining"]
    work = records[-1]["ledger"]["work"]["p2-auth"]
    assert list(work) == [
        "status",
        "next_action",
        "attempts_used",
        "charged_attempts",
        "consecutive_uncharged",
        "continuations",
        "limit",
        "remaining",
    ]
    assert work["attempts_used"] == 3
    assert work["charged_attempts"] == 2
    waiting = records[2]
    assert (waiting["status"], waiting["blocked_on"], waiting["not_before"]) == (
        "waiting",
        "upstream",
        "2026-11-02T09:00:34Z",
    )
    assert records[-1]["status"] == "succeeded"


def test_replay_at_and_now(tmp_path: Path) -> None:
    result = governor(
        "replay", str(EXAMPLE), "--json", "--at", "3", "--now", "2026-11-02T10:00:00Z"
    )
    (record,) = (orjson.loads(line) for line in result.stdout.splitlines())
    assert record["seq"] == 3
    assert (record["status"], record["next_action"]) == ("ready", "plan")


def test_replay_tolerates_a_torn_final_line_with_a_warning(tmp_path: Path) -> None:
    data = EXAMPLE.read_bytes().rstrip(b"\n")
    torn = write(tmp_path / "torn.jsonl", [data])
    result = governor("replay", str(torn))
    assert result.returncode == 0
    assert "torn final line (no trailing newline) ignored" in result.stderr


def test_replay_human_output_names_the_rule() -> None:
    result = governor("replay", str(EXAMPLE))
    assert "(goal.4)" in result.stdout
    assert "replans   2/5 (+1 uncharged)" in result.stdout


def test_bad_now_is_one_clear_line() -> None:
    result = governor("replay", str(EXAMPLE), "--now", "yesterday")
    assert result.returncode == 3
    assert (
        result.stderr.strip()
        == "error: --now: 'yesterday' is not an RFC 3339 time (e.g. 2026-11-29T12:00:00Z)"
    )


UNAFFORDABLE: dict[str, tuple[str, str]] = {
    "SPEC §12.1's example: as many milestones as replans": (
        "max_replans = 5\nmax_milestones = 5\n",
        "max_milestones 5 leaves no planner call for the completion review under max_replans 5: "
        "use max_milestones ≤ 4 or max_replans ≥ 6",
    ),
    "one replan leaves none for the completion review": (
        "max_replans = 1\n",
        "max_replans 1 leaves no planner call for the completion review: use max_replans ≥ 2",
    ),
    "no replans at all": (
        "max_replans = 0\n",
        "max_replans 0 leaves no planner call for the completion review: use max_replans ≥ 2",
    ),
    "more milestones than replans": (
        "max_replans = 2\nmax_milestones = 3\n",
        "max_milestones 3 leaves no planner call for the completion review under max_replans 2: "
        "use max_milestones ≤ 1 or max_replans ≥ 4",
    ),
}


@pytest.mark.parametrize(("policy", "line"), UNAFFORDABLE.values(), ids=UNAFFORDABLE.keys())
def test_new_refuses_a_policy_that_can_never_succeed_in_one_line(
    tmp_path: Path, policy: str, line: str
) -> None:
    """SPEC §12.1: a goal succeeds only when a planner says ``complete``, a charged call;
    a policy that leaves no planner call for it is refused with exit 3, storing nothing."""
    goal = tmp_path / "goal.toml"
    goal.write_text(
        'title = "t"\nobjective = "o"\nplanner = "p"\nworker = "p"\n'
        f"[policy]\n{policy}"
        '[profiles.p]\nharness = "scripted"\n'
    )
    store = tmp_path / "g.db"
    result = governor("--store", str(store), "new", str(goal), cwd=tmp_path)
    assert result.returncode == 3, result.stderr
    assert result.stderr.strip().splitlines() == [f"error: {goal}: policy: {line}"]
    listed = governor("--store", str(store), "list", "--json", cwd=tmp_path)
    assert listed.stdout.strip() in ("", "[]"), listed.stdout


def test_new_takes_omitted_milestones_from_replans_written_as_a_whole_float(
    tmp_path: Path,
) -> None:
    """SPEC §12.1: an omitted max_milestones is min(4, max_replans - 1), leaving a planner
    call for the completion review; ``3.0`` is the count 3. A new goal records
    ``max_same_failures`` 3 (SPEC §12.10)."""
    goal = tmp_path / "goal.toml"
    goal.write_text(
        'id = "g-float"\ntitle = "t"\nobjective = "o"\nplanner = "p"\nworker = "p"\n'
        '[policy]\nmax_replans = 3.0\n[profiles.p]\nharness = "scripted"\n'
    )
    store = str(tmp_path / "g.db")
    result = governor("--store", store, "new", str(goal), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    exported = governor("--store", store, "export", "g-float", cwd=tmp_path)
    policy = orjson.loads(exported.stdout.splitlines()[0])["policy"]
    assert (policy["max_replans"], policy["max_milestones"]) == (3, 2)
    assert policy["max_same_failures"] == 3


def test_new_refuses_a_policy_that_is_no_mapping(tmp_path: Path) -> None:
    """SPEC §5: ``policy = []`` is not a policy; it was read as the defaults."""
    goal = tmp_path / "goal.toml"
    goal.write_text(
        'title = "t"\nobjective = "o"\nplanner = "p"\nworker = "p"\npolicy = []\n'
        '[profiles.p]\nharness = "scripted"\n'
    )
    result = governor("--store", str(tmp_path / "g.db"), "new", str(goal), cwd=tmp_path)
    assert result.returncode == 3, result.stderr
    assert result.stderr.strip().splitlines() == [
        f"error: {goal}: policy: a policy is a mapping of its fields, not list"
    ]


def test_validate_notes_a_recorded_policy_without_a_completion_call_and_replay_reads_it(
    tmp_path: Path,
) -> None:
    """SPEC §12.1: a recorded ``goal.created`` whose policy breaks the rule is read exactly
    as recorded (its replay is unchanged) and ``validate`` adds a note."""
    history = Path(__file__).resolve().parents[1] / "golden" / "reopened_spent_item.jsonl"
    result = governor("validate", str(history), "--json")
    assert result.returncode == 0, result.stderr
    record = orjson.loads(result.stdout)
    assert record["notes"] == [
        "line 1: goal.created: max_replans 1 leaves no planner call for the completion review: "
        "use max_replans ≥ 2 (SPEC §12.1); a new goal is refused such a policy, this one is "
        "read as recorded"
    ]
    assert (record["status"], record["exhausted"]) == ("budget_exhausted", "replans")
    fine = governor("validate", str(EXAMPLE), "--json")
    assert orjson.loads(fine.stdout)["notes"] == []


def test_validate_reads_a_round_one_policy_with_a_note(tmp_path: Path) -> None:
    current = EXAMPLE.read_text()
    assert '"max_milestones":4,' in current  # the example is read without a note
    old = tmp_path / "round-one.jsonl"  # recorded before SPEC §11.5: 10 milestones, 5 replans
    old.write_text(current.replace('"max_milestones":4,', '"max_milestones":10,', 1))
    result = governor("validate", str(old))
    assert result.returncode == 0, result.stderr
    assert "note: " in result.stdout
    assert "max_milestones 10 is above max_replans 5" in result.stdout


def test_every_argument_of_probe_has_help() -> None:
    """Issue 35: ``probe --help`` listed --prompt, --model, --timeout-s and the harness
    with no word about them."""
    [sub] = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    probe = sub.choices["probe"]
    missing = [a.dest for a in probe._actions if not a.help]
    assert missing == []
