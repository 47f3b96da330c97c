"""A vendor's health as a runner sees it: the one shell owner of the shared health records.

Rules (SPEC §11.10, §12.7, §12.9, §13.2; docs/fleet-outages.md). What a record becomes is
the core's (``governor.core.upstream`` for an upstream, ``governor.core.accounts`` for an
account's usage window); this module names, reads, observes, probes and records:
    * Each profile of the goal is resolved once to the upstream it reaches
      (``governor.exec.endpoints.upstream_of``) — or, once one of its failures names an
      upstream, to that one (``named``). Every agent call goes through
      ``ObservedHarness``, which records what the call said about its upstream
      (``seen``, ``observed``): the store writes only when the record changes.
    * A call that could not reach its vendor at all is classified again with its
      upstream's record (``judged``) before it is recorded; a probe's result is judged the
      same way.
    * A decision is given the records of the profiles that can be probed
      (``probe_profile``); a profile that cannot is never parked (its health is still
      recorded and shown).
    * A probe is claimed in the store first (``claimed``) — one per upstream per back-off
      step, whoever asks — then run with the parked profile's own credentials through its
      harness, bounded, and its result recorded (``probed``). The claim expires with its
      deadline (the probe's timeout and ``CLAIM_MARGIN_S``), so a runner that died while
      probing blocks nobody for long.
    * An account's spent usage window (SPEC §13.2): a call refused by it shuts the
      account's record (``window_shut``) until the vendor's reset plus a jitter drawn
      here (``reopens_at``), and its upstream's record learns an answer. A profile's
      account is its ``account`` setting, else the one its calls reported to this
      monitor, else the one the goal is parked on (``parked_account``); the first reader
      at or after the reopening time makes the record healthy again (``reopened``).
    * Every change of a record that matters to a person (``change_kind``: an upstream went
      down, came back, a probe was refused or made no contact) is told to ``on_change``:
      the service logs it, ``run`` prints it.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Final

from governor.core.accounts import (
    account_name,
    parked_account,
    reopened,
    reopens_at,
    spent_until,
    window_shut,
    with_windows,
)
from governor.core.classify import SpawnResult
from governor.core.decision import Decision
from governor.core.event_fields import Profile
from governor.core.policy import UpstreamBackoff
from governor.core.upstream import (
    PROBE_PROMPT,
    ChangeKind,
    Seen,
    Upstream,
    UpstreamHealth,
    after_probe,
    change_kind,
    claimed,
    judged,
    named,
    observed,
    probe_profile,
    seen,
)
from governor.core.view import Parked
from governor.exec.endpoints import upstream_of
from governor.exec.harness import Harness
from governor.store.base import EventStore

HarnessFactory = Callable[[Profile, Path], Harness]
OnChange = Callable[[ChangeKind, UpstreamHealth], None]
"""Told of an upstream that went down, came back, or whose probe was refused (or made no
contact: ``probe_unanswered``)."""
Transition = Callable[[UpstreamHealth | None], UpstreamHealth | None]
CLAIM_MARGIN_S: Final = 15.0
"""How much longer than its timeout a claimed probe keeps its claim."""


@dataclass(frozen=True, slots=True)
class MonitorSettings:
    """Where a monitor's probes run and how they are named."""

    workdir: Path
    env: Mapping[str, str]
    """The source environment (the upstream's endpoint is read from it, as the CLI would)."""
    holder: str
    """Who claims probes (the runner's lease holder name)."""


