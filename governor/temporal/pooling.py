"""A goal's calls against its pools, in workflow code (SPEC §13.6, §13.7; decision 0036).

Rules (this runs inside the workflow, so it is deterministic):
    * A goal that names no pool issues no command here: its history is what it was.
    * Once a call is cleared to run and before its start is recorded, its expected figure
      is reserved against every pool of the goal (the ``governor.reserve`` store step,
      a local activity: ``governor.drive.pools.reserve``, one transaction per call). A
      call whose reservation does not fit does not start (its start is not recorded,
      its activity is told so and ends).
    * When the call's outcome is recorded its reservation is settled with the figure read
      off the goal's own recorded finish (``call_figure``, its run time from the
      reservation); a call that ended with nothing recorded (lost, cancelled, refused)
      is released (``governor.settle``). Nothing the workflow held outlives the action
      that reserved it: the settlement runs in a ``finally``, and a Temporal cancel
      settles what the cancelled action left held (``workflow.GoalWorkflow.cancelled``).
    * On a refusal the workflow records ``budget.requested`` (what the forecast says the
      goal needs to finish, read by the ``governor.reserve`` step, else one more of the
      spent unit; the pool's renewal) as the runner does; when the pool's ``grants`` rule allows
      it, ``governor.pool_grant`` records ``pool.granted`` (actor ``policy``) and the
      workflow records ``budget.granted``. The goal's decision then parks it on the pool
      (``budget.2``: a durable timer until the renewal) or asks a person (``budget.3``);
      a person's grant arrives as the ``governor.verb`` update and wakes it at once.
    * A stop by the goal's own budget under a ``grants`` policy asks the same way
      (``own_budget``, the runner's ``PoolCalls.own_budget``), and a grant on the goal's
      own ledger whose time has come is expired (``budget.expired``); both only after
      the ``OWN_BUDGET_ASKS`` patch, and only for a goal with such a stop or grant.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final, Protocol, TypeVar

from temporalio import workflow

from governor.core.decision import Decision
from governor.core.events import Event
from governor.core.fold_steps import GRANTABLE
from governor.core.pools import Figure, call_figure, pool_request
from governor.core.record_budget import (
    auto_grant_rule,
    expire_grants,
    grant_budget,
    request_budget,
)
from governor.core.view import GoalView
from governor.drive.pools import spent_text
from governor.temporal.wire import (
    ExpectRequest,
    PoolGrantRequest,
    Reservations,
    ReserveRequest,
    SettleRequest,
)

T = TypeVar("T")
ASKS_THE_FORECAST: Final = "governor-asks-the-forecast"
"""The patch after which a request on the goal's own attempts asks the ``governor.expected``
step for the forecast's need to finish (before it: one attempt, no step)."""
OWN_BUDGET_ASKS: Final = "governor-own-budget-asks"
"""The patch after which the workflow records a request for more of the goal's own budget
(under a ``grants`` policy) and expires its grants, as the runner does; a history
recorded before it replays stopping on the budget, as it did."""


class Drive(Protocol):
    """What the pools read of the goal's drive (``steps.GoalDrive``)."""

    goal_id: str

    @property
    def view(self) -> GoalView: ...

    def at(self) -> datetime: ...

    async def store(
        self, name: str, arg: Any, result: type[T], summary: str | None = None
    ) -> T: ...

    def quietly(self, build: Callable[[GoalView], list[Event]]) -> Awaitable[list[Event]]: ...


@dataclass(frozen=True, slots=True)
class Held:
    """A call's reservation: its id in the pools, when it was made, what the call runs."""

    call: str
    at: datetime
    plan_id: str | None = None
    work_id: str | None = None
    run_id: str | None = None


@dataclass(frozen=True, slots=True)
class Ask:
    """A call to reserve: its name in the workflow (plan id or run id) and what it runs."""

    name: str
    profile: str
    plan_id: str | None = None
    work_id: str | None = None


