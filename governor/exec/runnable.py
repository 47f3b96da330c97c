"""LangChain inside the python harness: Runnables and chat models as agents, the config that
ties their trace to the caller's, and what their callback events show (SPEC §11.9).

Rules:
    * A Runnable agent (anything with ``invoke`` and ``ainvoke``: a chain, a chat model, a
      compiled LangGraph agent) is called with ``ainvoke`` on the harness's event loop,
      so a timeout cancels it. Its input is the prompt; a chat model gets the profile's
      ``instructions`` as a system message first; an agent whose input has ``messages``
      gets ``{"messages": [the prompt]}``.
    * The reply is text: a string as is, a message's text, the last message of a
      ``{"messages": […]}`` result, any other dict or list as JSON.
    * Every agent, Runnable or not, runs under the caller's LangChain config (its
      callbacks: the LangGraph node's run, LangSmith's tracer) with the call's ids as
      metadata and a ``Watch`` added, so its runs nest under the caller's trace.
    * ``Watch`` sees the callback events: a tool start means effects observed, a token or
      a finished model call means output observed. A chat model runs no tool, so for a
      chat model that is the whole story: effects absent, output absent unless seen.
      For anything else the harness cannot see all that runs: what it did not see is
      unknown.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from typing import Any, Final

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import (
    ensure_config,
    merge_configs,
    var_child_runnable_config,
)

from governor.core.evidence import Observation
from governor.exec.call import AgentContext, CallInfo

RUN_NAME: Final = "governor agent"


class Watch(BaseCallbackHandler):
    """Records whether a tool started or the model produced anything during one call."""

    run_inline = True  # flags only: safe on whichever thread the callback arrives
    raise_error = False

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.tools = 0
        self.tokens = 0
        self.replies = 0

    def on_tool_start(self, serialized: Any, input_str: str, **kwargs: Any) -> None:
        with self._lock:
            self.tools += 1

    def on_llm_new_token(self, token: Any, **kwargs: Any) -> None:
        with self._lock:
            self.tokens += 1

    def on_llm_end(self, response: Any, **kwargs: Any) -> None:
        with self._lock:
            self.replies += 1

    def seen(self, *, chat_model: bool) -> tuple[Observation, Observation]:
        """(effects, output) as the callbacks show them."""
        with self._lock:
            effects: Observation = (
                "observed" if self.tools else ("absent" if chat_model else "unknown")
            )
            if self.tokens or self.replies:
                return effects, "observed"
            return effects, "absent" if chat_model else "unknown"

    def ref(self) -> str:
        with self._lock:
            return (
                f"callbacks: {self.tools} tool starts, {self.tokens} tokens, {self.replies} replies"
            )


def is_runnable(agent: object) -> bool:
    """Whether the agent is a LangChain Runnable (called with ``ainvoke``)."""
    return isinstance(agent, Runnable)


def is_chat_model(agent: object) -> bool:
    return isinstance(agent, BaseChatModel)


def agent_config(watch: Watch, call: CallInfo | None) -> RunnableConfig:
    """The caller's config (its callbacks, so the trace nests), the call's ids, the watch."""
    parent = ensure_config()
    own: RunnableConfig = {
        "callbacks": [watch],
        "metadata": call.metadata() if call else {},
        "run_name": f"{RUN_NAME}: {call.role}" if call else RUN_NAME,
        "tags": ["governor"],
    }
    inherited: RunnableConfig = {
        "callbacks": parent.get("callbacks"),
        "metadata": parent.get("metadata", {}),
        "tags": parent.get("tags", []),
    }
    return merge_configs(inherited, own)


def enter(config: RunnableConfig) -> None:
    """Make ``config`` the current context's LangChain config, so whatever the agent runs
    without a config of its own (a model, a chain) inherits its callbacks and metadata."""
    var_child_runnable_config.set(config)


async def invoke(
    agent: Runnable[Any, Any], prompt: str, context: AgentContext, config: RunnableConfig
) -> Any:
    """Call a Runnable agent with the prompt, in the shape it takes."""
    return await agent.ainvoke(_input(agent, prompt, context), config=config)


def _input(agent: Runnable[Any, Any], prompt: str, context: AgentContext) -> Any:
    if is_chat_model(agent):
        system = context["instructions"]
        return [("system", system), ("human", prompt)] if system else prompt
    try:
        schema = agent.get_input_jsonschema()
    except Exception:  # a Runnable that cannot describe its input takes the prompt
        return prompt
    if schema.get("type") == "object" and "messages" in schema.get("properties", {}):
        return {"messages": [("human", prompt)]}
    return prompt


def reply_text(reply: object) -> str | None:
    """An agent's reply as text, or None when it is nothing a reply can be."""
    if isinstance(reply, str):
        return reply
    if isinstance(reply, BaseMessage):
        return reply.text if isinstance(reply.text, str) else reply.text()
    if isinstance(reply, Mapping) and isinstance(reply.get("messages"), list) and reply["messages"]:
        return reply_text(reply["messages"][-1])
    if isinstance(reply, (Mapping, list)):
        try:
            return json.dumps(reply)
        except (TypeError, ValueError):
            return None
    return None
