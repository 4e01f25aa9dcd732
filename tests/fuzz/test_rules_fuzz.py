"""The three referees under random physically possible play, thousands of calls per engine per CI run.

This drives the property test of ``tests/rules/test_protocol.py`` (random shots among the balls on
the table, random operator inputs and answers; no shot that happened refused, only an operator's input
with a RulesError naming the game; no ball created or lost; every frame end counted once) with the
fuzz profile's number of matches, and adds what only a log can show: the events the referee took,
written as an event log and read back, are the same log (the parser keeps every event exactly once
it is in the log's own precision), and replaying the log judges them exactly as the live referee did.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tests.rules.test_protocol as protocol
from rules import get_engine
from rules.base import Referee, RulesError, replay
from tests.fuzz._profile import fuzz
from tracking.events import LogHeader, dumps_events, parse_events

random_match = protocol.test_random_physically_possible_play_always_gets_a_call.hypothesis.inner_test


@pytest.mark.parametrize("game", protocol.IDS)
@fuzz("matches")
@given(data=st.data())
def test_random_play_is_judged_the_same_live_and_from_its_log(game, data):
    taken: list = []  # what the referee took: (event, the calls it made, whether a shot is open after it)
    feed = Referee.feed

    def recording_feed(self, event):
        steps = feed(self, event)  # a refusal (RulesError) is raised on, and the event is no part of the log
        taken.append((event, [s.decision.to_dict() for s in steps], self.in_shot))
        return steps

    with pytest.MonkeyPatch.context() as m:
        m.setattr(Referee, "feed", recording_feed)
        random_match(game, data)

    # the log up to the last shot that ended (the test tries a shot after the end of the match, which the
    # referee takes up to its at_rest, then refuses)
    while taken and taken[-1][2]:
        taken.pop()
    log = [e for e, _, _ in taken]
    live = [d for _, made, _ in taken for d in made]
    options = protocol.OPTIONS[game]
    assert [s.decision.to_dict() for s in replay(get_engine(game), log, ("A", "B"), options)] == live

    header = LogHeader(game=game, profile=game, players=("A", "B"), options=options)
    text = dumps_events(log, header)
    back_header, back = parse_events(text.splitlines(), "fuzz.jsonl")
    assert back_header == header and len(back) == len(log)
    assert dumps_events(back, back_header) == text  # the written log is read back as written
    try:
        list(replay(get_engine(game), back, ("A", "B"), options))
    except RulesError:  # positions rounded to the log's micrometre may tip a refusal; never another error
        pass
