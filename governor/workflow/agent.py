"""One agent call with in-agent retry (tenacity), and the proof of every spawn it made.

Rules (SPEC §4 "In-agent retry", §12.12 "one retry layer", decision record 0046):
    * A call re-spawns its agent only after a spawn that told nothing about the work, up
      to its profile's ``max_attempts`` spawns (default 2):
        - a reply that does not parse or validate, retried at once with the problems
          appended to the prompt (that attempt reached the model: productive, charged);
        - an ``upstream`` refusal with positive absence evidence (it passes the gate of
          ``governor.core.evidence``), after exponential back-off with jitter, never
          sooner than the vendor's Retry-After; a Retry-After longer than ``max_wait_s``
          ends the call and leaves the wait to the goal's recorded cooldown.
    * Any other failed spawn ends the call — one with no class (the agent ran and failed,
      crashed, or broke its stream), an ``upstream`` one without absence evidence,
      ``environment``, ``decision``, a timeout: the run is recorded as the failure it is,
      and the next attempt (or plan) is the retry, visible in the ledger, bounded by the
      policy and seen by what-if and by the same-failure rule (SPEC §12.10).
    * An upstream refusal is not retried in-agent once the upstream is known to be
      failing (``AgentCall.parked``): the fleet probes it instead (SPEC §11.10).
    * Every spawn is recorded in the ``ProofRecorder`` *before* anything can raise, so a
      parallel fan-out that swallows an exception cannot erase a class.
    * A run that took more than one try says so (``tries_of``: the count, what each try
      came to, the refused requests the agent CLI retried by itself, the last error), and
      the run records it with its outcome (SPEC §11.9): an in-agent retry is never
      invisible, even when the last try succeeded.
    * Each spawn's cost is counted once (SPEC §13.5): the figure the agent or its CLI
      reported, else its token usage priced by the profile's price
      (``governor.exec.prices.call_price``); the run records the sum.
    * Sleep and jitter are injectable: tests never sleep.
"""

from __future__ import annotations

import functools
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_result,
    stop_after_attempt,
    stop_any,
    wait_exponential,
)
from tenacity.stop import stop_base

from governor.core.classify import SpawnResult
from governor.core.event_fields import Profile
from governor.core.evidence import TRIES_LISTED, Evidence, Tries, TryOutcome, passes_gate
from governor.core.observation import Usage, add_usage
from governor.core.prices import Price, call_cost
from governor.core.proof import AgentAttemptProof, AgentProof
from governor.core.text import last_line
from governor.exec.call import CallInfo, current_call, in_context
from governor.exec.harness import Harness
from governor.exec.prices import call_price

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class RetrySettings:
    """How an agent call waits between its in-agent attempts."""

    initial_s: float = 2.0
    """First wait after an upstream refusal, in seconds."""
    factor: float = 2.0
    max_wait_s: float = 60.0
    """Longest in-agent wait; a longer Retry-After is left to the goal's cooldown."""


@dataclass(frozen=True, slots=True)
class AgentCall:
    """Everything one agent call needs."""

    agent: str
    harness: Harness
    profile: Profile
    prompt: str
    cwd: Path
    env: Mapping[str, str]
    profile_name: str | None = None
    """The profile's name in the goal, for messages (else ``agent``)."""
    info: CallInfo | None = None
    """What the call serves (goal, plan, item, attempt): set as ``current_call`` while the
    harness runs, for the harnesses that pass it on (the python harness's context)."""
    parked: Callable[[], bool] | None = None
    """Whether the call's upstream is known to be failing (SPEC §11.10): an upstream
    refusal is then not retried in-agent — the fleet's probe retries that upstream."""

    @property
    def who(self) -> str:
        """The name a person knows this agent by: its profile's, else the agent's."""
        return self.profile_name or self.agent


REPLY_SOURCE = "workflow:reply"
"""The evidence source of a try whose reply could not be used (the model answered)."""


