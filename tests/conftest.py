"""Suite-wide fixtures and settings."""

import pytest
from hypothesis import settings

# no per-case deadline for property tests: a case's wall time depends on the machine's load, not on the
# code (a case that took 0.3 ms alone took 272 ms beside other work and failed a 200 ms deadline)
settings.register_profile("cueref", deadline=None)
settings.load_profile("cueref")


@pytest.fixture(autouse=True)
def _private_match_store(tmp_path_factory, monkeypatch):
    """Commands that store matches (referee, report, review, stats) write to a store of the test's own,
    never to the user's default ``cueref-out/matches.sqlite`` in the working folder."""
    monkeypatch.setenv("CUEREF_STORE", str(tmp_path_factory.mktemp("store") / "matches.sqlite"))