class UpstreamMonitor:
    """The health of the upstreams one goal's profiles reach; see the module rules."""

    def __init__(
        self,
        store: EventStore,
        settings: MonitorSettings,
        *,
        clock: Callable[[], datetime],
        harnesses: HarnessFactory,
        on_change: OnChange | None = None,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        self.store, self.settings, self.clock = store, settings, clock
        self.harnesses, self.on_change, self.jitter = harnesses, on_change, jitter
        self._upstreams: dict[Profile, Upstream] = {}
        self._accounts: dict[Profile, str] = {}
        """The account each profile's calls reported (SPEC §13.2)."""
        self._lock = threading.Lock()

    # ------------------------------------------------------------ naming

    def upstream(self, profile: Profile) -> Upstream:
        """The upstream a profile reaches (resolved once; renamed by a failure naming one)."""
        with self._lock:
            if profile not in self._upstreams:
                self._upstreams[profile] = upstream_of(
                    profile, self.settings.env, self.settings.workdir
                )
            return self._upstreams[profile]

    def account(self, profile: Profile) -> str | None:
        """The account a profile's calls run under, when known: its ``account`` setting,
        else the one its calls reported to this monitor."""
        if profile.account is not None:
            return profile.account
        with self._lock:
            return self._accounts.get(profile)

    def _named_by(self, profile: Profile, result: SpawnResult) -> Upstream:
        """The profile's upstream, renamed for good when the failure names another."""
        current = self.upstream(profile)
        if result.upstream is None:
            return current
        with self._lock:
            self._upstreams[profile] = named(current, result.upstream)
            return self._upstreams[profile]

    def _account_of(self, profile: Profile, result: SpawnResult) -> str | None:
        """The account a call reported (learnt for the profile's later calls)."""
        if result.account is None:
            return None
        if profile.account is None:
            with self._lock:
                self._accounts[profile] = result.account
        return self.account(profile)

    def _accounts_of(
        self, profiles: Mapping[str, Profile], parked: Parked | None
    ) -> dict[str, str]:
        """Profile name -> the account its calls run under, where known."""
        known = {p: a for p, prof in profiles.items() if (a := self.account(prof)) is not None}
        on = parked_account(parked.upstream) if parked is not None else None
        if parked is not None and on is not None:
            known.setdefault(parked.profile, on)
        return known

    # ------------------------------------------------------------ reading

    def _records(self, names: Iterable[str]) -> dict[str, UpstreamHealth]:
        wanted = set(names)
        return self.store.upstream_health(wanted) if wanted else {}

    def _record(self, name: str) -> UpstreamHealth | None:
        return self.store.upstream_health([name]).get(name)

    def _account_records(self, accounts: Collection[str]) -> dict[str, UpstreamHealth]:
        """Account -> its record, a window that has reopened by now made healthy again."""
        names = {account_name(a): a for a in accounts}
        records = self._records(names)
        now = self.clock()
        for name, record in list(records.items()):
            if reopened(record, now) is not None:
                changed = self._change(name, lambda r: reopened(r, now))
                records[name] = changed or self._record(name) or record
        return {names[n]: r for n, r in records.items()}

    def health(
        self, profiles: Mapping[str, Profile], parked: Parked | None = None
    ) -> dict[str, UpstreamHealth]:
        """Profile name -> its upstream's record, for the profiles that can be probed; a
        profile whose account's usage window is spent (or the one the goal is parked on)
        gets that account's record instead (see the module rules)."""
        names = {p: self.upstream(prof).name for p, prof in profiles.items() if probe_profile(prof)}
        records = self._records(names.values())
        health = {p: records[n] for p, n in names.items() if n in records}
        accounts = self._accounts_of(profiles, parked)
        if not accounts:
            return health
        windows = self._account_records(set(accounts.values()))
        return with_windows(health, accounts, windows, parked.upstream if parked else None)

    def is_failing(self, profile: Profile) -> bool:
        """Whether the profile's upstream is known to be failing (and can be probed), or
        its account's usage window is spent."""
        account = self.account(profile)
        window = self._account_records([account]).get(account) if account is not None else None
        if window is not None and not window.healthy:
            return True
        if probe_profile(profile) is None:
            return False
        record = self._record(self.upstream(profile).name)
        return record is not None and not record.healthy

    def probe_due(self, decision: Decision, profiles: Mapping[str, Profile]) -> bool:
        """The decision waits parked and its upstream's probe may be claimed now."""
        profile = _parked_profile(decision, profiles)
        if profile is None or probe_profile(profile) is None:
            return False
        record = self._record(self.upstream(profile).name)
        return record is not None and record.probe_claimable(self.clock())

    # ------------------------------------------------------------ observing

    def judged(self, profile: Profile, result: SpawnResult) -> SpawnResult:
        """The call classified again with its upstream's record, when it never reached the
        vendor (``governor.core.upstream.judged``); any other result as it is."""
        if result.connection != "unreachable" or result.answered_before is not None:
            return result
        upstream = self.upstream(profile)
        return judged(result, self._record(upstream.name), upstream.endpoint)

    def observe(
        self,
        profile: Profile,
        result: SpawnResult,
        backoff: UpstreamBackoff,
        began: datetime | None = None,
    ) -> SpawnResult:
        """Record what one classified call (begun at ``began``) said about its upstream;
        the call as judged with the record (``judged``)."""
        result = self.judged(profile, result)
        upstream, what, now = self._named_by(profile, result), seen(result), self.clock()
        if self._shut_window(self._account_of(profile, result), result, now):
            what = Seen("answered")  # the vendor answered: the account is spent, not it
        self._change(
            upstream.name, lambda r: observed(r, upstream, what, now, backoff, began=began)
        )
        return result

    def _shut_window(self, account: str | None, result: SpawnResult, now: datetime) -> bool:
        """Shut the account's record when the call was refused by its spent usage window;
        whether it was."""
        resets_at = spent_until(result)
        if account is None or resets_at is None:
            return False
        reopens, status = reopens_at(resets_at, now, self.jitter()), result.vendor_status
        self._change(
            account_name(account), lambda r: window_shut(r, account, reopens, now, status=status)
        )
        return True

    def wrap(self, harness: Harness, profile: Profile, backoff: UpstreamBackoff) -> Harness:
        """The harness, with every call it makes judged and observed (with the time it
        began)."""
        return ObservedHarness(
            harness,
            lambda result, began: self.observe(profile, result, backoff, began),
            self.clock,
        )

    # ------------------------------------------------------------ probing

    def probe(self, profile: Profile) -> UpstreamHealth | None:
        """Claim the profile's upstream's probe and run it; the new record, or None when
        no probe was due (or another runner holds it)."""
        upstream, probing = self.upstream(profile), probe_profile(profile)
        if probing is None:
            return None
        name, now, holder = upstream.name, self.clock(), self.settings.holder
        deadline = now + timedelta(seconds=probing.timeout_s + CLAIM_MARGIN_S)
        if self.store.change_upstream(name, lambda r: claimed(r, now, holder, deadline)) is None:
            return None
        harness = self.harnesses(probing, self.settings.workdir)
        result = harness.run(
            PROBE_PROMPT, probing, cwd=self.settings.workdir, env=self.settings.env
        )
        done = self.clock()
        after = self._change(name, lambda r: after_probe(r, result, upstream.endpoint, done))
        return after or self._record(name)

    def probe_parked(
        self, decision: Decision, profiles: Mapping[str, Profile]
    ) -> UpstreamHealth | None:
        """Probe the upstream a parked wait waits on, if its probe is due (``probe``)."""
        profile = _parked_profile(decision, profiles)
        return self.probe(profile) if profile is not None else None

    # ------------------------------------------------------------ recording

    def _change(self, name: str, transition: Transition) -> UpstreamHealth | None:
        """Apply a core transition to a record in the store; tell ``on_change`` of what a
        person should hear."""
        before: list[UpstreamHealth | None] = []

        def change(record: UpstreamHealth | None) -> UpstreamHealth | None:
            before[:] = [record]
            return transition(record)

        after = self.store.change_upstream(name, change)
        kind = change_kind(before[0], after) if after is not None and before else None
        if kind is not None and after is not None and self.on_change is not None:
            self.on_change(kind, after)
        return after


def _parked_profile(decision: Decision, profiles: Mapping[str, Profile]) -> Profile | None:
    """The profile whose upstream a parked wait waits on (None for another decision)."""
    outage = decision.outage
    if decision.next_action != "wait" or outage is None or not outage.profiles:
        return None
    return profiles.get(outage.profiles[0])


class ObservedHarness:
    """A harness whose every call is told to an observer after it returns, with the time
    it began (``clock`` before the call); the call returns as the observer judged it."""

    def __init__(
        self,
        inner: Harness,
        observe: Callable[[SpawnResult, datetime], SpawnResult],
        clock: Callable[[], datetime],
    ) -> None:
        self.inner, self.observe, self.clock = inner, observe, clock

    @property
    def name(self) -> str:
        return self.inner.name

    def binary(self, profile: Profile) -> str | None:
        return self.inner.binary(profile)

    def run(
        self, prompt: str, profile: Profile, *, cwd: Path, env: Mapping[str, str]
    ) -> SpawnResult:
        began = self.clock()
        result = self.inner.run(prompt, profile, cwd=cwd, env=env)
        return self.observe(result, began)
