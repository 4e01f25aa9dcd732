"""Where the real overhead clips are: ``$CUEREF_REALDATA``, else the ``shared/realdata`` folder beside
the repository. They are not part of the repository; the tests that read them skip, naming the source,
when they are absent."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REALDATA = Path(os.environ.get("CUEREF_REALDATA", ROOT.parent / "shared" / "realdata"))

# source folder -> the public repository its clips come from (named when they are absent)
REPOSITORY = {"billiard-ai-bfh": "LukasSeglias/billiard-ai", "james-ecd-pool": "james-ecd/pool-ball-tracker",
              "ipi-final-br": "frapsMatheus/IPI_FINAl"}


def need_source(source: str) -> None:
    """Skip the calling test, naming the source and where it was looked for, when its clips are absent."""
    import pytest

    if not (REALDATA / source).is_dir():
        pytest.skip(f"real clips from {REPOSITORY[source]} ({source}) not present in {REALDATA} "
                    "(set CUEREF_REALDATA to their folder)")
