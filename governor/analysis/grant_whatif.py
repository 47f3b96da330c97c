"""What-if of a history's grants: had no grant been made, or had the auto-grant settings
been others (``grants = {auto_usd, auto_attempts}``; SPEC §13.7, issue 33 Build 7).

Rules:
    * Each request (``budget.requested``) is matched with its answer: the next
      ``budget.granted`` or ``budget.declined`` on its budget. Recorded, it was granted by
      ``policy`` (actor ``policy``), granted by a ``person`` (any other actor),
      ``declined``, or left ``open``.
    * Under other settings a request is granted by policy when ``auto_grant_rule`` allows
      its amount (``governor.core.record_budget``: the one definition), else it waits
      for a person as recorded. Without grants (``settings`` None) no grant is made at all.
    * The first request whose fate differs is the divergence:
        - a grant that would not have been made (without grants: any grant; under other
          settings: a policy grant they do not allow) — the goal would have stopped there,
          waiting on its request: **known**, the decision just before the grant, taken at
          its time (``decide``). A request on a pool that renews would have gone on by
          itself at the renewal: **censored** after that. What the record did after the
          grant is what the grant bought (``Bought``).
        - a request a person answered (or nobody did) that the settings would have
          granted by themselves: granted at once, the wait for a person saved (until the
          answer, or the history's end); what follows was never observed: **censored**.
    * No difference: **same**. Nothing is re-run and nothing is written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Literal

from governor.core.budget_events import BudgetDeclined, BudgetGranted, BudgetRequested
from governor.core.decision import Decision
from governor.core.events import Event
from governor.core.fold import project
from governor.core.policy import Grants
from governor.core.record_budget import auto_grant_rule
from governor.core.rules.decide import decide
from governor.core.work_events import WorkAccepted
from governor.errors import InputError

Answered = Literal["policy", "person", "declined", "open"]


@dataclass(frozen=True, slots=True)
class Request:
    """One request for more budget in the record, and how it was answered."""

    seq: int
    index: int
    """Its place in the history (0-based)."""
    event: BudgetRequested
    answered: Answered
    answer: BudgetGranted | BudgetDeclined | None
    answer_index: int | None
    auto: bool
    """Whether the settings asked about would grant it by themselves."""

    @property
    def waited_s(self) -> float | None:
        """Seconds from the request to its answer (None: never answered)."""
        return None if self.answer is None else (self.answer.at - self.event.at).total_seconds()


@dataclass(frozen=True, slots=True)
class Bought:
    """What the record did after a grant the other settings would not have made."""

    attempts_charged: int
    replans_charged: int
    cost_usd: float
    accepted: tuple[str, ...]
    """The items accepted after it."""


@dataclass(frozen=True, slots=True)
class GrantsWhatIf:
    """A history's grants re-decided under other settings (module rules)."""

    goal_id: str
    settings: Grants | None
    """The settings asked about; None: no grant made at all."""
    requests: tuple[Request, ...]
    outcome: Literal["same", "known", "censored"]
    divergence: Request | None
    kind: Literal["not granted", "granted by policy"] | None
    at_seq: int | None
    """Where the story parts: the grant not made, or the request granted at once."""
    decision: Decision | None
    """Where the goal would have stood (a grant not made); None otherwise."""
    bought: Bought | None
    saved_s: float | None
    """The wait for a person saved (a request granted by policy instead)."""
    recorded_final: Decision


def grants_whatif(
    events: Sequence[Event], settings: Grants | None, *, now: datetime | None = None
) -> GrantsWhatIf:
    """The history's grants re-decided under ``settings`` (None: no grants); module rules.

    Raises:
        InputError: an empty history.
    """
    if not events:
        raise InputError("the history is empty: nothing to re-decide")
    final_view = project(events)
    end = now or final_view.last_at
    assert end is not None
    recorded_final = decide(final_view, end)
    requests = tuple(_requests(events, settings))
    first = next((r for r in requests if _differs(r, settings)), None)
    base = GrantsWhatIf(
        final_view.goal_id, settings, requests, "same", None, None, None, None, None, None,
        recorded_final,
    )  # fmt: skip
    if first is None:
        return base
    if first.answered in ("policy", "person") and not first.auto:
        return _not_granted(base, events, first, recorded_final)
    waited = first.waited_s if first.answer is not None else (end - first.event.at).total_seconds()
    return replace(base, outcome="censored", divergence=first, kind="granted by policy",
                    at_seq=first.seq, saved_s=waited)  # fmt: skip


def _requests(events: Sequence[Event], settings: Grants | None) -> list[Request]:
    """Every request of the record, matched with its answer."""
    found: list[Request] = []
    for index, event in enumerate(events):
        if not isinstance(event, BudgetRequested):
            continue
        answer, at = _answer_of(events, index, event.budget)
        answered: Answered = "open"
        if isinstance(answer, BudgetGranted):
            answered = "policy" if answer.actor == "policy" else "person"
        elif isinstance(answer, BudgetDeclined):
            answered = "declined"
        auto = (
            settings is not None
            and auto_grant_rule(settings, event.usd, event.attempts) is not None
        )
        found.append(Request(event.seq, index, event, answered, answer, at, auto))
    return found


def _answer_of(
    events: Sequence[Event], index: int, budget: str
) -> tuple[BudgetGranted | BudgetDeclined | None, int | None]:
    """The first grant or decline of ``budget`` after the request at ``index`` (a grant that
    follows a decline answers it in the end), before the next request on that budget."""
    declined: tuple[BudgetDeclined, int] | None = None
    for at in range(index + 1, len(events)):
        event = events[at]
        if isinstance(event, BudgetRequested) and event.budget == budget:
            break
        if isinstance(event, BudgetGranted) and event.budget == budget:
            return event, at
        if isinstance(event, BudgetDeclined) and event.budget == budget and declined is None:
            declined = (event, at)
    return declined if declined is not None else (None, None)


def _differs(request: Request, settings: Grants | None) -> bool:
    """Whether the settings would have answered the request otherwise than the record."""
    if settings is None:
        return request.answered in ("policy", "person")
    if request.answered == "policy":
        return not request.auto
    return request.auto


def _not_granted(
    base: GrantsWhatIf, events: Sequence[Event], request: Request, final: Decision
) -> GrantsWhatIf:
    """The goal stops at the grant not made (or waits for its pool to renew)."""
    grant_index = request.answer_index
    assert grant_index is not None
    assert request.answer is not None
    view = project(events[:grant_index])
    decision = decide(view, request.answer.at)
    accepted = tuple(e.work_id for e in events[grant_index:] if isinstance(e, WorkAccepted))
    before, after = decision.ledger, final.ledger
    bought = Bought(
        after.attempts.charged - before.attempts.charged,
        after.replans.charged - before.replans.charged,
        round(after.cost_usd - before.cost_usd, 9),
        accepted,
    )
    renews = request.event.renews_at is not None
    return replace(base, outcome="censored" if renews else "known", divergence=request,
                    kind="not granted", at_seq=request.answer.seq, decision=decision,
                    bought=bought)  # fmt: skip
