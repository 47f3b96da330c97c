"""The Python API: create a goal from code, drive it, read it, answer it, govern it.

Rules:
    * One ``Goal`` object per goal in a store. It opens the store it is given (a URL or a
      path, else ``GOVERNOR_STORE``, else ``<workdir>/.governor/governor.db``) and closes
      it on ``close()`` or at the end of a ``with`` block; a store object passed in is
      used as is and left open.
    * Every method calls the same library function as the CLI command of the same name
      (``governor.drive.goals``, ``governor.core.verbs``, ``governor.graph.build.run``):
      the events are the ones the CLI records. The time is the clock's and the actor is
      the ``Goal``'s unless given (default ``operator:<user>``).
    * ``status()`` is a ``GoalStatus`` value: the decision, its ledger, and the pending
      question (``governor.core.question.Question``) when a person is asked something.
    * A goal spec is a goal file's keys — a mapping, a pydantic model, or the file's path.
      A python agent may be given as the function itself (a top-level function of an
      importable module, or of ``__main__`` when the goal runs in this process).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from pydantic import BaseModel

from governor.analysis.asking import need_in
from governor.clock import Clock, utc_now
from governor.core import verbs
from governor.core.decision import BlockedOn, Decision, Exhausted, Status
from governor.core.events import Event
from governor.core.ledger import Ledger
from governor.core.policy import LedgerName
from governor.core.question import Question, question
from governor.drive import goals
from governor.drive.goalfile import goal_from_file, goal_from_mapping
from governor.drive.goals import Outcome
from governor.drive.identity import default_actor
from governor.drive.runner import RunnerSettings
from governor.errors import InputError
from governor.render.records import decision_record, question_record
from governor.store.base import EventStore
from governor.store.url import open_store

GoalSpec = Mapping[str, Any] | BaseModel | str | os.PathLike[str]
"""A goal file's keys (a mapping or a pydantic model), or the path of a goal file."""


@dataclass(frozen=True, slots=True)
class GoalStatus:
    """Where a goal stands: the core's decision now, and the question it waits on."""

    goal_id: str
    title: str
    seq: int
    """The number of events recorded."""
    status: Status
    next_action: str
    reason: str
    rule: str
    """The decision rule that fired (``goal.4``, ``goal.10`` …)."""
    blocked_on: BlockedOn | None
    not_before: datetime | None
    exhausted: Exhausted | None
    question: Question | None
    """What a person is asked (answer it with ``Goal.answer``), or None."""
    ledger: Ledger
    decision: Decision

    @property
    def is_stopped(self) -> bool:
        """Nothing happens without a person (succeeded, cancelled, blocked, exhausted)."""
        return self.decision.is_stopped

    def to_dict(self) -> dict[str, Any]:
        """The status as JSON values, as ``governor status --json`` prints them, with the question."""
        return {
            "goal_id": self.goal_id,
            "title": self.title,
            "seq": self.seq,
            **decision_record(self.decision),
            "question": question_record(self.question),
        }


@dataclass(frozen=True, slots=True)
class RunResult:
    """How ``Goal.run`` ended."""

    outcome: Outcome
    """``stopped``, ``waiting`` (longer than ``max_wait_s``), ``review`` or ``steps``."""
    status: GoalStatus
    steps: int


