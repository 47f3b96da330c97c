"""Fixtures of the service tests: the store every process of a test shares.

``store_url`` is the one place a backend is chosen: every test that takes it runs once
on a SQLite file (workers on one machine) and once on a PostgreSQL database of the
throw-away server of ``tests/store/postgres_server.py`` (workers as on many machines;
skipped when PostgreSQL is not installed, a failure under ``GOVERNOR_REQUIRE_ALL=1``).
A test module that takes ``store_url`` declares ``pytest_plugins`` for that server.
"""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh, empty store for the test: one URL that every process opens."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'governor.db'}"
    make_url = request.getfixturevalue("postgres_url")
    return str(make_url())
