"""The live form of a replay: events fed one at a time give each shot's decision as soon as its
``at_rest`` arrives (not later), and an operator input's call with the input itself."""

from pathlib import Path

import pytest

from rules import get_engine
from rules.base import Referee
from tracking.events import AtRest, OperatorInput, read_events

ROOT = Path(__file__).resolve().parents[2]
LOGS = sorted((ROOT / "sample_videos").glob("*/*.events.jsonl"))


@pytest.mark.parametrize("path", LOGS, ids=[f"{p.parent.name}/{p.name.split('.')[0]}" for p in LOGS])
def test_each_decision_comes_with_the_event_that_completes_it(path):
    header, events = read_events(path)
    engine = get_engine(header.game, header.profile)
    referee = Referee(engine, header.players, header.options)
    streamed = []
    for e in events:
        steps = referee.feed(e)
        for step in steps:
            # a shot is judged on its at_rest; an operator input's call comes with the input itself
            assert isinstance(e, (AtRest, OperatorInput)), f"a decision came with a {e.kind} event"
        streamed += [s.decision for s in steps]
    streamed += [s.decision for s in referee.finish()]
    assert streamed, "the log produced no decision"
