"""What ``governor ui``'s server is given, read once by the CLI: ``UiSettings``, and the
headers every response carries (no Starlette here: the acting routes read it too)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final

from governor.clock import utc_now
from governor.ui.keys import ActionKeys

CSP: Final = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
HEADERS: Final = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
    "cache-control": "no-store",
}
"""Sent with every response, errors and static files included."""
ACTING_REFERRER: Final = "same-origin"
"""The referrer policy when actions are allowed: under ``no-referrer`` a browser sends a
form's ``Origin`` as ``null``, and the origin check needs it (nothing leaves the site)."""

LOOPBACK_NAMES: Final = frozenset({"localhost", "127.0.0.1", "::1"})


@dataclass(frozen=True, slots=True)
class UiSettings:
    """What the server needs besides the store, read once by the CLI."""

    store_label: str
    """How the header names the store (never with a password)."""
    store_arg: str | None = None
    """The ``--store`` value the printed commands need; None for the default store."""
    refresh_s: float = 2.0
    """How often an open page refreshes itself, in seconds (0: never)."""
    per_page: int = 50
    """Goals per page of the list."""
    allowed_hosts: frozenset[str] | None = field(default=LOOPBACK_NAMES)
    """Host names a request may name; None accepts any (bound to every interface)."""
    advice_wait_s: float = 0.25
    """How long a goal's page waits for ``explain``'s advice before it is shown without."""
    clock: Callable[[], datetime] = utc_now
    actor: str | None = None
    """Who acts from the page (``ui:alice``); None: read-only, no route writes."""
    keys: ActionKeys | None = None
    """The access token and form tokens (with ``actor``)."""
    tls: bool = False
    """Served over HTTPS (the cookie is then ``Secure``, the origin ``https://``)."""
    cookie: str = "governor-ui"
    """The name of the access token's cookie (one per port: cookies ignore ports)."""
    trusted_header: str | None = None
    """A header an authenticating proxy in front sets to the person's name: who acts
    (``ui:NAME``), in place of an access token (docs/ui.md says what this trusts)."""
    temporal_ui: str | None = None
    """Temporal's Web UI: a goal Temporal drives links to its workflow's page there."""

    @property
    def headers(self) -> dict[str, str]:
        """The headers of every response."""
        return HEADERS | ({"referrer-policy": ACTING_REFERRER} if self.actor else {})
