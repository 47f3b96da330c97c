"""The ``python`` harness: a Python agent run in-process — a callable, a coroutine function,
a LangChain Runnable or chat model.

Rules:
    * ``profile.args[0]`` names the agent: ``package.module:name`` or
      ``path/to/file.py:name`` (relative to the goal file's folder); a module not
      importable as is is looked for in the working directory. It is imported once per
      process (``governor.exec.load``): module state lives as long as the process.
    * An agent is called with the prompt and an ``AgentContext`` (the goal, plan, item
      and attempt it serves, the objective and criteria, ``cwd``, ``model``,
      ``instructions``, the passed variables): ``agent(prompt, context)``, awaited when
      it is a coroutine function (or returns an awaitable); a Runnable is called with
      ``ainvoke`` (``governor.exec.runnable``). Coroutines run on one event loop per
      process, in its own thread.
    * The reply is text (``governor.exec.runnable.reply_text``), or an ``AgentReply``
      holding it with what the call cost (``cost_usd``, ``usage``) and its ``account``
      (SPEC §13.5); anything else is an ordinary failure. No agent — whatever it returns or raises, sync or async — can
      make the harness raise: every outcome is a ``SpawnResult``.
    * An agent that cannot be found or imported never ran: ``environment`` with positive
      no-effect evidence, like a missing binary (reported as ``ENOENT``, so the core's
      ``spawn-errno`` rule classes it).
    * An exception raised by the agent is a failure whose text is its last line; what
      the harness saw decides the evidence (unknown when it saw nothing: charged).
    * Except :class:`UpstreamUnavailable` (SPEC §11.9), which the agent raises to say
      the vendor refused it: its ``status`` is a structured vendor status (429/5xx ->
      ``upstream``, 401/403 -> a refused credential, ``environment``), its
      ``retry_after_s`` is the vendor's Retry-After, and its ``effects`` / ``output``
      are the agent's own account of what happened before the refusal (default
      ``unknown``: charged), recorded with source ``python:exception``. An exception of
      a vendor SDK that carries an HTTP ``status_code`` (and its ``response``'s
      Retry-After) is read the same way, with what the harness saw as its account.
    * What the harness observes itself (``exception_evidence``'s ``seen``): every agent
      runs with a ``Watch`` among its LangChain callbacks; a tool start means effects
      observed and a token or a model reply means output observed, and *observed*
      always beats the agent's *absent*. A chat model runs no tool, so for a chat model
      the watch is the whole story (``Watch.seen``).
    * The call runs in a thread (a copy of the caller's context: tracing and the call's
      ids follow it) bounded by ``profile.timeout_s``. An overrunning coroutine is
      cancelled; Python cannot kill a thread, so an overrunning sync callable is left to
      finish in the background. Either is reported ``timed_out``.
    * Replies and errors are redacted like any other harness's.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import threading
import time
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from pydantic import ValidationError

from governor.core.classify import SpawnResult, classify, tail
from governor.core.event_fields import Profile
from governor.core.evidence import UNKNOWN, Evidence, Observation
from governor.core.observation import Usage
from governor.exec.call import AgentContext, CallInfo, current_call, run_in_context
from governor.exec.environment import Redactor
from governor.exec.load import load_target

OBSERVATIONS: Final = frozenset({"absent", "observed", "unknown"})


# Not "...Error": SPEC §11.9 names it, and it is an agent's report, not a governor error.
class UpstreamUnavailable(Exception):
    """Raise it from a python agent when the vendor refused the call (SPEC §11.9).

    Args:
        status: the vendor's HTTP status: 429 or 5xx (an outage), 401 or 403 (a refused
            credential); any other status is an ordinary, charged failure.
        retry_after_s: the vendor's Retry-After in seconds, if it sent one.
        effects: did the agent change anything or run a tool before the refusal?
            ``"absent"``, ``"observed"`` or ``"unknown"`` (the default: charged).
        output: did the model produce any text before the refusal? Same values.
        code: the vendor's error code, if it sent one (``insufficient_quota`` or
            ``billing_error``: the account cannot pay, an ``environment`` stop, SPEC §12.6).
        upstream: the name of the upstream the agent reached (SPEC §12.9): calls that
            name the same one share its health record.
        cost_usd, usage, account: what the refused call cost and whose account it ran
            under, as for ``AgentReply``.
        resets_at: for a spent usage window (status 429): when the vendor said the
            account's window reopens (an aware ``datetime``; needs ``account``). Every goal
            whose calls run under that account then waits until it, uncharged (SPEC §13.2).

    Raises:
        ValueError: a value out of range (the agent's failure is then an ordinary one).
    """

    def __init__(
        self,
        status: int,
        retry_after_s: float | None = None,
        effects: Observation = "unknown",
        output: Observation = "unknown",
        *,
        code: str | None = None,
        upstream: str | None = None,
        cost_usd: float | None = None,
        usage: Usage | Mapping[str, int] | None = None,
        account: str | None = None,
        resets_at: datetime | None = None,
    ) -> None:
        if isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599:
            raise ValueError(f"status must be an HTTP status (100-599), got {status!r}")
        if retry_after_s is not None and not (0 <= retry_after_s < float("inf")):
            raise ValueError(f"retry_after_s must be a finite number >= 0, got {retry_after_s!r}")
        for name, value in (("effects", effects), ("output", output)):
            if value not in OBSERVATIONS:
                raise ValueError(f"{name} must be one of {sorted(OBSERVATIONS)}, got {value!r}")
        super().__init__(f"the vendor answered HTTP {status}")
        self.status = status
        self.retry_after_s = None if retry_after_s is None else float(retry_after_s)
        self.effects: Observation = effects
        self.output: Observation = output
        self.code = code[:100] if code else None
        self.upstream = upstream[:200] if upstream else None
        self.cost_usd = _cost(cost_usd)
        self.usage = _usage(usage)
        self.account = _account(account)
        if resets_at is not None and (account is None or resets_at.tzinfo is None):
            raise ValueError("resets_at must be an aware datetime, given with an account")
        try:
            self.resets_at = None if resets_at is None else resets_at.astimezone(UTC)
        except OverflowError:
            raise ValueError(f"resets_at is out of range: {resets_at!r}") from None


def _usage(usage: Usage | Mapping[str, int] | None) -> Usage | None:
    if usage is None or isinstance(usage, Usage):
        return usage
    try:
        return Usage.model_validate(usage)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]["msg"]
        raise ValueError(f"usage is not token counts: {first}") from None


def _cost(cost_usd: float | None) -> float | None:
    if cost_usd is not None and not (0 <= cost_usd < float("inf")):
        raise ValueError(f"cost_usd must be a finite number >= 0, got {cost_usd!r}")
    return None if cost_usd is None else float(cost_usd)


def _account(account: str | None) -> str | None:
    if account is not None and not (isinstance(account, str) and 1 <= len(account) <= 64):
        raise ValueError(f"account must be a name of 1-64 characters, got {account!r}")
    return account


@dataclass(frozen=True, slots=True, init=False)
class AgentReply:
    """Return it from a python agent to say what the call cost (SPEC §13.5).

    Args:
        text: the reply, as the agent would otherwise return it.
        cost_usd: what the call cost, when the agent knows (its vendor SDK reported it).
        usage: the tokens it used — a mapping of ``input_tokens``, ``output_tokens``,
            ``cached_input_tokens`` — priced by the profile's price when ``cost_usd`` is
            not given.
        account: an opaque name of the account the call ran under (never a credential):
            calls that name the same account share its usage window (SPEC §13.2).

    Raises:
        ValueError: a value out of range (the agent's call is then an ordinary failure).
    """

    text: str
    cost_usd: float | None
    usage: Usage | None
    account: str | None

    def __init__(
        self,
        text: str,
        *,
        cost_usd: float | None = None,
        usage: Usage | Mapping[str, int] | None = None,
        account: str | None = None,
    ) -> None:
        object.__setattr__(self, "text", text)
        object.__setattr__(self, "cost_usd", _cost(cost_usd))
        object.__setattr__(self, "usage", _usage(usage))
        object.__setattr__(self, "account", _account(account))


@dataclass(frozen=True, slots=True)
class Seen:
    """What the harness itself observed during a call (see the module rules)."""

    effects: Observation = "unknown"
    output: Observation = "unknown"


NOT_WATCHED: Final = Seen()
"""Nothing watched the call: the harness saw nothing of what it did."""


def exception_evidence(exc: UpstreamUnavailable, seen: Seen = NOT_WATCHED) -> Evidence:
    """The evidence of a refusal the callable reported; what the harness saw wins when observed."""
    effects: Observation = "observed" if seen.effects == "observed" else exc.effects
    output: Observation = "observed" if seen.output == "observed" else exc.output
    return Evidence(
        effects=effects,
        output=output,
        refusal="absent" if output == "absent" else "unknown",
        source="python:exception",
        ref=f"UpstreamUnavailable(status={exc.status})",
    )


class PythonHarness:
    """Runs a Python agent in-process."""

    name: Final = "python"

    def __init__(self, base_dir: Path) -> None:
        self.base_dir = base_dir

    def binary(self, profile: Profile) -> str | None:
        return None

    def load(self, profile: Profile) -> object:
        """The agent a profile names, imported once; raises ``LookupError`` when it cannot be
        found or imported, or is neither callable nor a Runnable."""
        if not profile.args:
            raise LookupError("a python profile names its agent as args = ['module:name']")
        agent = load_target(profile.args[0], folders=(self.base_dir,))
        if not (callable(agent) or hasattr(agent, "ainvoke")):
            raise LookupError(f"{profile.args[0]} is neither callable nor a Runnable")
        return agent

    def run(
        self, prompt: str, profile: Profile, *, cwd: Path, env: Mapping[str, str]
    ) -> SpawnResult:
        redact = Redactor(env)
        try:
            agent = self.load(profile)
        except LookupError as exc:
            return classify(SpawnResult(ok=False, error=redact(str(exc)), spawn_errno="ENOENT"))
        context = agent_context(profile, cwd, env, current_call.get())
        started = time.monotonic()
        outcome = _Outcome()
        thread = run_in_context(lambda: outcome.call(agent, prompt, context), name="python-agent")
        thread.join(profile.timeout_s)
        duration = time.monotonic() - started
        if thread.is_alive():
            outcome.cancel()
            return classify(
                SpawnResult(
                    ok=False,
                    timed_out=True,
                    duration_s=duration,
                    error=f"the agent ran past its {profile.timeout_s:g} s limit",
                )
            )
        return outcome.result(redact, duration)


def agent_context(
    profile: Profile, cwd: Path, env: Mapping[str, str], call: CallInfo | None
) -> AgentContext:
    """The typed context an agent receives with its prompt."""
    return {
        "goal_id": call.goal_id if call else None,
        "role": call.role if call else None,
        "plan_id": call.plan_id if call else None,
        "work_id": call.work_id if call else None,
        "attempt": call.attempt if call else None,
        "objective": call.objective if call else None,
        "acceptance": list(call.acceptance) if call else [],
        "cwd": str(cwd),
        "model": profile.model,
        "instructions": profile.instructions,
        "env": {name: env[name] for name in profile.env if name in env},
    }


@dataclass(slots=True)
class _Outcome:
    """What one call came to, filled in by the thread that runs it."""

    reply: object = None
    replied: bool = False
    error: BaseException | None = None
    chat_model: bool = False
    watch: Any = None
    future: concurrent.futures.Future[Any] | None = None
    timed_out: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def call(self, agent: object, prompt: str, context: AgentContext) -> None:
        """Run the agent (in the caller's copied context); never raises."""
        try:
            from governor.exec import runnable  # noqa: PLC0415 - LangChain only when an agent runs

            self.watch = runnable.Watch()
            config = runnable.agent_config(self.watch, current_call.get())
            runnable.enter(config)
            if runnable.is_runnable(agent):
                self.chat_model = runnable.is_chat_model(agent)
                reply: Any = runnable.invoke(agent, prompt, context, config)  # type: ignore[arg-type]
            else:
                reply = agent(prompt, context)  # type: ignore[operator]
            if inspect.isawaitable(reply):
                reply = self._await(reply)
            self.reply, self.replied = reply, True
        except BaseException as exc:  # the agent's failure, whatever it is, is a result
            self.error = exc

    def _await(self, awaitable: Awaitable[Any]) -> Any:
        async def run() -> Any:
            return await awaitable

        with self._lock:
            if self.timed_out:  # the limit passed before the coroutine was even scheduled
                if inspect.iscoroutine(awaitable):
                    awaitable.close()  # it never runs (and is not reported as never awaited)
                raise TimeoutError("the agent ran past its limit")
            self.future = asyncio.run_coroutine_threadsafe(run(), _loop())
        return self.future.result()

    def cancel(self) -> None:
        """The call ran past its limit: cancel its coroutine (now, or before it starts)."""
        with self._lock:
            self.timed_out = True
            if self.future is not None:
                self.future.cancel()

    def result(self, redact: Redactor, duration: float) -> SpawnResult:
        if self.replied:
            from governor.exec.runnable import reply_text  # noqa: PLC0415 - see call

            said = self.reply if isinstance(self.reply, AgentReply) else None
            text = reply_text(said.text if said is not None else self.reply)
            if text is not None:
                return SpawnResult(
                    ok=True,
                    reply=redact(text),
                    duration_s=duration,
                    cost_usd=said.cost_usd if said else None,
                    usage=said.usage if said else None,
                    account=said.account if said else None,
                )
            error = (
                f"the agent returned {type(self.reply).__name__}; return text, a dict or a message"
            )
            return classify(
                SpawnResult(ok=False, error=error, duration_s=duration, evidence=UNKNOWN)
            )
        seen = self._seen()
        refused = _refusal(self.error, seen)
        if refused is not None:
            return classify(
                SpawnResult(
                    ok=False,
                    error=redact(
                        f"{type(self.error).__name__}: the vendor answered HTTP {refused.status}"
                    ),
                    vendor_status=refused.status,
                    vendor_code=refused.code,
                    retry_after_s=refused.retry_after_s,
                    duration_s=duration,
                    evidence=exception_evidence(refused, seen),
                    upstream=refused.upstream,
                    cost_usd=refused.cost_usd,
                    usage=refused.usage,
                    account=refused.account,
                    resets_at=refused.resets_at,
                )
            )
        failure = self.error or RuntimeError("the agent ended without a reply")
        return classify(
            SpawnResult(
                ok=False,
                error=tail(redact(_last_line(failure))),
                duration_s=duration,
                evidence=UNKNOWN,
            )
        )

    def _seen(self) -> Seen:
        if self.watch is None:
            return NOT_WATCHED
        effects, output = self.watch.seen(chat_model=self.chat_model)
        return Seen(effects=effects, output=output)


def _refusal(error: BaseException | None, seen: Seen) -> UpstreamUnavailable | None:
    """The vendor refusal an exception reports: ``UpstreamUnavailable``, or a vendor SDK's
    error carrying an HTTP ``status_code`` (its account of what happened is what the
    harness saw)."""
    if isinstance(error, UpstreamUnavailable):
        return error
    status = getattr(error, "status_code", None)
    if error is None or isinstance(status, bool) or not isinstance(status, int):
        return None
    try:
        return UpstreamUnavailable(
            status, _retry_after(error), effects=seen.effects, output=seen.output
        )
    except ValueError:
        return None


def _retry_after(error: BaseException) -> float | None:
    headers = getattr(getattr(error, "response", None), "headers", None)
    value = headers.get("retry-after") if headers is not None else None
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _last_line(error: BaseException) -> str:
    text = str(error).strip()
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


_loop_lock = threading.Lock()
_shared_loop: asyncio.AbstractEventLoop | None = None


def _loop() -> asyncio.AbstractEventLoop:
    """The process's event loop for async agents, running in its own daemon thread."""
    global _shared_loop  # noqa: PLW0603 - one loop per process, started on first use
    with _loop_lock:
        if _shared_loop is None:
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, daemon=True, name="python-agents").start()
            _shared_loop = loop
        return _shared_loop
