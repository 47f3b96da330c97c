"""A LangChain callback handler for tests: every run it sees, and each run's ancestry."""

from __future__ import annotations

import threading
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler


class Runs(BaseCallbackHandler):
    """Every chain and chat-model run the callbacks see: name, parent and metadata by id."""

    def __init__(self) -> None:
        self.runs: dict[Any, tuple[str, Any, dict[str, Any]]] = {}
        self.lock = threading.Lock()

    def on_chain_start(self, serialized: Any, inputs: Any, **kw: Any) -> None:
        self._add(kw.get("name") or "chain", kw)

    def on_chat_model_start(self, serialized: Any, messages: Any, **kw: Any) -> None:
        self._add("chat_model", kw)

    def _add(self, name: str, kw: dict[str, Any]) -> None:
        with self.lock:
            self.runs[kw["run_id"]] = (name, kw.get("parent_run_id"), kw.get("metadata") or {})

    def models(self) -> dict[Any, dict[str, Any]]:
        """The chat-model runs: their metadata by run id."""
        return {rid: meta for rid, (name, _, meta) in self.runs.items() if name == "chat_model"}

    def ancestry(self, run_id: Any) -> list[str]:
        """The names from a run up to its root."""
        names = []
        while run_id is not None:
            name, run_id, _ = self.runs[run_id]
            names.append(name)
        return names