class Goal:
    """One goal in a store, from Python.

    Args:
        goal_id: the goal's id.
        store: a store URL or path, or an open ``EventStore`` (left open); default
            ``GOVERNOR_STORE``, else ``<workdir>/.governor/governor.db``.
        workdir: where agents run and relative paths resolve (default: the current
            directory).
        actor: who the operator verbs are recorded as (default ``operator:<user>``).
        env: the environment agents' variables come from (default: this process's).
        clock: the time source (tests freeze it).

    Raises:
        NotFoundError: no such goal in the store.
    """

    def __init__(
        self,
        goal_id: str,
        *,
        store: str | os.PathLike[str] | EventStore | None = None,
        workdir: str | os.PathLike[str] | None = None,
        actor: str | None = None,
        env: Mapping[str, str] | None = None,
        clock: Clock = utc_now,
    ) -> None:
        self.workdir = Path(workdir or os.getcwd()).resolve()
        self.actor = actor or default_actor()
        self.env = dict(os.environ if env is None else env)
        self.clock = clock
        self.store, self._owned = _store(store, self.workdir, self.env)
        try:
            goals.exists(self.store, goal_id)
        except BaseException:
            self.close()
            raise
        self.goal_id = goal_id

    @classmethod
    def create(
        cls,
        spec: GoalSpec,
        *,
        store: str | os.PathLike[str] | EventStore | None = None,
        workdir: str | os.PathLike[str] | None = None,
        actor: str | None = None,
        env: Mapping[str, str] | None = None,
        clock: Clock = utc_now,
    ) -> Goal:
        """Create a goal and return it.

        Args:
            spec: a goal file's keys (``title``, ``objective``, ``acceptance``,
                ``planner``, ``worker``, ``profiles``, ``policy``, ``id``) as a mapping
                or a pydantic model, or the path of a goal file. Relative paths in the
                profiles resolve against ``workdir`` (a file's: against its folder).
            store, workdir, actor, env, clock: as for ``Goal``.

        Raises:
            GoalFileError: naming the key that is wrong.
            CommandRefusedError: a goal with that id exists already.
        """
        root = Path(workdir or os.getcwd()).resolve()
        who = actor or default_actor()
        opened, owned = _store(store, root, os.environ if env is None else env)
        try:
            events = _events(spec, root, clock(), who)
            goals.create_from(opened, events, clock=clock)
        except BaseException:
            if owned:
                opened.close()
            raise
        goal = cls(events[0].goal_id, store=opened, workdir=root, actor=who, env=env, clock=clock)
        goal._owned = owned
        return goal

    # ------------------------------------------------------------ reading

    def status(self) -> GoalStatus:
        """The goal's decision now, its ledger and its pending question."""
        view, decision = goals.status(self.store, self.goal_id, now=self.clock())
        return GoalStatus(
            goal_id=self.goal_id,
            title=view.created.title if view.created else "",
            seq=view.seq,
            status=decision.status,
            next_action=decision.next_action,
            reason=decision.reason,
            rule=decision.rule,
            blocked_on=decision.blocked_on,
            not_before=decision.not_before,
            exhausted=decision.exhausted,
            question=question(view, decision),
            ledger=decision.ledger,
            decision=decision,
        )

    def events(self) -> list[Event]:
        """Every event of the goal, in order."""
        return list(self.store.load(self.goal_id))

    # ------------------------------------------------------------ driving

    def run(
        self,
        *,
        max_wait_s: float = 900.0,
        max_steps: int = 10_000,
        callbacks: Any = None,
        config: Mapping[str, Any] | None = None,
        lease_ttl_s: float = 60.0,
    ) -> RunResult:
        """Drive the goal until it stops, must wait longer than ``max_wait_s`` or asks a
        question, holding its lease (``governor run``).

        Args:
            max_wait_s: the longest cooldown to sleep through.
            max_steps: steps before the run ends with outcome ``steps``.
            callbacks: LangChain callbacks for the run and every agent call in it (a
                LangSmith tracer, a handler); LangSmith's environment variables work too.
            config: a LangChain/LangGraph run config (tags, metadata, callbacks).
            lease_ttl_s: the lease's time to live (renewed while the run goes on).
        """
        from governor.graph.build import run  # noqa: PLC0415 - LangGraph only when driving

        report = run(
            self._runner(max_wait_s, lease_ttl_s),
            max_steps=max_steps,
            callbacks=callbacks,
            config=dict(config) if config else None,  # type: ignore[arg-type]
        )
        return RunResult(report.outcome, self.status(), report.steps)

    def step(self) -> GoalStatus:
        """One step (``governor tick``): decide, then act once under the lease; never wait."""
        goals.tick(self._runner(0.0, 60.0))
        return self.status()

    # ------------------------------------------------------------ governing

    def answer(self, answer: str, *, actor: str | None = None) -> GoalStatus:
        """Answer the pending question (``status().question``) as ``work retry`` or
        ``resume`` would: the answer goes to the next prompt of whoever asked.

        Raises:
            CommandRefusedError: no question is pending, or the answer is empty.
        """
        goals.answer(self.store, self.goal_id, answer, actor=actor or self.actor, clock=self.clock)
        return self.status()

    def raise_budget(
        self,
        ledger: LedgerName,
        to: float,
        *,
        reason: str,
        work_id: str | None = None,
        actor: str | None = None,
    ) -> GoalStatus:
        """Raise a budget's limit (``governor raise``), recorded with who and why."""
        self._operate(
            lambda view, at, who: verbs.raise_budget(
                view, ledger=ledger, to=to, reason=reason, at=at, actor=who, work_id=work_id
            ),
            actor,
        )
        return self.status()

    def cancel(self, reason: str | None = None, *, actor: str | None = None) -> GoalStatus:
        """Stop the goal for good (``governor cancel``)."""
        self._operate(
            lambda view, at, who: verbs.cancel_goal(view, at=at, actor=who, reason=reason), actor
        )
        return self.status()

    # ------------------------------------------------------------ plumbing

    def close(self) -> None:
        """Close the store, if this object opened it."""
        if self._owned and getattr(self, "store", None) is not None:
            self.store.close()

    def __enter__(self) -> Goal:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Goal({self.goal_id!r})"

    def _operate(self, verb: Any, actor: str | None) -> None:
        who = actor or self.actor
        goals.operate(
            self.store, self.goal_id, lambda view: verb(view, self.clock(), who), clock=self.clock
        )

    def _runner(self, max_wait_s: float, lease_ttl_s: float) -> Any:
        settings = RunnerSettings(
            workdir=self.workdir,
            env=self.env,
            lease_ttl_s=lease_ttl_s,
            max_wait_s=max_wait_s,
            state_dir=self.workdir / ".governor" / "scripted",
            asking=need_in,
        )
        return goals.runner(self.store, self.goal_id, settings, clock=self.clock)