@dataclass(frozen=True, slots=True)
class _Try(Generic[T]):
    result: SpawnResult
    answer: T | None
    problems: tuple[str, ...]

    @property
    def retry(self) -> bool:
        """Whether the spawn told nothing about the work, so that another may (SPEC §12.12):
        a reply that could not be used, or a refusal proven to have reached no model."""
        if self.answer is not None:
            return False
        if self.problems:
            return True
        result = self.result
        return (
            not result.timed_out
            and result.failure_class == "upstream"
            and passes_gate(result.evidence)
        )


@dataclass(slots=True)
class ProofRecorder:
    """Collects the proof of every agent of a run, thread-safely, as spawns happen."""

    _agents: dict[str, list[AgentAttemptProof]] = field(default_factory=dict)
    _vendor_retries: list[int | None] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def record(
        self, agent: str, attempt: AgentAttemptProof, vendor_retries: Sequence[int | None] = ()
    ) -> None:
        """Record one spawn, and the refused requests its CLI retried by itself."""
        with self._lock:
            self._agents.setdefault(agent, []).append(attempt)
            self._vendor_retries.extend(vendor_retries)

    def vendor_retries(self) -> tuple[int | None, ...]:
        """Statuses of every refused request the agents' CLIs retried by themselves."""
        with self._lock:
            return tuple(self._vendor_retries)

    def proofs(self) -> tuple[AgentProof, ...]:
        with self._lock:
            return tuple(AgentProof(agent=a, attempts=tuple(t)) for a, t in self._agents.items())


@dataclass(frozen=True, slots=True)
class AgentOutcome(Generic[T]):
    """What one agent call came to: an answer, or the last failure."""

    answer: T | None
    last: SpawnResult
    problems: tuple[str, ...]
    attempts: int
    cost_usd: float | None
    prompt: str
    usage: Usage | None = None
    """The tokens every try reported, summed (SPEC §12.5)."""
    """The prompt of the last attempt (with the previous reply's problems appended, if any)."""


def with_problems(prompt: str, problems: Sequence[str]) -> str:
    """The prompt again, with what was wrong with the previous reply."""
    listed = "\n".join(f"- {p}" for p in problems)
    return f"{prompt}\n\nYour previous reply could not be used:\n{listed}\nAnswer again, ending with one JSON object."


def _proof(agent_try: _Try[Any]) -> AgentAttemptProof:
    result = agent_try.result
    if agent_try.answer is not None:
        return AgentAttemptProof(ok=True, evidence=result.evidence)
    if agent_try.problems:
        # the model answered, so the attempt was informative: output observed
        evidence = Evidence(output="observed", source=REPLY_SOURCE, ref="invalid reply")
        return AgentAttemptProof(
            ok=False, evidence=evidence, error="; ".join(agent_try.problems)[:2000]
        )
    return AgentAttemptProof.model_validate(
        {
            "ok": False,
            "class": result.failure_class,
            "evidence": result.evidence,
            "error": result.error,
        }
    )


def try_outcome(attempt: AgentAttemptProof) -> TryOutcome:
    """What one recorded try came to."""
    if attempt.ok:
        return "ok"
    if attempt.evidence.source == REPLY_SOURCE:
        return "invalid_reply"
    if attempt.evidence.rule == "timeout":
        return "timed_out"
    return attempt.failure_class or "failed"


def tries_of(
    agents: Sequence[AgentProof], vendor_retries: Sequence[int | None] = ()
) -> Tries | None:
    """The in-agent tries of a run; None when it took one and its CLI retried nothing."""
    attempts = [attempt for agent in agents for attempt in agent.attempts]
    if not attempts or (len(attempts) < 2 and not vendor_retries):
        return None
    errors = [a.error for a in attempts if not a.ok and a.error and a.error.strip()]
    last_error = last_line(errors[-1], "")[:500] if errors else ""
    return Tries(
        count=len(attempts),
        classes=tuple(try_outcome(a) for a in attempts[:TRIES_LISTED]),
        vendor_retries=tuple(vendor_retries[:TRIES_LISTED]),
        last_error=last_error or None,
    )


class _RetryAfterTooLong(stop_base):
    """Stop when the vendor asks to wait longer than an agent call may sleep."""

    def __init__(self, max_wait_s: float) -> None:
        self.max_wait_s = max_wait_s

    def __call__(self, state: RetryCallState) -> bool:
        last: _Try[Any] = state.outcome.result()  # type: ignore[union-attr]
        return (last.result.retry_after_s or 0.0) > self.max_wait_s


