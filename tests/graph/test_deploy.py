"""The planning graph over the store, as LangGraph runs it: deployed (``make_graph``, named in
``langgraph.json``) and embedded (``planning_graph``) — re-runnable threads, questions as
``interrupt()``, waits that end the run, errors with governor's message."""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Command
from typing_extensions import TypedDict

from governor.core.history import check_history
from governor.drive import goals
from governor.errors import CommandRefusedError
from governor.graph.deploy import (
    GovernorRunError,
    GraphSettings,
    _Nodes,
    make_graph,
    planning_graph,
)
from governor.store.sqlite import SqliteEventStore
from tests.e2e.cli import COMPLETE, Project, done, plan, planner_script, worker_script

ROOT = Path(__file__).resolve().parents[2]
OUTAGE = {"vendor_error": {"status": 503, "message": "HTTP/1.1 503 Service Unavailable"}}
QUESTION = {"status": "decision", "summary": "", "question": "Which database should I use?"}
FAST = {"initial_s": 0.05, "factor": 1, "max_s": 0.05}


def project_with(tmp_path: Path, scripts: list[dict[str, Any]], **policy: Any) -> Project:
    project = Project(tmp_path)
    agents = {"harness": "scripted", "args": [project.scenario("scenario.json", scripts)]}
    path = project.goal_file("g", agents, agents, **policy)
    with SqliteEventStore(tmp_path / "governor.db") as store:
        goals.create(store, path)
    return project


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return project_with(
        tmp_path,
        [
            planner_script([OUTAGE, {"reply": plan("a")}, {"reply": COMPLETE}]),
            worker_script("a", [{"effects": True, "reply": done("a")}]),
        ],
        upstream_backoff=FAST,
    )


def url(project: Project) -> str:
    return f"sqlite:///{project.root / 'governor.db'}"


def graph(project: Project, **more: Any) -> Any:
    return planning_graph(url(project), workdir=project.root, **more)


def events(project: Project) -> list[Any]:
    with SqliteEventStore(project.root / "governor.db") as store:
        return list(store.load("g"))


def thread(name: str = "t") -> dict[str, Any]:
    return {"configurable": {"thread_id": name}}


