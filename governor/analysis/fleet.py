"""Fleet outages, simulated: many goals under one shared on/off vendor (SPEC §11.10).

The model is ``governor.analysis.simulate``'s, with one difference: every goal calls the
*same* vendor, so an outage meets them all at once. Goals start ``spread_s`` apart in
turn and are stepped in time order, each through the real core and the same driver as
real runs (``decide``, ``route``, ``governor.drive.act``):

* ``aware`` (the fleet rule): one shared health record, written with the core's own
  transitions (``governor.core.upstream``) a refusal's ``refusal_s`` after the call
  began; decisions take it as their ``upstreams``. A goal parked when a probe is due
  claims it and probes (a call of ``probe_s``); when a probe is answered, every parked
  goal is stepped at once (as a store moves them).
* ``per-goal`` (before SPEC §11.10): no shared record. A goal that stops on the upstream
  bound waits for a person: an operator resumes it ``operator_delay_s`` after the outage
  it stopped in ends (a *manual resume*).

* ``pool`` (SPEC §13.6): every goal names one shared pool. Each agent call reserves the
  live driver's expected figure (``governor.drive.pools.expected_figure``) before it
  starts and is settled with what it spent when it ends (``governor.analysis.shared_pool``,
  the core's pool rules); a call that does not fit is not made: the goal records its
  request for more (``budget.requested``), is granted it when the pool's ``grants`` rule
  allows (``budget.granted``, actor ``policy``), else waits parked until the pool renews
  (a ``total`` pool: it stops, waiting for a person).

What it counts — calls that reached the vendor (agent calls and probes), those refused,
probes, parks, manual resumes, and for each goal the first answered call after each
outage — is what ``bench/outage.py`` compares; ``timeline`` is what the plot of
``docs/fleet-outages.md`` draws.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Final, Literal

from governor.analysis.model import Model, Vendor
from governor.analysis.shared_pool import Period, SharedPool
from governor.analysis.simulate import T0, Episode, World, new_goal, world
from governor.core import verbs
from governor.core.decision import Decision
from governor.core.events import Event, PlanFailed, PlanProposed
from governor.core.fold import project
from governor.core.policy import Policy
from governor.core.pools import PoolLimits, call_figure, pool_request
from governor.core.record_budget import grant_budget, request_budget
from governor.core.route import Action, Dispatch, Park, Plan, Resume, Stop, Wait, route
from governor.core.upstream import Seen, Upstream, UpstreamHealth, claimed, observed, probed
from governor.core.work_events import AttemptFinished
from governor.drive.act import act
from governor.drive.pools import expected_figure

Mode = Literal["aware", "per-goal"]
PROFILE: Final = "agent"
"""The one profile of a simulated goal (``governor.analysis.simulate.new_goal``)."""
VENDOR: Final = Upstream("scripted", "sim:vendor", "default")
POOL: Final = "fleet"
"""The name of the pool a fleet's goals share (``FleetSettings.pool``)."""


@dataclass(frozen=True, slots=True)
class FleetSettings:
    """How a fleet is simulated."""

    goals: int
    mode: Mode = "aware"
    spread_s: float = 1.0
    """Seconds between the starts of consecutive goals."""
    probe_s: float = 2.0
    """How long a probe takes."""
    operator_delay_s: float = 900.0
    """Per-goal mode: how long after an outage ends a person resumes the goals it stopped."""
    outages: tuple[tuple[float, float], ...] | None = None
    """Fixed outage windows (start, end) in seconds; None: the model's random process."""
    max_steps: int = 2000
    """Steps per goal at most."""
    pool: PoolLimits | None = None
    """The pool every goal of the fleet names (None: no pool)."""
    pool_zone: tzinfo = UTC
    """The time zone of the pool's calendar periods."""