class Pools:
    """The goal's reservations in flight (by call name) and the steps that make them."""

    def __init__(self, drive: Drive) -> None:
        self.drive = drive
        self.held: dict[str, Held] = {}

    def pooled(self) -> bool:
        """Whether the goal names a pool (its ``goal.created``; never changes)."""
        created = self.drive.view.created
        return bool(created is not None and created.pools)

    async def reserve(self, asks: list[Ask]) -> list[str]:
        """Reserve the calls in order; the names of those reserved (all of them for a goal
        without pools). On a refusal the rest are not reserved, and the goal's request
        for more is recorded (and granted when the pool's rule allows)."""
        if not asks or not self.pooled():
            return [a.name for a in asks]
        d, at = self.drive, self.drive.at()
        ids = {a.name: f"c-{workflow.uuid4().hex[:16]}" for a in asks}
        calls = [(ids[a.name], a.profile) for a in asks]
        shown = f"reserve {len(asks)} call(s) against the pools"
        answer = await d.store(
            "governor.reserve", ReserveRequest(d.goal_id, calls), Reservations, shown
        )
        held = asks[: len(answer.held)]
        for a in held:
            run_id = a.name if a.work_id is not None else None
            self.held[a.name] = Held(ids[a.name], at, a.plan_id, a.work_id, run_id)
        if answer.refusal is not None and answer.ask is not None:
            await self.ask_more(answer)
        return [a.name for a in held]

    async def settle(self, names: Iterable[str]) -> None:
        """Settle the named calls' reservations with their recorded figures (release those
        with nothing recorded); names without a reservation are skipped."""
        held = {name: self.held[name] for name in names if name in self.held}
        if not held:
            return
        figures = [(h.call, self.figure(h)) for h in held.values()]
        shown = f"settle {len(held)} call(s) against the pools"
        await self.drive.store(
            "governor.settle", SettleRequest(self.drive.goal_id, figures), type(None), shown
        )
        for name in held:  # only once settled: a step cancelled midway is settled again
            self.held.pop(name, None)

    def figure(self, held: Held) -> Figure | None:
        """What the call spent, read off its recorded finish; None when none is recorded."""
        view = self.drive.view
        if held.plan_id is not None:
            plan = view.plans.get(held.plan_id)
            ended = None if plan is None else plan.proposal or plan.failure
            return call_figure(ended, held.at) if ended is not None else None
        item = view.work.get(held.work_id or "")
        done = item.finish if item is not None else None
        if done is None or done.run_id != held.run_id:
            return None
        return call_figure(done, held.at)

    async def ask_more(self, answer: Reservations) -> None:
        """Record the goal's request for more of the refusing pool; grant it when the
        pool's rule allows (the runner's ``PoolCalls`` in workflow steps)."""
        d, refused, ask = self.drive, answer.refusal, answer.ask
        assert refused is not None
        assert ask is not None
        workflow.logger.info("goal %s: %s", d.goal_id, refused.sentence())
        usd, attempts = pool_request(refused, ask, answer.need)
        budget, reason = f"pool:{refused.pool}", refused.sentence()
        asked = await d.quietly(
            lambda v: request_budget(
                v, budget=budget, usd=usd, attempts=attempts, renews_at=refused.renews_at,
                reason=reason, at=d.at(),
            )
        )  # fmt: skip
        grants = answer.grants
        rule = auto_grant_rule(grants, usd, attempts)
        if not asked or rule is None or grants is None:
            return
        at = d.at()
        figure = Figure(usd=usd or 0.0, attempts=attempts or 0)
        request = PoolGrantRequest(d.goal_id, refused.pool, figure, grants.expires_s, rule, at)
        seq = await d.store("governor.pool_grant", request, int, f"pool {refused.pool} grants")
        await d.quietly(
            lambda v: grant_budget(
                v, usd=usd, attempts=attempts, expires_s=grants.expires_s, at=at,
                actor="policy", rule=f"pool {refused.pool} {rule}",
                reason=f"granted by pool {refused.pool}'s rule {rule} (pool event {seq})",
            )
        )  # fmt: skip

    async def own_budget(self, decision: Decision) -> bool:
        """On a stop by the goal's own budget under a ``grants`` policy: record the
        request, and grant it when the rule allows; expire grants whose time has come.
        True when something was recorded (decide again)."""
        d, view, now = self.drive, self.drive.view, self.drive.at()
        due = any(g.expires_at <= now for g in view.open_grants)
        grants, ledger = view.policy.grants, decision.exhausted
        asks = grants is not None and decision.status == "budget_exhausted" and ledger in GRANTABLE
        if not (due or asks) or not workflow.patched(OWN_BUDGET_ASKS):
            return False  # no command for a goal that neither asks nor has a grant due
        if due and await d.quietly(lambda v: expire_grants(v, at=d.at())):
            return True
        request = view.budget_request
        if not asks or grants is None or ledger is None:
            return False
        if request is not None and request.budget == ledger:
            return False  # asked already: a person answers
        usd, attempts = await self.own_amount(ledger)
        reason = f"the goal's own {ledger} budget is spent ({spent_text(ledger, view)})"
        if not await d.quietly(
            lambda v: request_budget(
                v, budget=ledger, usd=usd, attempts=attempts, renews_at=None, reason=reason,
                at=d.at(),
            )
        ):  # fmt: skip
            return False
        rule = auto_grant_rule(grants, usd, attempts)
        if rule is not None:
            await d.quietly(
                lambda v: grant_budget(
                    v, usd=usd, attempts=attempts, expires_s=grants.expires_s, at=d.at(),
                    actor="policy", rule=f"policy {rule}", reason=f"at or under the goal's {rule}",
                )
            )  # fmt: skip
        return True

    async def own_amount(self, ledger: str) -> tuple[float | None, int | None]:
        """What a request on the goal's own ``ledger`` asks (``core.pools.own_request``):
        what the forecast says the goal needs to finish, else one more call's expected cost
        or one attempt — both read by the ``governor.expected`` store step; ``replans``:
        one. An attempts request asks the step only after the ``ASKS_THE_FORECAST`` patch
        (before it, one attempt without a step)."""
        if ledger == "replans" or (ledger != "cost" and not workflow.patched(ASKS_THE_FORECAST)):
            return None, 1
        created = self.drive.view.created
        planner = created.planner if created is not None else ""
        request = ExpectRequest(self.drive.goal_id, planner, asking=True)
        figure = await self.drive.store("governor.expected", request, Figure, "what to ask")
        return (figure.usd, None) if ledger == "cost" else (None, figure.attempts)
