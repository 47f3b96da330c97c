"""The service's log: JSON Lines through the standard ``logging`` module, secrets redacted.

Rules (issue 27, ``docs/deployment.md``):
    * Every line is one JSON object: ``ts``, ``level``, ``msg`` (a sentence a person
      reads), then the event's fields — ``kind``, ``worker``, ``goal`` … — and ``at``
      (the same instant as ``ts``, kept for readers of the earlier lines).
    * The records go to the logger ``governor.service`` (``LOGGER``), so whoever embeds
      the service, or gives ``serve --log-config``, routes them like any Python log
      (``JsonLinesFormatter`` formats them). Without a configuration, ``serve`` writes
      them to stderr or appends them to ``--log-file``: one ``write(2)`` per line, so the
      processes of one service share a file without interleaving.
    * Every string is redacted (the environment's secrets, API keys, bearer tokens,
      store passwords) before it becomes a record: no handler ever sees a secret.
"""

from __future__ import annotations

import json
import logging
import logging.config
import os
import sys
import threading
import tomllib
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import orjson

from governor.core.text import stamp
from governor.errors import InputError
from governor.exec.environment import Redactor
from governor.store.masking import mask_password
from governor.store.url import ENV_VAR

LOGGER: Final = logging.getLogger("governor.service")
"""Where every service log record goes."""

LEVELS: Final[dict[str, int]] = {
    "step.error": logging.ERROR,
    "worker.died": logging.ERROR,
    "metrics.error": logging.ERROR,
    "registry.error": logging.ERROR,
    "lease.lost": logging.WARNING,
    "upstream.down": logging.WARNING,
    "upstream.probe.refused": logging.WARNING,
    "upstream.probe.unanswered": logging.WARNING,
    "worker.orphaned": logging.WARNING,
    "stop.requested": logging.WARNING,
}
"""The level of each kind of line (the others are ``info``)."""

MESSAGES: Final[dict[str, str]] = {
    "decision": "{goal}: {status}/{next_action}, acting: {node}",
    "agent_call": "{goal}: {role} run of {what} finished: {outcome}",
    "lease.takeover": "{goal}: took over the lease of {previous_holder}",
    "lease.lost": "{goal}: the lease was taken over during the step",
    "step.error": "{goal}: the step failed: {error}",
    "upstream.down": "upstream {upstream} is failing",
    "upstream.probe.refused": "upstream {upstream} refused a probe",
    "upstream.probe.unanswered": "upstream {upstream}: a probe made no contact (timed out or could not start)",
    "upstream.up": "upstream {upstream} answers again",
    "service.started": "the service started: {workers} worker(s) on {store}",
    "service.stopped": "the service stopped",
    "worker.started": "worker started",
    "worker.stopped": "worker stopped",
    "worker.died": "worker process {dead} died",
    "worker.orphaned": "the supervisor is gone; the worker stops",
    "stop.requested": "{signal} received",
    "metrics.serving": "serving /metrics, /healthz and /readyz at {url}",
}
"""The ``msg`` of each kind of line (a field it names that is missing reads ``-``)."""


class _Fields(dict[str, Any]):
    def __missing__(self, key: str) -> str:
        return "-"


def message(kind: str, fields: Mapping[str, Any]) -> str:
    """The sentence of a line: its kind's template filled from its fields (each value's
    first line, cut to 200 characters: the field itself is whole beside it)."""
    what = fields.get("item") or (f"plan {fields['plan']}" if fields.get("plan") else None)
    values = _Fields({k: _short(v) for k, v in fields.items()}, what=what or "-")
    return MESSAGES.get(kind, kind.replace(".", " ").replace("_", " ")).format_map(values)


def _short(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    line = value.strip().splitlines()[0] if value.strip() else ""
    return line if len(line) <= 200 else line[:199] + "…"


class JsonLinesFormatter(logging.Formatter):
    """A record as one JSON line: ``ts``, ``level``, ``msg`` and the governor fields it carries."""

    def format(self, record: logging.LogRecord) -> str:
        fields: dict[str, Any] = getattr(record, "governor", {})
        ts = fields.get("at") or stamp(datetime.fromtimestamp(record.created, UTC))
        line = {"ts": ts, "level": record.levelname.lower(), "msg": record.getMessage(), **fields}
        return orjson.dumps(line).decode()


class LineHandler(logging.Handler):
    """Writes each formatted record as one line: appended to a file with one ``write(2)``,
    or to stderr (looked up when written)."""

    def __init__(self, path: Path | None) -> None:
        super().__init__()
        self.setFormatter(JsonLinesFormatter())
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644) if path else None

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = (self.format(record) + "\n").encode()
            if self._fd is not None:
                os.write(self._fd, line)
            else:
                sys.stderr.buffer.write(line)
                sys.stderr.buffer.flush()
        except Exception:
            self.handleError(record)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        super().close()


class _Handlers:
    """The process's own handlers on ``LOGGER``, one per target, shared by the logs that use it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[Path | None, tuple[LineHandler, int]] = {}
        self.configured = False
        """A logging configuration was given (``--log-config``): it routes the records."""

    def acquire(self, path: Path | None) -> None:
        if self.configured:
            return
        with self._lock:
            handler, users = self._open.get(path) or (LineHandler(path), 0)
            if not users:
                LOGGER.addHandler(handler)
                LOGGER.setLevel(logging.INFO)
                LOGGER.propagate = False  # our lines, once: not again through the root's handlers
            self._open[path] = (handler, users + 1)

    def release(self, path: Path | None) -> None:
        with self._lock:
            handler, users = self._open.get(path, (None, 0))
            if handler is None:
                return
            if users > 1:
                self._open[path] = (handler, users - 1)
                return
            del self._open[path]
            LOGGER.removeHandler(handler)
            handler.close()
            if not self._open:
                LOGGER.propagate = True


HANDLERS: Final = _Handlers()


def configure(path: Path) -> None:
    """Apply a ``logging.config.dictConfig`` read from a JSON or TOML file; from then on
    it alone routes the service's records.

    Raises:
        InputError: the file cannot be read, or is not a logging configuration.
    """
    try:
        text = path.read_text(encoding="utf-8")
        config = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
        logging.config.dictConfig(config)
    except (OSError, ValueError, TypeError, AttributeError, ImportError) as exc:
        raise InputError(f"--log-config {path}: not a logging configuration: {exc}") from None
    HANDLERS.configured = True


class JsonLog:
    """What a service process logs: one record per line, secrets redacted, to ``LOGGER``."""

    def __init__(self, path: Path | None, env: Mapping[str, str], *, worker: str = "") -> None:
        self._redact = Redactor(env)
        self._store_url = env.get(ENV_VAR)
        self._path = path
        self.worker = worker
        HANDLERS.acquire(path)
        self._open = True

    def write(self, kind: str, at: datetime, **fields: Any) -> None:
        """One line: ``{"ts", "level", "msg", "at", "kind", "worker", **fields}`` (None
        fields are left out)."""
        record = {"at": stamp(at), "kind": kind, "worker": self.worker or None, **fields}
        clean = {k: self._clean(v) for k, v in record.items() if v is not None}
        LOGGER.log(LEVELS.get(kind, logging.INFO), message(kind, clean), extra={"governor": clean})

    def redact(self, text: str) -> str:
        """``text`` with the secrets of the service's environment and store passwords replaced."""
        return mask_password(self._redact(text), self._store_url)

    def _clean(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: self._clean(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._clean(v) for v in value]
        return self.redact(value) if isinstance(value, str) else value

    def close(self) -> None:
        if self._open:
            self._open = False
            HANDLERS.release(self._path)
