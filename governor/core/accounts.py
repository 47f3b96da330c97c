"""Accounts: a spent usage window as a health record (SPEC §13.2).

Rules:
    * An account has a record like an upstream's (``UpstreamHealth`` with harness
      ``ACCOUNT``, named ``account <name>``; the name is the profile's ``account`` or what
      the call reported — a digest, never a credential).
    * A refusal that says the account's usage window is spent and when it reopens
      (``window_shut``) makes it failing until that time (the shell adds a small jitter);
      a later reset pushes it back, an earlier one changes nothing. No probe is ever
      claimed on it (``UpstreamHealth.probe_claimable``).
    * A call refused ``upstream`` whose result names its ``account`` and ``resets_at``
      (``spent_until``) shuts that account's record until ``resets_at`` plus a small
      jitter (``reopens_at``: at most 5 % of the wait and 60 s, so a fleet does not call
      at the same instant; the shell draws it). The vendor answered, so the upstream's
      own record learns an answer, not a refusal.
    * The first reader at or after that time makes it healthy again (``reopened``,
      recovered by ``reset``): the goals parked on it resume by themselves.
    * A profile whose account's window is spent, or whose account the goal is parked on
      (``parked_account``), is given the account's record instead of its upstream's
      (``with_windows``): every profile, since no probe is needed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Final

from governor.core.classify import SpawnResult
from governor.core.upstream import ACCOUNT, UpstreamHealth, recovered

JITTER_FRACTION: Final = 0.05
JITTER_MAX_S: Final = 60.0


def account_name(account: str) -> str:
    """The record name of an account (``account <name>``)."""
    return f"{ACCOUNT} {account}"


def window_shut(
    record: UpstreamHealth | None,
    account: str,
    reopens_at: datetime,
    now: datetime,
    *,
    status: int | None = None,
) -> UpstreamHealth | None:
    """The account's record after a refusal that says its usage window is spent until
    ``reopens_at`` (SPEC §13.2): failing until then, no probe; a later reset pushes it
    back. None when nothing changes (already shut until then or later)."""
    if record is not None and not record.healthy:
        if record.next_probe_at is not None and record.next_probe_at >= reopens_at:
            return None
        return replace(
            record,
            updated_at=now,
            next_probe_at=reopens_at,
            refusals=record.refusals + 1,
            last_status=status or record.last_status,
        )
    base = record or UpstreamHealth(account_name(account), ACCOUNT, account, "-", True, now)
    return replace(
        base,
        healthy=False,
        answered=True,
        updated_at=now,
        failing_since=now,
        last_status=status,
        retry_after_s=None,
        next_probe_at=max(reopens_at, now),
        probes=0,
        refusals=1,
        probing_until=None,
        prober=None,
    )


def reopened(record: UpstreamHealth | None, now: datetime) -> UpstreamHealth | None:
    """An account's record whose usage window has reopened by ``now``: healthy again,
    recovered by its ``reset``; None when it is not due (or not an account's)."""
    if record is None or not record.is_account or record.healthy:
        return None
    if record.next_probe_at is None or record.next_probe_at > now:
        return None
    return recovered(record, now, "reset")


def window_jitter_s(wait_s: float, draw: float) -> float:
    """The jitter added to a usage window's reset (``draw`` in [0, 1))."""
    return max(0.0, min(JITTER_MAX_S, wait_s * JITTER_FRACTION) * draw)


def spent_until(result: SpawnResult) -> datetime | None:
    """When the usage window that refused the call reopens, as the vendor said (SPEC
    §13.2); None when the call was not refused by an account's spent window."""
    if result.account is None or result.failure_class != "upstream":
        return None
    return result.resets_at


def reopens_at(resets_at: datetime, now: datetime, draw: float) -> datetime:
    """When a window the vendor says resets at ``resets_at`` reopens: plus the jitter."""
    wait_s = max(0.0, (resets_at - now).total_seconds())
    return resets_at + timedelta(seconds=window_jitter_s(wait_s, draw))


def parked_account(parked_on: str | None) -> str | None:
    """The account a goal is parked on, when it is parked on an account's record."""
    prefix = f"{ACCOUNT} "
    if parked_on is None or not parked_on.startswith(prefix):
        return None
    return parked_on.removeprefix(prefix)


def with_windows(
    health: Mapping[str, UpstreamHealth],
    accounts: Mapping[str, str],
    windows: Mapping[str, UpstreamHealth],
    parked_on: str | None,
) -> dict[str, UpstreamHealth]:
    """Profile name -> record, each profile whose account's window is spent (or is the
    record the goal is parked on) given that record instead of its upstream's."""
    merged = dict(health)
    for profile, account in accounts.items():
        window = windows.get(account)
        if window is not None and (not window.healthy or window.upstream == parked_on):
            merged[profile] = window
    return merged
