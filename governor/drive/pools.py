"""Pools from the shell: setting and deleting them, and reserving, settling and releasing
the calls of a goal against every pool it names (SPEC §13.6).

Rules:
    * Input is checked before anything is written: a limit out of range, an unknown time
      zone, a pool that does not exist, a pool still named by a goal that has not ended
      are each one ``InputError``/``NotFoundError``/``CommandRefusedError`` line, and
      nothing is recorded.
    * A reservation is one store transaction over every pool of the goal
      (``EventStore.change_pools``): either each pool records ``pool.reserved`` (after a
      ``pool.renewed`` when its period turned) or, when one of them has no room, none does
      and the call does not start. Settling and releasing are transactions the same way.
    * The runner's calls do it in the transaction of their own appends (issue 33's one
      fsync per call): the reservation rides in the append that records the call's start
      (``PoolCalls.start``) — a pool without room refuses the whole append, so the start
      is not recorded either — and the settlement in the append that records its finish
      (``PoolCalls.finish``). Only a call whose finish is not recorded (an exception, an
      operator settling it meanwhile) is settled or released in a transaction of its own.
    * A goal only ever touches the pools its ``goal.created`` names: the names come from
      the goal's own view, never from the caller.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cache
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import ValidationError

from governor.core.decision import Decision
from governor.core.event_fields import POOL_NAME_PATTERN
from governor.core.events import Event, PlanFailed, PlanProposed
from governor.core.fold_steps import GRANTABLE
from governor.core.pools import (
    DEFAULT_RESERVE_USD,
    Figure,
    PoolGranted,
    PoolLimits,
    PoolState,
    Refusal,
    call_figure,
    needs_renewal,
    own_request,
    pool_request,
    refusal,
)
from governor.core.record_budget import (
    auto_grant_rule,
    expire_grants,
    grant_budget,
    request_budget,
)
from governor.core.view import GoalView
from governor.core.work_events import AttemptFinished
from governor.drive.append import Along, Build
from governor.drive.spans import span
from governor.errors import CommandRefusedError, InputError, NotFoundError
from governor.store.base import EventStore
from governor.store.pools import PoolWrite


@cache
def zone(name: str) -> ZoneInfo:
    """The IANA time zone ``name``; ``InputError`` when there is none of that name."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError) as exc:
        raise InputError(
            f"unknown time zone '{name}': use an IANA name such as Europe/Berlin or UTC"
        ) from exc


def limits_of(fields: Mapping[str, Any]) -> PoolLimits:
    """Pool limits from input, checked whole (range, period, time zone)."""
    try:
        limits = PoolLimits.model_validate(dict(fields))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = " ".join(["pool", *(str(p) for p in first["loc"])])
        raise InputError(f"{where}: {first['msg'].removeprefix('Value error, ')}") from None
    zone(limits.tz)
    return limits


