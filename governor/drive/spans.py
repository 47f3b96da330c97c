"""OpenTelemetry spans of a drive — goal, step, agent call — off unless switched on.

Rules:
    * Nothing is traced until ``instrument()`` is called (the ``otel`` extra installs
      ``opentelemetry-api``; the application configures its SDK and exporter). Until
      then every span is a no-op that costs one check, and OpenTelemetry is not imported.
    * Three kinds, nested through OpenTelemetry's context (which follows agent calls into
      their threads, ``governor.exec.call``): ``governor.goal`` around a drive (a run, a
      tick), ``governor.step`` around each action it performs, ``governor.agent`` around
      each planner or worker run; around a call's reservation against its goal's pools
      and its settlement, ``governor.reservation`` and ``governor.settlement`` (SPEC
      §13.6: the pools, the call, each unit of the figure; held or refused, and the pool
      and unit that refused; settled or released — ``governor.drive.pools``).
    * Attributes are governor's facts, named ``governor.*``: the goal, the action, the
      plan, item and attempt; on an agent span once its run is recorded, what it came to:
      ``governor.outcome``, ``governor.class``, ``governor.charged`` (the core's one
      definition) and ``governor.rule`` (the classification rule that fired).
    * A failed agent run (any outcome but success, and any class but ``decision``: a
      question is an answer, not a failure) sets its span's status to error and adds an
      ``exception`` event with its class and error. A goal span ends with the goal's
      status (``governor.status``, ``governor.outcome``): OK when it succeeded, error
      when a budget is exhausted or it is blocked on anything but a person's decision.
    * The runs of one goal are one story, whichever process drives them: every goal span
      links (a span link) to the goal's anchor — a span context derived from the goal id
      alone (``goal_anchor``), the same in every process — and to the goal span of the
      run before it in the same process.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final, Protocol

from governor._version import __version__
from governor.errors import UnavailableError

if TYPE_CHECKING:  # the core is imported when a span records a run: every command calls
    # ``instrument_from`` first, and ``list`` imports no model (start-up)
    from governor.core.charges import RunEvent
    from governor.core.decision import Decision
    from governor.core.evidence import Evidence, FailureClass

Attributes = Mapping[str, str | int | float | bool | None]


class Span(Protocol):
    """What governor does with a span (OpenTelemetry's ``Span`` has it)."""

    def set_attribute(self, key: str, value: Any) -> None: ...

    def set_status(self, status: Any) -> None: ...

    def add_event(self, name: str, attributes: Any = None) -> None: ...

    def get_span_context(self) -> Any: ...


_tracer: Any = None
_previous: OrderedDict[str, Any] = OrderedDict()
"""Goal id -> the span context of its last goal span in this process (the newest kept)."""
_lock = threading.Lock()
PREVIOUS_KEPT: Final = 1024
ANCHOR_SALT: Final = b"governor.goal:"


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

    _tracer = trace.get_tracer("governor", __version__, tracer_provider=tracer_provider)


def instrument_from(environ: Mapping[str, str]) -> None:
    """``instrument()`` when ``GOVERNOR_OTEL`` is ``1`` (the command and its workers)."""
    if environ.get("GOVERNOR_OTEL", "").strip().lower() in ("1", "true", "yes"):
        instrument()


def tracer() -> Any:
    """The tracer governor's spans go to, or None when not instrumented (a Temporal
    client's tracing interceptor shares it: ``governor.temporal.client``)."""
    return _tracer


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


def goal_anchor(goal_id: str) -> tuple[int, int]:
    """The trace and span ids every goal span of ``goal_id`` links to: derived from the
    goal id alone, so every process finds the same (search a backend for the trace id)."""
    import hashlib  # noqa: PLC0415 - start-up: every command imports this module

    digest = hashlib.sha256(ANCHOR_SALT + goal_id.encode()).digest()
    trace_id = int.from_bytes(digest[:16], "big") or 1
    span_id = int.from_bytes(digest[16:24], "big") or 1
    return trace_id, span_id


def _links(goal_id: str) -> list[Any]:
    from opentelemetry.trace import Link, SpanContext, TraceFlags  # noqa: PLC0415 - instrumented

    trace_id, span_id = goal_anchor(goal_id)
    anchor = SpanContext(trace_id, span_id, is_remote=True, trace_flags=TraceFlags(1))
    links = [Link(anchor, {"governor.goal_id": goal_id, "governor.link": "goal"})]
    with _lock:
        previous = _previous.get(goal_id)
    if previous is not None:
        links.append(Link(previous, {"governor.goal_id": goal_id, "governor.link": "previous run"}))
    return links


@contextmanager
def goal_span(goal_id: str) -> Iterator[Span | None]:
    """The ``governor.goal`` span of one drive (a run, a tick), linked to the goal's other runs."""
    if _tracer is None:
        yield None
        return
    attributes = {
        "governor.goal_id": goal_id,
        "governor.goal_trace_id": f"{goal_anchor(goal_id)[0]:032x}",
    }
    with _tracer.start_as_current_span(
        "governor.goal", attributes=attributes, links=_links(goal_id)
    ) as current:
        with _lock:
            _previous[goal_id] = current.get_span_context()
            _previous.move_to_end(goal_id)
            while len(_previous) > PREVIOUS_KEPT:
                _previous.popitem(last=False)
        yield current


def record_goal(current: Span | None, decision: Decision, outcome: str) -> None:
    """End a goal span with the goal's status: OK when it succeeded, error when a budget
    is exhausted or it is blocked on anything but a person's decision."""
    if current is None:
        return
    from opentelemetry.trace import Status, StatusCode  # noqa: PLC0415 - instrumented

    current.set_attribute("governor.status", decision.status)
    current.set_attribute("governor.next_action", decision.next_action)
    current.set_attribute("governor.rule", decision.rule)
    current.set_attribute("governor.outcome", outcome)
    if decision.blocked_on:
        current.set_attribute("governor.blocked_on", decision.blocked_on)
    if decision.status == "succeeded":
        current.set_status(Status(StatusCode.OK))
    elif decision.status == "budget_exhausted" or (
        decision.status == "blocked" and decision.blocked_on != "decision"
    ):
        current.set_status(Status(StatusCode.ERROR, decision.reason[:500]))


def record_run(
    current: Span | None,
    outcome: str,
    failure_class: FailureClass | None,
    evidence: Evidence | None,
    error: str | None = None,
) -> None:
    """Put what an agent run came to on its span: outcome, class, charged, rule; a failure
    as the span's error status and an ``exception`` event."""
    if current is None:
        return
    from governor.core.charges import is_charged_run  # noqa: PLC0415 - start-up (see the imports)

    current.set_attribute("governor.outcome", outcome)
    current.set_attribute("governor.charged", is_charged_run(outcome, failure_class, evidence))
    if failure_class is not None:
        current.set_attribute("governor.class", failure_class)
    if evidence is not None and evidence.rule:
        current.set_attribute("governor.rule", evidence.rule)
    if outcome not in ("succeeded", "proposed") and failure_class != "decision":
        _failed(current, outcome, failure_class, error)


def _failed(current: Span, outcome: str, failure_class: str | None, error: str | None) -> None:
    from opentelemetry.trace import Status, StatusCode  # noqa: PLC0415 - instrumented

    what = f"the agent run {outcome}" + (f" ({failure_class})" if failure_class else "")
    text = (error or what)[-2000:]
    current.add_event(
        "exception",
        {
            "exception.type": f"governor.AgentRun{outcome.title().replace('_', '')}",
            "exception.message": text,
            "governor.class": failure_class or "none",
        },
    )
    current.set_status(Status(StatusCode.ERROR, f"{what}: {text[-300:]}"))


def record_event(current: Span | None, event: RunEvent) -> None:
    """Put what the run an event finished came to on its span."""
    from governor.core.charges import run_outcome  # noqa: PLC0415 - start-up (see the imports)
    from governor.core.events import PlanProposed  # noqa: PLC0415 - start-up

    if isinstance(event, PlanProposed):
        record_run(current, run_outcome(event), None, event.evidence)
        return
    record_run(current, run_outcome(event), event.failure_class, event.evidence, event.error)
