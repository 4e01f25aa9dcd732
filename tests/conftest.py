"""Suite-wide fixtures."""

import pytest


@pytest.fixture(autouse=True)
def _private_match_store(tmp_path_factory, monkeypatch):
    """Commands that store matches (referee, report, review, stats) write to a store of the test's own,
    never to the user's default ``cueref-out/matches.sqlite`` in the working folder."""
    monkeypatch.setenv("CUEREF_STORE", str(tmp_path_factory.mktemp("store") / "matches.sqlite"))
