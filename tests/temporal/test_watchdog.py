"""A worker cut off from the Temporal server kills its agent before the run goes on elsewhere.

Worker A reaches the server through a TCP proxy the test controls. While A's agent works,
the test cuts the proxy: A is alive but can no longer heartbeat. Its watchdog must kill
the agent (after half the call's heartbeat timeout); the server, after the full timeout,
lets the workflow continue the run on worker B (connected directly). The agents lock
their item with ``flock`` for their whole process group (``tests/e2e/workers.py``): no
``overlap`` line means the two never worked the item at once.
"""

from __future__ import annotations

import asyncio
import threading
from contextlib import suppress

from governor.temporal.wire import DriveSettings
from tests.e2e.cli import MILESTONE_COMPLETE, plan, planner_script
from tests.e2e.test_fleet_outage import wait_for
from tests.e2e.workers import all_dead, entries, install, kill_all, overlaps, processes
from tests.temporal.conftest import TemporalProject, start_all


class Proxy:
    """A TCP proxy on 127.0.0.1 to ``target`` that can be cut (every connection closed,
    no new one accepted), run on its own event loop thread."""

    def __init__(self, target: str) -> None:
        host, port = target.rsplit(":", 1)
        self.target = (host, int(port))
        self.loop = asyncio.new_event_loop()
        self.writers: list[asyncio.StreamWriter] = []
        self.server: asyncio.Server | None = None
        threading.Thread(target=self.loop.run_forever, daemon=True).start()
        self.port = asyncio.run_coroutine_threadsafe(self._start(), self.loop).result(30)

    async def _start(self) -> int:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return int(self.server.sockets[0].getsockname()[1])

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection(*self.target)
        self.writers += [writer, up_writer]
        await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with suppress(OSError, ConnectionError):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        writer.close()

    def cut(self) -> None:
        async def cut() -> None:
            assert self.server is not None
            self.server.close()
            for writer in self.writers:
                writer.transport.abort()

        asyncio.run_coroutine_threadsafe(cut(), self.loop).result(30)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)


def agent_starts(project: TemporalProject) -> list[tuple[int, int]]:
    return [(e.pids[0], e.pids[1]) for e in entries(project) if e.kind == "start" and e.key == "a"]


def test_a_worker_cut_off_from_the_server_kills_its_agent(project: TemporalProject) -> None:
    agents = install(project, ticks=4000, tick_s=0.05)  # a run would take 200 s
    planner = {
        "harness": "scripted",
        "args": [
            project.scenario("p.json", [MILESTONE_COMPLETE, planner_script([{"reply": plan("a")}])])
        ],
    }
    project.goal("w", planner, agents, max_continuations=5)
    start_all(project, ["w"], DriveSettings(call_heartbeat_s=4, kill_grace_s=1))
    proxy = Proxy(project.temporal.address)
    try:
        project.worker("--address", f"127.0.0.1:{proxy.port}")
        wait_for("worker A's agent to start", lambda: len(agent_starts(project)) == 1)
        first = processes(project, "a")
        proxy.cut()
        assert all_dead(first, within_s=120) == [], "the cut-off worker's agent lives on"
        project.worker()  # worker B, connected directly, continues the run
        wait_for("the run to be continued on worker B", lambda: len(agent_starts(project)) >= 2)
        assert overlaps(project) == [], "two agents worked the item at once"
        types = project.types("w")
        assert "attempt.continued" in types
        assert project.gov("cancel", "w", "--reason", "done").returncode == 0
        project.wait_status("w", {"cancelled"})
        assert all_dead(processes(project), within_s=120) == []
    finally:
        proxy.close()
        kill_all(processes(project))
