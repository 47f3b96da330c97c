"""OpenTelemetry spans of a drive — goal, step, agent call — off unless switched on.

Rules:
    * Nothing is traced until ``instrument()`` is called (the ``otel`` extra installs
      ``opentelemetry-api``; the application configures its SDK and exporter). Until
      then every span is a no-op that costs one check, and OpenTelemetry is not imported.
    * Three kinds, nested through OpenTelemetry's context (which follows agent calls into
      their threads, ``governor.exec.call``): ``governor.goal`` around a drive (a run, a
      tick), ``governor.step`` around each action it performs, ``governor.agent`` around
      each planner or worker run.
    * Attributes are governor's facts, named ``governor.*``: the goal, the action, the
      plan, item and attempt; on an agent span once its run is recorded, what it came to:
      ``governor.outcome``, ``governor.class``, ``governor.charged`` (the core's one
      definition) and ``governor.rule`` (the classification rule that fired).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol

from governor.errors import UnavailableError

if TYPE_CHECKING:  # the core is imported when a span records a run: every command calls
    # ``instrument_from`` first, and ``list`` imports no model (start-up)
    from governor.core.charges import RunEvent
    from governor.core.evidence import Evidence, FailureClass

Attributes = Mapping[str, str | int | float | bool | None]


class Span(Protocol):
    """What governor does with a span (OpenTelemetry's ``Span`` has it)."""

    def set_attribute(self, key: str, value: Any) -> None: ...


_tracer: Any = None


def instrument(tracer_provider: Any = None) -> None:
    """Emit spans from now on, to ``tracer_provider`` (default: OpenTelemetry's global one).

    Raises:
        UnavailableError: the ``otel`` extra (``opentelemetry-api``) is not installed.
    """
    global _tracer  # noqa: PLW0603 - instrumentation is process-wide, as OpenTelemetry's is
    try:
        from opentelemetry import trace  # noqa: PLC0415 - only when asked for
    except ImportError as exc:
        raise UnavailableError(
            "OpenTelemetry spans need the otel extra: pip install 'governor[otel]'",
            what="the otel extra",
        ) from exc
    from governor import __version__  # noqa: PLC0415 - the facade's version string

    _tracer = trace.get_tracer("governor", __version__, tracer_provider=tracer_provider)


def instrument_from(environ: Mapping[str, str]) -> None:
    """``instrument()`` when ``GOVERNOR_OTEL`` is ``1`` (the command and its workers)."""
    if environ.get("GOVERNOR_OTEL", "").strip().lower() in ("1", "true", "yes"):
        instrument()


def uninstrument() -> None:
    """Stop emitting spans."""
    global _tracer  # noqa: PLW0603 - see instrument
    _tracer = None


@contextmanager
def span(name: str, attributes: Attributes) -> Iterator[Span | None]:
    """A current span named ``governor.<name>`` (None when not instrumented)."""
    if _tracer is None:
        yield None
        return
    given = {f"governor.{k}": v for k, v in attributes.items() if v is not None}
    with _tracer.start_as_current_span(f"governor.{name}", attributes=given) as current:
        yield current


def record_run(
    current: Span | None,
    outcome: str,
    failure_class: FailureClass | None,
    evidence: Evidence | None,
) -> None:
    """Put what an agent run came to on its span: outcome, class, charged, rule."""
    if current is None:
        return
    from governor.core.charges import is_charged_run  # noqa: PLC0415 - start-up (see the imports)

    current.set_attribute("governor.outcome", outcome)
    current.set_attribute("governor.charged", is_charged_run(outcome, failure_class, evidence))
    if failure_class is not None:
        current.set_attribute("governor.class", failure_class)
    if evidence is not None and evidence.rule:
        current.set_attribute("governor.rule", evidence.rule)


def record_event(current: Span | None, event: RunEvent) -> None:
    """Put what the run an event finished came to on its span."""
    from governor.core.charges import run_outcome  # noqa: PLC0415 - start-up (see the imports)
    from governor.core.events import PlanProposed  # noqa: PLC0415 - start-up

    failure_class = None if isinstance(event, PlanProposed) else event.failure_class
    record_run(current, run_outcome(event), failure_class, event.evidence)
