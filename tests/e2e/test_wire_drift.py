"""End to end through the relay: the real ``governor`` and claude, a billing refusal claude's
words miss, the drift report of ``governor doctor``, and no secret or prompt in any byte kept.

A 400 whose body's type is ``billing_error`` reaches claude 2.1.197's text with no type, so the
text alone charges it; the wire reads the type (SPEC §12.6, §13.1): the goal stops on
``environment`` uncharged, the event records the disagreement with the CLI's version, and
``governor doctor`` reports it. Every byte of the store and of governor's output is then
searched for the fake key and for text only the CLI's request bodies held.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.cli import Project, done, worker_script
from tests.fakevendor import scenario as sc
from tests.fakevendor.clis import FAKE_ANTHROPIC_KEY, claude_env, require_cli
from tests.fakevendor.server import FakeVendor

BILLING = sc.status(
    400,
    error_code="billing_error",
    message="There is an issue with your billing or payment information",
)
REQUEST_ONLY_TEXT = (
    "built on Anthropic's Claude Agent SDK",
    "helps users with software engineering tasks",
)
"""Words of claude's own system prompt: in its request bodies, never in a goal's history."""


@pytest.fixture
def vendor() -> Iterator[FakeVendor]:
    with FakeVendor(BILLING) as fake:
        yield fake


def test_a_billing_refusal_claude_words_without_a_type_stops_uncharged_and_doctor_reports_it(
    vendor: FakeVendor, tmp_path: Path
) -> None:
    cli = require_cli("claude")
    project = Project(tmp_path)
    project.env.update(claude_env(tmp_path / "home", vendor.url, cli))
    worker = {
        "harness": "scripted",
        "args": [project.scenario("w.json", [worker_script("hello", [{"reply": done("hello")}])])],
    }
    project.goal("g", {"harness": "claude"}, worker)
    run = project.gov("run", "g", timeout=300)
    status = project.status("g")
    assert status["status"] == "blocked", run.stdout + run.stderr
    [failed] = [e for e in project.events("g") if e["type"] == "plan.failed"]
    assert (failed["class"], failed["evidence"]["rule"]) == ("environment", "billing")
    assert failed["charged"] is False if "charged" in failed else True
    disagreement = failed["evidence"]["disagreement"]
    assert disagreement["text_rule"] == "default"
    assert "text_class" not in disagreement  # the text alone: a charged failure
    assert disagreement["cli"].startswith("claude-cli/")
    assert any(r.is_model_request for r in vendor.requests)

    doctor = project.gov("doctor", "--json")
    drifts = [json.loads(line)["drift"] for line in doctor.stdout.splitlines() if '"drift"' in line]
    assert drifts == [
        {
            "cli": disagreement["cli"],
            "failures": 1,
            "text_said": {"charged": 1},
            "wire_said": {"environment": 1},
        }
    ]
    text = project.gov("doctor")
    assert f"{disagreement['cli']} worded 1 failure differently from what its vendor sent" in (
        text.stdout
    )

    kept = b"".join(p.read_bytes() for p in tmp_path.glob("governor.db*"))
    kept += (run.stdout + run.stderr + doctor.stdout + text.stdout).encode()
    kept += json.dumps(project.events("g")).encode()
    assert FAKE_ANTHROPIC_KEY.encode() not in kept
    for words in REQUEST_ONLY_TEXT:
        assert words.encode() not in kept
    assert any(words in json.dumps(r.body) for r in vendor.requests for words in REQUEST_ONLY_TEXT)
