"""End to end: the real ``governor`` command, the real claude CLI as planner, the fake vendor.

A vendor outage of three model requests must not cost the goal a charged replan
(SPEC §1, §11.9): the goal finishes with the same ``replans.charged`` as the same goal
without the outage, and the refused plan is recorded uncharged with claude's stream as
its evidence. Governor's health probes during the outage (SPEC §11.10) are answered and
counted apart: the outage is the planner's own requests. The same holds for Anthropic's
usual overload, HTTP 200 then an ``overloaded_error`` event (SPEC §12.8), whose input
cost reaches the cost ledger (SPEC §12.5).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.cli import COMPLETE, Project, done, plan, worker_script
from tests.fakevendor import scenario as sc
from tests.fakevendor.clis import claude_env, require_cli
from tests.fakevendor.server import FakeVendor, RecordedRequest

FAST_BACKOFF = {"upstream_backoff": {"initial_s": 0.05, "factor": 1, "max_s": 0.05}}
OUTAGE_REQUESTS = 3
REFUSAL = sc.Step("status", status=503)
OVERLOAD = sc.Step("stream_error", code="overloaded_error")
"""HTTP 200, ``message_start``, ``ping``, then an ``error`` event (SPEC §12.8)."""


@pytest.fixture
def vendor() -> Iterator[FakeVendor]:
    with FakeVendor() as fake:
        yield fake


class Outage:
    """Refuses the first ``refusals`` planner requests with 503, then answers each by what
    its prompt asks. Health probes (SPEC §11.10: one per back-off step while the upstream
    is failing) are answered: the outage is the planner's requests, counted exactly."""

    def __init__(self, refusals: int, refusal: sc.Step = REFUSAL) -> None:
        self.left, self.lock, self.refusal = refusals, threading.Lock(), refusal

    def __call__(self, request: RecordedRequest) -> sc.Step:
        text = json.dumps(request.body)
        if is_probe(request):
            return sc.Step("reply", text="ok")
        with self.lock:
            refuse, self.left = self.left > 0, max(self.left - 1, 0)
        if refuse:
            return self.refusal
        if "asked now: milestone" in text:
            return sc.Step("reply", text=json.dumps(COMPLETE))
        return sc.Step("reply", text=json.dumps(plan("hello")))


def is_probe(request: RecordedRequest) -> bool:
    return "role: probe" in json.dumps(request.body)


def claude_goal(root: Path, vendor: FakeVendor, outage: int, refusal: sc.Step = REFUSAL) -> Project:
    """A project whose planner is claude against ``vendor`` (after ``outage`` refusals)."""
    cli = require_cli("claude")
    project = Project(root)
    project.env.update(claude_env(root / "home", vendor.url, cli))
    vendor.respond(Outage(outage, refusal))
    worker = {
        "harness": "scripted",
        "args": [
            project.scenario("worker.json", [worker_script("hello", [{"reply": done("hello")}])])
        ],
    }
    project.goal("g", {"harness": "claude"}, worker, **FAST_BACKOFF)
    return project


