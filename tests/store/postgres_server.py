"""A throw-away PostgreSQL server for the test session: found, initialised, started, stopped.

The ``postgres_server`` fixture finds ``initdb`` and ``pg_ctl`` (on ``PATH``, else in
Debian's ``/usr/lib/postgresql/<version>/bin``), initialises a cluster in a temporary
folder — in memory (``/dev/shm``) when it has room — with trust authentication,
superuser ``governor`` and locale C, starts it on a free port of 127.0.0.1 with its unix
socket in the same folder, and stops and deletes it at the end of the session. Under
pytest-xdist each worker process starts its own (about a second each).

PostgreSQL refuses to run as root. As root (CI, containers) the server runs as the
unprivileged ``nobody`` account: the commands are started with ``subprocess``'s
``user``/``group`` switch, so no ``su``, ``sudo`` or new account is needed. As any
other user it runs as that user.

``postgres_url`` creates a fresh database per call (about 15 ms in memory), so every
store a test opens is isolated; they are dropped after the test. Missing binaries skip the tests — which ``GOVERNOR_REQUIRE_ALL=1``
(``.ci/run``) turns into failures.
"""

from __future__ import annotations

import itertools
import os
import pwd
import shutil
import socket
import stat
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest

SUPERUSER = "governor"
UNPRIVILEGED = "nobody"
DEBIAN_BINARIES = Path("/usr/lib/postgresql")
SETTINGS = {
    "listen_addresses": "'127.0.0.1'",
    "max_connections": "200",
    "log_min_messages": "warning",
}
FAST = {
    # A throw-away server: durability is not what the tests are about, speed is.
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
}

SHM_ROOM_BYTES = 1 << 30
"""The free space ``/dev/shm`` needs to hold the server (Docker's default 64 MiB does not)."""

MakeUrl = Callable[[], str]


@dataclass(frozen=True)
class Account:
    """Who the server runs as: ourselves (None ids) or an unprivileged account (as root)."""

    name: str
    uid: int | None = None
    gid: int | None = None


@dataclass
class PostgresServer:
    """A running server, its folder, and an admin connection that creates databases."""

    bindir: Path
    folder: Path
    port: int
    account: Account
    admin: psycopg.Connection | None = None

    @property
    def data(self) -> Path:
        return self.folder / "data"

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{dbname}"

    def sql(self, statement: str) -> None:
        """Run a statement on the ``postgres`` database, outside any transaction."""
        if self.admin is None:
            self.admin = psycopg.connect(self.url(), autocommit=True)
        self.admin.execute(statement)  # type: ignore[arg-type]  # the tests' own SQL

    def create_database(self, name: str, options: str = "") -> str:
        """A new empty database (``options``: what follows ``CREATE DATABASE name``); its URL."""
        self.sql(f'CREATE DATABASE "{name}" {options}')
        return self.url(name)


def find_bindir() -> Path | None:
    """The folder holding ``initdb`` and ``pg_ctl``: from ``PATH``, else the newest Debian's."""
    candidates = []
    if found := shutil.which("pg_ctl"):
        candidates.append(Path(found).resolve().parent)
    versions = sorted(
        DEBIAN_BINARIES.glob("*/bin"),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
        reverse=True,
    )
    candidates.extend(versions)
    for folder in candidates:
        if all((folder / tool).is_file() for tool in ("initdb", "pg_ctl", "postgres")):
            return folder
    return None


def server_account() -> Account:
    """Ourselves, or ``nobody`` when we are root (PostgreSQL refuses to run as root)."""
    if os.geteuid() != 0:
        return Account(pwd.getpwuid(os.geteuid()).pw_name)
    entry = pwd.getpwnam(UNPRIVILEGED)
    return Account(UNPRIVILEGED, entry.pw_uid, entry.pw_gid)


def _open_to_others(path: Path) -> bool:
    """Whether every folder up to ``path`` lets other users through."""
    return all(p.stat().st_mode & stat.S_IXOTH for p in (path, *path.parents))


def make_folder(account: Account, *, in_memory: bool = True) -> Path:
    """A private temporary folder the server's account owns (short: it holds the socket).

    In memory (``/dev/shm``) when asked and it has room: creating a database per test
    costs about 15 ms there and ten times that on a busy disk.
    """
    candidates = [Path("/dev/shm")] if in_memory else []
    candidates += [Path(tempfile.gettempdir()), Path("/tmp")]
    parent = next(p for p in candidates if _suits(p, account))
    folder = Path(tempfile.mkdtemp(prefix="governor-pg-", dir=parent))
    if account.uid is not None and account.gid is not None:
        os.chown(folder, account.uid, account.gid)
    return folder


