"""The service's process configuration: read once by the caller (the CLI), then injected.

Rules:
    * Nothing in ``governor.service`` reads the environment or the command line; a
      ``ServiceSettings`` value carries everything, and it pickles, so worker
      processes receive exactly what the supervisor was given.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from governor.core.policy import exponential_s
from governor.drive.pools import NeedToFinish
from governor.drive.runner import RunnerSettings
from governor.service.notify import NotifySettings
from governor.store.base import EventStore


@dataclass(frozen=True, slots=True)
class ErrorBackoff:
    """How long a worker leaves a goal alone after a step raised (in memory, never an event)."""

    initial_s: float = 1.0
    """The pause after the first failure, in seconds (default 1)."""
    factor: float = 2.0
    """Each further consecutive failure multiplies the pause by this (default 2)."""
    max_s: float = 300.0
    """The longest pause, in seconds (default 300)."""

    def delay_s(self, failures: int) -> float:
        """The pause after ``failures`` consecutive failures (``failures >= 1``)."""
        return exponential_s(self.initial_s, self.factor, self.max_s, failures)


@dataclass(frozen=True, slots=True)
class ServiceSettings:
    """Everything ``governor serve`` needs, decided before any worker starts."""

    workdir: Path
    """Where agents run (and where relative harness paths resolve)."""
    env: Mapping[str, str] = field(default_factory=dict)
    """The source environment; each harness scrubs it, and logs redact its secrets."""
    store_url: str | None = None
    """The store every worker opens (None: ``GOVERNOR_STORE``, else the default file)."""
    workers: int = 1
    """Worker processes; 1 runs the worker inside the serving process."""
    poll_s: float = 1.0
    """The longest idle sleep between looks at the store, in seconds (default 1)."""
    lease_ttl_s: float = 60.0
    """How long a goal's lease outlives a worker that died, in seconds (default 60)."""
    reprobe_s: float = 30.0
    """How often goals stopped on a missing precondition (a binary not on PATH) are
    looked at again, in seconds (default 30); one whose binary is there now goes on."""
    max_goals_per_tick: int = 50
    """How many due goals one look at the store fetches and steps (default 50)."""
    error_backoff: ErrorBackoff = ErrorBackoff()
    state_dir: Path | None = None
    """Per-goal state of the scripted harness (as for ``governor run``)."""
    log_file: Path | None = None
    """Where JSON log lines go (None: stderr)."""
    log_config: Path | None = None
    """A ``logging.config.dictConfig`` file (JSON or TOML) that routes the log records
    instead (None: JSON Lines to ``log_file``)."""
    metrics_file: Path | None = None
    """A Prometheus text file rewritten every ``metrics_interval_s`` (None: none)."""
    metrics_port: int | None = None
    """Serve the same text over HTTP at ``/metrics`` on this port (None: no server)."""
    metrics_host: str = "127.0.0.1"
    metrics_interval_s: float = 5.0
    """How often the metrics file is rewritten, in seconds (default 5)."""
    notify: NotifySettings = field(default_factory=NotifySettings)
    """Who is told when a goal starts or stops waiting on a person (default: nobody)."""
    asking: Callable[[EventStore], NeedToFinish] | None = None
    """How a request for more budget is sized (``RunnerSettings.asking``; ``governor
    serve`` gives the forecast's ``governor.analysis.asking.need_in``)."""

    @property
    def heartbeat_s(self) -> float:
        """How often a worker writes its registry row: every 5 s, or faster for short leases."""
        return min(5.0, self.lease_ttl_s / 3)

    def runner_settings(self, holder: str) -> RunnerSettings:
        """The settings of a runner that steps goals for the worker ``holder``."""
        return RunnerSettings(
            workdir=self.workdir,
            env=self.env,
            holder=holder,
            lease_ttl_s=self.lease_ttl_s,
            state_dir=self.state_dir,
            asking=self.asking,
        )
