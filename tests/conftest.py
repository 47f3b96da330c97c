"""Shared test configuration.

With ``GOVERNOR_REQUIRE_ALL=1`` (set by ``.ci/run``), a test that would skip because
something it needs is not installed FAILS instead: in CI nothing may be skipped.

``--fuzz-long`` is the long mode (docs/reliability.md): the fuzz suite's long case
counts, the full kill and crash tests (30 runner kills each, 10 worker kills) and the
200-goal service test. The default run keeps a few cases of each, so ``./dev test``
stays short.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Generator

import pytest

# Property tests never depend on the machine's speed (a busy 2-core machine runs the
# suite): no per-example deadline, and slow data generation is not a failure. A test's own
# ``@settings`` inherits these unless it says otherwise. (The minimum-versions environment
# of tests/graph/test_min_versions.py has no hypothesis.)
if importlib.util.find_spec("hypothesis") is not None:
    from hypothesis import HealthCheck, settings

    settings.register_profile(
        "governor", deadline=None, suppress_health_check=[HealthCheck.too_slow]
    )
    settings.load_profile("governor")

REQUIRE_ALL = os.environ.get("GOVERNOR_REQUIRE_ALL") == "1"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--fuzz-long",
        action="store_true",
        default=False,
        help=(
            "the long mode (docs/reliability.md): the fuzz suite's long case counts, the "
            "full kill and crash tests and the 200-goal service test"
        ),
    )


def long_mode(config: pytest.Config) -> bool:
    """Whether the run is in the long mode (``--fuzz-long``)."""
    return bool(config.getoption("--fuzz-long", default=False))


@pytest.fixture
def long_run(request: pytest.FixtureRequest) -> bool:
    """Whether the run is in the long mode (``--fuzz-long``): full sizes, every seed."""
    return long_mode(request.config)


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


def pytest_configure(config: pytest.Config) -> None:
    # The fast tier and the record of who starts processes (tests/tiers.py).
    tier = os.environ.get("GOVERNOR_TIER", "")
    if tier:
        from tests.tiers import Tiers

        config.pluginmanager.register(Tiers(tier), "governor-tiers")


# after each worker's tests, no store or log they wrote holds a vendor key (tests/secrets_sweep.py)
from tests.secrets_sweep import no_vendor_key_in_any_store  # noqa: E402, F401
