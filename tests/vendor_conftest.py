"""Pytest fixtures for the real-CLI tests: the fake vendor, the CLIs, a deadline per test.

Load it from a test module with ``pytest_plugins = ["tests.vendor_conftest"]``. Nothing
here is autouse: a fixture only acts on the tests that ask for it.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Final

import pytest

from tests.fakevendor.clis import (
    claude_env,
    codex_env,
    gemini_env,
    pinned_versions,
    require_cli,
)
from tests.fakevendor.server import FakeVendor

CLI_TEST_DEADLINE_S: Final = 90
"""Hard wall-clock limit of one CLI test; the harness's own timeout (60 s) fires first."""


@pytest.fixture
def cli_deadline() -> Iterator[None]:
    """Fail the test (instead of hanging the suite) if it runs past ``CLI_TEST_DEADLINE_S``."""

    def expire(signum: int, frame: FrameType | None) -> None:
        pytest.fail(f"CLI test ran past its {CLI_TEST_DEADLINE_S} s deadline", pytrace=False)

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(CLI_TEST_DEADLINE_S)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def fake_vendor() -> Iterator[FakeVendor]:
    """A fake vendor on 127.0.0.1 (ephemeral port), stopped after the test."""
    with FakeVendor() as vendor:
        yield vendor


@pytest.fixture(params=pinned_versions("codex"), ids=lambda v: f"codex-{v}")
def codex_version(request: pytest.FixtureRequest) -> str:
    """Each pinned codex release in turn (``governor/exec/cli_pins.json``)."""
    return str(request.param)


@pytest.fixture(params=pinned_versions("claude"), ids=lambda v: f"claude-{v}")
def claude_version(request: pytest.FixtureRequest) -> str:
    """Each pinned claude release in turn (``governor/exec/cli_pins.json``)."""
    return str(request.param)


@pytest.fixture(params=pinned_versions("gemini"), ids=lambda v: f"gemini-{v}")
def gemini_version(request: pytest.FixtureRequest) -> str:
    """Each pinned gemini release in turn (``governor/exec/cli_pins.json``)."""
    return str(request.param)


@pytest.fixture
def gemini_cli(cli_deadline: None, gemini_version: str) -> str:
    """The path of gemini at ``gemini_version`` (skip, or fail under
    ``GOVERNOR_REQUIRE_ALL=1``, without it)."""
    return require_cli("gemini", gemini_version)


@pytest.fixture
def gemini_source_env(tmp_path: Path, fake_vendor: FakeVendor, gemini_cli: str) -> dict[str, str]:
    """The source environment of a gemini run against ``fake_vendor`` (temporary HOME)."""
    return gemini_env(tmp_path / "home", fake_vendor.url, gemini_cli)


@pytest.fixture
def codex_cli(cli_deadline: None, codex_version: str) -> str:
    """The path of codex at ``codex_version`` (skip, or fail under
    ``GOVERNOR_REQUIRE_ALL=1``, without it)."""
    return require_cli("codex", codex_version)


@pytest.fixture
def claude_cli(cli_deadline: None, claude_version: str) -> str:
    """The path of claude at ``claude_version`` (skip, or fail under
    ``GOVERNOR_REQUIRE_ALL=1``, without it)."""
    return require_cli("claude", claude_version)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """The agent's working directory: empty, and the only place it may write."""
    path = tmp_path / "work"
    path.mkdir()
    return path


@pytest.fixture
def codex_source_env(tmp_path: Path, fake_vendor: FakeVendor, codex_cli: str) -> dict[str, str]:
    """The source environment of a codex run against ``fake_vendor`` (temporary HOME)."""
    return codex_env(tmp_path / "home", fake_vendor.url, codex_cli)


@pytest.fixture
def claude_source_env(tmp_path: Path, fake_vendor: FakeVendor, claude_cli: str) -> dict[str, str]:
    """The source environment of a claude run against ``fake_vendor`` (temporary HOME)."""
    return claude_env(tmp_path / "home", fake_vendor.url, claude_cli)
