"""Runnable advice: the one place a ``governor`` command line is made for a person to run.

Rules (issue 25 §2):
    * A command names the real goal and work item, and ``--store X`` when the store is
      not the default (as the command line or the web view was given it). Only free text
      a person must write stands as a placeholder: ``ANSWER`` (an answer to a question)
      or ``REASON`` (why); never an id.
    * A command is advised only when the core would accept it in the goal's state now:
      its verb is applied to the view (``governor.core.commands.apply_verb``; pure, nothing
      is recorded) and a verb the core refuses is never printed.
    * Advice quotes its commands in back quotes (`` `governor …` ``), so the web view can
      show them as code and add the store to each (``naming_store``).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from governor.core.commands import OperatorVerb, apply_verb
from governor.core.policy import LedgerName
from governor.core.rules.budget import amount_words
from governor.core.view import GoalView
from governor.errors import GovernorError

ANSWER: Final = "ANSWER"
"""The placeholder for an answer a person writes (the only free-text placeholders)."""
REASON: Final = "REASON"
"""The placeholder for a reason a person writes."""
ADVISOR: Final = "explain"
"""The actor a verb is tried as (nothing is recorded)."""


def command_line(store_arg: str | None, *words: str) -> str:
    """A ``governor`` command line, quoted for a POSIX shell, naming the store if needed."""
    store = ["--store", store_arg] if store_arg else []
    return shlex.join(["governor", *words, *store])


_COMMAND: Final = re.compile(r"`(governor [^`]*)`")


def naming_store(text: str, store_arg: str | None) -> str:
    """``text`` with every back-quoted ``governor`` command naming the store (``--store``)
    when one was given and the command does not name it yet."""
    if store_arg is None:
        return text
    store = shlex.join(["--store", store_arg])
    return _COMMAND.sub(
        lambda m: f"`{m.group(1)}`" if "--store" in m.group(1) else f"`{m.group(1)} {store}`",
        text,
    )


@dataclass(frozen=True, slots=True)
class Advised:
    """One command advice prints: the verb it records and its words after ``governor``."""

    verb: OperatorVerb
    words: tuple[str, ...]

    def line(self, store_arg: str | None) -> str:
        return command_line(store_arg, *self.words)


def _retry_or_resume(goal_id: str, work_id: str | None, text: str) -> Advised:
    """``work retry`` of an item (``work_id``), else ``resume``, with ``text`` as the reason."""
    if work_id is not None:
        return Advised(
            OperatorVerb("work retry", ADVISOR, reason=text, item=work_id),
            ("work", "retry", goal_id, work_id, "--reason", text),
        )
    return Advised(
        OperatorVerb("resume", ADVISOR, reason=text), ("resume", goal_id, "--reason", text)
    )


def answer(goal_id: str, work_id: str | None) -> Advised:
    """The verb that answers a question: ``work retry`` (a worker's), else ``resume``."""
    return _retry_or_resume(goal_id, work_id, ANSWER)


def go_on(goal_id: str, work_id: str | None) -> Advised:
    """The verb that lets a stopped item (``work retry``) or planner (``resume``) go on once
    a person has fixed what stopped it."""
    return _retry_or_resume(goal_id, work_id, REASON)


def approve_plan(goal_id: str, plan_id: str) -> Advised:
    """``plan approve`` of a proposal awaiting review."""
    return Advised(
        OperatorVerb("plan approve", ADVISOR, plan=plan_id), ("plan", "approve", goal_id, plan_id)
    )


def reject_plan(goal_id: str, plan_id: str) -> Advised:
    """``plan reject`` of a proposal awaiting review, with why."""
    return Advised(
        OperatorVerb("plan reject", ADVISOR, reason=REASON, plan=plan_id),
        ("plan", "reject", goal_id, plan_id, "--reason", REASON),
    )


def accept_work(goal_id: str, work_id: str) -> Advised:
    """``work accept`` of an item awaiting review."""
    return Advised(
        OperatorVerb("work accept", ADVISOR, item=work_id), ("work", "accept", goal_id, work_id)
    )


def raise_to(goal_id: str, ledger: LedgerName, to: float, work_id: str | None) -> Advised:
    """``governor raise`` of one ledger (of ``work_id``, for a ledger per item) to ``to``."""
    limit = str(int(to)) if float(to).is_integer() else repr(float(to))
    item = ("--work", work_id) if work_id is not None else ()
    return Advised(
        OperatorVerb("raise", ADVISOR, reason=REASON, ledger=ledger, to=float(to), work=work_id),
        ("raise", goal_id, "--ledger", ledger, *item, "--to", limit, "--reason", REASON),
    )


def grant(goal_id: str, usd: float | None, attempts: int | None) -> Advised:
    """``governor grant`` of the goal's open request, for the amount asked."""
    words = ("grant", goal_id, *amount_words(usd, attempts), "--reason", REASON)
    verb = OperatorVerb("grant", ADVISOR, reason=REASON, usd=usd, attempts=attempts)
    return Advised(verb, words)


def decline(goal_id: str) -> Advised:
    """``governor decline`` of the goal's open request, with why."""
    verb = OperatorVerb("decline", ADVISOR, reason=REASON)
    return Advised(verb, ("decline", goal_id, "--reason", REASON))


def accepted(advised: Advised, view: GoalView | None, at: datetime | None) -> bool:
    """Whether the core would take the verb on ``view`` at ``at`` (pure: nothing is
    recorded). Without a view (nothing to try it on) it is not advised."""
    if view is None or at is None:
        return False
    try:
        return bool(apply_verb(advised.verb, view, at))
    except GovernorError:  # refused, or an argument the verb takes no such value for
        return False
