"""``governor reclassify`` on a goal today's governor drove: the real claude CLI against
the fake vendor overloads three requests inside an HTTP 200 stream (SPEC §12.8); the
failure recorded its observation, so today's classifier judges it from that (``recorded``,
not inferred) and agrees with what was recorded."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from tests.e2e.test_claude_outage import OUTAGE_REQUESTS, OVERLOAD, claude_goal, finish
from tests.fakevendor.server import FakeVendor


@pytest.fixture
def vendor() -> Iterator[FakeVendor]:
    with FakeVendor() as fake:
        yield fake


def test_a_recorded_observation_is_judged_again_and_agrees(
    tmp_path: Path, vendor: FakeVendor
) -> None:
    project = claude_goal(tmp_path, vendor, OUTAGE_REQUESTS, OVERLOAD)
    finish(project)
    result = project.gov("reclassify", "g", "--json")
    assert result.returncode == 0, result.stderr
    record = orjson.loads(result.stdout)
    [failure] = record["failures"]
    assert failure["reading"] == "recorded"
    assert failure["today"] == failure["recorded"]
    assert failure["recorded"] == {"class": "upstream", "rule": "vendor-status", "charged": False}
    assert (failure["read"], failure["assumed"]) == ([], [])
    assert (record["changed"], record["outcome"]) == (0, "same")
    assert record["final"]["status"] == "succeeded"
    text = project.gov("reclassify", "g")
    assert "from its recorded observation" in text.stdout, text.stdout + text.stderr