def finish(project: Project) -> dict:
    result = project.gov("run", "g", timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    status = project.status("g")
    assert status["status"] == "succeeded"
    return status


def test_a_three_request_outage_leaves_the_charged_replans_unchanged(
    tmp_path: Path, vendor: FakeVendor
) -> None:
    calm = finish(claude_goal(tmp_path / "calm", vendor, outage=0))
    calm_requests = [r for r in vendor.model_requests if not is_probe(r)]

    project = claude_goal(tmp_path / "outage", vendor, outage=OUTAGE_REQUESTS)
    stormy = finish(project)

    assert stormy["ledger"]["replans"]["charged"] == calm["ledger"]["replans"]["charged"] == 2
    assert stormy["ledger"]["replans"]["uncharged"] >= 1
    planner = [r for r in vendor.model_requests if not is_probe(r)]
    assert len(planner) == len(calm_requests) + OUTAGE_REQUESTS
    assert any(is_probe(r) for r in vendor.model_requests)  # governor probed, then resumed
    failed = [e for e in project.events("g") if e["type"] == "plan.failed"]
    assert failed
    for event in failed:
        # through governor's relay: the wire's evidence (SPEC §13.1)
        assert (event["class"], event["evidence"]["source"]) == ("upstream", "relay:wire")
        evidence = event["evidence"]
        assert (evidence["effects"], evidence["output"], evidence["refusal"]) == ("absent",) * 3
        assert "last refused 503" in evidence["ref"]
    # the last refusal was retried by claude itself into the plan: on the record too
    [proposed, _complete] = [e for e in project.events("g") if e["type"] == "plan.proposed"]
    assert proposed["evidence"]["tries"]["vendor_retries"] == [503]


def test_a_refused_key_stops_the_goal_at_once_uncharged_and_names_the_remedy(
    tmp_path: Path, vendor: FakeVendor
) -> None:
    project = claude_goal(tmp_path, vendor, outage=0)
    vendor.play(sc.status(401))
    result = project.gov("run", "g", timeout=300)
    assert result.returncode == 10, result.stdout + result.stderr
    status = project.status("g")
    assert (status["status"], status["blocked_on"]) == ("blocked", "environment")
    assert (
        "the credential for planner was refused: the vendor answered HTTP 401 to the key from "
        "ANTHROPIC_API_KEY" in status["reason"]
    )
    assert (status["ledger"]["replans"]["charged"], status["ledger"]["replans"]["uncharged"]) == (
        0,
        1,
    )
    assert project.types("g") == ["goal.created", "plan.requested", "plan.failed"]
    explained = project.gov("explain", "g")
    assert "fix the credential" in explained.stdout, explained.stdout + explained.stderr


def test_an_overload_inside_a_200_stream_parks_and_resumes_uncharged_and_its_cost_counts(
    tmp_path: Path, vendor: FakeVendor
) -> None:
    """SPEC §12.8 and §12.5: claude re-requests the overload itself (three requests, all
    refused in-stream), ends ``is_error``; the plan fails uncharged, the goal parks on
    the shared record, resumes by itself once a probe is answered, and the input cost
    claude reported for the refused requests is in the cost ledger."""
    calm = finish(claude_goal(tmp_path / "calm", vendor, outage=0))

    project = claude_goal(tmp_path / "overload", vendor, OUTAGE_REQUESTS, OVERLOAD)
    stormy = finish(project)

    assert stormy["ledger"]["replans"]["charged"] == calm["ledger"]["replans"]["charged"] == 2
    events = project.events("g")
    [failed] = [e for e in events if e["type"] == "plan.failed"]
    evidence = failed["evidence"]
    # the wire reads the in-stream overloaded_error as the 529 it stands for (SPEC §13.1)
    assert (failed["class"], evidence["rule"]) == ("upstream", "vendor-status")
    assert (evidence["effects"], evidence["output"], evidence["refusal"]) == ("absent",) * 3
    assert "no content streamed" in evidence["ref"]
    assert evidence["observation"]["wire"]["requests"][-1]["error_type"] == "overloaded_error"
    assert evidence["observation"]["claude"]["requests_begun"] == OUTAGE_REQUESTS
    assert failed["cost_usd"] > 0  # the input tokens of the requests the vendor began
    assert failed["usage"]["input_tokens"] > 0
    types = [e["type"] for e in events]
    assert "goal.parked" in types
    [resumed] = [e for e in events if e["type"] == "goal.resumed"]
    assert resumed["actor"] == "governor"
    assert "is back: its probe at" in resumed["reason"]
    proposals = [e for e in events if e["type"] == "plan.proposed"]
    assert all(e["cost_usd"] > 0 for e in proposals)  # every planner call is in the ledger
    expected = sum(e.get("cost_usd", 0) for e in events)
    assert stormy["ledger"]["cost_usd"] == pytest.approx(expected)
    assert stormy["ledger"]["cost_usd"] == pytest.approx(
        calm["ledger"]["cost_usd"] + failed["cost_usd"]
    )
