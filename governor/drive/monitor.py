"""The shared upstream health as one runner sees it: resolve, read, observe, probe (SPEC §11.10).

Rules:
    * Each profile of the goal is resolved once to the upstream it reaches
      (``governor.exec.vendor_health.upstream_of``) — or, once one of its failures names an
      upstream (a command envelope's ``upstream``, SPEC §12.9), to that one. Every agent
      call goes through ``ObservedHarness``, which records what the call said about its
      upstream with the core's transition: the store writes only when the record changes.
    * A call that could not reach its vendor at all is classified with its upstream's
      record (SPEC §12.7): ``upstream`` (an outage: park and probe) when the upstream
      has answered before, ``environment`` ("never reached <endpoint>") when it never
      has. ``judged`` asks the record and classifies the call again; the probe's result
      is judged the same way.
    * A decision is given the records of the profiles that can be probed; a profile that
      cannot is never parked (its health is still recorded and shown).
    * A probe is claimed in the store first — one per upstream per back-off step, whoever
      asks — then run with the parked profile's own credentials through its harness,
      bounded by ``PROBE_TIMEOUT_S``, and its result recorded. The claim expires with its
      deadline, so a runner that died while probing blocks nobody for long.
    * An account's spent usage window (SPEC §13.2): a call refused ``upstream`` whose
      result names its ``account`` and ``resets_at`` shuts that account's record
      (``governor.core.upstream.window_shut``) until ``resets_at`` plus a small jitter
      (``window_jitter_s``: at most 5 % of the wait and 60 s, so a fleet does not call at
      the same instant) — the vendor answered, so the upstream's own record learns an
      answer, not a refusal. A profile's account is its ``account`` setting, else the one
      its calls reported to this monitor, else the one the goal is parked on; each
      profile whose account's window is spent is given that record instead of its
      upstream's (every profile: no probe is needed), and the first reader at or after
      the reopening time makes it healthy again (``reopened``), so the goal resumes.
    * Every change of a record that matters to a person (an upstream went down, came
      back, a probe was refused, or made no contact — timed out, its binary gone) is told
      to ``on_change``: the service logs it, ``run`` prints it.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Final, Literal

from governor.core.accounts import account_name, reopened, window_shut
from governor.core.classify import SpawnResult, classify
from governor.core.decision import Decision
from governor.core.event_fields import Profile
from governor.core.policy import UpstreamBackoff
from governor.core.upstream import (
    ACCOUNT,
    Seen,
    Upstream,
    UpstreamHealth,
    claimed,
    observed,
    probed,
)
from governor.core.view import Parked
from governor.exec.harness import Harness
from governor.exec.vendor_health import PROBE_PROMPT, named, probe_profile, seen, upstream_of
from governor.store.base import EventStore

HarnessFactory = Callable[[Profile, Path], Harness]
ChangeKind = Literal["down", "up", "probe_refused", "probe_unanswered"]
OnChange = Callable[[ChangeKind, UpstreamHealth], None]
"""Told of an upstream that went down, came back, or whose probe was refused (or made no
contact: ``probe_unanswered``)."""
CLAIM_MARGIN_S: Final = 15.0
"""How much longer than its timeout a claimed probe keeps its claim."""


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


@dataclass(frozen=True, slots=True)
class MonitorSettings:
    """Where a monitor's probes run and how they are named."""

    workdir: Path
    env: Mapping[str, str]
    """The source environment (the upstream's endpoint is read from it, as the CLI would)."""
    holder: str
    """Who claims probes (the runner's lease holder name)."""


JITTER_FRACTION: Final = 0.05
JITTER_MAX_S: Final = 60.0


