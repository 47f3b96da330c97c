"""A person's answer to a request for more budget: ``governor grant`` / ``governor decline``
of a goal or a pool (SPEC §13.7).

Rules:
    * A goal is answered only while it waits for more budget (an open
      ``budget.requested`` whose pool has not renewed since); anything else is refused and
      nothing is recorded. Everything is checked before the first write.
    * A grant of a goal's pool request is recorded on the pool (``pool.granted``) and on
      the goal (``budget.granted``); a grant to a pool answers every goal waiting on it.
    * The goal's answer is the operator verb ``grant``/``decline``
      (``governor.core.commands``), recorded by a ``Govern``: in the store, or as an update
      to the Temporal workflow that drives the goal (its one writer).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from pydantic import ValidationError

from governor.core.commands import OperatorVerb
from governor.core.durations import parse_duration
from governor.core.pools import Figure
from governor.core.record_budget import grant_budget
from governor.drive import goals
from governor.drive.pools import check_name, goals_naming, grant_pool, pool_or_error
from governor.errors import CommandRefusedError, InputError
from governor.store.base import EventStore

Govern = Callable[[str, OperatorVerb], object]
"""Records an operator verb on a goal: in the store (``in_store``), or through the
Temporal workflow that drives the goal (its one writer: the CLI's and the web view's)."""


@dataclass(frozen=True, slots=True)
class Answer:
    """A person's answer to a request: why, who, and for a grant its amounts (a decline
    has none); the ``grant``/``decline`` operator verb it records on a goal."""

    reason: str
    actor: str
    usd: float | None = None
    attempts: int | None = None
    expires_s: float | None = None

    def verb(self, name: Literal["grant", "decline"]) -> OperatorVerb:
        if name == "decline":
            return OperatorVerb("decline", self.actor, reason=self.reason)
        return OperatorVerb("grant", self.actor, reason=self.reason, usd=self.usd,
                            attempts=self.attempts, expires_s=self.expires_s)  # fmt: skip


def grant(
    store: EventStore,
    target: str,
    answer: Answer,
    *,
    clock: Callable[[], datetime],
    govern: Govern | None = None,
) -> list[str]:
    """Grant more budget to a goal's open request, or to a pool (and so to every goal
    waiting on it); the goals moved. A goal with no open request is refused. A goal of
    the target's name is answered before a pool of that name (``governor grant``)."""
    to = grant_goal if store.last_seq(target) else grant_to_pool
    return to(store, target, answer, clock=clock, govern=govern)


def grant_goal(
    store: EventStore,
    goal_id: str,
    answer: Answer,
    *,
    clock: Callable[[], datetime],
    govern: Govern | None = None,
) -> list[str]:
    """Grant the goal's open request (its pool's grant recorded on the pool too); the
    CLI's ``governor grant GOAL`` and the web view's grant form. The goal's own event is
    recorded by ``govern`` (default: in the store)."""
    usd, attempts = answer.usd, answer.attempts
    _check_amount(usd, attempts)
    view, now = goals.load(store, goal_id), clock()
    grant_budget(view, usd=usd, attempts=attempts, expires_s=None, reason=answer.reason,
                 at=now, actor=answer.actor)  # fmt: skip  # refuses a goal that is not waiting
    request = view.budget_request
    assert request is not None
    if request.renews_at is not None and now >= request.renews_at:
        raise CommandRefusedError(
            f"it is not waiting for more budget: {request.budget} renewed at "
            f"{request.renews_at.isoformat()}",
            goal_id=goal_id,
        )
    verb = answer.verb("grant")
    goals.refuse_secrets_in(store, goal_id, verb, clock=clock)  # before the pool's write
    if request.budget.startswith("pool:"):
        pool = request.budget.removeprefix("pool:")
        figure = Figure(usd=usd or request.usd or 0.0, attempts=attempts or request.attempts or 0)
        grant_pool(store, pool, figure, expires_s=answer.expires_s, at=now, actor=answer.actor,
                   reason=answer.reason, goal_id=goal_id)  # fmt: skip
    (govern or in_store(store, clock))(goal_id, verb)
    return [goal_id]


