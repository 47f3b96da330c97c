"""The Python API (``docs/api.md``): its example runs and type-checks under ``mypy --strict``
in a user's script; ``governor.Goal`` records what the CLI records; callbacks and
OpenTelemetry see a goal's run down to its agents' model calls."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic import BaseModel

import governor
from governor.errors import CommandRefusedError, GoalFileError, InputError, NotFoundError
from governor.store.sqlite import SqliteEventStore
from tests.callbacks import Runs

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "api.md"


def doc_example() -> tuple[str, str]:
    """The first python block of docs/api.md and the output block after it."""
    code, printed = re.findall(r"```(?:python)?\n(.*?)```", DOC.read_text(), flags=re.S)[:2]
    return code, printed


def test_the_docs_example_runs_and_prints_what_the_docs_say(tmp_path: Path) -> None:
    code, printed = doc_example()
    assert 25 <= len(code.splitlines()) <= 40
    (tmp_path / "example.py").write_text(code)
    ran = subprocess.run(
        [sys.executable, "example.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == printed


def test_mypy_strict_accepts_a_user_script_that_imports_governor(tmp_path: Path) -> None:
    code, _ = doc_example()
    extra = textwrap.dedent(
        """
        from langgraph.types import Command

        def typed(goal: governor.Goal) -> str | None:
            status: governor.GoalStatus = goal.status()
            question: governor.Question | None = status.question
            graph = governor.planning_graph("goals.db")
            graph.invoke(Command(resume="yes"), {"configurable": {"thread_id": "t"}})
            return question.text if question else status.reason
        """
    )
    (tmp_path / "user.py").write_text(code + extra)
    cache = ROOT / ".cache" / "mypy-user"  # reused between runs: a cold check reads langgraph
    checked = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(cache), "user.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "import-untyped" not in checked.stdout


AGENTS = """
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

PLAN = '{"decision": "apply", "rationale": "r", "work": [{"key": "a", "title": "a", "objective": "do a", "acceptance": ["a works"]}]}'
DONE = '{"status": "done", "summary": "did a", "acceptance": [{"criterion": "a works", "status": "satisfied"}]}'
COMPLETE = '{"decision": "complete", "rationale": "done"}'

planner = GenericFakeChatModel(messages=iter([AIMessage(content=PLAN), AIMessage(content=COMPLETE)]))
worker = GenericFakeChatModel(messages=iter([AIMessage(content=DONE)]))

def asking_worker(prompt, context):
    if "blue" in prompt:
        return DONE
    return {"status": "decision", "question": "Which colour?"}
