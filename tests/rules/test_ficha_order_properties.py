"""Property tests for two classes of bug the outside audit of the Sinuca de Ficha referee found
(tests/rules/test_ficha_situations.py):

- the call on a shot depended on the order a log lists events that happened at the same moment (the
  cue ball touching y1 and r1 in one video frame was a foul or a legal shot by line order);
- a concession or a 5.8 warning said while a shot rolled changed who the shot was judged for.

Both are checked over random shots from random positions (a rack, or a frame joined mid-way with a
few balls left); the properties come from the rulebook ("the call is on what happened"), not from the
engine's own output.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rules import get_engine
from rules.base import Referee, RulesError
from tracking.events import AtRest, BallBall, BallCushion, Concession, Event, Jump, OffTable, Pot, ShotStart
from tracking.events import Warning as MisconductWarning

REDS, YELLOWS = ("r1", "r2", "r3", "r4"), ("y1", "y2", "y3", "y4")
POCKETS = ("TL", "TM", "TR", "BL", "BM", "BR")
CUSHIONS = ("L", "R", "T1", "T2", "B1", "B2")
CONTACT_T, DROP_T = (1.1, 1.2), (1.5, 1.6)  # a coarse grid: many events share a moment


@st.composite
def shots(draw: Any) -> tuple[dict[str, Any], list[Event]]:
    """Options (a rack, or a frame joined mid-way) and one shot's events on a coarse time grid. Every
    ball that drops or leaves does so after its last contact, so any order of same-time events is a
    possible log."""
    if draw(st.booleans()):
        balls = ["cue", *draw(st.lists(st.sampled_from(REDS), min_size=1, max_size=4, unique=True)),
                 *draw(st.lists(st.sampled_from(YELLOWS), min_size=1, max_size=4, unique=True))]
        options: dict[str, Any] = {"start": "mid_frame", "start_balls": ",".join(balls)}
    else:
        balls, options = ["cue", *REDS, *YELLOWS], {}
    events: list[Event] = [ShotStart(t_s=1.0, ball="cue")]
    for _ in range(draw(st.integers(0, 4))):
        t = draw(st.sampled_from(CONTACT_T))
        kind = draw(st.sampled_from(["cue_hit", "cue_hit", "hit", "cushion", "jump"]))
        if kind == "cue_hit":
            events.append(BallBall(t_s=t, a="cue", b=draw(st.sampled_from(balls[1:]))))
        elif kind == "hit":
            a, b = draw(st.lists(st.sampled_from(balls[1:]), min_size=2, max_size=2, unique=True))
            events.append(BallBall(t_s=t, a=a, b=b))
        elif kind == "cushion":
            events.append(BallCushion(t_s=t, ball=draw(st.sampled_from(balls)), cushion=draw(st.sampled_from(CUSHIONS))))
        else:
            events.append(Jump(t_s=t, ball="cue"))
    for ball in draw(st.lists(st.sampled_from(balls), max_size=3, unique=True)):
        t = draw(st.sampled_from(DROP_T))
        if draw(st.integers(0, 4)):
            events.append(Pot(t_s=t, ball=ball, pocket=draw(st.sampled_from(POCKETS))))
        else:
            events.append(OffTable(t_s=t, ball=ball))
    events.sort(key=lambda e: e.t_s)  # stable: same-time events keep the order drawn
    return options, [*events, AtRest(t_s=3.0)]


def call(options: dict[str, Any], events: list[Event]) -> tuple[Any, ...]:
    """The shot's call as a referee states it (or the refusal), after every step of the log."""
    referee = Referee(get_engine("ficha"), ("A", "B"), options)
    try:
        steps = [step for e in events for step in referee.feed(e)]
    except RulesError as e:
        return ("refused", str(e))
    d = next(s.decision for s in steps if s.decision.shot == 0)
    if d.pending is not None:
        return ("pending", d.pending.id, frozenset(d.pending.options))
    return (d.player, frozenset(d.fouls), frozenset(d.potted), d.next_player, d.frame_over, d.winner, d.removals_due)


def same_moment_reordered(events: list[Event], order: list[int]) -> list[Event]:
    """The log with every group of same-time events in another order (``order`` picks each group's
    rotation)."""
    groups: dict[float, list[Event]] = {}
    for e in events:
        groups.setdefault(e.t_s, []).append(e)
    out = []
    for n, t in enumerate(sorted(groups)):
        g = groups[t]
        k = order[n % len(order)] % len(g)
        out += list(reversed(g[k:] + g[:k]))
    return out


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shot=shots(), order=st.lists(st.integers(0, 5), min_size=1, max_size=4))
def test_the_call_does_not_depend_on_the_order_of_same_time_events(shot, order):
    """5.2, 4.2: the cue ball's first contact and the last ball to drop are facts of the table; two
    events of one moment listed either way give the same call (or the same question)."""
    options, events = shot
    assert call(options, same_moment_reordered(events, order)) == call(options, events)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shot=shots(), where=st.integers(1, 10), kind=st.sampled_from(["warning", "concession"]), who=st.sampled_from("AB"))
def test_an_input_said_while_the_balls_roll_does_not_change_the_shot_s_call(shot, where, kind, who):
    """6.3, 5.8: a concession or a warning said during a shot acts after it: the shot is still the
    striker's, in the frame it was played in."""
    options, events = shot
    options = {**options, "frames": 3}
    i = 1 + where % (len(events) - 1)  # after the strike, before the at_rest
    t = events[i - 1].t_s
    said = Concession(t_s=t, player=who) if kind == "concession" else MisconductWarning(t_s=t, player=who)
    assert call(options, [*events[:i], said, *events[i:]]) == call(options, events)
