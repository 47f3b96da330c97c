"""The python harness: callables, coroutine functions, LangChain Runnables and chat models run
in-process, imported once, classified like any other agent — and never able to crash a run."""

from __future__ import annotations

import json
import os
import sys
import textwrap
import time
from collections.abc import Iterator
from contextvars import copy_context
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda

from governor.core.classify import SpawnResult
from governor.core.event_fields import Profile
from governor.core.evidence import passes_gate
from governor.exec.call import CallInfo, current_call
from governor.exec.python import PythonHarness, _Outcome, agent_context
from tests.callbacks import Runs
from tests.fakevendor import scenario as sc
from tests.fakevendor.clis import FAKE_ANTHROPIC_KEY
from tests.fakevendor.server import FakeVendor

AGENTS = """
import asyncio
import time

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableLambda

calls = 0
started = []
cancelled = []

def answer(prompt, context):
    return {"status": "done", "echo": prompt, "model": context["model"], "key": context["env"].get("MY_API_KEY")}

def prose(prompt, context):
    return "thinking... " + '{"status": "done"}'

def rate_limited(prompt, context):
    raise RuntimeError("429 Too Many Requests")

def slow(prompt, context):
    time.sleep(5)
    return "late"

def counter(prompt, context):
    global calls
    calls += 1
    return {"calls": calls}

def ids(prompt, context):
    return dict(context)

async def async_answer(prompt, context):
    await asyncio.sleep(0)
    return {"status": "done", "work_id": context["work_id"]}

async def async_raises(prompt, context):
    await asyncio.sleep(0)
    raise ValueError("the async agent broke")

async def async_slow(prompt, context):
    started.append(True)
    try:
        await asyncio.sleep(30)
    finally:
        cancelled.append(True)

def not_text(prompt, context):
    return object()

def exits(prompt, context):
    raise SystemExit(3)

chain = RunnableLambda(lambda prompt: {"status": "done", "summary": prompt[:5]})

def model_reply(text):
    return GenericFakeChatModel(messages=iter([AIMessage(content=text)]))

chat = model_reply('{"status": "done", "summary": "from a chat model"}')
"""


def harness(tmp_path: Path) -> PythonHarness:
    (tmp_path / "agents.py").write_text(AGENTS)
    return PythonHarness(tmp_path)


def run(tmp_path: Path, target: str, **profile: Any) -> SpawnResult:
    h = harness(tmp_path)
    env = {"PATH": "/usr/bin", "MY_API_KEY": "sk-test-abcdefghijklmnop"}
    return h.run(
        "hello",
        Profile(harness="python", args=(f"agents.py:{target}",), env=("MY_API_KEY",), **profile),
        cwd=tmp_path,
        env=env,
    )


def reply(result: SpawnResult) -> Any:
    assert result.ok, result.error
    return json.loads(result.reply or "")


def test_a_dict_reply_is_json_and_secrets_are_redacted(tmp_path: Path) -> None:
    answered = reply(run(tmp_path, "answer", model="m1"))
    assert (answered["echo"], answered["model"], answered["key"]) == ("hello", "m1", "[REDACTED]")


def test_a_string_reply_passes_through(tmp_path: Path) -> None:
    assert (run(tmp_path, "prose").reply or "").endswith('{"status": "done"}')


def test_a_missing_callable_is_environment_with_positive_evidence(tmp_path: Path) -> None:
    result = run(tmp_path, "nope")
    assert result.failure_class == "environment"
    assert passes_gate(result.evidence)
    assert "has no attribute 'nope'" in (result.error or "")


def test_a_missing_module_is_environment(tmp_path: Path) -> None:
    result = PythonHarness(tmp_path).run(
        "x", Profile(harness="python", args=("no_such_module_xyz:f",)), cwd=tmp_path, env={}
    )
    assert result.failure_class == "environment"
    assert "cannot import no_such_module_xyz: not installed, nor found in" in (result.error or "")