"""


class Spec(BaseModel):
    """A goal spec as an application would keep it: a pydantic model."""

    id: str
    title: str
    objective: str
    acceptance: list[str]
    planner: str
    worker: str
    profiles: dict[str, dict[str, Any]]


def spec(tmp_path: Path, worker: str = "worker", **more: Any) -> dict[str, Any]:
    (tmp_path / "chat_agents.py").write_text(AGENTS)
    agent = {"harness": "python", "max_attempts": 1, "timeout_s": 60}
    return {
        "id": "g",
        "title": "Test goal",
        "objective": "Do it.",
        "acceptance": ["it is done"],
        "planner": "planner",
        "worker": "worker",
        "profiles": {
            "planner": {**agent, "args": ["chat_agents.py:planner"]},
            "worker": {**agent, "args": [f"chat_agents.py:{worker}"]},
        },
        **more,
    }


@pytest.fixture
def goal(tmp_path: Path) -> Iterator[governor.Goal]:
    with governor.Goal.create(
        Spec(**spec(tmp_path)), store=str(tmp_path / "g.db"), workdir=tmp_path
    ) as created:
        yield created


def test_a_goal_from_a_pydantic_model_runs_with_fake_chat_models(goal: governor.Goal) -> None:
    result = goal.run()
    assert (result.outcome, result.status.status, result.status.question) == (
        "stopped",
        "succeeded",
        None,
    )
    assert result.status.to_dict()["status"] == "succeeded"
    assert [e.type for e in goal.events()][-1] == "plan.completed"


def test_a_question_is_structured_and_the_answer_is_a_retry_with_the_apis_actor(
    tmp_path: Path,
) -> None:
    with governor.Goal.create(
        spec(tmp_path, worker="asking_worker"),
        store=str(tmp_path / "g.db"),
        workdir=tmp_path,
        actor="operator:api-test",
    ) as goal:
        status = goal.run().status
        asked = status.question
        assert asked == governor.Question("g", "worker", "Which colour?", "p1-a", "p1", 1)
        assert status.to_dict()["question"]["text"] == "Which colour?"
        with pytest.raises(CommandRefusedError, match="an answer needs some text"):
            goal.answer("")
        assert goal.answer("blue").question is None
        [retried] = [e for e in goal.events() if e.type == "work.retried"]
        assert (retried.reason, retried.actor) == ("blue", "operator:api-test")
        assert goal.run().status.status == "succeeded"
        with pytest.raises(CommandRefusedError, match="no question is waiting"):
            goal.answer("again")


def test_raise_budget_and_cancel_record_the_operator_verbs(goal: governor.Goal) -> None:
    raised = goal.raise_budget("replans", 9, reason="a long goal")
    assert raised.ledger.replans.limit == 9
    with pytest.raises(CommandRefusedError, match="the new limit must be higher"):
        goal.raise_budget("replans", 2, reason="less")
    assert goal.cancel("not needed", actor="operator:carol").status == "cancelled"
    last = goal.events()[-1]
    assert (last.type, last.actor, last.reason) == (
        "goal.cancelled",
        "operator:carol",
        "not needed",
    )


@pytest.mark.parametrize(
    ("ledger", "to", "needle"),
    [
        ("milestones", 9, "unknown ledger 'milestones'"),
        ("bogus", 9, "unknown ledger 'bogus'"),
        ("replans", "9", "must be a number, not '9'"),
        ("replans", True, "must be a number, not True"),
        ("replans", None, "must be a number, not None"),
    ],
)
def test_raise_budget_refuses_a_ledger_or_limit_it_cannot_raise_with_a_governor_error(
    goal: governor.Goal, ledger: Any, to: Any, needle: str
) -> None:
    """docs/api.md: refusals raise governor's errors. An unknown ledger was a KeyError, a
    limit given as text a TypeError, and ``True`` was recorded as a raise to 1."""
    with pytest.raises(InputError, match=needle):
        goal.raise_budget(ledger, to, reason="more")
    assert [e.type for e in goal.events()] == ["goal.created"]


def test_an_existing_goal_a_missing_one_and_a_taken_id(goal: governor.Goal, tmp_path: Path) -> None:
    with SqliteEventStore(tmp_path / "g.db") as store:
        again = governor.Goal("g", store=store)
        assert again.status().title == "Test goal"
        again.close()  # a store passed in stays open
        assert store.last_seq("g") == 1
    with pytest.raises(NotFoundError, match="no goal 'nope'"):
        governor.Goal("nope", store=str(tmp_path / "g.db"))
    with pytest.raises(CommandRefusedError, match="a goal with id 'g' already exists"):
        governor.Goal.create(spec(tmp_path), store=str(tmp_path / "g.db"), workdir=tmp_path)
    with pytest.raises(GoalFileError, match="goal: 'title' is required"):
        governor.Goal.create({"objective": "x"}, store=str(tmp_path / "g.db"))


def test_a_goal_file_path_is_a_spec(tmp_path: Path) -> None:
    import json

    (tmp_path / "goal.json").write_text(json.dumps(spec(tmp_path)))
    with governor.Goal.create(tmp_path / "goal.json", store=str(tmp_path / "g.db")) as goal:
        assert goal.goal_id == "g"
        assert goal.step().status in ("ready", "running")  # one step: the plan is proposed


def test_callbacks_given_to_run_reach_every_agents_model_call_with_its_ids(
    goal: governor.Goal,
) -> None:
    runs = Runs()
    goal.run(callbacks=[runs], config={"tags": ["api-test"]})
    models = runs.models()
    assert len(models) == 3  # plan, work, complete
    for run_id, meta in models.items():
        chain = runs.ancestry(run_id)
        assert chain[-1] == "governor g"  # the goal's run is the root of every model call
        assert meta["goal_id"] == "g"
    worker_meta = [m for m in models.values() if m["role"] == "worker"]
    assert [(m["work_id"], m["attempt"], m["plan_id"]) for m in worker_meta] == [("p1-a", 1, "p1")]
    dispatch = [name for rid in models for name in runs.ancestry(rid) if name == "dispatch"]
    assert dispatch == ["dispatch"]  # the worker's call nests under the node that dispatched it


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    governor.instrument(provider)
    try:
        yield exporter
    finally:
        governor.uninstrument()


def test_opentelemetry_spans_nest_goal_step_agent_with_class_charged_and_rule(
    tmp_path: Path, spans: InMemorySpanExporter
) -> None:
    with governor.Goal.create(
        spec(tmp_path, worker="asking_worker"), store=str(tmp_path / "g.db"), workdir=tmp_path
    ) as goal:
        goal.run()
    finished = spans.get_finished_spans()
    by_id = {s.context.span_id: s for s in finished if s.context is not None}

    def attrs(span: Any) -> dict[str, Any]:
        return dict(span.attributes or {})

    def parent(span: Any) -> Any:
        assert span.parent is not None, span.name
        return by_id[span.parent.span_id]

    agents = [s for s in finished if s.name == "governor.agent"]
    asked = next(s for s in agents if attrs(s).get("governor.role") == "worker")
    assert {k: attrs(asked)[k] for k in ("governor.work_id", "governor.attempt")} == {
        "governor.work_id": "p1-a",
        "governor.attempt": 1,
    }
    assert attrs(asked)["governor.class"] == "decision"
    assert attrs(asked)["governor.charged"] is False
    assert attrs(asked)["governor.outcome"] == "failed"
    step = parent(asked)
    assert (step.name, attrs(step)["governor.action"]) == ("governor.step", "dispatch")
    root = parent(step)
    assert (root.name, attrs(root)["governor.goal_id"]) == ("governor.goal", "g")
    planner = next(s for s in agents if attrs(s).get("governor.role") == "planner")
    assert (attrs(planner)["governor.outcome"], attrs(planner)["governor.charged"]) == (
        "proposed",
        True,
    )
    actions = [attrs(s)["governor.action"] for s in finished if s.name == "governor.step"]
    assert actions[-1] == "ask"  # the run ends on the question


def test_spans_are_off_unless_instrumented(tmp_path: Path) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    governor.instrument(provider)
    governor.uninstrument()
    from opentelemetry import trace

    outer = provider.get_tracer("t").start_span("outer")
    with (
        trace.use_span(outer, end_on_exit=True),
        governor.Goal.create(
            spec(tmp_path), store=str(tmp_path / "g.db"), workdir=tmp_path
        ) as goal,
    ):
        assert goal.run().status.status == "succeeded"
    assert [s.name for s in exporter.get_finished_spans()] == ["outer"]


def test_a_policy_that_can_never_succeed_is_refused_by_the_api_too(tmp_path: Path) -> None:
    """SPEC §12.1 on every creation path: nothing is stored, the error names both numbers."""
    store = str(tmp_path / "g.db")
    with pytest.raises(GoalFileError) as caught:
        governor.Goal.create(
            spec(tmp_path, policy={"max_replans": 5, "max_milestones": 5}), store=store
        )
    assert str(caught.value) == (
        "goal: policy: max_milestones 5 leaves no planner call for the completion review "
        "under max_replans 5: use max_milestones ≤ 4 or max_replans ≥ 6"
    )
    with pytest.raises(NotFoundError):
        governor.Goal("g", store=store)
    with governor.Goal.create(spec(tmp_path, policy={"max_replans": 2}), store=store) as goal:
        created = goal.events()[0]
        assert created.type == "goal.created"
        policy = created.policy
        assert (policy.max_replans, policy.max_milestones, policy.max_same_failures) == (2, 1, 3)