def _suits(parent: Path, account: Account) -> bool:
    """Writable, short (a socket path is limited to ~100 bytes), reachable by the account."""
    if parent == Path("/tmp"):
        return True
    if not (parent.is_dir() and os.access(parent, os.W_OK) and len(str(parent)) <= 60):
        return False
    if account.uid is not None and not _open_to_others(parent):
        return False
    if parent == Path("/dev/shm"):
        room = os.statvfs(parent)
        return room.f_bavail * room.f_frsize >= SHM_ROOM_BYTES
    return True


def run_as(account: Account, argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run a PostgreSQL tool as the server's account, in a clean environment.

    Raises:
        RuntimeError: with the tool's output, when it fails.
    """
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C", "TZ": "UTC"}
    done = subprocess.run(
        argv,
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        user=account.uid,
        group=account.gid,
        extra_groups=None if account.uid is None else [],  # drop root's groups too
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"{' '.join(argv)} failed as {account.name} (exit {done.returncode}):\n"
            f"{done.stdout}{done.stderr}"
        )
    return done


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def initdb(bindir: Path, folder: Path, account: Account, *, durable: bool = False) -> None:
    run_as(
        account,
        [
            str(bindir / "initdb"),
            *("-D", str(folder / "data"), "-U", SUPERUSER, "--auth=trust"),
            *("--locale=C", "--encoding=UTF8", "--no-sync"),
        ],
        cwd=folder,
    )
    settings = SETTINGS if durable else {**SETTINGS, **FAST}
    lines = [f"{name} = {value}" for name, value in settings.items()]
    lines.append(f"unix_socket_directories = '{folder}'")
    with (folder / "data" / "postgresql.conf").open("a") as conf:
        conf.write("\n# governor tests\n" + "\n".join(lines) + "\n")


def start(bindir: Path, folder: Path, account: Account, *, attempts: int = 5) -> int:
    """Start the server on a free port (another one if it was taken meanwhile); the port."""
    pg_ctl, log = str(bindir / "pg_ctl"), folder / "server.log"
    for attempt in range(attempts):
        port = free_port()
        try:
            run_as(
                account,
                [
                    *(pg_ctl, "start", "-w", "-t", "60", "-D", str(folder / "data")),
                    *("-l", str(log), "-o", f"-p {port}"),
                ],
                cwd=folder,
            )
            return port
        except RuntimeError as exc:
            logged = log.read_text(errors="replace") if log.exists() else ""
            if attempt + 1 == attempts or "could not bind" not in logged:
                raise RuntimeError(f"{exc}\nserver log:\n{logged[-3000:]}") from exc
    raise AssertionError("unreachable")


def stop(server: PostgresServer) -> None:
    if server.admin is not None:
        server.admin.close()
    try:
        run_as(
            server.account,
            [str(server.bindir / "pg_ctl"), "stop", "-m", "fast", "-w", "-D", str(server.data)],
            cwd=server.folder,
        )
    finally:
        shutil.rmtree(server.folder, ignore_errors=True)


@contextmanager
def throwaway_server(bindir: Path, *, durable: bool = False) -> Iterator[PostgresServer]:
    """A server of our own, stopped and deleted on exit.

    Args:
        bindir: where ``initdb`` and ``pg_ctl`` are (``find_bindir()``).
        durable: PostgreSQL's default durability (fsync on, on disk), for benchmarks;
            else in memory when possible, with fsync off.
    """
    account = server_account()
    folder = make_folder(account, in_memory=not durable)
    try:
        initdb(bindir, folder, account, durable=durable)
        port = start(bindir, folder, account)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    server = PostgresServer(bindir, folder, port, account)
    try:
        yield server
    finally:
        stop(server)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A PostgreSQL server of our own for the whole session (skips when not installed)."""
    bindir = find_bindir()
    if bindir is None:
        pytest.skip(
            "PostgreSQL is not installed: no initdb/pg_ctl on PATH or in "
            f"{DEBIAN_BINARIES}/*/bin (Debian: apt-get install postgresql)"
        )
    with throwaway_server(bindir) as server:
        yield server


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> Iterator[MakeUrl]:
    """A factory of URLs, each of a new empty database, dropped after the test."""
    names = itertools.count()
    test = f"t{next(_TESTS)}"
    created: list[str] = []

    def make() -> str:
        created.append(f"{test}_{next(names)}")
        return postgres_server.create_database(created[-1])

    yield make
    for name in created:  # FORCE: a store a failed test left open must not keep it
        postgres_server.sql(f'DROP DATABASE "{name}" WITH (FORCE)')


_TESTS = itertools.count()
