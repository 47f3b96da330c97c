"""SPEC §11.9: every line about a finished run says charged or not charged, and its in-agent tries."""

from __future__ import annotations

import pytest

from governor.core.charges import describe, last_runs
from governor.core.events import PlanFailed
from governor.core.evidence import UNKNOWN, Evidence, Tries
from governor.core.work_events import AttemptFinished
from tests.story import ABSENT, OBSERVED, Story

TWO_TRIES = Tries(count=2, classes=("upstream", "upstream"), last_error="status 503")


def failed_plan(evidence: Evidence, failure_class: str | None = "upstream") -> PlanFailed:
    story = Story()
    story.plan_fails(failure_class, evidence, error="banner\nstatus 503")  # type: ignore[arg-type]
    event = story.events[-1]
    assert isinstance(event, PlanFailed)
    return event


DESCRIBED = {
    "an uncharged upstream failure says not charged": (
        failed_plan(ABSENT),
        "failed (upstream, not charged): “status 503”",
    ),
    "an upstream failure the evidence does not clear says charged": (
        failed_plan(OBSERVED),
        "failed (upstream, charged): “status 503”",
    ),
    "a failure with no class says charged": (
        failed_plan(UNKNOWN, None),
        "failed (charged): “status 503”",
    ),
    "the tries of a failed run follow the verdict": (
        failed_plan(ABSENT.model_copy(update={"tries": TWO_TRIES})),
        "failed (upstream, not charged; 2 in-agent tries: upstream, upstream): “status 503”",
    ),
}


@pytest.mark.parametrize(("event", "line"), DESCRIBED.values(), ids=DESCRIBED.keys())
def test_describe(event: PlanFailed, line: str) -> None:
    assert describe(event) == line


def test_a_success_after_tries_names_them_and_the_last_error() -> None:
    story = Story()
    story.plan("a")
    tries = Tries(count=3, classes=("upstream", "timed_out", "ok"), last_error="timed out")
    story.attempt("p1-a", "succeeded", evidence=Evidence(tries=tries))
    event = story.events[-1]
    assert isinstance(event, AttemptFinished)
    assert describe(event) == (
        "succeeded (charged; 3 in-agent tries: upstream, timed_out, ok; last error: timed out)"
    )


def test_last_runs_lists_the_latest_plan_and_every_finished_item() -> None:
    story = Story()
    story.plan("a", "b")
    story.attempt("p1-a", "failed", error="boom")
    story.start("p1-b")
    runs = [(what, describe(event)) for what, event in last_runs(story.view)]
    assert runs == [
        ("plan p1", "proposed 2 work items (charged)"),
        ("p1-a attempt 1", "failed (charged): “boom”"),
    ]
