#!/usr/bin/env python3
"""A `command` agent for governor that asks Claude through the Anthropic Python SDK.

The prompt arrives on stdin and the reply goes to stdout. When the vendor refuses the
call, the last stdout line is governor's failure envelope (docs/goals.md), so an outage
is not charged as if the agent had failed, and a refused key stops the goal at once.

    [profiles.worker]
    harness = "command"
    args = ["./agents/anthropic_agent.py"]
    env = ["ANTHROPIC_API_KEY"]        # and ANTHROPIC_BASE_URL for a gateway

Copy it and change the model or the call. Keep `effects` and `output` honest: this
script makes one non-streaming request and runs no tool, so a refused request did
nothing. If you stream, say "observed" once a token arrived; if you run tools, say
"observed" once one ran.
"""

from __future__ import annotations

import json
import os
import sys

import anthropic

MODEL = os.environ.get("AGENT_MODEL", "claude-sonnet-4-5")
KEY_REMEDY = "set ANTHROPIC_API_KEY to a valid key and list it in the profile's env"


def envelope(status: int | None, retry_after: str | None = None) -> str:
    """Governor's failure envelope for a refused call (status None: never sent)."""
    refused_key = status is None or status in (401, 403)
    fields: dict[str, object] = {
        "status": "failed",
        "class": "environment" if refused_key else "upstream",
        "vendor_status": status,
        "effects": "absent",  # one request, refused: no tool ran ...
        "output": "absent",  # ... and no token arrived
    }
    if refused_key:
        fields["remedy"] = KEY_REMEDY
    if retry_after is not None and retry_after.strip().isdigit():
        fields["retry_after_s"] = int(retry_after)
    return json.dumps(fields)


def main() -> int:
    prompt = sys.stdin.read()
    if not os.environ.get("ANTHROPIC_API_KEY"):
        print("no ANTHROPIC_API_KEY in the environment", file=sys.stderr)
        print(envelope(None))
        return 2
    client = anthropic.Anthropic(max_retries=0)  # governor retries, and records every try
    try:
        message = client.messages.create(
            model=MODEL, max_tokens=4096, messages=[{"role": "user", "content": prompt}]
        )
    except anthropic.APIStatusError as exc:
        print(f"{type(exc).__name__}: HTTP {exc.status_code}: {exc.message}", file=sys.stderr)
        if exc.status_code in (401, 403, 429) or exc.status_code >= 500:
            print(envelope(exc.status_code, exc.response.headers.get("retry-after")))
        return 1
    print("".join(block.text for block in message.content if block.type == "text"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
