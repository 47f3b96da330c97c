"""A ``command`` agent that names its CLI's base-URL variable runs through the relay (SPEC §13.1).

The agent is a real script (a real subprocess) that calls the loopback fake vendor over
real HTTP at the URL its variable holds; the relay in between reads the vendor's answer.
"""

from __future__ import annotations

import sys
from pathlib import Path

from governor.core.event_fields import Profile
from governor.core.evidence import is_uncharged_failure
from governor.exec.command import CommandHarness
from tests.fakevendor import scenario as sc
from tests.fakevendor.server import FakeVendor

KEY = "sk-fake-command-0123456789abcdef"
AGENT = """\
import json, os, sys, urllib.error, urllib.request
request = urllib.request.Request(
    os.environ["OPENAI_BASE_URL"] + "/responses",
    data=json.dumps({"model": "m", "stream": True, "input": sys.stdin.read()}).encode(),
    headers={"Authorization": "Bearer " + os.environ["AGENT_KEY"], "Content-Type": "application/json"},
)
try:
    with urllib.request.urlopen(request, timeout=60) as response:
        response.read()
except urllib.error.HTTPError as error:
    print(f"the vendor answered {error.code}", file=sys.stderr)
    sys.exit(1)
print("done")
"""


def run(vendor: FakeVendor, tmp_path: Path, scenario: sc.Scenario, **update: object):
    vendor.play(scenario)
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    profile = Profile(
        harness="command",
        args=(sys.executable, str(script)),
        env=("OPENAI_BASE_URL", "AGENT_KEY"),
        base_url_env="OPENAI_BASE_URL",
    ).model_copy(update=update)
    env = {"PATH": "/usr/bin:/bin", "OPENAI_BASE_URL": f"{vendor.url}/v1", "AGENT_KEY": KEY}
    return CommandHarness(tmp_path).run("the task", profile, cwd=tmp_path, env=env)


def test_a_command_through_the_relay_is_classified_from_the_wire_but_never_proven_free(
    tmp_path: Path,
) -> None:
    with FakeVendor() as vendor:
        result = run(vendor, tmp_path, sc.status(503))
    assert (result.failure_class, result.rule, result.vendor_status) == (
        "upstream",
        "vendor-status",
        503,
    )
    assert result.wire is not None
    assert result.wire.own_effects
    assert result.wire.requests[-1].path == "/v1/responses"
    assert not is_uncharged_failure(result.failure_class, result.evidence)  # it may act alone
    assert result.account is not None
    assert KEY not in result.model_dump_json()


def test_a_command_that_succeeds_through_the_relay_has_its_usage_from_the_wire(
    tmp_path: Path,
) -> None:
    with FakeVendor() as vendor:
        result = run(vendor, tmp_path, sc.reply("hi"))
    assert result.ok, result.error
    assert result.usage is not None
    assert result.usage.input_tokens == 120


def test_a_base_url_variable_that_is_not_set_means_the_relay_cannot_start(
    tmp_path: Path,
) -> None:
    with FakeVendor() as vendor:
        result = run(vendor, tmp_path, sc.reply("hi"), base_url_env="NOT_SET_ANYWHERE")
    assert (result.failure_class, result.rule) == ("environment", "relay")
    assert "NOT_SET_ANYWHERE" in (result.error or "")


def test_relay_false_runs_the_command_without_it(tmp_path: Path) -> None:
    with FakeVendor() as vendor:
        result = run(vendor, tmp_path, sc.status(503), relay=False)
    assert result.wire is None
    assert result.failure_class is None  # a command's text alone says nothing structured
