"""How hard the fuzz tests push: the ``ci`` profile (CI sets ``CI=true``; or ``CUEREF_FUZZ_PROFILE=ci``)
runs thousands of cases and stays under ~90 s on a two-core machine; ``dev`` (the default elsewhere)
runs a tenth of it. Each profile is a hypothesis settings profile of that name (no deadline: a case's
time depends on the machine's load; no example database: each CI run starts fresh and prints the
seed of any failure)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

#: per profile: random matches per rules engine (each ~9 calls), random event logs for the parser, and
#: damaged ones (their JSON values cost more to draw)
CASES = {"ci": {"matches": 300, "logs": 1000, "damaged logs": 600}, "dev": {"matches": 30, "logs": 100, "damaged logs": 60}}

for _name in CASES:
    settings.register_profile(_name, deadline=None, database=None, print_blob=True,
                              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

PROFILE = os.environ.get("CUEREF_FUZZ_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
if PROFILE not in CASES:
    raise ValueError(f"CUEREF_FUZZ_PROFILE={PROFILE!r}: one of {', '.join(CASES)}")


def fuzz(kind: str) -> settings:
    """The settings of a fuzz test over ``kind`` (a key of :data:`CASES`) in the chosen profile."""
    return settings(settings.get_profile(PROFILE), max_examples=CASES[PROFILE][kind])
