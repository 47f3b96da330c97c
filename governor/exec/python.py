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
from pathlib import Path
from typing import Any, Final

from governor.core.classify import SpawnResult, classify, tail
from governor.core.events import Profile
from governor.core.evidence import UNKNOWN
from governor.exec.environment import Redactor

Agent = Callable[[str, dict[str, Any]], "str | dict[str, Any]"]


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
        if "error" in box:
            return classify(
                SpawnResult(
                    ok=False,
                    error=tail(redact(box["error"])),
                    duration_s=duration,
                    evidence=UNKNOWN,
                )
            )
        reply = box["reply"]
        text = reply if isinstance(reply, str) else json.dumps(reply)
        return SpawnResult(ok=True, reply=redact(text), duration_s=duration)


def _call(fn: Agent, prompt: str, context: dict[str, Any], box: dict[str, Any]) -> None:
    try:
        box["reply"] = fn(prompt, context)
    except Exception as exc:
        box["error"] = f"{type(exc).__name__}: {exc}"
