"""Upstream health: one record per vendor endpoint, shared by every runner, and its transitions.

Rules (SPEC §11.10; docs/fleet-outages.md):
    * An *upstream* is what an agent call reaches: its harness, its endpoint (base URL)
      and its model family — or the name a profile (or the failure) declares for it
      (SPEC §12.9). The shell names the upstream of each profile; the core only sees
      names and records.
    * Every classified agent call says something about its upstream (``seen``, a
      ``Contact``): it was ``refused`` (an ``upstream`` failure), it was ``answered`` (the
      vendor spoke: a reply, or any failure after contact — a call whose relay saw any
      response byte reached its vendor, whatever followed, SPEC §13.4), or there was no
      contact (it never started, timed out, or never reached a vendor that has never
      answered): then nothing is learned of its health. A record remembers whether its
      upstream has ever answered (``answered``: any HTTP response, a refusal included),
      which decides what a vendor that cannot be reached means (SPEC §12.7: an outage
      when it has, a wrong base URL or network when it never has): such a call is
      classified again with the record (``judged``).
    * A failure that names an upstream (a command envelope's ``upstream``, SPEC §12.9)
      renames the profile's upstream for good (``named``).
    * A refusal marks a healthy upstream failing from that moment; the next probe is due
      one back-off step later (``UpstreamBackoff.wait_s`` of the step, or the vendor's
      Retry-After when longer). While it is failing, one probe per step may be claimed
      (exclusively, until its deadline); a refused probe moves the next probe one step
      further (a probe that made no contact — timed out, binary gone — moves it too, but is
      not counted as a refusal); an answer — a probe's or a call's — makes the upstream
      healthy again and
      remembers the outage's span. An answer to a call *begun* before the outage was seen
      says nothing of the upstream now (its request went out while the vendor still
      answered): it changes nothing, so a call in flight when the outage began cannot
      reopen the gate to the fleet.
    * The transitions are pure functions of (record, observation, now); they return None
      when nothing changes, so a store writes only when a record really changes.
    * The probe is one bounded, cheap call with the profile's own credentials
      (``probe_profile``): codex, claude and gemini run the profile itself on
      ``PROBE_PROMPT`` (codex in a read-only sandbox unless the profile chooses one);
      ``command``, ``python`` and ``scripted`` agents run their profile's ``probe``
      arguments instead of ``args``. A profile without a way to probe is never parked:
      its goals meet an outage on their own.
    * A person hears of a record's change when an upstream went down, came back, or a
      probe was refused or made no contact (``change_kind``).
    * An account's spent usage window has a record too (harness ``ACCOUNT``; its
      transitions are ``governor.core.accounts``'): no probe is ever claimed on it.

The shell (``governor.drive.health``) names each profile's upstream, reads and writes the
shared records with these transitions, and runs the probes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Final, Literal

from governor.core.classify import SpawnResult, classify
from governor.core.event_fields import Profile
from governor.core.policy import UpstreamBackoff

DEFAULT_BACKOFF: Final = UpstreamBackoff.model_construct()  # ``UpstreamBackoff()`` (see policy.py)
"""The back-off of a record no refusal has set yet (the policy's default)."""

ACCOUNT: Final = "account"
"""The ``harness`` of an account's record (SPEC §13.2)."""

Contact = Literal["refused", "answered", "none"]
"""What one call said about its upstream: refused, answered, or nothing (no contact)."""

ChangeKind = Literal["down", "up", "probe_refused", "probe_unanswered"]
"""What a person hears of a record's change (``change_kind``)."""

PROBE_PROMPT: Final = (
    "role: probe\n"
    "This is a health check of the model endpoint. Do not use any tool. "
    "Reply with the single word: ok"
)
"""What a probe asks (``role: probe`` lets a scripted or command agent recognise it)."""
PROBE_TIMEOUT_S: Final = 60.0
"""The longest a probe may run, whatever the profile's own ``timeout_s``."""
SELF_PROBING: Final = frozenset({"codex", "claude", "gemini"})
"""Harnesses whose probe is the profile itself; the others need ``probe`` arguments."""
_SANDBOX: Final = frozenset({"-s", "--sandbox", "--dangerously-bypass-approvals-and-sandbox"})

_DATED: Final = re.compile(r"(-\d{8}|-\d{4}-\d{2}-\d{2}|-latest)$")


def model_family(model: str | None) -> str:
    """The family of a model name: lower-cased, without a trailing date or ``-latest``
    (``claude-sonnet-4-5-20250929`` -> ``claude-sonnet-4-5``); ``default`` when none is named."""
    if not model or not model.strip():
        return "default"
    return _DATED.sub("", model.strip().lower())


@dataclass(frozen=True, slots=True)
class Upstream:
    """What an agent call reaches: harness, endpoint and model family, or a declared name."""

    harness: str
    endpoint: str
    model_family: str
    declared: str | None = None
    """The name a profile's ``upstream`` setting (or a failure envelope) gives it: calls
    that declare the same name share one record (SPEC §12.9)."""

    @property
    def name(self) -> str:
        """The upstream's one name, as records, logs and events show it."""
        if self.declared is not None:
            return self.declared
        return f"{self.harness} {self.endpoint} {self.model_family}"


def named(upstream: Upstream, name: str | None) -> Upstream:
    """The upstream a failure names instead (a command envelope's ``upstream``), if it does."""
    return (
        upstream if name is None or name == upstream.declared else replace(upstream, declared=name)
    )


@dataclass(frozen=True, slots=True)
class Seen:
    """What one call (or probe) said about its upstream."""

    contact: Contact
    status: int | None = None
    """The vendor status of a refusal, when the adapter read one."""
    retry_after_s: float | None = None
    unreachable: bool = False
    """No HTTP response came back: the vendor could not be reached (SPEC §12.7). Refused
    when the upstream had answered before; no contact when it never had."""


def seen(result: SpawnResult) -> Seen:
    """What one call's result says about its upstream (a response byte on the relay's wire
    says the vendor answered, whatever the CLI did after: reached is reached, SPEC §13.4)."""
    if result.ok:
        return Seen("answered")
    reached = result.wire is not None and result.wire.responded
    unreachable = result.connection == "unreachable" and not reached
    if result.failure_class == "upstream":
        return Seen("refused", result.vendor_status, result.retry_after_s, unreachable)
    if not reached and (result.timed_out or result.spawn_errno is not None or unreachable):
        return Seen("none", unreachable=unreachable)
    return Seen("answered")


@dataclass(frozen=True, slots=True)
class UpstreamHealth:
    """One upstream's shared health record (the store keeps one per upstream)."""

    upstream: str
    """The upstream's name (``Upstream.name``)."""
    harness: str
    endpoint: str
    model_family: str
    healthy: bool
    updated_at: datetime
    failing_since: datetime | None = None
    """When the current outage was first seen (None while healthy)."""
    last_status: int | None = None
    """The vendor status of the latest refusal, when known."""
    retry_after_s: float | None = None
    """The latest refusal's Retry-After, when the vendor gave one."""
    next_probe_at: datetime | None = None
    """When the next probe is due (None while healthy)."""
    probes: int = 0
    """Probes not answered in the current outage (the back-off step is ``probes + 1``):
    refused ones, and ones that made no contact."""
    refusals: int = 0
    """Refused calls and probes in the current (or, once healthy, the last) outage."""
    probing_until: datetime | None = None
    """The deadline of a probe claimed and in flight (None when none is)."""
    prober: str | None = None
    """Who claimed that probe."""
    backoff: UpstreamBackoff = DEFAULT_BACKOFF
    """The back-off between probes (the policy of the goal whose call first saw it fail)."""
    outage_started: datetime | None = None
    """Once healthy again: when the last outage began."""
    recovered_at: datetime | None = None
    """Once healthy again: when the last outage ended."""
    recovered_by: Literal["probe", "call", "reset"] | None = None
    """What ended the last outage: a probe that was answered, a call that was, or (an
    account) its usage window's reset time."""
    parked: int | None = None
    """Goals parked on it (filled in by the store when it lists records; not stored)."""
    answered: bool = False
    """It has answered at least once (any HTTP response, a refusal too): a vendor that
    cannot be reached is then an outage, not a wrong endpoint (SPEC §12.7)."""

    @property
    def probe_due_at(self) -> datetime | None:
        """When something may change: the claimed probe's deadline, else the next probe."""
        if self.healthy:
            return None
        if self.probing_until is not None and (
            self.next_probe_at is None or self.probing_until > self.next_probe_at
        ):
            return self.probing_until
        return self.next_probe_at

    @property
    def is_account(self) -> bool:
        """The record of an account's usage window, not of an upstream (SPEC §13.2)."""
        return self.harness == ACCOUNT

    def probe_claimable(self, now: datetime) -> bool:
        """A probe is due and nobody holds a live claim on it (never on an account)."""
        if self.is_account:
            return False
        if self.healthy or self.next_probe_at is None or self.next_probe_at > now:
            return False
        return self.probing_until is None or self.probing_until <= now


def judged(result: SpawnResult, record: UpstreamHealth | None, endpoint: str) -> SpawnResult:
    """The call classified again with its upstream's record when it never reached the
    vendor and was not judged yet (SPEC §12.7); any other result as it is."""
    if result.connection != "unreachable" or result.answered_before is not None:
        return result
    return classify(
        result.model_copy(
            update={
                "answered_before": record is not None and record.answered,
                "endpoint": result.endpoint or endpoint,
            }
        )
    )


def _first_record(upstream: Upstream, now: datetime, answered: bool) -> UpstreamHealth:
    """A new, healthy record of an upstream (a refusal turns it failing at once)."""
    return UpstreamHealth(
        upstream.name,
        upstream.harness,
        upstream.endpoint,
        upstream.model_family,
        True,
        now,
        answered=answered,
    )


def _next_probe(backoff: UpstreamBackoff, step: int, now: datetime, seen: Seen) -> datetime:
    return now + timedelta(seconds=backoff.wait_s(step, seen.retry_after_s))


def observed(
    record: UpstreamHealth | None,
    upstream: Upstream,
    seen: Seen,
    now: datetime,
    backoff: UpstreamBackoff,
    *,
    began: datetime | None = None,
) -> UpstreamHealth | None:
    """The record after one classified call (begun at ``began``, when known); None when it
    does not change."""
    if seen.contact == "none":
        # a vendor never reached gets a record that says so (``governor upstreams``)
        unseen = record is None and seen.unreachable
        return _first_record(upstream, now, False) if unseen else None
    if seen.contact == "answered":
        if record is None:
            return _first_record(upstream, now, True)
        if record.healthy:
            return None if record.answered else replace(record, updated_at=now, answered=True)
        stale = (
            began is not None and record.failing_since is not None and began < record.failing_since
        )
        return None if stale else recovered(record, now, "call")
    if record is None or record.healthy:
        base = record or _first_record(upstream, now, not seen.unreachable)
        return replace(
            base,
            healthy=False,
            updated_at=now,
            failing_since=now,
            last_status=seen.status,
            retry_after_s=seen.retry_after_s,
            next_probe_at=_next_probe(backoff, 1, now, seen),
            probes=0,
            refusals=1,
            probing_until=None,
            prober=None,
            backoff=backoff,
            answered=base.answered or not seen.unreachable,
        )
    later = now + timedelta(seconds=seen.retry_after_s or 0.0)
    return replace(
        record,
        answered=record.answered or not seen.unreachable,
        updated_at=now,
        last_status=seen.status or record.last_status,
        retry_after_s=seen.retry_after_s,
        next_probe_at=max(record.next_probe_at or later, later),
        refusals=record.refusals + 1,
    )


def recovered(
    record: UpstreamHealth, now: datetime, by: Literal["probe", "call", "reset"]
) -> UpstreamHealth:
    """The record of an upstream that answered again: healthy, with its outage's span."""
    return replace(
        record,
        healthy=True,
        answered=True,
        updated_at=now,
        outage_started=record.failing_since,
        recovered_at=now,
        recovered_by=by,
        failing_since=None,
        next_probe_at=None,
        probing_until=None,
        prober=None,
        retry_after_s=None,
    )


def claimed(
    record: UpstreamHealth | None, now: datetime, holder: str, deadline: datetime
) -> UpstreamHealth | None:
    """The record with a probe claimed by ``holder`` until ``deadline``; None when no
    probe may be claimed now (healthy, not due yet, or claimed by someone else)."""
    if record is None or not record.probe_claimable(now):
        return None
    return replace(record, updated_at=now, probing_until=deadline, prober=holder)


def probed(record: UpstreamHealth, seen: Seen, now: datetime) -> UpstreamHealth:
    """The record after a probe: healthy when it was answered, else one step further.

    A probe that made no contact (it timed out, its binary is gone) has not shown the
    upstream back, so the next probe moves a step further too; but it is recorded as
    what it was — no refusal is counted and the last status stays.
    """
    if seen.contact == "answered":
        return recovered(record, now, "probe") if not record.healthy else record
    step = record.probes + 2
    refused = seen.contact == "refused"
    return replace(
        record,
        updated_at=now,
        last_status=(seen.status or record.last_status) if refused else record.last_status,
        retry_after_s=seen.retry_after_s if refused else record.retry_after_s,
        next_probe_at=_next_probe(record.backoff, step, now, seen),
        probes=record.probes + 1,
        refusals=record.refusals + int(refused),
        probing_until=None,
        prober=None,
        answered=record.answered or (refused and not seen.unreachable),
    )


def change_kind(before: UpstreamHealth | None, after: UpstreamHealth) -> ChangeKind | None:
    """What a person should hear of a record's change (None: nothing)."""
    was_healthy = before is None or before.healthy
    if was_healthy and not after.healthy:
        return "down"
    if not was_healthy and after.healthy:
        return "up"
    if before is not None and after.probes > before.probes:
        return "probe_refused" if after.refusals > before.refusals else "probe_unanswered"
    return None


def probe_profile(profile: Profile) -> Profile | None:
    """The profile a probe runs (one try, bounded), or None when it cannot be probed."""
    bounded = {"max_attempts": 1, "timeout_s": min(profile.timeout_s, PROBE_TIMEOUT_S)}
    if profile.probe:
        return profile.model_copy(update={**bounded, "args": profile.probe})
    if profile.harness not in SELF_PROBING:
        return None
    args = profile.args
    if profile.harness == "codex" and not _SANDBOX & set(args):
        args = (*args, "--sandbox", "read-only")
    return profile.model_copy(update={**bounded, "args": args})


def after_probe(
    record: UpstreamHealth | None, result: SpawnResult, endpoint: str, now: datetime
) -> UpstreamHealth | None:
    """The record after a probe that returned ``result``: the result judged with the
    record (``judged``), then ``probed``; None when there is no record."""
    if record is None:
        return None
    return probed(record, seen(judged(result, record, endpoint)), now)


@dataclass(frozen=True, slots=True)
class Outage:
    """The upstream a park, a parked wait or a resume concerns (``Decision.outage``)."""

    upstream: str
    profiles: tuple[str, ...]
    """The goal's profiles that reach it (the first is the one recorded in ``goal.parked``)."""
    since: datetime
    """When it was first seen failing."""
    until: datetime | None
    """Its next probe (None for a resume)."""
    reason: str
    """For a resume: how it came back (``recovery_text``); else why the goal waits."""
