"""The ``scripted`` harness: a real subprocess that plays a scenario file, for demos and tests.

Rules (SPEC §4, §7; the scenario format is in ``governor.exec.scripted_player``):
    * ``profile.args`` is ``[]`` (the embedded ``DEFAULT_SCENARIO``) or
      ``[scenario_file]``, relative to the goal file's folder.
    * The player runs as ``<python> -m governor.exec.scripted_player SCENARIO`` with the
      prompt on stdin, through the same process runner as every other harness: its
      timeout, process group and bounded capture apply.
    * Step counters live in the folder named by ``GOVERNOR_SCRIPTED_STATE`` (the
      adapter's ``state_dir``, else that variable of the source environment, else
      ``<cwd>/.governor/scripted``). Point it at a fresh folder per goal.
    * The player's last stdout line is an envelope saying what the step did. With it
      the adapter observes positively: a failure reports effects, output and refusal
      as ``absent``/``observed``/``declared`` with source ``scripted:envelope`` and ref
      ``<scenario>#<script>:<step index>``, and the vendor status is structured (the
      core's ``vendor-status`` rule). Without it (the player was killed, or crashed)
      the evidence is ``unknown``.
    * The envelope is never part of the reply or of the failure text.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from governor.core.classify import SpawnResult
from governor.core.event_fields import Profile
from governor.core.evidence import Evidence, Partial
from governor.errors import InputError
from governor.exec.environment import Redactor, scrubbed_env
from governor.exec.harness import args_problem, decode, partial_of, spawn_result, stdout_text
from governor.exec.process import ProcessResult, run_process
from governor.exec.scripted_player import STATE_VAR

DEFAULT_SCENARIO: Final = Path(__file__).with_name("scenarios") / "default.json"
"""The embedded scenario played when a profile names none."""
PLAYER_MODULE: Final = "governor.exec.scripted_player"
SOURCE: Final = "scripted:envelope"
_IMPORT_ROOT: Final = str(Path(__file__).resolve().parents[2])


class _Output(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    bytes: int
    sha256: str


class Envelope(BaseModel):
    """What one played step did, as the player reports it on its last stdout line."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    scenario: str
    script: str
    step: int
    output: _Output
    effects: bool
    refusal: bool
    vendor_status: int | None = None
    retry_after_s: float | None = Field(default=None, ge=0)
    cost_usd: float | None = Field(default=None, ge=0)
    exit_code: int

    @property
    def ref(self) -> str:
        """The evidence reference: ``<scenario>#<script>:<step index>``, at most 500 chars."""
        return f"{self.scenario}#{self.script}:{self.step}"[-500:]

    def evidence(self) -> Evidence:
        """Positive evidence of what the step did before it failed."""
        partial = None
        if self.output.bytes:
            partial = Partial(bytes=self.output.bytes, sha256=self.output.sha256)
        return Evidence(
            effects="observed" if self.effects else "absent",
            output="observed" if self.output.bytes else "absent",
            refusal="declared" if self.refusal else "absent",
            source=SOURCE,
            ref=self.ref,
            partial=partial,
        )


class _Wrapper(BaseModel):
    """The envelope line: ``{"scripted": {...}}`` (the player's ``ENVELOPE_KEY``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    scripted: Envelope


def read_envelope(result: ProcessResult) -> tuple[Envelope | None, str]:
    """Split the player's stdout into its envelope and the agent's own output text.

    Returns:
        The envelope (None when the last line is not one) and the stdout text without
        it (tail-marked with ``…`` when stdout outgrew the captured head).
    """
    text = stdout_text(result)
    body, _, last = text.rstrip("\n").rpartition("\n")
    try:
        envelope = _Wrapper.model_validate_json(last).scripted
    except ValidationError:
        return None, text
    if result.stdout_complete:
        return envelope, decode(result.stdout_head[: envelope.output.bytes])
    return envelope, body


class ScriptedHarness:
    """Plays scenario files in a real subprocess; see the module rules."""

    name: Final = "scripted"

    def __init__(
        self, base_dir: Path, *, state_dir: Path | None = None, python: str = sys.executable
    ) -> None:
        """Serve profiles whose scenario files are relative to ``base_dir``.

        Args:
            base_dir: the goal file's folder.
            state_dir: where step counters live (overrides ``GOVERNOR_SCRIPTED_STATE``).
            python: the interpreter that runs the player.
        """
        self.base_dir = base_dir
        self.state_dir = state_dir
        self.python = python

    def scenario(self, profile: Profile) -> Path:
        """The scenario file a profile plays.

        Raises:
            InputError: the profile has more than one argument.
        """
        problem = args_problem("scripted", profile.args)
        if problem:
            raise InputError(problem)
        if not profile.args:
            return DEFAULT_SCENARIO
        return self.base_dir / profile.args[0]

    def binary(self, profile: Profile) -> str | None:
        """The interpreter that runs the player."""
        return self.python

    def run(
        self, prompt: str, profile: Profile, *, cwd: Path, env: Mapping[str, str]
    ) -> SpawnResult:
        """Play the next matching step of the profile's scenario."""
        result = run_process(
            (self.python, "-m", PLAYER_MODULE, str(self.scenario(profile))),
            stdin=prompt.encode("utf-8"),
            env=self._child_env(profile, cwd=cwd, env=env),
            cwd=cwd,
            timeout_s=profile.timeout_s,
        )
        envelope, output = read_envelope(result)
        clean = result.started and result.exit_code == 0 and not result.timed_out
        ok = clean and envelope is not None and envelope.vendor_status is None
        return spawn_result(
            result,
            Redactor(env),
            ok=ok,
            reply=output if ok else None,
            evidence=envelope.evidence() if envelope else Evidence(partial=partial_of(result)),
            stdout=output,
            vendor_status=envelope.vendor_status if envelope else None,
            retry_after_s=envelope.retry_after_s if envelope else None,
            cost_usd=envelope.cost_usd if envelope else None,
        )

    def _child_env(self, profile: Profile, *, cwd: Path, env: Mapping[str, str]) -> dict[str, str]:
        state_dir = self.state_dir or Path(env.get(STATE_VAR) or cwd / ".governor" / "scripted")
        child = scrubbed_env(env, profile.env)
        child[STATE_VAR] = str(state_dir)
        # the player imports this very package, wherever it is installed or checked out
        child["PYTHONPATH"] = _IMPORT_ROOT
        return child