@dataclass(slots=True)
class Tally:
    """What happened at the vendor and to the goals."""

    calls: int = 0
    """Calls that reached the vendor: agent calls and probes."""
    refused: int = 0
    probes: int = 0
    parks: int = 0
    manual_resumes: int = 0
    timeline: list[tuple[float, str, int]] = field(default_factory=list)
    """(seconds, what happened, goal index): ``call``, ``refused``, ``probe``,
    ``probe_refused``, ``park``, ``resume``, ``manual_resume``."""


@dataclass(slots=True)
class PoolTally:
    """What the fleet's pool did: its events and periods, and the goals it parked."""

    pool: SharedPool
    periods: tuple[Period, ...] = ()
    parked_goals: set[int] = field(default_factory=set)
    parked_s: float = 0.0
    """Goal-time spent parked on the pool, from a refusal to the goal's next call."""
    stopped: set[int] = field(default_factory=set)
    """Goals that ended waiting on the pool (a ``total`` pool: for a person)."""
    grants: int = 0


@dataclass(frozen=True, slots=True)
class FleetRun:
    """One simulated fleet: every goal's history, the tally, and the outages it met."""

    histories: tuple[list[Event], ...]
    tally: Tally
    outages: tuple[tuple[float, float], ...]
    pool: PoolTally | None = None

    def recoveries_s(self) -> list[float]:
        """For each goal an outage hit (a refused call, or a park, while it lasted): the wait
        from the outage's end to the start of the goal's first answered call after it
        (``inf`` for a goal that never called again)."""
        answered: dict[int, list[float]] = {}
        hit: dict[int, list[float]] = {}
        for t, what, goal in self.tally.timeline:
            if what == "call":
                answered.setdefault(goal, []).append(t)
            elif what in ("refused", "park"):
                hit.setdefault(goal, []).append(t)
        waits = []
        for start, end in self.outages:
            for goal, times in hit.items():
                if any(start <= t <= end for t in times):
                    after = [t for t in answered.get(goal, []) if t >= end]
                    waits.append((min(after) if after else float("inf")) - end)
        return waits


class _Fleet:
    """The shared state of one simulated fleet and its event loop."""

    def __init__(self, model: Model, policy: Policy, seed: int, settings: FleetSettings) -> None:
        self.settings, self.tally = settings, Tally()
        first = world(model, seed, 0)
        vendor = first.vendor
        if settings.outages is not None:
            vendor = Vendor(0.0, model.outage_mean_s, first.vendor.rng, list(settings.outages))
            vendor.horizon = float("inf")
        self.vendor = vendor
        self.health: UpstreamHealth | None = None
        self.pool: PoolTally | None = None
        pools: tuple[str, ...] = ()
        if settings.pool is not None:
            self.pool = PoolTally(SharedPool.opened(POOL, settings.pool, settings.pool_zone, T0))
            pools = (POOL,)
        self.episodes: list[_Goal] = []
        for n in range(settings.goals):
            w = replace(world(model, seed, n), vendor=vendor)
            events = new_goal(n, policy, pools)
            start = n * settings.spread_s
            self.episodes.append(_Goal(self, n, w, events, start))
        self.queue = [(g.t, g.index) for g in self.episodes]
        heapq.heapify(self.queue)

    def upstreams(self, now_s: float) -> dict[str, UpstreamHealth] | None:
        if self.settings.mode != "aware":
            return None
        h = self.health
        if h is None or (not h.healthy and h.failing_since and h.failing_since > _at(now_s)):
            return None  # nothing known yet at this moment
        return {PROFILE: h}

    def seen(self, seen: Seen, at_s: float, goal: int) -> None:
        self.tally.calls += 1
        self.tally.refused += seen.contact == "refused"
        self.tally.timeline.append((at_s, "refused" if seen.contact == "refused" else "call", goal))
        if self.settings.mode == "aware":
            backoff = self.episodes[goal].view.policy.upstream_backoff
            changed = observed(self.health, VENDOR, seen, _at(at_s), backoff)
            self.health = changed or self.health

    def probe(self, goal: _Goal) -> bool:
        """The goal probes the vendor if its probe is due; True when it did."""
        now = _at(goal.t)
        holder = f"goal-{goal.index}"
        mine = claimed(self.health, now, holder, now + timedelta(seconds=60))
        if mine is None:
            return False
        self.tally.calls += 1
        self.tally.probes += 1
        goal.t += self.settings.probe_s
        down = self.vendor.down_until(goal.t) is not None
        self.tally.refused += down
        self.tally.timeline.append((goal.t, "probe_refused" if down else "probe", goal.index))
        self.health = probed(mine, Seen("refused" if down else "answered"), _at(goal.t))
        if not down:  # the store moves every goal parked on it: they are due at once
            for other in self.episodes:
                if other.view.parked is not None and other.t > goal.t:
                    other.t = goal.t
                    heapq.heappush(self.queue, (other.t, other.index))
        return True

    def outage_end(self, t: float) -> float | None:
        """The end of the latest outage that began by ``t``, if any."""
        ends = [end for start, end in self.vendor.windows if start <= t]
        return ends[-1] if ends else None

    def run(self) -> FleetRun:
        steps = [0] * len(self.episodes)
        while self.queue:
            t, index = heapq.heappop(self.queue)
            goal = self.episodes[index]
            if t != goal.t or goal.done or steps[index] >= self.settings.max_steps:
                continue
            steps[index] += 1
            goal.step()
            if not goal.done:
                heapq.heappush(self.queue, (goal.t, index))
        windows = tuple(w for w in self.vendor.windows if w[0] < max(g.t for g in self.episodes))
        if self.pool is not None:
            self.pool.periods = tuple(self.pool.pool.close())
            self.pool.stopped = {g.index for g in self.episodes if g.parked_since is not None}
        return FleetRun(tuple(g.events for g in self.episodes), self.tally, windows, self.pool)


