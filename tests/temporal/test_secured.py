"""Secured clusters: a worker reaches Temporal through TLS with a client certificate, and
with an API key (issue 34, Build 3).

The dev server speaks neither, so the tests put a real guard in front of it
(``tests.temporal.guard``: a gRPC server that checks the TLS client certificate or the
``authorization`` header and forwards the calls). The project names the server only by
Temporal's own ``TEMPORAL_ADDRESS``/``TEMPORAL_NAMESPACE`` (and the key by
``TEMPORAL_API_KEY``); a client without the certificate or with a wrong key gets one line
and exit 9; one with them drives a goal to its end.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.cli import MILESTONE_COMPLETE, done, plan, planner_script, worker_script
from tests.temporal import guard
from tests.temporal.conftest import DevServer, Temporal, TemporalProject, workflow_of
from tests.temporal.test_cancel import temporal_cli
from tests.temporal.test_verbs import scripted

KEY = "tk-0123456789abcdef"


@pytest.fixture
def certs(tmp_path: Path) -> dict[str, guard.Pem]:
    folder = tmp_path / "certs"
    folder.mkdir()
    return guard.certificates(folder)


@pytest.fixture
def secured_project(tmp_path: Path, temporal: Temporal) -> Iterator[TemporalProject]:
    project = TemporalProject(tmp_path / "project", temporal)
    (tmp_path / "project").mkdir()
    for name in ("GOVERNOR_TEMPORAL", "GOVERNOR_TEMPORAL_NAMESPACE"):
        project.env.pop(name, None)
    project.env["TEMPORAL_NAMESPACE"] = temporal.namespace
    try:
        yield project
    finally:
        project.stop_workers()


def goal(project: TemporalProject) -> None:
    scripts = [
        MILESTONE_COMPLETE,
        planner_script([{"reply": plan("a")}]),
        worker_script("a", [{"reply": done("a")}]),
    ]
    agents = scripted(project, scripts)
    path = project.goal_file("s", agents, agents)
    assert project.gov("new", path.name).returncode == 0


def refused_in_one_line(project: TemporalProject, *args: str) -> str:
    result = project.gov("temporal", "start", "s", *args)
    assert result.returncode == 9, (result.stdout, result.stderr)
    line = result.stderr.strip()
    assert "\n" not in line
    assert "Traceback" not in line
    return line


def test_a_worker_reaches_temporal_with_a_client_certificate(
    secured_project: TemporalProject, certs: dict[str, guard.Pem], dev_server: DevServer
) -> None:
    project = secured_project
    tls = guard.start_guard(dev_server.address, tls=certs, mtls=True)
    try:
        project.env["TEMPORAL_ADDRESS"] = tls.address
        goal(project)
        ca = ["--tls-ca", str(certs["ca"].cert)]
        mine = [*ca, "--tls-cert", str(certs["client"].cert), "--tls-key", str(certs["client"].key)]
        line = refused_in_one_line(project, *ca)  # no client certificate: the handshake fails
        assert line.startswith(f"error: cannot reach the Temporal server at {tls.address}"), line
        assert project.status("s").get("lease") is None

        started = project.gov("temporal", "start", "s", *mine)
        assert started.returncode == 0, started.stderr
        project.worker(*mine, "--identity", "secured-worker-1")
        project.wait_status("s", {"succeeded"})
        assert project.status("s").get("lease") is None
        history = temporal_cli(
            project, "workflow", "show", "-w", workflow_of(project, "s"), "--output", "json"
        )
        assert history.returncode == 0, history.stderr
        assert '"secured-worker-1"' in history.stdout  # the worker's --identity
    finally:
        tls.stop()


def test_a_worker_reaches_temporal_with_an_api_key(
    secured_project: TemporalProject, certs: dict[str, guard.Pem], dev_server: DevServer
) -> None:
    project = secured_project
    keyed = guard.start_guard(dev_server.address, tls=certs, api_key=KEY)
    try:
        project.env["TEMPORAL_ADDRESS"] = keyed.address
        project.env["TEMPORAL_TLS_SERVER_CA_CERT_PATH"] = str(certs["ca"].cert)
        goal(project)
        line = refused_in_one_line(project, "--api-key", "tk-wrong-key-000")
        assert line.startswith(f"error: the Temporal server at {keyed.address} refused"), line
        assert "tk-wrong-key-000" not in line
        assert keyed.refused

        project.env["TEMPORAL_API_KEY"] = KEY
        started = project.gov("temporal", "start", "s")
        assert started.returncode == 0, started.stderr
        project.worker()
        project.wait_status("s", {"succeeded"})
        events = project.gov("events", "s", "--json").stdout
        assert KEY not in events
        logs = "".join(p.read_text() for p in project.root.glob("worker-*.log"))
        assert KEY not in logs
    finally:
        keyed.stop()


def test_a_temporal_profile_names_the_server_and_namespace(
    secured_project: TemporalProject, temporal: Temporal, tmp_path: Path
) -> None:
    """``--profile`` reads Temporal's own configuration file (``TEMPORAL_CONFIG_FILE``)."""
    project = secured_project
    project.env.pop("TEMPORAL_NAMESPACE")
    config = tmp_path / "temporal.toml"
    config.write_text(
        f'[profile.dev]\naddress = "{temporal.address}"\nnamespace = "{temporal.namespace}"\n'
    )
    project.env["TEMPORAL_CONFIG_FILE"] = str(config)
    goal(project)
    missing = project.gov("temporal", "start", "s", "--profile", "nope")
    assert missing.returncode == 3, missing.stderr
    assert missing.stderr.startswith("error: Temporal profile 'nope' cannot be read")
    started = project.gov("temporal", "start", "s", "--profile", "dev")
    assert started.returncode == 0, started.stderr
    assert f"namespace {temporal.namespace} at {temporal.address}" in started.stdout
    assert project.status("s")["lease"]["holder"] == (
        f"temporal:{temporal.namespace}@{temporal.address}"
    )