@pytest.fixture(params=["InMemorySaver", "SqliteSaver"])
def saver(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "InMemorySaver":
        yield InMemorySaver()
        return
    with SqliteSaver.from_conn_string(str(tmp_path / "checkpoints.db")) as checkpointer:
        yield checkpointer


def test_langgraph_json_names_a_factory_configured_by_the_deployment(
    cooling: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = cooling
    spec = json.loads((ROOT / "langgraph.json").read_text())
    assert spec["dependencies"] == ["."]  # the package is installed, so a module path works
    module, _, name = spec["graphs"]["governor"].partition(":")
    factory = getattr(importlib.import_module(module), name)
    monkeypatch.setenv("GOVERNOR_STORE", url(project))
    monkeypatch.setenv("GOVERNOR_WORKDIR", str(project.root))
    compiled = factory({})
    assert isinstance(compiled, CompiledStateGraph)
    edges = {(e.source, e.target) for e in compiled.get_graph().edges}
    assert {("__start__", "assess"), ("assess", "ask"), ("ask", "assess")} <= edges
    assert compiled.invoke({"goal_id": "g"})["outcome"] == "waiting"  # a server never sleeps


@pytest.mark.parametrize("key", ["store", "workdir", "profiles"])
def test_a_run_may_not_point_the_deployed_graph_at_another_store_or_folder(key: str) -> None:
    with pytest.raises(GovernorRunError, match=f"a run may not set {key}: they come from"):
        make_graph({"configurable": {key: "/elsewhere"}})


def test_the_schemas_show_what_a_run_takes_and_returns(project: Project) -> None:
    compiled = graph(project)
    assert set(compiled.get_input_jsonschema()["properties"]) == {"goal_id", "goal"}
    assert set(compiled.get_output_jsonschema()["properties"]) == {
        "goal_id",
        "outcome",
        "decision",
        "wake_at",
        "holder",
        "answer",
    }
    assert set(compiled.get_context_jsonschema()["properties"]) == {"actor"}


def test_invoke_drives_a_goal_through_an_outage_to_success_and_the_store_keeps_it(
    project: Project,
) -> None:
    final = graph(project, max_wait_s=60).invoke({"goal_id": "g"})
    assert final["outcome"] == "stopped"
    assert final["decision"]["status"] == "succeeded"
    assert final["decision"]["ledger"]["replans"]["uncharged"] == 1
    stored = events(project)
    with SqliteEventStore(project.root / "governor.db") as store:
        assert store.current_lease("g") is None  # every step released it
    assert len(list(check_history(enumerate(stored, 1)))) == len(stored)
    assert [e.type for e in stored].count("attempt.started") == 1
    again = graph(project).invoke({"goal_id": "g"})  # the store is the truth
    assert (again["outcome"], again["decision"]["status"]) == ("stopped", "succeeded")
    assert len(events(project)) == len(stored)


@pytest.fixture
def cooling(tmp_path: Path) -> Project:
    """A planner refused by its vendor once: a 30 s cooldown (long: no run gets past it)."""
    return project_with(
        tmp_path,
        [planner_script([OUTAGE, {"reply": plan("a")}, {"reply": COMPLETE}])],
        upstream_backoff={"initial_s": 30, "factor": 1, "max_s": 30},
    )


@pytest.fixture
def plain(tmp_path: Path) -> Project:
    """A goal of one item that goes through without a hitch."""
    return project_with(
        tmp_path,
        [
            planner_script([{"reply": plan("a")}, {"reply": COMPLETE}]),
            worker_script("a", [{"reply": done("a")}]),
        ],
    )


def test_a_server_run_never_sleeps_a_wait_it_ends_with_the_wake_up_time(
    cooling: Project, saver: Any
) -> None:
    compiled = graph(cooling, checkpointer=saver)  # max_wait_s 0, as on a server
    first = compiled.invoke({"goal_id": "g"}, thread())
    assert (first["outcome"], first["decision"]["status"]) == ("waiting", "waiting")
    assert first["wake_at"] == first["decision"]["not_before"] is not None
    again = compiled.invoke({"goal_id": "g"}, thread())  # a re-run decides anew: still cooling
    assert (again["outcome"], again["wake_at"]) == ("waiting", first["wake_at"])
    assert [e.type for e in events(cooling)].count("plan.requested") == 1


def test_two_runs_on_one_thread_make_progress(plain: Project, saver: Any) -> None:
    compiled = graph(plain, checkpointer=saver)
    first = compiled.invoke({"goal_id": "g"}, {**thread(), "recursion_limit": 6})
    assert (first["outcome"], first["decision"]["status"]) == ("steps", "ready")  # out of steps
    second = compiled.invoke({"goal_id": "g"}, thread())  # the same thread goes on
    assert (second["outcome"], second["decision"]["status"]) == ("stopped", "succeeded")
    third = compiled.invoke({"goal_id": "g"}, thread())  # an ended goal ends at once
    assert (third["outcome"], third["decision"]["status"]) == ("stopped", "succeeded")
    assert [e.type for e in events(plain)].count("attempt.started") == 1


def test_a_workers_question_is_an_interrupt_and_command_resume_answers_it(
    asking: Project, saver: Any
) -> None:
    compiled = graph(asking, checkpointer=saver)
    paused = compiled.invoke({"goal_id": "g"}, thread())
    [pending] = paused["__interrupt__"]
    assert pending.value["question"].endswith("Which database should I use?")
    assert (pending.value["goal_id"], pending.value["work_id"]) == ("g", "p1-a")
    assert (pending.value["asker"], pending.value["attempt"]) == ("worker", 1)
    assert pending.value["answer_with"] == "governor work retry g p1-a --reason ANSWER"
    final = compiled.invoke(Command(resume="use postgres"), thread())
    assert (final["outcome"], final["decision"]["status"]) == ("stopped", "succeeded")
    [retried] = [e for e in events(asking) if e.type == "work.retried"]
    assert (retried.work_id, retried.reason, retried.actor) == (
        "p1-a",
        "use postgres",
        "operator:langgraph",
    )


def test_the_answer_is_recorded_as_the_cli_records_it(asking: Project, tmp_path: Path) -> None:
    compiled = graph(asking, checkpointer=InMemorySaver())
    compiled.invoke({"goal_id": "g"}, thread())
    compiled.invoke(
        Command(resume={"answer": "use postgres", "actor": "operator:alice"}),
        {**thread(), "context": {"actor": "operator:bob"}},
    )
    cli = Project(tmp_path / "cli")
    cli.root.mkdir()
    (cli.root / "scenario.json").write_text((asking.root / "scenario.json").read_text())
    (cli.root / "g.json").write_text((asking.root / "g.json").read_text())
    assert cli.gov("new", "g.json").returncode == 0
    assert cli.gov("run", "g").returncode != 0  # stops on the question
    answered = cli.gov(
        "work", "retry", "g", "p1-a", "--reason", "use postgres", "--actor", "operator:alice"
    )
    assert answered.returncode == 0, answered.stderr

    def retried(project: Project) -> dict[str, Any]:
        [event] = [e for e in project.events("g") if e["type"] == "work.retried"]
        return {k: v for k, v in event.items() if k != "at"}

    assert retried(asking) == retried(cli)
    assert retried(asking)["actor"] == "operator:alice"  # the answer's own actor wins


def test_a_planners_question_resumes_the_goal_with_the_answer(tmp_path: Path) -> None:
    project = project_with(
        tmp_path,
        [
            {
                "name": "told",
                "match": ["role: planner", "SQLite"],
                "steps": [{"reply": plan("a")}, {"reply": COMPLETE}],
            },
            planner_script([{"reply": {"status": "decision", "question": "Which store?"}}]),
            worker_script("a", [{"reply": done("a")}]),
        ],
    )
    compiled = graph(project, checkpointer=InMemorySaver())
    paused = compiled.invoke({"goal_id": "g"}, thread(), context={"actor": "operator:carol"})
    [pending] = paused["__interrupt__"]
    assert (pending.value["asker"], pending.value["work_id"]) == ("planner", None)
    assert pending.value["answer_with"] == "governor resume g --reason ANSWER"
    final = compiled.invoke(Command(resume="SQLite"), thread(), context={"actor": "operator:carol"})
    assert final["decision"]["status"] == "succeeded"
    [resumed] = [e for e in events(project) if e.type == "goal.resumed"]
    assert (resumed.reason, resumed.actor) == ("SQLite", "operator:carol")


def test_an_answer_given_elsewhere_meanwhile_lets_the_resumed_run_go_on(asking: Project) -> None:
    compiled = graph(asking, checkpointer=InMemorySaver())
    compiled.invoke({"goal_id": "g"}, thread())
    with SqliteEventStore(asking.root / "governor.db") as store:
        goals.answer(store, "g", "use postgres", actor="operator:dave")
    final = compiled.invoke(Command(resume="ignored: already answered"), thread())
    assert final["decision"]["status"] == "succeeded"
    assert [e.reason for e in events(asking) if e.type == "work.retried"] == ["use postgres"]


def test_an_empty_answer_is_refused_with_governors_message(asking: Project) -> None:
    compiled = graph(asking, checkpointer=InMemorySaver())
    compiled.invoke({"goal_id": "g"}, thread())
    with pytest.raises(GovernorRunError, match="an answer needs some text") as caught:
        compiled.invoke(Command(resume="  "), thread())
    assert caught.value.kind == "CommandRefusedError"


class Parent(TypedDict, total=False):
    goal_id: str
    outcome: str | None
    decision: dict[str, Any]
    report: str


def test_the_graph_embedded_in_a_users_graph_runs_and_its_questions_reach_the_parent(
    asking: Project,
) -> None:
    def report(state: Parent) -> Parent:
        return {"report": f"{state['goal_id']} is {state['decision']['status']}"}

    parent: Any = StateGraph(Parent)
    parent.add_node("govern", graph(asking))
    parent.add_node("report", report)
    parent.add_edge(START, "govern")
    parent.add_edge("govern", "report")
    parent.add_edge("report", END)
    app = parent.compile(checkpointer=InMemorySaver())
    paused = app.invoke({"goal_id": "g"}, thread())
    assert paused["__interrupt__"][0].value["work_id"] == "p1-a"
    final = app.invoke(Command(resume="use postgres"), thread())
    assert final["report"] == "g is succeeded"
    assert final["outcome"] == "stopped"


def test_a_goal_given_as_input_is_created_with_the_deployments_profiles(
    project: Project,
) -> None:
    with SqliteEventStore(project.root / "governor.db") as store:
        profiles = goals.load(store, "g").created.profiles  # type: ignore[union-attr]
    compiled = graph(project, profiles=profiles, max_wait_s=60)
    spec = {
        "id": "g2",
        "title": "Another",
        "objective": "Do it.",
        "acceptance": ["it is done"],
        "policy": {"upstream_backoff": FAST},
    }
    final = compiled.invoke({"goal": {**spec, "planner": "planner", "worker": "worker"}})
    assert (final["goal_id"], final["decision"]["status"]) == ("g2", "succeeded")
    with pytest.raises(GovernorRunError, match="profiles come from the deployment") as caught:
        compiled.invoke(
            {"goal": {**spec, "id": "g3", "planner": "p", "worker": "p", "profiles": {}}}
        )
    assert caught.value.kind == "GoalFileError"
    with pytest.raises(GovernorRunError, match="a goal with id 'g2' already exists"):
        compiled.invoke({"goal": {**spec, "planner": "planner", "worker": "worker"}})


def test_the_goal_may_come_from_input_and_progress_is_streamed(project: Project) -> None:
    chunks = list(
        graph(project, max_wait_s=60).stream({"goal_id": "g"}, stream_mode=["custom", "updates"])
    )
    progress = [c["progress"] for mode, c in chunks if mode == "custom"]
    assert any("plan p1 (initial) requested" in p for p in progress)
    assert [c for mode, c in chunks if mode == "updates"][-1]["assess"]["outcome"] == "stopped"


def test_a_goal_held_by_another_runner_ends_the_run_naming_the_holder(project: Project) -> None:
    with SqliteEventStore(project.root / "governor.db") as store:
        store.acquire_lease("g", "worker-7", ttl_s=60)
        final = graph(project).invoke({"goal_id": "g"})
    assert (final["outcome"], final["holder"]) == ("leased", "worker-7")


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({}, "give the goal to drive"),
        ({"goal_id": "nope"}, "no goal 'nope' in this store"),
    ],
)
def test_errors_end_the_run_with_governors_message(
    project: Project, given: dict[str, str], message: str
) -> None:
    with pytest.raises(GovernorRunError, match=message):
        graph(project).invoke(given)


