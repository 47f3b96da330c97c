"""``open_store``: which backend a URL names, the default location, and the environment."""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path

import pytest

import governor.store
from governor.errors import NotFoundError, StoreError
from governor.store import open_store
from governor.store.memory import MemoryEventStore
from governor.store.sqlite import SqliteEventStore
from governor.store.url import sqlite_path
from tests.store.streams import FakeClock, story


def test_the_public_api_is_pinned():
    assert sorted(governor.store.__all__) == [
        "CorruptEventError",
        "EventStore",
        "GoalSummary",
        "ImportResult",
        "Lease",
        "export_history",
        "import_history",
        "open_store",
        "summarize",
    ]


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("sqlite:///abs/path.db", Path("/abs/path.db")),
        ("sqlite:relative.db", Path("relative.db")),
        ("sqlite:dir/relative.sqlite", Path("dir/relative.sqlite")),
        ("plain/path.db", Path("plain/path.db")),
        ("/abs/store.sqlite3", Path("/abs/store.sqlite3")),
        ("memory:", None),
        ("notes.txt", None),
        ("https://example.com/x.db", None),
    ],
    ids=str,
)
def test_sqlite_urls_name_their_file(url, path):
    assert sqlite_path(url) == path


@pytest.mark.parametrize("url", ["sqlite://host/x.db", "sqlite:", "sqlite:///"])
def test_a_sqlite_url_without_a_file_is_refused(url):
    with pytest.raises(StoreError, match=r"sqlite:///abs/path\.db"):
        sqlite_path(url)


def test_no_url_opens_the_default_sqlite_file_in_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GOVERNOR_STORE", raising=False)
    store = open_store()
    assert isinstance(store, SqliteEventStore)
    assert store.path == tmp_path / ".governor" / "governor.db"
    assert store.path.is_file()
    store.close()


def test_governor_store_in_the_environment_is_the_default(tmp_path, monkeypatch):
    monkeypatch.setenv("GOVERNOR_STORE", f"sqlite://{tmp_path}/env.db")
    store = open_store()
    assert isinstance(store, SqliteEventStore)
    assert store.path == tmp_path / "env.db"
    store.close()


def test_an_explicit_url_wins_over_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("GOVERNOR_STORE", f"sqlite://{tmp_path}/env.db")
    assert isinstance(open_store("memory:"), MemoryEventStore)
    assert not (tmp_path / "env.db").exists()


def test_a_relative_sqlite_url_is_relative_to_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    store = open_store("sqlite:here.db")
    store.append("g1", story().events, expected_seq=0)
    store.close()
    assert (tmp_path / "here.db").is_file()


def test_the_clock_is_injected_into_the_store(tmp_path):
    clock = FakeClock()
    for url in ("memory:", str(tmp_path / "c.db")):
        store = open_store(url, clock=clock)
        lease = store.acquire_lease("g1", "a", ttl_s=5)
        assert lease.expires_at == clock() + timedelta(seconds=5)
        store.close()


@pytest.mark.parametrize("url", ["postgresql://u@localhost/governor", "postgres://localhost/g"])
def test_postgresql_without_the_driver_says_which_extra_to_install(url, monkeypatch):
    monkeypatch.setitem(sys.modules, "psycopg", None)  # what an absent package looks like
    monkeypatch.delitem(sys.modules, "governor.store.postgres", raising=False)
    with pytest.raises(
        StoreError, match=r"needs the postgres extra: pip install 'governor\[postgres\]'"
    ):
        open_store(url)


@pytest.mark.parametrize("url", ["mysql://localhost/g", "notes.txt", "memory"])
def test_an_unknown_url_is_refused_with_the_forms_that_work(url):
    with pytest.raises(StoreError, match=r"unknown store URL .*memory:"):
        open_store(url)


# --- read-only opening: a read never creates, migrates or writes a store ----------------------


def test_a_read_only_open_of_a_missing_file_is_not_found_and_creates_nothing(tmp_path):
    missing = tmp_path / "sub" / "missing.db"
    for url in (str(missing), f"sqlite://{missing}", f"sqlite:{missing}"):
        with pytest.raises(NotFoundError, match=r"no store at .*missing\.db: a read never creates"):
            open_store(url, read_only=True)
    assert list(tmp_path.iterdir()) == []


def test_a_read_only_open_of_the_default_store_creates_no_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GOVERNOR_STORE", raising=False)
    with pytest.raises(NotFoundError, match=r"no store at \.governor/governor\.db"):
        open_store(read_only=True)
    assert list(tmp_path.iterdir()) == []


def test_a_memory_store_cannot_be_opened_for_reading():
    with pytest.raises(StoreError, match="memory: holds nothing"):
        open_store("memory:", read_only=True)
