"""LangSmith tracing switched on by its environment variables attaches every agent's model
call to the goal's run — planner and workers alike, whatever thread they ran in — with
the goal, item and attempt as metadata. The LangSmith endpoint is a loopback fake that
keeps what the real client posts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

INFO = {
    "version": "0.0",
    "batch_ingest_config": {
        "use_multipart_endpoint": True,
        "size_limit": 100,
        "size_limit_bytes": 20_971_520,
        "scale_up_qsize_trigger": 1000,
        "scale_up_nthreads_limit": 16,
        "scale_down_nempty_trigger": 4,
    },
}

SCRIPT = """
import governor
from langchain_core.tracers.langchain import wait_for_all_tracers

agent = {"harness": "python", "max_attempts": 1}
spec = {"id": "g", "title": "t", "objective": "o", "planner": "p", "worker": "w",
        "profiles": {"p": {**agent, "args": ["chat_agents.py:planner"]},
                     "w": {**agent, "args": ["chat_agents.py:worker"]}}}
with governor.Goal.create(spec, store="g.db") as goal:
    print(goal.run().status.status)
wait_for_all_tracers()
"""

AGENTS = """
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

PLAN = '{"decision": "apply", "rationale": "r", "work": [{"key": "a", "title": "a", "objective": "do a", "acceptance": ["a works"]}, {"key": "b", "title": "b", "objective": "do b", "acceptance": ["b works"]}]}'
DONE = '{"status": "done", "summary": "did it", "acceptance": [{"criterion": "%s works", "status": "satisfied"}]}'
COMPLETE = '{"decision": "complete", "rationale": "done"}'

planner = GenericFakeChatModel(messages=iter([AIMessage(content=PLAN), AIMessage(content=COMPLETE)]))

def worker(prompt, context):
    model = GenericFakeChatModel(messages=iter([AIMessage(content=DONE % context["work_id"][-1])]))
    return model.invoke(prompt)  # a plain function calling a model: no config passed on
"""


class FakeLangSmith:
    """Answers the LangSmith client like the service would, and keeps every run it posts."""

    def __init__(self) -> None:
        self.posts: list[tuple[str, bytes]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _answer(self, body: bytes) -> None:
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                self._answer(json.dumps(INFO).encode())

            def do_POST(self) -> None:
                size = int(self.headers.get("content-length") or 0)
                fake.posts.append((self.headers.get("content-type", ""), self.rfile.read(size)))
                self._answer(b"{}")

            do_PATCH = do_POST

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_port}"

    def runs(self) -> dict[str, dict[str, Any]]:
        """Every run posted, by id, with its ``extra`` (metadata) folded in."""
        runs: dict[str, dict[str, Any]] = {}
        for content_type, body in self.posts:
            assert content_type.startswith("multipart/form-data"), content_type
            message = BytesParser(policy=HTTP).parsebytes(
                f"Content-Type: {content_type}\r\n\r\n".encode() + body
            )
            for part in message.iter_parts():
                kind, _, rest = str(part.get_param("name", header="content-disposition")).partition(
                    "."
                )
                run_id, _, field = rest.partition(".")
                value = json.loads(bytes(part.get_payload(decode=True)))  # type: ignore[arg-type]
                run = runs.setdefault(run_id, {})
                if kind == "post" and not field:
                    run.update(value)
                elif field == "extra":
                    run["metadata"] = value.get("metadata", {})
        return runs

    def close(self) -> None:
        self.server.shutdown()


@pytest.fixture
def langsmith() -> Iterator[FakeLangSmith]:
    fake = FakeLangSmith()
    yield fake
    fake.close()


def test_every_model_call_of_a_goal_is_one_trace_under_its_run(
    tmp_path: Path, langsmith: FakeLangSmith
) -> None:
    (tmp_path / "chat_agents.py").write_text(AGENTS)
    (tmp_path / "run.py").write_text(SCRIPT)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANGSMITH_", "LANGCHAIN_"))}
    env |= {
        "LANGSMITH_TRACING": "true",
        "LANGSMITH_ENDPOINT": langsmith.url,
        "LANGSMITH_API_KEY": "lsv2_pt_fake_key_for_the_loopback_fake",
        "LANGSMITH_DISABLE_RUN_COMPRESSION": "true",
    }
    ran = subprocess.run(
        [sys.executable, "run.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert (ran.returncode, ran.stdout.strip()) == (0, "succeeded"), ran.stderr
    runs = langsmith.runs()
    [root] = [r for r in runs.values() if r.get("name") == "governor g"]
    models = [r for r in runs.values() if r.get("run_type") == "llm"]
    assert len(models) == 4  # plan, work a, work b, complete
    for model in models:
        assert model["trace_id"] == root["id"]  # attached to the goal's run, not a trace of its own
        assert model["dotted_order"].startswith(root["dotted_order"])
    workers = sorted(
        (m["metadata"]["work_id"], m["metadata"]["attempt"], m["metadata"]["goal_id"])
        for m in models
        if m["metadata"].get("role") == "worker"
    )
    assert workers == [("p1-a", 1, "g"), ("p1-b", 1, "g")]