def grant_to_pool(
    store: EventStore,
    pool: str,
    answer: Answer,
    *,
    clock: Callable[[], datetime],
    govern: Govern | None = None,
) -> list[str]:
    """Grant the pool more budget (``pool.granted``) and answer every goal waiting on it;
    the goals moved. The CLI's ``governor grant POOL`` and the pool page's form."""
    usd, attempts = answer.usd, answer.attempts
    _check_amount(usd, attempts)
    check_name(pool)
    pool_or_error(store, pool)
    if usd is None and attempts is None:
        raise InputError("granting to a pool needs an amount: --usd X and/or --attempts N")
    figure = Figure(usd=usd or 0.0, attempts=attempts or 0)
    grant_pool(store, pool, figure, expires_s=answer.expires_s, at=clock(), actor=answer.actor,
               reason=answer.reason)  # fmt: skip
    return _answer_waiting(store, pool, answer.verb("grant"), govern or in_store(store, clock))


def decline(
    store: EventStore,
    target: str,
    answer: Answer,
    *,
    clock: Callable[[], datetime],
    govern: Govern | None = None,
) -> list[str]:
    """Decline a goal's open request, or every open request on a pool; the goals answered."""
    to = decline_goal if store.last_seq(target) else decline_pool
    return to(store, target, answer, clock=clock, govern=govern)


def decline_goal(
    store: EventStore,
    goal_id: str,
    answer: Answer,
    *,
    clock: Callable[[], datetime],
    govern: Govern | None = None,
) -> list[str]:
    """Decline the goal's open request (``budget.declined``)."""
    (govern or in_store(store, clock))(goal_id, answer.verb("decline"))
    return [goal_id]


def decline_pool(
    store: EventStore,
    pool: str,
    answer: Answer,
    *,
    clock: Callable[[], datetime],
    govern: Govern | None = None,
) -> list[str]:
    """Decline every open request on the pool; the goals answered."""
    check_name(pool)
    pool_or_error(store, pool)
    return _answer_waiting(store, pool, answer.verb("decline"), govern or in_store(store, clock))


def amounts(usd: str, attempts: str, expires: str) -> tuple[float | None, int | None, float | None]:
    """A grant's amounts as a form sends them (text; empty: not given), checked as the
    CLI's options are: ``--usd X``, ``--attempts N``, ``--expires DURATION``."""
    try:
        usd_ = float(usd) if usd.strip() else None
    except ValueError:
        raise InputError(f"--usd: {usd!r} is not a number") from None
    try:
        attempts_ = int(attempts) if attempts.strip() else None
    except ValueError:
        raise InputError(f"--attempts: {attempts!r} is not a whole number") from None
    try:
        expires_s = parse_duration(expires) if expires.strip() else None
    except ValueError as exc:
        raise InputError(f"--expires: {exc}") from None
    _check_amount(usd_, attempts_)
    return usd_, attempts_, expires_s


def in_store(store: EventStore, clock: Callable[[], datetime]) -> Govern:
    """Record a goal's verb in the store (``goals.govern``): a goal no Temporal drives."""
    return lambda goal_id, verb: goals.govern(store, goal_id, verb, clock=clock)


def _answer_waiting(store: EventStore, pool: str, verb: OperatorVerb, govern: Govern) -> list[str]:
    """Answer every goal whose open request is on ``pool``."""
    answered = []
    for goal_id in goals_naming(store, pool, ended=False):
        view = goals.load(store, goal_id)
        request = view.budget_request
        if request is not None and request.budget == f"pool:{pool}":
            govern(goal_id, verb)
            answered.append(goal_id)
    return answered


def _check_amount(usd: float | None, attempts: int | None) -> None:
    try:
        Figure(usd=usd or 0.0, attempts=attempts or 0)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise InputError(f"--{first['loc'][0]}: {first['msg']}") from None
