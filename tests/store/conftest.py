"""Fixtures of the store tests: every store test runs on SQLite and on a real PostgreSQL server
started for the session (skipped, with the reason, where none can be started)."""

from __future__ import annotations

import itertools

import pytest

from tests.store import _pg

_names = itertools.count()


@pytest.fixture(scope="session")
def pg_server():
    server = _pg.start()
    if isinstance(server, str):
        pytest.skip(f"PostgreSQL store tests skipped: {server}")
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_location(request, tmp_path):
    """Where a fresh, empty store lives: a SQLite file, or a new database on the test server."""
    if request.param == "sqlite":
        return str(tmp_path / "matches.sqlite")
    server = request.getfixturevalue("pg_server")
    return server.create_database(f"cueref_test_{next(_names)}")