def _at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


class _Goal(Episode):
    """One goal of the fleet: an ``Episode`` whose calls and waits the fleet sees."""

    def __init__(self, fleet: _Fleet, index: int, w: World, events: list[Event], t: float) -> None:
        super().__init__(w, project(events), events, t)
        self.fleet, self.index, self.done = fleet, index, False
        self.parked_since: float | None = None
        """When the pool refused the goal's call (None: it is not waiting on the pool)."""

    # --- the pool (SPEC §13.6): each call reserved before it starts, settled when it ends

    def plan(self, action: Plan) -> None:
        call = self._reserve()
        if call is not None:
            before, start = len(self.events), self.t
            super().plan(action)
            self._settle(call, before, start)

    def dispatch(self, action: Dispatch) -> None:
        for work_id in action.work_ids:
            call = self._reserve()
            if call is None:
                return  # no room: the goal waits (or was granted: its next step)
            before, start = len(self.events), self.t
            self.attempt(work_id)
            self._settle(call, before, start)

    def _reserve(self) -> str | None:
        """The call's reservation ("" without a pool); None when the pool refused it."""
        tally = self.fleet.pool
        if tally is None:
            return ""
        pool, ask, goal = tally.pool, expected_figure(self.view, PROFILE), self.view.goal_id
        got = pool.reserve(goal, ask, self.now)
        if isinstance(got, str):
            if self.parked_since is not None:
                tally.parked_s += self.t - self.parked_since
                self.parked_since = None
            return got
        tally.parked_goals.add(self.index)
        self.parked_since = self.t if self.parked_since is None else self.parked_since
        usd, attempts = pool_request(got, ask)
        asked = request_budget(
            self.view, budget=f"pool:{pool.name}", usd=usd, attempts=attempts,
            renews_at=got.renews_at, reason=got.sentence(), at=self.now,
        )  # fmt: skip
        self.add(asked)
        grant = pool.auto_grant(goal, got, ask, self.now) if asked else None
        if grant is not None:
            tally.grants += 1
            self.add(
                grant_budget(
                    self.view, usd=grant.usd, attempts=grant.attempts, expires_s=grant.expires_s,
                    at=self.now, actor="policy", rule=f"pool {pool.name} {grant.rule}",
                    reason=f"granted by pool {pool.name}'s rule {grant.rule}",
                )
            )  # fmt: skip
        return None

    def _settle(self, call: str, before: int, start: float) -> None:
        tally = self.fleet.pool
        if tally is None:
            return
        finish = next(
            (
                e
                for e in self.events[before:]
                if isinstance(e, PlanProposed | PlanFailed | AttemptFinished)
            ),
            None,
        )
        if finish is None:
            tally.pool.release(call, self.view.goal_id, self.now)
        else:
            tally.pool.ends(call, self.view.goal_id, call_figure(finish, _at(start)), self.now)

    def decision(self) -> Decision:
        return self.decider.decide(
            self.now, with_ledger=False, upstreams=self.fleet.upstreams(self.t)
        )

    def step(self) -> None:
        """Decide, probe when parked and due, or act once; a stop ends the goal (or, per
        goal, waits for the operator's resume)."""
        decision = self.decision()
        if (
            decision.outage is not None
            and decision.next_action == "wait"
            and self.fleet.probe(self)
        ):
            return
        action = route(decision)
        if isinstance(action, Stop) or (isinstance(action, Wait) and action.until is None):
            self._stopped(decision)
            return
        self._act(action)

    def _act(self, action: Action) -> None:
        before, start = len(self.events), self.t
        act(self, action)
        what = {Park: "park", Resume: "resume"}.get(type(action))
        if what is not None:
            self.fleet.tally.parks += what == "park"
            self.fleet.tally.timeline.append((self.t, what, self.index))
        if isinstance(action, Plan | Dispatch):
            for event in self.events[before:]:
                self._called(event, start)

    def _called(self, event: Event, start: float) -> None:
        failed = isinstance(event, PlanFailed | AttemptFinished) and event.failure_class
        if failed == "environment":
            return  # the binary is missing: nothing reached the vendor
        if failed == "upstream":
            retry_after = event.retry_after_s  # type: ignore[union-attr]
            at = start + self.w.model.refusal_s
            self.fleet.seen(Seen("refused", 503, retry_after), at, self.index)
        elif isinstance(event, PlanFailed | AttemptFinished) or event.type == "plan.proposed":
            self.fleet.seen(Seen("answered"), start, self.index)  # it was answered: from its start

    def _stopped(self, decision: Decision) -> None:
        """A stop; per goal, a stop on the upstream bound waits for a person."""
        end = self.fleet.outage_end(self.t) if decision.blocked_on == "upstream" else None
        if decision.status != "blocked" or end is None or self.fleet.settings.mode == "aware":
            self.done = True
            return
        self.t = max(self.t, end + self.fleet.settings.operator_delay_s)
        reason = "the vendor is back (status page)"
        if decision.work_ids:
            item = decision.work_ids[0]
            self.add(
                verbs.retry_work(
                    self.view, work_id=item, reason=reason, at=self.now, actor="operator"
                )
            )
        else:
            self.add(verbs.resume_goal(self.view, reason=reason, at=self.now, actor="operator"))
        self.fleet.tally.manual_resumes += 1
        self.fleet.tally.timeline.append((self.t, "manual_resume", self.index))


def simulate_fleet(model: Model, policy: Policy, *, seed: int, settings: FleetSettings) -> FleetRun:
    """Simulate ``settings.goals`` goals under one shared vendor (see the module rules)."""
    return _Fleet(model, policy, seed, settings).run()


def parked_over_time(run: FleetRun, step_s: float) -> Sequence[tuple[float, int]]:
    """(seconds, goals parked) sampled every ``step_s``, for the plot."""
    changes = sorted(
        (t, +1 if what == "park" else -1)
        for t, what, _ in run.tally.timeline
        if what in ("park", "resume")
    )
    end = max((t for t, _, _ in run.tally.timeline), default=0.0)
    out, parked, i, t = [], 0, 0, 0.0
    while t <= end:
        while i < len(changes) and changes[i][0] <= t:
            parked += changes[i][1]
            i += 1
        out.append((t, parked))
        t += step_s
    return out
