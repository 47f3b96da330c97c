"""An agent call through governor's relay: the one wrapper every adapter runs its call in.

Rules (SPEC §13.1; decision record 0027):
    * ``through_relay`` is the only place an adapter's call meets the relay: codex, claude,
      gemini and a ``command`` that names its base-URL variable all run through it. The
      adapter gives the call (a function of the started relay, or None when the relay is
      off) and the upstream; the wrapper starts the relay, runs the call, and closes it.
    * A profile runs through the relay unless it sets ``relay = false`` (then the CLI's text
      alone is the evidence, as before); a ``command`` profile only when it names its
      CLI's base-URL variable (the adapter says so with ``wanted``).
    * A relay that cannot start never costs an attempt: the call is not made, and its
      result is ``environment`` with positive absence evidence (source ``relay:start``)
      and the error "governor's relay could not start: <why>". So is an upstream the
      adapter cannot name (``base_url`` None: the variable it reads is not set).
    * A relay that fails mid-call (``WireFacts.failed``) never costs an attempt either
      (SPEC §13.1: the call becomes a continuation, §6.3): when the call then failed, it is
      run again, the same prompt in the same folder, through a fresh relay, at most
      ``RELAY_CONTINUATIONS`` times, and the last run's result stands, carrying the cost,
      usage and run time of the runs before it (counted once each). A call that succeeded
      despite the failure (the CLI's own retry went through) stands as it is. A relay that
      fails again on the last continuation leaves the CLI's text as the evidence (the wire
      proves nothing: ``governor.core.wire_evidence``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

from governor.core.classify import SpawnResult
from governor.core.event_fields import Profile
from governor.core.evidence import nothing_happened
from governor.core.observation import add_usage
from governor.exec.relay import Gate, Relay, RelayError

RELAY_RULE: Final = "relay"
RELAY_CONTINUATIONS: Final = 1
"""How many times a call whose relay failed mid-call is run again (see the rules)."""

Call = Callable[[Relay | None], SpawnResult]
"""An adapter's call: run the CLI once, its base URL pointed at the relay (None: no relay)."""


def uses_relay(profile: Profile) -> bool:
    """Whether the profile's calls go through the relay (default: yes)."""
    return profile.relay is not False


def through_relay(
    call: Call,
    *,
    profile: Profile,
    base_url: str | None,
    env: Mapping[str, str],
    gate: Gate | None = None,
    wanted: bool = True,
    unnamed: str = "the upstream's base URL is not set",
) -> SpawnResult:
    """Run ``call`` through a relay to ``base_url`` (see the module rules).

    Args:
        call: the adapter's call.
        profile: the call's profile (``relay = false`` turns the relay off).
        base_url: the upstream's base URL; None: the adapter could not name it.
        env: the source environment (its proxy and CA settings are the CLI's).
        gate: asked by the relay before each model request after the first.
        wanted: False when the adapter does not relay this profile at all.
        unnamed: why ``base_url`` is None, for the error.
    """
    if not wanted or not uses_relay(profile):
        return call(None)
    if not base_url:
        return relay_failed(unnamed)
    return _relayed(call, base_url, env, gate, RELAY_CONTINUATIONS)


def _relayed(
    call: Call, base_url: str, env: Mapping[str, str], gate: Gate | None, left: int
) -> SpawnResult:
    relay = start_relay(base_url, env, gate)
    if isinstance(relay, SpawnResult):
        return relay
    with relay:
        result = call(relay)
        failed = relay.facts().failed
    if failed is None or result.ok or left <= 0:
        return result
    return continued(result, _relayed(call, base_url, env, gate, left - 1))


def continued(before: SpawnResult, result: SpawnResult) -> SpawnResult:
    """``result`` of a continuation, carrying the cost, usage and time of the run before."""
    cost = (
        None
        if before.cost_usd is None and result.cost_usd is None
        else (before.cost_usd or 0.0) + (result.cost_usd or 0.0)
    )
    return result.model_copy(
        update={
            "cost_usd": cost,
            "usage": add_usage(before.usage, result.usage),
            "duration_s": before.duration_s + result.duration_s,
        }
    )


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
