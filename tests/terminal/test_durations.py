"""Durations as people write them (issue 27 §1): ``90s``, ``5m``, ``2h`` wherever a number
of seconds is asked for — options, goal files, policies, ``--policy``, ``--grid``,
``raise --ledger runtime`` — while a history records numbers only."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from governor.analysis.grid import parse_grid
from governor.cli.values import seconds, wait_seconds
from governor.core.durations import format_duration, parse_duration, policy_durations
from governor.core.policy_input import parse_assignments, policy_from
from tests.e2e.cli import Project


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("90", 90.0),
        ("1.5", 1.5),
        ("90s", 90.0),
        ("5m", 300.0),
        ("2h", 7200.0),
        ("1d", 86400.0),
        ("1h30m", 5400.0),
        ("2m30s", 150.0),
        ("1.5h", 5400.0),
        (" 5M ", 300.0),
    ],
    ids=repr,
)
def test_a_duration_reads_as_seconds(text: str, value: float) -> None:
    assert parse_duration(text) == value


@pytest.mark.parametrize(
    "text", ["", "m", "5x", "5m5m", "30s1m", "inf", "nan", "1e400", "-", "5 minutes"]
)
def test_anything_else_is_refused_naming_the_text(text: str) -> None:
    with pytest.raises(ValueError, match="duration"):
        parse_duration(text)


def test_options_take_durations_within_their_ranges() -> None:
    assert seconds("5m") == 300.0
    assert wait_seconds("0") == 0.0
    with pytest.raises(argparse.ArgumentTypeError, match=r"from 0 to \d+ seconds"):
        wait_seconds("31d")
    with pytest.raises(argparse.ArgumentTypeError, match="not a duration"):
        seconds("soon")


def test_policies_read_durations_and_keep_numbers() -> None:
    policy = policy_from(
        {"max_runtime_s": "2h", "upstream_backoff": {"initial_s": "30s", "max_s": "15m"}}
    )
    assert (policy.max_runtime_s, policy.upstream_backoff.initial_s) == (7200.0, 30.0)
    assert policy.upstream_backoff.max_s == 900.0
    assert policy_durations({"max_replans": "5m"}) == {"max_replans": "5m"}  # a count: as given
    assert parse_assignments("max_outage_wait_s=1h")["max_outage_wait_s"] == "1h"
    assert parse_grid(["upstream_backoff.initial_s=30s,1m"]) == {
        "upstream_backoff.initial_s": [30.0, 60.0]
    }
    assert parse_grid(["max_runtime_s=1h..3h:1h"]) == {"max_runtime_s": [3600.0, 7200.0, 10800.0]}
    assert format_duration(3725) == "1h02m"


def test_a_goal_file_with_durations_records_seconds_and_the_cli_takes_them(tmp_path: Path) -> None:
    project = Project(tmp_path)
    (tmp_path / "g.toml").write_text(
        'id = "g"\ntitle = "T"\nobjective = "O"\nplanner = "p"\nworker = "p"\n'
        '[policy]\nmax_runtime_s = "2h"\n[policy.upstream_backoff]\ninitial_s = "30s"\n'
        '[profiles.p]\nharness = "scripted"\ntimeout_s = "10m"\n'
    )
    created = project.gov("new", "g.toml")
    assert created.returncode == 0, created.stderr
    [goal] = project.events("g")
    assert goal["policy"]["max_runtime_s"] == 7200.0
    assert goal["policy"]["upstream_backoff"]["initial_s"] == 30.0
    assert goal["profiles"]["p"]["timeout_s"] == 600.0
    raised = project.gov("raise", "g", "--ledger", "runtime", "--to", "3h", "--reason", "longer")
    assert raised.returncode == 0, raised.stderr
    assert project.events("g")[-1]["to"] == 10800
    refused = project.gov("raise", "g", "--ledger", "replans", "--to", "5m", "--reason", "r")
    assert refused.returncode == 3
    assert "a duration like 2h is for --ledger runtime" in refused.stderr
    assert project.gov("tick", "g", "--lease-ttl", "1m").returncode != 2
    bad = project.gov("run", "g", "--max-wait", "later")
    assert bad.returncode == 2
    assert "--max-wait" in bad.stderr


def test_a_history_still_records_numbers_only(tmp_path: Path) -> None:
    project = Project(tmp_path)
    (tmp_path / "g.toml").write_text(
        'id = "g"\ntitle = "T"\nobjective = "O"\nplanner = "p"\nworker = "p"\n'
        '[policy]\nmax_runtime_s = "2h"\n[profiles.p]\nharness = "scripted"\n'
    )
    assert project.gov("new", "g.toml").returncode == 0
    line = json.loads(project.gov("export", "g").stdout)
    line["policy"]["max_runtime_s"] = "2h"  # a history that holds the text is not one
    (tmp_path / "h.jsonl").write_text(json.dumps(line) + "\n")
    checked = project.gov("validate", "h.jsonl")
    assert checked.returncode == 3
    assert "max_runtime_s" in checked.stderr
