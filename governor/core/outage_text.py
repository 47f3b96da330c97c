"""Outages in words: what a person reads about a failing upstream (SPEC §11.10, §12.9).

Rules:
    * An upstream is named as a person reads it (``shown_name``: a path in an old record's
      name shown as its last part and a digest).
    * A parked goal's reason names the upstream, since when it fails, its last status and
      its next probe; a resume names what was answered and how long the outage lasted.
      An account's spent usage window is named with the time it reopens (SPEC §13.2).
"""

from __future__ import annotations

import hashlib
import re
from typing import Final

from governor.core.text import count, stamp
from governor.core.upstream import UpstreamHealth

_PATH: Final = re.compile(r"(?<!\S)/\S+")


def shown_name(name: str) -> str:
    """A record's name as a person reads it: an absolute path in it (a record named before
    SPEC §12.9, when a command's upstream was its executable's path) shown as its last part
    and a digest of all of it, as new records are named."""

    def short(found: re.Match[str]) -> str:
        path = found.group(0)
        digest = hashlib.sha256(path.encode("utf-8", "surrogateescape")).hexdigest()[:10]
        return f"{path.rstrip('/').rsplit('/', 1)[-1] or '/'}#{digest}"

    return _PATH.sub(short, name)


def failing_text(record: UpstreamHealth) -> str:
    """``<upstream> has been failing since <t> (last status 503)``."""
    status = f" (last status {record.last_status})" if record.last_status else ""
    since = stamp(record.failing_since) if record.failing_since else "?"
    return f"{record.upstream} has been failing since {since}{status}"


def window_text(record: UpstreamHealth) -> str:
    """``the usage window of account <name> is spent until <t>`` (SPEC §13.2)."""
    until = stamp(record.next_probe_at) if record.next_probe_at else "?"
    return f"the usage window of {record.upstream} is spent until {until}"


def parked_reason(record: UpstreamHealth) -> str:
    """Why a goal waits on a failing upstream (or a spent account), naming it and when it
    may call again."""
    if record.is_account:
        return f"parked: {window_text(record)} (the vendor said so); no call before it"
    due = record.probe_due_at
    probe = f"its next probe at {stamp(due)}" if due else "its next probe"
    return f"parked: {failing_text(record)}; no call until {probe}"


def recovery_text(record: UpstreamHealth) -> str:
    """How an upstream came back: the probe (or call) that was answered, and the outage span."""
    end = record.recovered_at
    start = record.outage_started
    if record.recovered_by == "reset":
        since = f" (spent since {stamp(start)})" if start else ""
        return (
            f"the usage window of {record.upstream} reopened at {stamp(end) if end else '?'}{since}"
        )
    what = "its probe" if record.recovered_by == "probe" else "a call"
    when = stamp(end) if end else "?"
    span = (
        f"the outage lasted from {stamp(start)} to {when} ({(end - start).total_seconds():.0f}s, "
        f"{count(record.refusals, 'refused call')})"
        if start and end
        else "the outage is over"
    )
    return f"{record.upstream} is back: {what} at {when} was answered; {span}"