def test_answering_a_goal_with_no_question_is_refused(project: Project) -> None:
    with (
        SqliteEventStore(project.root / "governor.db") as store,
        pytest.raises(CommandRefusedError, match="no question is waiting"),
    ):
        goals.answer(store, "g", "yes", actor="operator:x")


def test_a_wait_or_a_question_the_goal_moved_past_returns_to_assess(project: Project) -> None:
    nodes = _Nodes(GraphSettings(store=url(project), workdir=project.root, env=dict(os.environ)))
    assert nodes.wait({"goal_id": "g"}) == {}  # a new goal plans: nothing to wait for
    assert nodes.ask({"goal_id": "g"}, Runtime(context={})) == {}  # nor anything to ask


def test_the_default_store_folder_is_created_as_governor_creates_it(tmp_path: Path) -> None:
    """Issue 35: under ``langgraph dev`` with no ``GOVERNOR_STORE`` the documented default
    failed "cannot open the database file" until someone made ``.governor/``."""
    settings = GraphSettings.from_env({"GOVERNOR_WORKDIR": str(tmp_path)})
    assert settings.store == str(tmp_path / ".governor" / "governor.db")
    with _Nodes(settings).store() as store:
        assert list(store.goals()) == []
    assert (tmp_path / ".governor" / "governor.db").is_file()