def check_name(name: str) -> str:
    """``name`` when it is a pool name; ``InputError`` saying what one is otherwise."""
    if not re.fullmatch(POOL_NAME_PATTERN, name):
        raise InputError(
            f"'{name}' is not a pool name: 1-64 small letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return name


def set_pool(
    store: EventStore,
    name: str,
    limits: PoolLimits,
    *,
    at: datetime,
    actor: str,
    reason: str | None,
) -> PoolState:
    """Create the pool or change its limits (``pool.set``)."""
    check_name(name)
    zone(limits.tz)
    states = store.change_pools(
        [name],
        lambda _s: {name: [_fields("pool.set", at, actor, reason, limits=limits)]},
    )
    return states[name]


def pool_or_error(store: EventStore, name: str) -> PoolState:
    """The pool's state; ``NotFoundError`` for a pool never set or deleted."""
    state = store.pool_state(name)
    if state is None or state.deleted or state.limits is None:
        raise NotFoundError(f"no pool '{name}': `governor pool list` shows the pools")
    return state


def delete_pool(
    store: EventStore, name: str, users: Sequence[str], *, at: datetime, actor: str
) -> PoolState:
    """Delete the pool (``pool.deleted``); refused while a goal that has not ended names it."""
    pool_or_error(store, name)
    if users:
        shown = ", ".join(users[:5]) + (" …" if len(users) > 5 else "")
        raise CommandRefusedError(
            f"pool '{name}' is named by {len(users)} goal(s) that have not ended ({shown}); "
            "cancel them or let them finish first"
        )
    return store.change_pools(
        [name], lambda _s: {name: [_fields("pool.deleted", at, actor, None)]}
    )[name]


def check_pools_exist(store: EventStore, names: Iterable[str]) -> None:
    """``NotFoundError`` naming the first pool of ``names`` that does not exist."""
    for name in names:
        pool_or_error(store, name)


def pools_of(view: GoalView) -> tuple[str, ...]:
    """The pools the goal names in its ``goal.created`` (the only ones it may spend)."""
    created = view.created
    return tuple(created.pools or ()) if created is not None else ()


class ReservationRefused(Exception):
    """A pool has no room for a call's reservation: the transaction it was in wrote
    nothing (``refusal`` says which pool and unit)."""

    def __init__(self, refusal: Refusal) -> None:
        super().__init__(refusal.sentence())
        self.refusal = refusal


def reservation(
    pools: Sequence[str], goal_id: str, call: str, ask: Figure, *, now: datetime
) -> PoolWrite:
    """The reservation of ``ask`` for ``call`` against every pool, as a write for any
    transaction (its change raises ``ReservationRefused`` for the first pool without
    room)."""

    def change(states: Mapping[str, PoolState]) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {}
        for name, state in states.items():
            if state.limits is None or state.deleted:
                continue  # deleted under a goal that had ended: nothing left to spend
            tz = zone(state.limits.tz)
            refused = refusal(state, ask, tz, now)
            if refused is not None:
                raise ReservationRefused(refused)
            events = []
            start = needs_renewal(state, tz, now)
            if start is not None:
                events.append(_fields("pool.renewed", now, "governor", None, period_start=start))
            events.append(
                _fields(
                    "pool.reserved", now, "governor", None, call=call, goal_id=goal_id, figure=ask
                )
            )
            out[name] = events
        return out

    return PoolWrite(tuple(pools), change)


def settlement(
    pools: Sequence[str], goal_id: str, call: str, figure: Figure | None, *, now: datetime
) -> PoolWrite:
    """The settlement of ``call``'s reservation with what it spent (``figure``), or its
    release when the call never ran (``figure`` None), as a write for any transaction;
    a pool that holds no such reservation records nothing."""

    def change(states: Mapping[str, PoolState]) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {}
        for name, state in states.items():
            if call not in state.in_flight:
                continue
            if figure is None:
                out[name] = [
                    _fields("pool.released", now, "governor", None, call=call, goal_id=goal_id)
                ]
            else:
                out[name] = [
                    _fields(
                        "pool.settled",
                        now,
                        "governor",
                        None,
                        call=call,
                        goal_id=goal_id,
                        figure=figure,
                    )
                ]
        return out

    return PoolWrite(tuple(pools), change)


def reserve(
    store: EventStore,
    pools: Sequence[str],
    goal_id: str,
    call: str,
    ask: Figure,
    *,
    now: datetime,
) -> Refusal | None:
    """Reserve ``ask`` for ``call`` against every pool in one transaction of its own; the
    refusal of the first pool without room (then nothing was written)."""
    if not pools:
        return None
    try:
        write = reservation(pools, goal_id, call, ask, now=now)
        store.change_pools(write.names, write.change)
    except ReservationRefused as refused:
        return refused.refusal
    return None


def settle(
    store: EventStore,
    pools: Sequence[str],
    goal_id: str,
    call: str,
    figure: Figure | None,
    *,
    now: datetime,
) -> None:
    """Settle the call's reservation with what it spent (``figure``), or release it when
    the call never ran (``figure`` None), in one transaction of its own."""
    if pools:
        write = settlement(pools, goal_id, call, figure, now=now)
        store.change_pools(write.names, write.change)


def expected_figure(view: GoalView, profile: str, reserve_usd: float | None = None) -> Figure:
    """What a call of ``profile`` is expected to spend: ``reserve_usd`` when the profile
    names it, else the median cost of the goal's recorded calls with a cost, else
    ``DEFAULT_RESERVE_USD`` — and one charged attempt. The forecast (issue 33 Build 5)
    may replace this through ``EXPECTED_FIGURE_HOOK``."""
    if EXPECTED_FIGURE_HOOK is not None:
        hooked = EXPECTED_FIGURE_HOOK(view, profile)
        if hooked is not None:
            return hooked
    if reserve_usd is not None:
        return Figure(usd=reserve_usd, attempts=1)
    costs = sorted(view_costs(view))
    usd = costs[len(costs) // 2] if costs else DEFAULT_RESERVE_USD
    return Figure(usd=usd, attempts=1)


ExpectedFigure = Callable[[GoalView, str], Figure | None]
"""A forecast's estimate of what a call of a profile will spend (None: no estimate)."""

EXPECTED_FIGURE_HOOK: ExpectedFigure | None = None
"""Set by the forecast (issue 33 Build 5) to size reservations from similar goals."""

NeedToFinish = Callable[[GoalView], Figure | None]
"""What a goal needs to finish from where it is: the amount a request asks by default
(SPEC §13.7); None when there is no data (it asks one more of the spent unit). The layers
that can forecast make it (``governor.analysis.asking.need_in``)."""


def view_costs(view: GoalView) -> list[float]:
    """The reported costs of the goal's finished calls (planner and worker)."""
    costs = [
        p.proposal.cost_usd
        if p.proposal is not None
        else (p.failure.cost_usd if p.failure else None)
        for p in view.plans.values()
    ]
    costs += [i.finish.cost_usd if i.finish is not None else None for i in view.work.values()]
    return [c for c in costs if c]


def _fields(kind: str, at: datetime, actor: str, reason: str | None, **more: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": kind, "at": at, "actor": actor, **more}
    if reason:
        out["reason"] = reason
    return out


def goals_naming(store: EventStore, name: str, *, ended: bool = True) -> list[str]:
    """The ids of the goals whose ``goal.created`` names the pool (those that have not
    ended only, with ``ended=False``)."""
    found = []
    for summary in store.goals():
        if not ended and summary.status in ("succeeded", "cancelled"):
            continue
        first = next(iter(store.load(summary.goal_id)), None)
        if first is not None and first.type == "goal.created" and name in (first.pools or ()):
            found.append(summary.goal_id)
    return found


# --- the runner's side: a call's reservation, its settlement, a request on a refusal ------


@dataclass(slots=True)
class Reserved:
    """A call's reservation against the goal's pools (none when the goal names no pool)."""

    call: str | None
    pools: tuple[str, ...]
    at: datetime
    ask: Figure = field(default_factory=Figure)
    held: bool = True
    """Whether the pools may hold it: ``hold`` makes one that is not recorded yet, and
    ``start`` says whether the append it rode in committed (an exception leaves it True:
    ``settle`` then releases whatever was recorded)."""
    settled: bool = False
    """Settled or released in the append that recorded the call's finish."""


class PoolCalls:
    """Reserves a goal's calls against its pools and settles them (SPEC §13.6); on a
    refusal, records the goal's request for more (SPEC §13.7) and grants it when the
    pool's ``grants`` rule allows.

    ``record`` appends events built on the goal's current view (the runner's); ``view``
    returns that view; ``need`` sizes a request (what the goal needs to finish: SPEC §13.7;
    without it, or without data, a request asks one more of the spent unit).
    """

    def __init__(
        self,
        store: EventStore,
        goal_id: str,
        *,
        view: Callable[[], GoalView],
        record: Callable[[Build], list[Event]],
        clock: Callable[[], datetime],
        ids: Callable[[], str],
        progress: Callable[[str], None],
        need: NeedToFinish | None = None,
    ) -> None:
        self.store, self.goal_id, self.view, self.record = store, goal_id, view, record
        self.clock, self.ids, self.progress, self.need = clock, ids, progress, need

    def hold(self, profile: str) -> Reserved:
        """The reservation a call of ``profile`` asks for, not recorded yet (``start``
        records it); one without a call id when the goal names no pool."""
        view, now = self.view(), self.clock()
        pools = pools_of(view)
        if not pools:
            return Reserved(None, (), now)
        created = view.created
        given = created.profiles.get(profile) if created is not None else None
        ask = expected_figure(view, profile, given.reserve_usd if given is not None else None)
        return Reserved(self.ids(), pools, now, ask, held=False)

    def start(
        self, reserved: Reserved, record: Callable[[Along | None], list[Event]]
    ) -> list[Event] | None:
        """Record the call's start (``record``) with its reservation in the same
        transaction; the events recorded, or None when a pool had no room: then neither
        was recorded, and the goal records its request for more (granted when the pool's
        rule allows) and waits."""
        call = reserved.call
        if call is None:
            return record(None)
        write = reservation(reserved.pools, self.goal_id, call, reserved.ask, now=reserved.at)
        attributes = _figure_attributes("reserve", reserved.pools, call, reserved.ask)
        with span("reservation", attributes) as current:
            reserved.held = True  # perhaps, until the append says (an exception: ``settle``)
            try:
                events = record(lambda _events: write)
            except ReservationRefused as refused:
                reserved.held = False
                if current is not None:
                    current.set_attribute("governor.reservation", "refused")
                    current.set_attribute("governor.refused.pool", refused.refusal.pool)
                    current.set_attribute("governor.refused.unit", refused.refusal.unit)
                found = refused.refusal
            else:
                reserved.held = bool(events)
                if current is not None:
                    current.set_attribute("governor.reservation", "held" if events else "unused")
                return events
        self.progress(found.sentence())
        self._request(found, reserved.ask, reserved.at)
        return None

    def finish(
        self, reserved: Reserved | None, record: Callable[[Along | None], list[Event]]
    ) -> list[Event]:
        """Record the call's finish (``record``) with the settlement of its reservation in
        the same transaction (what the finish recorded spent; a release when the events
        hold no finish); the events recorded. Nothing recorded: ``settle`` settles it."""
        if reserved is None or reserved.call is None or not reserved.held:
            return record(None)
        pools, call = reserved.pools, reserved.call
        figures: list[Figure | None] = []

        def along(events: Sequence[Event]) -> PoolWrite:
            finish = next((e for e in events if isinstance(e, _FINISHES)), None)
            figures.append(call_figure(finish, reserved.at) if finish is not None else None)
            return settlement(pools, self.goal_id, call, figures[-1], now=self.clock())

        events = record(along)
        if events and figures:
            reserved.settled = True
            self._settled_span(reserved, figures[-1])
        return events

    def settle(self, reserved: Reserved | None, finish: Event | None) -> None:
        """Settle the reservation with what the call's recorded finish spent (release it
        when nothing was recorded: the call never ran), in a transaction of its own; a
        no-op when the finish's append settled it or it was never recorded."""
        if reserved is None or reserved.call is None or not reserved.held or reserved.settled:
            return
        figure = None
        if isinstance(finish, _FINISHES):
            figure = call_figure(finish, reserved.at)
        attributes = _figure_attributes("settle", reserved.pools, reserved.call, figure)
        with span("settlement", {**attributes, "settlement": "settled" if figure else "released"}):
            settle(
                self.store, reserved.pools, self.goal_id, reserved.call, figure, now=self.clock()
            )
        reserved.settled = True

    def _settled_span(self, reserved: Reserved, figure: Figure | None) -> None:
        """The settlement's span, once the finish's append that carried it committed."""
        assert reserved.call is not None
        attributes = _figure_attributes("settle", reserved.pools, reserved.call, figure)
        with span("settlement", {**attributes, "settlement": "settled" if figure else "released"}):
            pass

    def _request(self, refused: Refusal, ask: Figure, now: datetime) -> None:
        usd, attempts = pool_request(refused, ask, self.need(self.view()) if self.need else None)
        budget = f"pool:{refused.pool}"
        asked = self.record(
            lambda v: request_budget(
                v, budget=budget, usd=usd, attempts=attempts, renews_at=refused.renews_at,
                reason=refused.sentence(), at=now,
            )
        )  # fmt: skip
        state = self.store.pool_state(refused.pool)
        grants = state.limits.grants if state is not None and state.limits is not None else None
        rule = auto_grant_rule(grants, usd, attempts)
        if not asked or rule is None or grants is None:
            return
        granted = grant_pool(
            self.store, refused.pool, Figure(usd=usd or 0.0, attempts=attempts or 0),
            expires_s=grants.expires_s, at=now, actor="policy", rule=rule, goal_id=self.goal_id,
            reason=f"at or under pool {refused.pool}'s {rule}",
        )  # fmt: skip
        self.record(
            lambda v: grant_budget(
                v, usd=usd, attempts=attempts, expires_s=grants.expires_s, at=now,
                actor="policy", rule=f"pool {refused.pool} {rule}",
                reason=f"granted by pool {refused.pool}'s rule {rule} (pool event {granted.seq})",
            )
        )  # fmt: skip
        self.progress(f"pool {refused.pool} granted {asked_text(usd, attempts)} by its rule {rule}")

    def own_budget(self, decision: Decision) -> bool:
        """On a stop by the goal's own budget under a ``grants`` policy: record the request,
        and grant it when the rule allows; expire grants whose time has come. True when
        something was recorded (decide again)."""
        view, now = self.view(), self.clock()
        if any(g.expires_at <= now for g in view.open_grants) and self.record(
            lambda v: expire_grants(v, at=now)
        ):
            return True
        grants = view.policy.grants
        ledger = decision.exhausted
        if grants is None or decision.status != "budget_exhausted" or ledger not in GRANTABLE:
            return False
        request = view.budget_request
        if request is not None and request.budget == ledger:
            return False  # asked already: a person answers
        per_call = expected_figure(view, view.created.planner if view.created else "").usd
        usd, attempts = own_request(ledger, per_call, self.need(view) if self.need else None)
        reason = f"the goal's own {ledger} budget is spent ({_spent_text(ledger, view)})"
        if not self.record(
            lambda v: request_budget(
                v, budget=ledger, usd=usd, attempts=attempts, renews_at=None, reason=reason, at=now
            )
        ):
            return False
        rule = auto_grant_rule(grants, usd, attempts)
        if rule is not None:
            self.record(
                lambda v: grant_budget(
                    v, usd=usd, attempts=attempts, expires_s=grants.expires_s, at=now,
                    actor="policy", rule=f"policy {rule}", reason=f"at or under the goal's {rule}",
                )
            )  # fmt: skip
            self.progress(f"granted {asked_text(usd, attempts)} by the goal's rule {rule}")
        return True


_FINISHES = (PlanProposed, PlanFailed, AttemptFinished)
"""The events that record a call's end (what ``call_figure`` reads)."""


def _figure_attributes(
    what: str, pools: Sequence[str], call: str, figure: Figure | None
) -> dict[str, str | float | int | None]:
    """A reservation's or settlement's span attributes (SPEC §13.6): the pools, the call,
    and each unit of the figure (none for a release)."""
    units = {} if figure is None else {
        f"{what}.usd": figure.usd,
        f"{what}.attempts": figure.attempts,
        f"{what}.run_time_s": figure.run_time_s,
    }  # fmt: skip
    return {"pools": ",".join(pools), "pool.call": call, **units}


def _spent_text(ledger: str, view: GoalView) -> str:
    """What the goal's own ledger spent, read off its view (the driver's decisions are
    taken without their ledger rows)."""
    policy = view.policy
    if ledger == "cost":
        return f"${view.cost_usd:.4g} reported of ${policy.max_cost_usd or 0:.4g}"
    if ledger == "replans":
        return f"{view.charged_replans} charged of {policy.max_replans}"
    return f"{view.charged_attempts} charged of {policy.max_total_attempts}"


spent_text = _spent_text
"""What the goal's own ledger spent, in words (a Temporal workflow's request says it too)."""


def asked_text(usd: float | None, attempts: int | None) -> str:
    """An amount in words: ``$0.5``, ``1 attempt``."""
    parts = []
    if usd is not None:
        parts.append(f"${usd:g}")
    if attempts is not None:
        parts.append(f"{attempts} attempt" + ("s" if attempts != 1 else ""))
    return " and ".join(parts) or "nothing"


def grant_pool(
    store: EventStore,
    name: str,
    figure: Figure,
    *,
    expires_s: float | None,
    at: datetime,
    actor: str,
    reason: str,
    rule: str | None = None,
    goal_id: str | None = None,
) -> PoolGranted:
    """Record ``pool.granted`` on the pool: its limit rises by ``figure`` until it expires
    (or the period renews)."""
    expires_at = at + timedelta(seconds=expires_s) if expires_s else None
    fields = _fields(
        "pool.granted", at, actor, reason, figure=figure, expires_at=expires_at, rule=rule,
        goal_id=goal_id,
    )  # fmt: skip
    state = store.change_pools([name], lambda _s: {name: [fields]})[name]
    return PoolGranted(pool=name, seq=state.seq, **fields)
