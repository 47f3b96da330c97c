"""The names the Temporal driver shares with the CLI, ``run`` and the web view (no SDK)."""

from __future__ import annotations

import pytest

from governor.errors import InputError
from governor.temporal.names import Driver, driver_of, parse_address, workflow_url


@pytest.mark.parametrize(
    "address",
    ["127.0.0.1:7233", "localhost:7233", "temporal.internal:443", "[::1]:7233", " host-1:1 "],
)
def test_an_address_is_host_and_port(address: str) -> None:
    assert parse_address(address) == address.strip()


@pytest.mark.parametrize(
    "address",
    ["", "7233", "host:", ":7233", "host:0", "host:65536", "http://host:7233", "a b:1", "-x:1"],
)
def test_anything_else_is_refused_naming_where_it_came_from(address: str) -> None:
    with pytest.raises(InputError, match=r"^--temporal: .* is not a Temporal server address"):
        parse_address(address, "--temporal")


@pytest.mark.parametrize(
    ("holder", "driver"),
    [
        ("temporal:default@127.0.0.1:7233", Driver("127.0.0.1:7233", "default")),
        ("temporal:prod@t.internal:7233", Driver("t.internal:7233", "prod")),
        ("temporal:@h:1", Driver("h:1", "default")),
        ("temporal:prod", None),
        ("build-1:48211", None),
        ("langgraph:build-1:9", None),
        (None, None),
    ],
)
def test_the_lease_holder_says_whether_temporal_drives_a_goal(
    holder: str | None, driver: Driver | None
) -> None:
    assert driver_of(holder) == driver
    if driver is not None and holder and "@" in holder and not holder.startswith("temporal:@"):
        assert driver.holder == holder


def test_the_web_ui_page_of_a_goal() -> None:
    assert workflow_url("http://t:8233/", "prod", "login-page") == (
        "http://t:8233/namespaces/prod/workflows/login-page"
    )
