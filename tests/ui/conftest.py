"""Fixtures of the web view's tests: the fleet store, a ``governor ui`` serving it, a browser."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.ui.fleet import Fleet, build, build_acting
from tests.ui.serve import Server, chromium, missing_browser, start_ui


@pytest.fixture(scope="session")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Fleet:
    """A store with a goal in every status (built once per test process)."""
    made = build(tmp_path_factory.mktemp("fleet"))
    made.store.close()  # the server reads it; nothing here writes any more
    return made


@pytest.fixture(scope="session")
def ui(fleet: Fleet) -> Iterator[Server]:
    """``governor ui`` over the fleet, five goals a page, refreshing twice a second."""
    server = start_ui("--store", str(fleet.db), "--page-size", "5", "--refresh-s", "0.5")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def acting_fleet(tmp_path_factory: pytest.TempPathFactory) -> Fleet:
    """A store of goals for a person to act on, one goal per test (built once per process)."""
    made = build_acting(tmp_path_factory.mktemp("acting"))
    made.store.close()  # the server and the tests' governor processes write it from now on
    return made


@pytest.fixture(scope="session")
def acting_ui(acting_fleet: Fleet) -> Iterator[Server]:
    """``governor ui --allow-actions --actor alice`` over the acting fleet."""
    server = start_ui(
        "--store", str(acting_fleet.db), "--allow-actions", "--actor", "alice",
        "--refresh-s", "0.5",
    )  # fmt: skip
    yield server
    server.stop()


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """A headless Chromium context; skipped (failed in CI) when Chromium is missing."""
    reason = missing_browser()
    if reason:
        pytest.skip(reason)
    with chromium() as context:
        yield context


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A new tab that records console errors and Content-Security-Policy violations."""
    tab = browser.new_page()
    tab.errors = []
    tab.on("console", lambda m: tab.errors.append(m.text) if m.type == "error" else None)
    tab.on("pageerror", lambda e: tab.errors.append(str(e)))
    tab.add_init_script(
        "window.__violations = [];"
        "document.addEventListener('securitypolicyviolation',"
        " e => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));"
    )
    yield tab
    tab.close()