def test_a_module_that_fails_to_import_is_environment_naming_the_error(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("def f(:\n")
    result = PythonHarness(tmp_path).run(
        "x", Profile(harness="python", args=("broken.py:f",)), cwd=tmp_path, env={}
    )
    assert result.failure_class == "environment"
    assert "SyntaxError" in (result.error or "")


def test_an_exception_naming_a_rate_limit_is_upstream_but_charged(tmp_path: Path) -> None:
    result = run(tmp_path, "rate_limited")
    assert result.failure_class == "upstream"
    assert not passes_gate(result.evidence)
    assert result.error == "RuntimeError: 429 Too Many Requests"


def test_an_overrunning_callable_times_out(tmp_path: Path) -> None:
    result = run(tmp_path, "slow", timeout_s=0.2)
    assert result.timed_out
    assert result.rule == "timeout"


def test_a_module_is_imported_once_per_process_and_keeps_its_state(tmp_path: Path) -> None:
    assert [reply(run(tmp_path, "counter"))["calls"] for _ in range(3)] == [1, 2, 3]


@pytest.fixture
def package(tmp_path: Path) -> Iterator[Path]:
    """``myagents/planner.py`` (a package with a relative import) in a working directory."""
    root = tmp_path / "work"
    (root / "myagents").mkdir(parents=True)
    (root / "myagents" / "__init__.py").write_text("")
    (root / "myagents" / "replies.py").write_text("DONE = {'status': 'done'}\n")
    (root / "myagents" / "planner.py").write_text(
        "from .replies import DONE\n\ndef plan(prompt, context):\n    return DONE\n"
    )
    yield root
    for name in [m for m in sys.modules if m == "myagents" or m.startswith("myagents.")]:
        del sys.modules[name]
    if str(root) in sys.path:
        sys.path.remove(str(root))


def test_module_colon_name_is_found_in_the_working_directory_without_pythonpath(
    package: Path,
) -> None:
    assert "PYTHONPATH" not in os.environ or str(package) not in os.environ["PYTHONPATH"]
    result = PythonHarness(package).run(
        "x", Profile(harness="python", args=("myagents.planner:plan",)), cwd=package, env={}
    )
    assert reply(result) == {"status": "done"}


def test_a_file_inside_a_package_imports_as_its_module(package: Path) -> None:
    target = f"{package / 'myagents' / 'planner.py'}:plan"
    result = PythonHarness(package).run(
        "x", Profile(harness="python", args=(target,)), cwd=package, env={}
    )
    assert reply(result) == {"status": "done"}
    assert sys.modules["myagents.planner"].__file__ == str(package / "myagents" / "planner.py")


def test_the_context_carries_the_calls_ids_objective_and_criteria(tmp_path: Path) -> None:
    info = CallInfo(
        goal_id="g",
        role="worker",
        plan_id="p1",
        work_id="p1-a",
        attempt=2,
        run_id="r-1",
        objective="do a",
        acceptance=("a works",),
    )
    token = current_call.set(info)
    try:
        context = reply(run(tmp_path, "ids"))
    finally:
        current_call.reset(token)
    assert {k: context[k] for k in ("goal_id", "role", "plan_id", "work_id", "attempt")} == {
        "goal_id": "g",
        "role": "worker",
        "plan_id": "p1",
        "work_id": "p1-a",
        "attempt": 2,
    }
    assert (context["objective"], context["acceptance"]) == ("do a", ["a works"])
    assert context["cwd"] == str(tmp_path)


def test_outside_a_goal_the_ids_are_none(tmp_path: Path) -> None:
    context = reply(run(tmp_path, "ids"))
    assert (context["goal_id"], context["work_id"], context["acceptance"]) == (None, None, [])


def test_an_async_agent_is_awaited(tmp_path: Path) -> None:
    token = current_call.set(CallInfo(goal_id="g", role="worker", work_id="p1-a"))
    try:
        assert reply(run(tmp_path, "async_answer")) == {"status": "done", "work_id": "p1-a"}
    finally:
        current_call.reset(token)


def test_an_async_agent_that_raises_is_an_ordinary_failure(tmp_path: Path) -> None:
    result = run(tmp_path, "async_raises")
    assert (result.ok, result.failure_class) == (False, None)
    assert result.error == "ValueError: the async agent broke"


def test_an_overrunning_async_agent_is_cancelled(tmp_path: Path) -> None:
    result = run(tmp_path, "async_slow", timeout_s=0.2)
    assert result.timed_out
    module = next(
        m
        for n, m in sys.modules.items()
        if n.startswith("governor_agent_agents_")
        and getattr(m, "__file__", "") == str(tmp_path / "agents.py")
    )
    # On a loaded machine the limit may pass before the coroutine starts: then it never
    # starts (see the next test). Whatever started is cancelled long before its 30 s sleep.
    deadline = time.monotonic() + 25
    while module.cancelled != module.started and time.monotonic() < deadline:
        time.sleep(0.01)
    assert module.cancelled == module.started


def test_a_coroutine_whose_limit_passed_before_it_was_scheduled_never_runs(
    tmp_path: Path,
) -> None:
    h = harness(tmp_path)
    profile = Profile(harness="python", args=("agents.py:async_slow",))
    agent = h.load(profile)
    outcome = _Outcome()
    outcome.cancel()  # the harness gave up on the call before its thread reached the loop
    context = agent_context(profile, tmp_path, {}, None)
    copy_context().run(outcome.call, agent, "hello", context)  # as in the harness's own thread
    assert isinstance(outcome.error, TimeoutError)
    assert sys.modules[agent.__module__].started == []


@pytest.mark.parametrize(
    ("target", "error"),
    [
        ("not_text", "the agent returned object; return text, a dict or a message"),
        ("exits", "SystemExit: 3"),
    ],
)
def test_whatever_an_agent_returns_or_raises_is_a_result_never_a_crash(
    tmp_path: Path, target: str, error: str
) -> None:
    result = run(tmp_path, target)
    assert (result.ok, result.error) == (False, error)
    assert not passes_gate(result.evidence)  # charged


def test_a_runnable_takes_the_prompt(tmp_path: Path) -> None:
    assert reply(run(tmp_path, "chain")) == {"status": "done", "summary": "hello"}


def test_a_fake_chat_model_replies_through_the_protocol(tmp_path: Path) -> None:
    assert reply(run(tmp_path, "chat")) == {"status": "done", "summary": "from a chat model"}


def test_the_callers_trace_reaches_the_agents_model_call_with_the_ids(tmp_path: Path) -> None:
    runs = Runs()
    h = harness(tmp_path)
    profile = Profile(harness="python", args=("agents.py:chat",))

    def parent(prompt: str, config: RunnableConfig) -> str:
        token = current_call.set(CallInfo(goal_id="g", role="planner", plan_id="p1"))
        try:
            return h.run(prompt, profile, cwd=tmp_path, env={}).reply or ""
        finally:
            current_call.reset(token)

    RunnableLambda(parent, name="caller").invoke("hi", {"callbacks": [runs]})
    [(model, metadata)] = runs.models().items()
    assert runs.ancestry(model)[-1] == "caller"
    assert {"goal_id": "g", "role": "planner", "plan_id": "p1"}.items() <= metadata.items()


@pytest.fixture
def vendor() -> Iterator[FakeVendor]:
    with FakeVendor() as fake:
        yield fake


CLAUDE = """
from langchain_anthropic import ChatAnthropic

def chat(base_url, streaming):
    return ChatAnthropic(
        model="fake-vendor-model", base_url=base_url, api_key="{key}",
        max_retries=0, streaming=streaming, max_tokens=512,
    )
"""


@pytest.mark.parametrize("streaming", [False, True], ids=["plain", "streaming"])
@pytest.mark.parametrize(
    ("scenario", "charged", "failure_class"),
    [
        (sc.status(503, retry_after=7), False, "upstream"),
        (sc.status(429), False, "upstream"),
        (sc.fail_after_text(500), True, None),
        (sc.reply('{"status": "done", "summary": "real"}'), None, None),
    ],
    ids=[
        "503 before any token is free",
        "429 is free",
        "an error after text is charged",
        "a reply",
    ],
)
def test_a_real_chat_model_against_the_fake_vendor(
    tmp_path: Path,
    vendor: FakeVendor,
    streaming: bool,
    scenario: sc.Scenario,
    charged: bool | None,
    failure_class: str | None,
) -> None:
    (tmp_path / "claude_agents.py").write_text(
        CLAUDE.format(key=FAKE_ANTHROPIC_KEY) + f"\nmodel = chat({vendor.url!r}, {streaming})\n"
    )
    vendor.play(scenario)
    result = PythonHarness(tmp_path).run(
        "hi", Profile(harness="python", args=("claude_agents.py:model",)), cwd=tmp_path, env={}
    )
    if charged is None:
        assert reply(result) == {"status": "done", "summary": "real"}
        return
    assert not result.ok
    assert passes_gate(result.evidence) is not charged
    if failure_class == "upstream":
        assert (result.failure_class, result.rule) == ("upstream", "vendor-status")
        assert result.evidence.ref == f"UpstreamUnavailable(status={result.vendor_status})"
    if scenario.steps[0].retry_after_s:
        assert result.retry_after_s == 7


def test_a_chat_model_that_streamed_before_the_outage_is_charged(tmp_path: Path) -> None:
    (tmp_path / "streamed.py").write_text(
        textwrap.dedent(
            """
            from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

            class VendorError(Exception):
                status_code = 503

            class Flaky(GenericFakeChatModel):
                def _generate(self, messages, stop=None, run_manager=None, **kwargs):
                    run_manager.on_llm_new_token("{")
                    raise VendorError("overloaded")

            model = Flaky(messages=iter([]))
            """
        )
    )
    result = PythonHarness(tmp_path).run(
        "x", Profile(harness="python", args=("streamed.py:model",)), cwd=tmp_path, env={}
    )
    assert (result.failure_class, result.evidence.output, result.evidence.effects) == (
        "upstream",
        "observed",
        "absent",
    )
    assert not passes_gate(result.evidence)


def test_a_fake_chat_model_message_list_reply(tmp_path: Path) -> None:
    model = GenericFakeChatModel(messages=iter([AIMessage(content="ok")]))
    assert model.invoke("x").content == "ok"  # the fake model the docs use, as LangChain runs it
