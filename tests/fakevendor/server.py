"""A loopback fake vendor HTTP server for the real agent CLIs: routing, recording, lifecycle.

It serves the OpenAI Responses API (``POST /v1/responses``, for ``codex exec``
through a custom model provider), the Anthropic Messages API (``POST /v1/messages``,
for ``claude -p`` through ``ANTHROPIC_BASE_URL``) and the Google Gemini API (``POST
/v1beta/models/<model>:streamGenerateContent``, for ``gemini -p`` through
``GOOGLE_GEMINI_BASE_URL``) on ``127.0.0.1`` with an ephemeral
port, in a background thread. Each model request plays the next step of the current
:class:`~tests.fakevendor.scenario.Scenario`; any other request is recorded and given a
neutral answer that consumes no step.

Every request is recorded (method, path, headers with credentials redacted, JSON body),
so a test can assert how many model requests a CLI made — e.g. that in-CLI retries are
really off — and when (``RecordedRequest.at``, on the monotonic clock). Instead of a
scenario, a test may give a *responder*: a function of each model request that returns
the step to play (many goals at once, each answered by what its prompt asks).
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.fakevendor import anthropic_api, gemini_api, openai_api
from tests.fakevendor.scenario import STALL_S, Scenario, Step, reply
from tests.fakevendor.wire import HANGUP, STALL, Answer, json_answer

SECRET_HEADERS = frozenset(
    {"authorization", "x-api-key", "x-goog-api-key", "cookie", "proxy-authorization"}
)
"""Request headers whose values the recorder never keeps."""

RESPONSES_PATH = "/v1/responses"
MESSAGES_PATH = "/v1/messages"


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request as the server saw it, with credentials redacted."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    at: float = 0.0
    """When it arrived (``time.monotonic()``)."""

    @property
    def route(self) -> str:
        """The path without its query string."""
        return self.path.split("?", 1)[0]

    @property
    def is_model_request(self) -> bool:
        """Whether this request asked a model for a turn (and so consumed a step)."""
        return self.method == "POST" and (
            self.route in (RESPONSES_PATH, MESSAGES_PATH) or gemini_api.is_model_route(self.route)
        )


def redact_headers(headers: dict[str, str]) -> dict[str, str]:
    """Header names lower-cased, credential values replaced by ``[REDACTED]``."""
    return {
        name.lower(): "[REDACTED]" if name.lower() in SECRET_HEADERS else value
        for name, value in headers.items()
    }


Responder = Callable[[RecordedRequest], Step]
"""Chooses the step that answers one model request."""


@dataclass
class _Recorder:
    scenario: Scenario
    requests: list[RecordedRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    responder: Responder | None = None

    def step(self, request: RecordedRequest, index: int) -> Step:
        return self.responder(request) if self.responder else self.scenario.step(index)

    def record(self, request: RecordedRequest) -> int:
        """Record a request; return its 0-based index among model requests (-1: not one)."""
        with self.lock:
            index = sum(r.is_model_request for r in self.requests)
            self.requests.append(request)
            return index if request.is_model_request else -1


def _parse_body(raw: bytes) -> Any:
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return raw.decode("utf-8", "replace")


def _route(recorder: _Recorder, request: RecordedRequest, index: int) -> Answer:
    body = request.body if isinstance(request.body, dict) else {}
    model = str(body.get("model", "claude-fake"))
    if index >= 0:
        step = recorder.step(request, index)
        if step.kind == "hangup":
            return HANGUP
        if step.kind == "stall":
            return STALL
        if request.route == RESPONSES_PATH:
            return openai_api.answer(step)
        if request.route == MESSAGES_PATH:
            return anthropic_api.answer(step, model, bool(body.get("stream", False)))
        streaming = request.route.endswith(":streamGenerateContent")
        return gemini_api.answer(step, gemini_api.model_of(request.route), streaming)
    if request.route.startswith(gemini_api.MODELS_PREFIX):
        return gemini_api.neutral()
    if request.route.startswith("/v1/messages"):
        return json_answer(200, {"input_tokens": 120})
    return json_answer(404, {"error": {"message": f"fake vendor has no {request.route}"}})


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def do_HEAD(self) -> None:
        self._serve()

    def log_message(self, format: str, *args: Any) -> None:
        """Keep test output quiet: the recorder is the log."""

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        request = RecordedRequest(
            self.command,
            self.path,
            redact_headers(dict(self.headers)),
            _parse_body(raw),
            time.monotonic(),
        )
        index = self.server.recorder.record(request)
        self._write(_route(self.server.recorder, request, index))

    def _write(self, answer: Answer) -> None:
        status, headers, chunks = answer
        if answer is STALL:
            self._wait_for_the_client()
        if answer is HANGUP or answer is STALL:  # not a byte: the connection just closes
            self.close_connection = True
            return
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        for chunk in chunks:
            self.wfile.write(chunk)
            self.wfile.flush()

    def _wait_for_the_client(self) -> None:
        """Send nothing until the client closes its end (at most ``STALL_S``)."""
        deadline = time.monotonic() + STALL_S
        while time.monotonic() < deadline:
            readable, _, _ = select.select([self.connection], [], [], 0.2)
            try:
                if readable and not self.connection.recv(1, socket.MSG_PEEK):
                    return
            except OSError:  # the client reset the connection: it gave up too
                return


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    recorder: _Recorder


class FakeVendor:
    """The fake vendor: start it, point a CLI at :attr:`url`, :meth:`play` a scenario."""

    def __init__(self, scenario: Scenario | None = None, *, port: int = 0) -> None:
        """Serve ``scenario`` on ``port`` (0: an ephemeral one; another: e.g. the port of a
        vendor that was stopped, to bring it back)."""
        self._server = _Server(("127.0.0.1", port), _Handler)
        self._server.recorder = _Recorder(scenario or reply("ok"))
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        """The base URL, ``http://127.0.0.1:PORT`` (no trailing slash)."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received since the last :meth:`play`, in order."""
        with self._server.recorder.lock:
            return list(self._server.recorder.requests)

    @property
    def model_requests(self) -> list[RecordedRequest]:
        """The requests that asked a model for a turn."""
        return [r for r in self.requests if r.is_model_request]

    def play(self, scenario: Scenario) -> None:
        """Answer the next model requests with ``scenario``; forget earlier requests."""
        recorder = self._server.recorder
        with recorder.lock:
            recorder.scenario = scenario
            recorder.responder = None
            recorder.requests.clear()

    def respond(self, responder: Responder) -> None:
        """Answer each next model request with the step ``responder`` picks for it; forget
        earlier requests."""
        recorder = self._server.recorder
        with recorder.lock:
            recorder.responder = responder
            recorder.requests.clear()

    def start(self) -> FakeVendor:
        """Serve in a background thread; returns ``self``."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeVendor:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