def _store(
    store: str | os.PathLike[str] | EventStore | None, workdir: Path, env: Mapping[str, str]
) -> tuple[EventStore, bool]:
    """The store to use, and whether it was opened here (and so is closed here)."""
    if store is not None and not isinstance(store, (str, os.PathLike)):
        return store, False
    url = os.fspath(store) if store is not None else env.get("GOVERNOR_STORE")
    if url is None:
        (workdir / ".governor").mkdir(parents=True, exist_ok=True)
        url = str(workdir / ".governor" / "governor.db")
    return open_store(url), True


def _events(spec: GoalSpec, workdir: Path, at: datetime, actor: str) -> list[Event]:
    if isinstance(spec, (str, os.PathLike)):
        path = Path(spec)
        return goal_from_file(path if path.is_absolute() else workdir / path, at=at, actor=actor)
    data = (
        spec.model_dump(mode="json", exclude_none=True)
        if isinstance(spec, BaseModel)
        else dict(spec)
    )
    profiles = data.get("profiles")
    if isinstance(profiles, Mapping):
        data["profiles"] = {name: _agent_profile(p) for name, p in profiles.items()}
    return goal_from_mapping(data, base=workdir, where="goal", at=at, actor=actor)


def _agent_profile(profile: Any) -> Any:
    """A profile whose first argument may be a python function: named ``module:qualname``."""
    if isinstance(profile, BaseModel):
        profile = profile.model_dump(mode="json", exclude_none=True)
    if not isinstance(profile, Mapping):
        return profile
    args: Sequence[Any] = profile.get("args") or ()
    if args and callable(args[0]) and not isinstance(args[0], str):
        return {**profile, "args": [_target(args[0]), *args[1:]]}
    return profile


def _target(fn: Any) -> str:
    module, name = getattr(fn, "__module__", None), getattr(fn, "__qualname__", None)
    if not module or not name or "<" in name:
        raise InputError(
            f"a python agent given as an object must be a top-level function or class; "
            f"name {fn!r} as 'module:name' instead"
        )
    return f"{module}:{name}"
