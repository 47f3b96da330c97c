"""The attention rank of a goal summary: who must look at a goal first (``core.summary``)."""

from __future__ import annotations

import pytest

from governor.core.summary import attention


@pytest.mark.parametrize(
    ("status", "blocked_on", "rank"),
    [
        ("awaiting_review", "operator", 0),
        ("blocked", "decision", 0),
        ("blocked", "environment", 0),
        ("blocked", "upstream", 0),
        ("blocked", "work", 0),
        ("budget_exhausted", None, 1),
        ("ready", None, 2),
        ("running", None, 2),
        ("waiting", "upstream", 2),
        ("succeeded", None, 3),
        ("cancelled", None, 3),
        ("some-future-status", None, 3),
    ],
)
def test_the_attention_rank_of_each_status_and_blocked_on(
    status: str, blocked_on: str | None, rank: int
) -> None:
    assert attention(status, blocked_on) == rank