class _UpstreamParked(stop_base):
    """Stop after an upstream refusal when the upstream is known to be failing."""

    def __init__(self, parked: Callable[[], bool] | None) -> None:
        self.parked = parked

    def __call__(self, state: RetryCallState) -> bool:
        last: _Try[Any] = state.outcome.result()  # type: ignore[union-attr]
        refused = last.result.failure_class == "upstream" and last.answer is None
        return refused and self.parked is not None and self.parked()


def _wait(
    settings: RetrySettings, jitter: Callable[[], float]
) -> Callable[[RetryCallState], float]:
    def wait(state: RetryCallState) -> float:
        last: _Try[object] = state.outcome.result()  # type: ignore[union-attr]
        if last.problems:
            return 0.0
        backoff = exponential(state)  # an upstream refusal: nothing else is retried
        return max(backoff * (0.5 + jitter() / 2), last.result.retry_after_s or 0.0)

    exponential = wait_exponential(
        multiplier=settings.initial_s, max=settings.max_wait_s, exp_base=settings.factor
    )
    return wait


def call_agent(
    call: AgentCall,
    parse: Callable[[str], T | list[str]],
    recorder: ProofRecorder,
    *,
    sleep: Callable[[float], None] = time.sleep,
    jitter: Callable[[], float] = random.random,
    settings: RetrySettings = RetrySettings(),
) -> AgentOutcome[T]:
    """Call an agent until it answers validly, a failure ends the loop, or attempts run out."""
    used: list[str] = []
    costs: list[float] = []

    @functools.cache
    def price() -> Price | None:
        return call_price(call.profile, call.env, call.cwd)

    usage: list[Usage | None] = [None]

    def attempt() -> _Try[T]:
        prompt = (
            call.prompt
            if not used or not last_problems
            else with_problems(call.prompt, last_problems)
        )
        used.append(prompt)
        token = current_call.set(call.info)
        try:
            result = call.harness.run(prompt, call.profile, cwd=call.cwd, env=call.env)
        finally:
            current_call.reset(token)
        cost = call_cost(result.cost_usd, result.usage, price())
        if cost is not None:  # counted once: the call's own figure, else its usage priced
            costs.append(cost)
        usage[0] = add_usage(usage[0], result.usage)
        agent_try: _Try[T] = _Try(result, None, ())
        if result.ok:
            parsed = parse(result.reply or "")
            agent_try = (
                _Try(result, None, tuple(parsed))
                if isinstance(parsed, list)
                else _Try(result, parsed, ())
            )
        recorder.record(call.agent, _proof(agent_try), result.vendor_retries)
        last_problems[:] = agent_try.problems
        return agent_try

    last_problems: list[str] = []

    retrying = Retrying(
        stop=stop_any(
            stop_after_attempt(call.profile.max_attempts),
            _RetryAfterTooLong(settings.max_wait_s),
            _UpstreamParked(call.parked),
        ),
        retry=retry_if_result(lambda t: t.retry),
        wait=_wait(settings, jitter),
        sleep=sleep,
        retry_error_callback=lambda state: state.outcome.result(),  # type: ignore[union-attr]
    )
    last: _Try[T] = retrying(attempt)
    return AgentOutcome(
        answer=last.answer,
        last=last.result,
        problems=last.problems,
        attempts=len(used),
        cost_usd=sum(costs) if costs else None,
        prompt=used[-1],
        usage=usage[0],
    )


def fan_out(
    calls: Sequence[Callable[[], T]], *, max_workers: int | None = None
) -> list[T | BaseException]:
    """Run calls in parallel threads (each in a copy of the caller's context); each result
    or exception in order (nothing is lost)."""
    with ThreadPoolExecutor(max_workers=max_workers or max(1, len(calls))) as pool:
        futures = [pool.submit(in_context(fn)) for fn in calls]
        out: list[T | BaseException] = []
        for future in futures:
            error = future.exception()
            out.append(error if error is not None else future.result())
        return out
