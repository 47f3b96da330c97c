"""Shared test configuration.

With ``GOVERNOR_REQUIRE_ALL=1`` (set by ``.ci/run``), a test that would skip because
something it needs is not installed FAILS instead: in CI nothing may be skipped.
"""

from __future__ import annotations

import os
from collections.abc import Generator

import pytest

REQUIRE_ALL = os.environ.get("GOVERNOR_REQUIRE_ALL") == "1"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--fuzz-long",
        action="store_true",
        default=False,
        help="run the fuzz suite (tests/fuzz) with its long case counts (docs/reliability.md)",
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if REQUIRE_ALL and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"GOVERNOR_REQUIRE_ALL=1: skipping is a failure in CI ({reason})"
    return report