def window_jitter_s(wait_s: float, draw: float) -> float:
    """The jitter added to a usage window's reset (``draw`` in [0, 1))."""
    return max(0.0, min(JITTER_MAX_S, wait_s * JITTER_FRACTION) * draw)


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

    def account(self, profile: Profile) -> str | None:
        """The account a profile's calls run under, when known: its ``account`` setting,
        else the one its calls reported to this monitor."""
        if profile.account is not None:
            return profile.account
        with self._lock:
            return self._accounts.get(profile)

    def _learn_account(self, profile: Profile, result: SpawnResult) -> str | None:
        if result.account is not None and profile.account is None:
            with self._lock:
                self._accounts[profile] = result.account
        return self.account(profile) if result.account is not None else None

    def _window(self, profile: Profile, result: SpawnResult, now: datetime) -> bool:
        """Shut the account's record when the call was refused by its spent usage window;
        whether it was."""
        account = self._learn_account(profile, result)
        resets_at = result.resets_at
        if account is None or resets_at is None or result.failure_class != "upstream":
            return False
        wait_s = max(0.0, (resets_at - now).total_seconds())
        reopens = resets_at + timedelta(seconds=window_jitter_s(wait_s, self.jitter()))
        status = result.vendor_status
        self._change(
            account_name(account), lambda r: window_shut(r, account, reopens, now, status=status)
        )
        return True

    def _accounts_of(
        self, profiles: Mapping[str, Profile], parked: Parked | None
    ) -> dict[str, str]:
        """Profile name -> the account its calls run under, where known."""
        known = {p: a for p, prof in profiles.items() if (a := self.account(prof)) is not None}
        if parked is not None and parked.upstream.startswith(f"{ACCOUNT} "):
            known.setdefault(parked.profile, parked.upstream.removeprefix(f"{ACCOUNT} "))
        return known

    def _account_records(self, accounts: Collection[str]) -> dict[str, UpstreamHealth]:
        """Account -> its record, a window that has reopened by now made healthy again."""
        names = {account_name(a): a for a in accounts}
        records = self.store.upstream_health(set(names)) if names else {}
        now = self.clock()
        for name, record in list(records.items()):
            if reopened(record, now) is not None:
                changed = self._change(name, lambda r: reopened(r, now))
                records[name] = changed or self.store.upstream_health([name]).get(name, record)
        return {names[n]: r for n, r in records.items()}

    def upstream(self, profile: Profile) -> Upstream:
        """The upstream a profile reaches (resolved once; renamed by a failure naming one)."""
        with self._lock:
            if profile not in self._upstreams:
                self._upstreams[profile] = upstream_of(
                    profile, self.settings.env, self.settings.workdir
                )
            return self._upstreams[profile]

    def _named_by(self, profile: Profile, result: SpawnResult) -> Upstream:
        """The profile's upstream, renamed for good when the failure names another."""
        current = self.upstream(profile)
        if result.upstream is None:
            return current
        with self._lock:
            self._upstreams[profile] = named(current, result.upstream)
            return self._upstreams[profile]

    def judged(self, profile: Profile, result: SpawnResult) -> SpawnResult:
        """The call classified again with its upstream's record, when it never reached the
        vendor (see the module rules); any other result as it is."""
        if result.connection != "unreachable" or result.answered_before is not None:
            return result
        upstream = self.upstream(profile)
        record = self.store.upstream_health([upstream.name]).get(upstream.name)
        return classify(
            result.model_copy(
                update={
                    "answered_before": record is not None and record.answered,
                    "endpoint": result.endpoint or upstream.endpoint,
                }
            )
        )

    def health(
        self, profiles: Mapping[str, Profile], parked: Parked | None = None
    ) -> dict[str, UpstreamHealth]:
        """Profile name -> its upstream's record, for the profiles that can be probed; a
        profile whose account's usage window is spent (or the one the goal is parked on)
        gets that account's record instead (see the module rules)."""
        names = {p: self.upstream(prof).name for p, prof in profiles.items() if probe_profile(prof)}
        records = self.store.upstream_health(set(names.values())) if names else {}
        health = {p: records[n] for p, n in names.items() if n in records}
        accounts = self._accounts_of(profiles, parked)
        windows = self._account_records(set(accounts.values())) if accounts else {}
        parked_on = parked.upstream if parked is not None else None
        for p, account in accounts.items():
            window = windows.get(account)
            if window is not None and (not window.healthy or window.upstream == parked_on):
                health[p] = window
        return health

    def is_failing(self, profile: Profile) -> bool:
        """Whether the profile's upstream is known to be failing (and can be probed), or
        its account's usage window is spent."""
        account = self.account(profile)
        if account is not None:
            window = self._account_records([account]).get(account)
            if window is not None and not window.healthy:
                return True
        if probe_profile(profile) is None:
            return False
        name = self.upstream(profile).name
        record = self.store.upstream_health([name]).get(name)
        return record is not None and not record.healthy

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
        if self._window(profile, result, now):
            what = Seen("answered")  # the vendor answered: the account is spent, not it
        self._change(
            upstream.name, lambda r: observed(r, upstream, what, now, backoff, began=began)
        )
        return result

    def wrap(self, harness: Harness, profile: Profile, backoff: UpstreamBackoff) -> Harness:
        """The harness, with every call it makes judged and observed (with the time it
        began)."""
        return ObservedHarness(
            harness,
            lambda result, began: self.observe(profile, result, backoff, began),
            self.clock,
        )

    def probe(self, profile: Profile) -> UpstreamHealth | None:
        """Claim the profile's upstream's probe and run it; the new record, or None when
        no probe was due (or another runner holds it)."""
        probing = probe_profile(profile)
        if probing is None:
            return None
        name, now = self.upstream(profile).name, self.clock()
        deadline = now + timedelta(seconds=probing.timeout_s + CLAIM_MARGIN_S)
        holder = self.settings.holder
        if self.store.change_upstream(name, lambda r: claimed(r, now, holder, deadline)) is None:
            return None
        harness = self.harnesses(probing, self.settings.workdir)
        result = harness.run(
            PROBE_PROMPT, probing, cwd=self.settings.workdir, env=self.settings.env
        )
        what, done = seen(self.judged(profile, result)), self.clock()
        after = self._change(name, lambda r: probed(r, what, done) if r is not None else None)
        return after or self.store.upstream_health([name]).get(name)

    def probe_due(self, decision: Decision, profiles: Mapping[str, Profile]) -> bool:
        """The decision waits parked and its upstream's probe may be claimed now."""
        profile = _parked_profile(decision, profiles)
        if profile is None or probe_profile(profile) is None:
            return False
        name = self.upstream(profile).name
        record = self.store.upstream_health([name]).get(name)
        return record is not None and record.probe_claimable(self.clock())

    def probe_parked(
        self, decision: Decision, profiles: Mapping[str, Profile]
    ) -> UpstreamHealth | None:
        """Probe the upstream a parked wait waits on, if its probe is due (``probe``)."""
        profile = _parked_profile(decision, profiles)
        return self.probe(profile) if profile is not None else None

    def _change(
        self, name: str, transition: Callable[[UpstreamHealth | None], UpstreamHealth | None]
    ) -> UpstreamHealth | None:
        before: list[UpstreamHealth | None] = []

        def change(record: UpstreamHealth | None) -> UpstreamHealth | None:
            before[:] = [record]
            return transition(record)

        after = self.store.change_upstream(name, change)
        kind = change_kind(before[0], after) if after is not None and before else None
        if kind is not None and self.on_change is not None:
            self.on_change(kind, after)  # type: ignore[arg-type]
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
