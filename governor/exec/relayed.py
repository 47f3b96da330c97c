"""An agent call through governor's relay: start it, or say why the call is not made.

Rules (SPEC §13.1; decision record 0027):
    * A ``codex`` or ``claude`` profile runs through a relay unless it sets
      ``relay = false`` (then the CLI's text alone is the evidence, as before).
    * A relay that cannot start never costs an attempt: the call is not made, and its
      result is ``environment`` with positive absence evidence (source ``relay:start``)
      and the error "governor's relay could not start: <why>".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from governor.core.classify import SpawnResult
from governor.core.event_fields import Profile
from governor.core.evidence import nothing_happened
from governor.exec.relay import Gate, Relay, RelayError

RELAY_RULE: Final = "relay"


def uses_relay(profile: Profile) -> bool:
    """Whether the profile's calls go through the relay (default: yes)."""
    return profile.relay is not False


def start_relay(
    base_url: str, env: Mapping[str, str], gate: Gate | None = None
) -> Relay | SpawnResult:
    """A started relay to ``base_url``, or the result of a call that was not made."""
    try:
        return Relay(base_url, env, gate=gate).start()
    except (RelayError, ValueError, OSError) as exc:
        return relay_failed(str(exc) or type(exc).__name__)


def relay_failed(reason: str) -> SpawnResult:
    """The result of a call not made because its relay could not start (see the rules)."""
    why = " ".join(reason.split())[:300] or "no reason given"
    return SpawnResult(
        ok=False,
        error=f"governor's relay could not start: {why}",
        failure_class="environment",
        evidence=nothing_happened("relay:start", why[:500], rule=RELAY_RULE),
    )
