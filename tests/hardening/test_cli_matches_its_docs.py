"""What a new user met (issue 25 §5), each through the real command; each failed on the old main."""

from __future__ import annotations

import os
from pathlib import Path

from governor.core.policy import Policy
from tests.e2e.cli import Project


def without_matplotlib(project: Project, tmp_path: Path) -> None:
    """Make ``import matplotlib`` fail in the project's processes, as it does where the
    ``plot`` extra is not installed (a package earlier on the path that refuses to import)."""
    blocked = tmp_path / "no-plot-extra" / "matplotlib"
    blocked.mkdir(parents=True)
    (blocked / "__init__.py").write_text("raise ImportError('the plot extra is not installed')\n")
    path = os.pathsep.join(p for p in (str(blocked.parent), os.environ.get("PYTHONPATH")) if p)
    project.env["PYTHONPATH"] = path


def test_tune_plot_without_the_extra_says_so_first_and_still_prints_the_table(
    tmp_path: Path,
) -> None:
    project = Project(tmp_path)
    assert project.gov("simulate", "--goals", "4", "--out", "corpus").returncode == 0
    without_matplotlib(project, tmp_path)
    tuned = project.gov(
        "tune", "corpus", "--grid", "max_replans=2..3", "--workers", "1", "--plot", "t.png"
    )
    assert tuned.returncode == 9, tuned.stderr
    first = tuned.stderr.splitlines()[0]
    assert first == (
        "error: --plot needs the plot extra (pip install 'governor[plot]'): t.png will not be "
        "written; the table follows"
    )
    assert "Traceback" not in tuned.stderr
    assert "recommended" in tuned.stdout  # the table, all the same
    assert not (tmp_path / "t.png").exists()
    fleet = project.gov(
        "simulate", "--fleet", "aware", "--goals", "2", "--out", "f", "--plot", "f.png"
    )
    assert fleet.returncode == 9, fleet.stderr
    assert fleet.stderr.splitlines()[0].startswith("error: --plot needs the plot extra")
    assert len(list((tmp_path / "f").glob("*.jsonl"))) == 2  # the histories, all the same
    assert not (tmp_path / "f.png").exists()


def test_status_json_has_the_question_field_null_when_there_is_none(tmp_path: Path) -> None:
    project = Project(tmp_path)
    worker = {"harness": "scripted", "args": ["w.json"]}
    (tmp_path / "w.json").write_text('{"scripts": []}')
    project.goal("g", {"harness": "scripted", "args": ["w.json"]}, worker)
    status = project.status("g")
    assert "question" in status
    assert status["question"] is None


REPO = Path(__file__).resolve().parents[2]


def doc_block(doc: str, command: str) -> list[str]:
    """The lines of the example in ``docs/<doc>`` that starts with ``$ <command>``."""
    text = (REPO / "docs" / doc).read_text()
    start = text.index(f"```\n$ {command}\n") + len(f"```\n$ {command}\n")
    return text[start : text.index("```", start)].splitlines()


def test_the_replay_example_of_the_cli_doc_is_what_replay_prints(tmp_path: Path) -> None:
    shown = doc_block("cli.md", "governor replay examples/login-page.jsonl")
    result = Project(REPO).gov("replay", "examples/login-page.jsonl")
    assert result.returncode == 0, result.stderr
    printed = result.stdout.splitlines()
    lines = [line for line in shown if line.strip() != "…"]
    assert len(lines) >= 5
    for line in lines:
        assert line in printed


def test_validate_errors_start_as_the_doc_shows(tmp_path: Path) -> None:
    broken = (REPO / "tests" / "golden" / "corrupt_seq_gap.jsonl").read_text()
    (tmp_path / "broken.jsonl").write_text(broken)
    result = Project(tmp_path).gov("validate", "broken.jsonl")
    assert result.returncode == 3
    shown = doc_block("cli.md", "governor validate examples/login-page.jsonl")
    assert result.stderr.splitlines() == [shown[-1]]


def test_doctor_help_does_not_say_it_runs_anything(tmp_path: Path) -> None:
    for args in (("doctor", "--help"), ("--help",)):
        result = Project(tmp_path).gov(*args)
        assert result.returncode == 0, result.stderr
        [line] = [
            line
            for line in result.stdout.splitlines()
            if "doctor" in line or "binaries goal files need" in line
        ][-1:]
        assert " run" not in line
        assert "on PATH and run" not in result.stdout
    helped = Project(tmp_path).gov("doctor", "--help").stdout
    assert "No agent session is started" in helped


def test_probe_never_prints_none(tmp_path: Path) -> None:
    result = Project(tmp_path).gov("probe", "command", "--arg", "false")
    assert result.returncode == 8, result.stderr
    assert "None" not in result.stdout
    assert "evidence: effects=unknown output=unknown refusal=unknown\n" in result.stdout
    assert "rule default" in result.stdout


def test_a_mistyped_harness_gets_the_closest_name(tmp_path: Path) -> None:
    probed = Project(tmp_path).gov("probe", "codx")
    assert probed.returncode == 2
    assert "(did you mean 'codex'?)" in probed.stderr
    assert len(probed.stderr.splitlines()) == 1
    (tmp_path / "g.toml").write_text(
        'id = "g"\ntitle = "t"\nobjective = "o"\nacceptance = ["a"]\nplanner = "p"\n'
        'worker = "p"\n[profiles.p]\nharness = "codx"\n'
    )
    created = Project(tmp_path).gov("new", "g.toml")
    assert created.returncode == 3
    assert created.stderr.endswith("(did you mean 'codex'?)\n")
    far = Project(tmp_path).gov("probe", "zzzzz")
    assert "did you mean" not in far.stderr


def test_the_concepts_policy_table_gives_the_switches_defaults() -> None:
    doc = (REPO / "docs" / "concepts.md").read_text()
    for name in ("auto_apply", "accept_passing", "retry_blocked"):
        [row] = [line for line in doc.splitlines() if line.startswith(f"| `{name}` |")]
        default = "true" if getattr(Policy(), name) else "false"
        assert row.rstrip().endswith(f"| {default} |"), row
