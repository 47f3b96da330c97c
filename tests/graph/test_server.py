"""A real LangGraph server (``langgraph dev``, the ``deploy`` extra) drives a goal over its
HTTP API: created by a run, a cooldown that ends a run with its wake-up time, a re-run on
the same thread, a question answered with ``Command(resume=…)``, errors with governor's
message. The server binds 127.0.0.1, opens no browser and sends no telemetry."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_sync_client
from langgraph_sdk.client import SyncLangGraphClient

from governor.store.sqlite import SqliteEventStore
from tests.e2e.cli import COMPLETE, done, plan, planner_script, worker_script

LANGGRAPH = shutil.which("langgraph", path=str(Path(sys.executable).parent)) or "langgraph"
OUTAGE = {"vendor_error": {"status": 503, "message": "HTTP/1.1 503 Service Unavailable"}}
QUIET = {
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",  # no usage beacon
    "LANGGRAPH_NO_VERSION_CHECK": "true",  # no look-up of the latest version
    "LANGSMITH_TRACING": "false",
    "LANGCHAIN_TRACING_V2": "false",
}


@dataclass
class Server:
    url: str
    root: Path
    client: SyncLangGraphClient

    def events(self, goal_id: str) -> list[Any]:
        with SqliteEventStore(self.root / "governor.db") as store:
            return list(store.load(goal_id))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until_up(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        assert process.poll() is None, log.read_text()[-3000:]
        try:
            with urllib.request.urlopen(f"{url}/ok", timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"langgraph dev did not come up: {log.read_text()[-3000:]}")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("server")
    scripts = [
        planner_script([OUTAGE, {"reply": plan("a")}, {"reply": COMPLETE}]),
        {
            "name": "told",
            "match": ["role: worker", "use postgres"],
            "steps": [{"reply": done("a")}],
        },
        worker_script(
            "a", [{"reply": {"status": "decision", "summary": "", "question": "Which database?"}}]
        ),
    ]
    (root / "scenario.json").write_text(json.dumps({"scripts": scripts}))
    agent = {"harness": "scripted", "args": ["scenario.json"], "max_attempts": 1, "timeout_s": 60}
    (root / "profiles.json").write_text(
        json.dumps({"profiles": {"planner": agent, "worker": agent}})
    )
    env = {"GOVERNOR_STORE": str(root / "governor.db"), "GOVERNOR_WORKDIR": str(root)}
    spec = {
        "dependencies": ["."],
        "graphs": {"governor": "governor.graph.deploy:make_graph"},
        "env": {**env, "GOVERNOR_PROFILES": "profiles.json"},
    }
    (root / "langgraph.json").write_text(json.dumps(spec))
    port, log = free_port(), root / "server.log"
    child_env = {
        k: v for k, v in os.environ.items() if not k.startswith(("LANGSMITH_", "LANGCHAIN_"))
    }
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [LANGGRAPH, "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1",
             "--port", str(port), "--config", "langgraph.json"],
            cwd=root,
            env={**child_env, **QUIET},
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url, process, log)
        yield Server(url, root, get_sync_client(url=url, api_key=None))
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def test_the_schemas_are_visible(server: Server) -> None:
    [assistant] = server.client.assistants.search(graph_id="governor")
    schemas: Any = server.client.assistants.get_schemas(assistant["assistant_id"])
    assert set(schemas["input_schema"]["properties"]) == {"goal_id", "goal"}
    assert {"outcome", "decision", "wake_at"} <= set(schemas["output_schema"]["properties"])
    assert set(schemas["context_schema"]["properties"]) == {"actor"}


def test_a_goal_created_over_the_api_is_driven_to_success_answering_its_question(
    server: Server,
) -> None:
    client = server.client
    thread = client.threads.create()["thread_id"]
    goal: dict[str, Any] = {
        "id": "srv",
        "title": "Served",
        "objective": "Do it.",
        "acceptance": ["it is done"],
        "planner": "planner",
        "worker": "worker",
        "policy": {
            "upstream_backoff": {"initial_s": 20, "factor": 1, "max_s": 20}
        },  # long: no run gets past it, however loaded the machine
    }
    first: Any = client.runs.wait(thread, "governor", input={"goal": goal})
    assert (first["goal_id"], first["outcome"]) == ("srv", "waiting")  # the planner's outage
    wake_at = datetime.fromisoformat(first["wake_at"].replace("Z", "+00:00"))
    deadline = time.monotonic() + 60
    while datetime.now(UTC) <= wake_at:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    second: Any = client.runs.wait(thread, "governor", input={"goal_id": "srv"})  # same thread
    [asked] = second["__interrupt__"]
    assert asked["value"]["question"] == "Which database?"
    assert (asked["value"]["goal_id"], asked["value"]["work_id"]) == ("srv", "p2-a")
    final: Any = client.runs.wait(
        thread, "governor", command={"resume": "use postgres"}, context={"actor": "operator:http"}
    )
    assert (final["outcome"], final["decision"]["status"]) == ("stopped", "succeeded")
    [retried] = [e for e in server.events("srv") if e.type == "work.retried"]
    assert (retried.reason, retried.actor) == ("use postgres", "operator:http")


@pytest.mark.parametrize(
    ("run", "message"),
    [
        ({"input": {"goal_id": "nope"}}, "GovernorRunError: no goal 'nope' in this store"),
        (
            {"input": {"goal_id": "srv"}, "config": {"configurable": {"store": "/etc/x.db"}}},
            "GovernorRunError: a run may not set store",
        ),
    ],
    ids=["an unknown goal", "a caller's store"],
)
def test_errors_reach_the_caller_with_governors_message(
    server: Server, run: dict[str, Any], message: str
) -> None:
    with pytest.raises(Exception, match=message):
        server.client.runs.wait(None, "governor", **run)
