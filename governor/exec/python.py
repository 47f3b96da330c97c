"""The ``python`` harness: a callable ``(prompt, context) -> str | dict``, run in-process.

Rules:
    * ``profile.args[0]`` names the callable: ``package.module:function`` (importable) or
      ``path/to/file.py:function`` (relative to the goal file's folder). A LangChain chat
      model plugs in through a small function that calls it.
    * A callable that cannot be found never ran: ``environment`` with positive no-effect
      evidence, like a missing binary (it is reported as ``ENOENT``, so the core's
      ``spawn-errno`` rule classes it).
    * An exception raised by the callable is a failure whose text is its last line; the
      harness cannot observe effects, so the evidence is unknown (charged) whatever
      the text says.
    * Except :class:`UpstreamUnavailable` (SPEC §11.9), which the callable raises to say
      the vendor refused it: its ``status`` is a structured vendor status (429/5xx ->
      ``upstream``, 401/403 -> a refused credential, ``environment``), its
      ``retry_after_s`` is the vendor's Retry-After, and its ``effects`` / ``output``
      are the callable's own account of what happened before the refusal (default
      ``unknown``: charged), recorded with source ``python:exception``. Claiming
      ``absent`` is the callable's responsibility: say it only when nothing ran and no
      token arrived (e.g. a non-streaming call that failed with its status).
    * The seam for what the harness observes itself (``exception_evidence``'s ``seen``):
      a harness that watches the call — a LangChain Runnable's callback events, where a
      tool start means effects observed and a token means output observed — passes its
      observations, and *observed* always beats the callable's *absent*. A plain
      callable is not watched: ``NOT_WATCHED``.
    * The call runs in a worker thread bounded by ``profile.timeout_s``. Python cannot
      kill a thread: a callable that overruns is reported ``timed_out`` and left to
      finish in the background.
    * Replies and errors are redacted like any other harness's.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from governor.core.classify import SpawnResult, classify, tail
from governor.core.events import Profile
from governor.core.evidence import UNKNOWN, Evidence, Observation
from governor.exec.environment import Redactor

Agent = Callable[[str, dict[str, Any]], "str | dict[str, Any]"]
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

    Raises:
        ValueError: a value out of range (the agent's failure is then an ordinary one).
    """

    def __init__(
        self,
        status: int,
        retry_after_s: float | None = None,
        effects: Observation = "unknown",
        output: Observation = "unknown",
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


@dataclass(frozen=True, slots=True)
class Seen:
    """What the harness itself observed during a call (see the module rules)."""

    effects: Observation = "unknown"
    output: Observation = "unknown"


NOT_WATCHED: Final = Seen()
"""A plain callable: the harness sees nothing of what it does."""


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
    """Runs a Python callable as an agent."""

    name: Final = "python"

    def __init__(self, base_dir: Path) -> None:
        self.base_dir = base_dir

    def binary(self, profile: Profile) -> str | None:
        return None

    def load(self, profile: Profile) -> Agent:
        """The callable a profile names; raises ``LookupError`` when it cannot be found."""
        if not profile.args or ":" not in profile.args[0]:
            raise LookupError("a python profile names its callable as args = ['module:function']")
        where, _, attr = profile.args[0].rpartition(":")
        module = self._module(where)
        fn = getattr(module, attr, None)
        if not callable(fn):
            raise LookupError(f"{where} has no callable '{attr}'")
        return fn  # type: ignore[no-any-return]

    def _module(self, where: str) -> Any:
        if where.endswith(".py"):
            path = (self.base_dir / where).resolve()
            spec = importlib.util.spec_from_file_location(f"governor_agent_{path.stem}", path)
            if spec is None or spec.loader is None or not path.is_file():
                raise LookupError(f"no such file: {path}")
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module
        try:
            return importlib.import_module(where)
        except ModuleNotFoundError as exc:
            raise LookupError(f"cannot import {where}: {exc}") from exc

    def run(
        self, prompt: str, profile: Profile, *, cwd: Path, env: Mapping[str, str]
    ) -> SpawnResult:
        redact = Redactor(env)
        try:
            fn = self.load(profile)
        except LookupError as exc:
            return classify(SpawnResult(ok=False, error=redact(str(exc)), spawn_errno="ENOENT"))
        context = {
            "cwd": str(cwd),
            "model": profile.model,
            "instructions": profile.instructions,
            "env": {name: env[name] for name in profile.env if name in env},
        }
        box: dict[str, Any] = {}
        started = time.monotonic()
        thread = threading.Thread(target=_call, args=(fn, prompt, context, box), daemon=True)
        thread.start()
        thread.join(profile.timeout_s)
        duration = time.monotonic() - started
        if thread.is_alive():
            return classify(
                SpawnResult(
                    ok=False,
                    timed_out=True,
                    duration_s=duration,
                    error=f"the callable ran past its {profile.timeout_s:g} s limit",
                )
            )
        refused = box.get("refused")
        if isinstance(refused, UpstreamUnavailable):
            return classify(
                SpawnResult(
                    ok=False,
                    error=f"UpstreamUnavailable: the vendor answered HTTP {refused.status}",
                    vendor_status=refused.status,
                    retry_after_s=refused.retry_after_s,
                    duration_s=duration,
                    evidence=exception_evidence(refused),
                )
            )
        if "error" in box:
            return classify(
                SpawnResult(
                    ok=False,
                    error=tail(redact(box["error"])),
                    duration_s=duration,
                    evidence=UNKNOWN,
                )
            )
        return SpawnResult(ok=True, reply=redact(box["reply"]), duration_s=duration)


def _call(fn: Agent, prompt: str, context: dict[str, Any], box: dict[str, Any]) -> None:
    try:
        reply = fn(prompt, context)
        # a reply that cannot be written as JSON (a cycle, a set) fails like a raise
        box["reply"] = reply if isinstance(reply, str) else json.dumps(reply)
    except UpstreamUnavailable as exc:
        box["refused"] = exc
    except Exception as exc:
        box["error"] = f"{type(exc).__name__}: {exc}"
