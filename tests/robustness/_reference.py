"""What an uninterrupted run of a sample clip decides: its log (the camera's events and the operator's
calls, merged as the pipeline merges them) replayed through the rules engine, each call as the store
keeps it."""

from __future__ import annotations

from cueref.calls import merge_by_time
from cueref.store.store import plain_json
from rules import get_engine
from rules.base import replay
from tests.pipeline._standins import load_clip


def reference(name: str) -> tuple[list, list[dict]]:
    """The clip's event log and its calls (``Decision.to_dict()`` as JSON gives it back)."""
    clip = load_clip(name)
    log = merge_by_time(clip.camera_events, [clip.calls])
    calls = [plain_json(s.decision.to_dict()) for s in replay(get_engine(clip.game, clip.profile), log, clip.players, clip.options)]
    return log, calls
