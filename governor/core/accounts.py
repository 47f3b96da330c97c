"""Accounts: a spent usage window as a health record (SPEC §13.2).

Rules:
    * An account has a record like an upstream's (``UpstreamHealth`` with harness
      ``ACCOUNT``, named ``account <name>``; the name is the profile's ``account`` or what
      the call reported — a digest, never a credential).
    * A refusal that says the account's usage window is spent and when it reopens
      (``window_shut``) makes it failing until that time (the shell adds a small jitter);
      a later reset pushes it back, an earlier one changes nothing. No probe is ever
      claimed on it (``UpstreamHealth.probe_claimable``).
    * The first reader at or after that time makes it healthy again (``reopened``,
      recovered by ``reset``): the goals parked on it resume by themselves.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from governor.core.upstream import ACCOUNT, UpstreamHealth, recovered


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
