"""The referee protocol every engine shares (rules.base.Referee): questions and their answers,
overrides, undo and frames joined mid-way work the same in Sinuca de Ficha, Sinuca Brasileira and
bar billiards; and a property test per engine drives it with random physically possible play.

The calls checked here are what the rulebooks say (an override replaces the call with the given
fouls, an undone call leaves the match as it was); none is a golden the engine wrote itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rules import get_engine
from rules.bar_billiards import BREAK_OFF, FROM_D, FROM_TABLE
from rules.base import Question, Referee, RulesError, Undo
from tests.rules import _bar_billiards_helpers as bb
from tests.rules import _brasileira_helpers as br
from tests.rules import _ficha_helpers as fi
from tracking.events import (
    Answer,
    AtRest,
    BallBall,
    BallCushion,
    BallTouched,
    BarDropped,
    Concession,
    CueContact,
    Event,
    Interference,
    Jump,
    Nomination,
    OffTable,
    OperatorFoul,
    OperatorInput,
    Override,
    PlayAgain,
    Pot,
    RemovalChoice,
    ShotStart,
)
from tracking.events import Warning as MisconductWarning

# ---- each game's first shot, a foul to override with, and a frame joined mid-way ------------------------


def _ficha_first(t0: float, confidence: float) -> list[Event]:
    return [ShotStart(t_s=t0, ball="cue", positions=fi.rack_positions()), BallBall(t_s=t0 + 0.2, a="cue", b="r1", confidence=confidence),
            AtRest(t_s=t0 + 1.0, positions=fi.rack_positions())]


def _brasileira_first(t0: float, confidence: float) -> list[Event]:
    every = br.OBJECT_BALLS
    return [ShotStart(t_s=t0, ball="cue", positions=br.layout(every, br.CUE_IN_D)),
            BallBall(t_s=t0 + 0.2, a="cue", b="red", confidence=confidence), AtRest(t_s=t0 + 1.0, positions=br.layout(every))]


def _bar_first(t0: float, confidence: float) -> list[Event]:
    return [ShotStart(t_s=t0, ball="w1", xy_mm=bb.D_CENTRE, positions={"w1": bb.D_CENTRE, "red": bb.SPOT}),
            BallBall(t_s=t0 + 0.2, a="w1", b="red", confidence=confidence),
            AtRest(t_s=t0 + 1.0, positions={"w1": (700.0, 200.0), "red": (900.0, 300.0)})]


@dataclass(frozen=True)
class Game:
    name: str
    first_shot: Callable[[float, float], list[Event]]  # (t0, confidence of the first contact) -> events
    foul: str  # a foul value an override may give
    mid_options: dict[str, Any]
    mid_shot: list[Event]
    mid_check: Callable[[Any], bool]  # the state after the joined frame's first shot


GAMES = [
    Game("ficha", _ficha_first, "miss", {"start": "mid_frame", "start_shooter": "B"},
         fi.shot_events(1.0, ("hit", "cue", "y1"), positions=fi.rack_positions(r2=None, r3=None, y4=None)),
         lambda s: s.balls.potted == {"r2", "r3", "y4"} and s.shots_in_frame == 1),
    Game("brasileira", _brasileira_first, "no_ball_hit", {"start": "mid_frame", "start_player": "B", "start_scores": "A=9,B=2"},
         [Nomination(t_s=0.5, ball="blue", pocket="TM"), *br.shot_events(1.0, first="blue", start=br.layout(("blue", "pink", "black")))],
         lambda s: s.on_table == {"blue", "pink", "black"} and dict(s.scores) == {"A": 9, "B": 2} and s.to_play == "A"),
    Game("bar-billiards", _bar_first, "miss", {"start": "mid_frame", "start_player": "B", "start_banked": "A=300"},
         [ShotStart(t_s=1.0, ball="red", xy_mm=bb.IN_D, positions={"red": bb.IN_D, "w1": (900.0, 300.0)}),
          BallBall(t_s=1.2, a="red", b="w1"), Pot(t_s=1.5, ball="w1", pocket="h200"),
          AtRest(t_s=2.0, positions={"red": (1200.0, 700.0)})],
         lambda s: s.player == "B" and s.break_score == 200 and dict(s.banked) == {"A": 300, "B": 0} and "w1" in s.trough),
]
IDS = [g.name for g in GAMES]


def fed(referee: Referee, events: Sequence[Event]):
    steps = [step for e in events for step in referee.feed(e)]
    return steps[-1].decision if steps else None


# ---- questions ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("game", GAMES, ids=IDS)
def test_a_doubtful_event_is_asked_and_the_answer_judges_the_shot_again(game):
    referee = Referee(get_engine(game.name), ("A", "B"))
    before = referee.state
    d = fed(referee, game.first_shot(1.0, 0.3))
    q = d.pending
    assert q is not None and referee.pending == q and referee.state == before  # nothing changes while pending
    assert q.id == Question.key(0, q.topic) and q.topic and q.text and q.options  # one id scheme: s<shot>:<topic>
    with pytest.raises(RulesError, match="pending question is"):
        referee.feed(Answer(t_s=3.0, question="s9:other", answer=q.options[0]))
    with pytest.raises(RulesError, match="answer one of"):
        referee.feed(Answer(t_s=3.0, question=q.id, answer="maybe"))
    with pytest.raises(RulesError, match="unanswered"):
        fed(referee, game.first_shot(5.0, 1.0))
    d = fed(referee, [Answer(t_s=3.0, question=q.id, answer=q.options[0])])
    assert d.pending is None and referee.pending is None and d.shot == 0 and not d.amends
    assert referee.state != before and len(referee.history) == 1
    with pytest.raises(RulesError, match="no question is pending"):
        referee.feed(Answer(t_s=4.0, question=q.id, answer=q.options[0]))


# ---- overrides --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("game", GAMES, ids=IDS)
def test_an_override_judges_the_last_shot_again_with_the_correction(game):
    referee = Referee(get_engine(game.name), ("A", "B"))
    first = fed(referee, game.first_shot(1.0, 1.0))
    assert first.fouls == () and not first.amends
    d = fed(referee, [Override(t_s=3.0, field="fouls", value=game.foul, note="the camera missed it")])
    assert d.amends and d.shot == 0 and [f.value for f in d.fouls] == [game.foul] and d.next_player != first.player
    assert d.explanation.startswith(f"override fouls={game.foul} (the camera missed it): ")
    d = fed(referee, [Override(t_s=4.0, field="fouls", value="none")])  # corrections add up, the last word wins
    assert d.fouls == () and d.next_player == first.next_player and len(referee.history) == 1
    with pytest.raises(RulesError, match=game.name):
        referee.feed(Override(t_s=5.0, field="colour", value="blue"))


@pytest.mark.parametrize("game", GAMES, ids=IDS)
def test_an_override_needs_a_shot_call_to_change(game):
    referee = Referee(get_engine(game.name), ("A", "B"))
    with pytest.raises(RulesError, match="no shot call to change"):
        referee.feed(Override(t_s=1.0, field="fouls", value="none"))
    fed(referee, game.first_shot(1.0, 1.0))
    fed(referee, [Concession(t_s=3.0, player="A")])
    with pytest.raises(RulesError, match="no shot call to change"):
        referee.feed(Override(t_s=4.0, field="fouls", value="none"))


# ---- undo -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("game", GAMES, ids=IDS)
def test_undo_takes_the_last_call_back_and_keeps_it(game):
    referee = Referee(get_engine(game.name), ("A", "B"))
    start = referee.state
    shot = fed(referee, game.first_shot(1.0, 1.0))
    step = referee.undo("a practice stroke, not a shot")
    assert isinstance(step.decision, Undo) and step.decision.withdrawn == shot and referee.state == start == step.state
    assert "a practice stroke" in step.decision.explanation and referee.undone[-1][1] == "a practice stroke, not a shot"
    assert step.decision.to_dict()["withdrawn"]["shot"] == 0
    again = fed(referee, game.first_shot(3.0, 1.0))  # judged from the state before the undone shot
    assert (again.fouls, again.next_player, again.player) == (shot.fouls, shot.next_player, shot.player)
    conceded = fed(referee, [Concession(t_s=5.0, player="B")])
    assert conceded.frame_over
    referee.undo("the concession was entered for the wrong player")
    assert not referee.state == start and referee.engine.over(referee.state) is None
    with pytest.raises(RulesError, match="reason"):
        referee.undo("  ")


@pytest.mark.parametrize("game", GAMES, ids=IDS)
def test_undo_of_a_pending_question_withdraws_the_shot(game):
    referee = Referee(get_engine(game.name), ("A", "B"))
    start = referee.state
    assert fed(referee, game.first_shot(1.0, 0.3)).pending is not None
    referee.undo("the camera saw a shot that was not one")
    assert referee.pending is None and referee.state == start and not referee.history
    assert fed(referee, game.first_shot(3.0, 1.0)).pending is None
    with pytest.raises(RulesError, match="no call to undo"):
        Referee(get_engine(game.name), ("A", "B")).undo("nothing yet")


# ---- a frame joined mid-way -----------------------------------------------------------------------------------


@pytest.mark.parametrize("game", GAMES, ids=IDS)
def test_every_engine_can_join_a_frame_mid_way(game):
    """The camera switched on during a frame: the player to shoot and the scores come from options,
    the balls on the table from the first strike's positions."""
    referee = Referee(get_engine(game.name), ("A", "B"), game.mid_options)
    d = fed(referee, game.mid_shot)
    assert d.pending is None and d.player == "B" and game.mid_check(referee.state), d.explanation
    assert not any(r.split()[-1] in ("2.4", "2b", "12") for r in d.rules)  # no break, no opening shot


# ---- properties: random physically possible play --------------------------------------------------------------

POCKETS = {"ficha": tuple(p.id for p in fi.PROFILE.pockets), "brasileira": tuple(p.id for p in br.PROFILE.pockets),
           "bar-billiards": tuple(h.id for h in bb.PROFILE.holes)}
CUSHIONS = {"ficha": tuple(c.id for c in fi.PROFILE.cushions), "brasileira": tuple(c.id for c in br.PROFILE.cushions),
            "bar-billiards": tuple(c.id for c in bb.PROFILE.cushions)}


def _on_table(game: str, state: Any) -> tuple[list[str], str, dict[str, tuple[float, float]]]:
    """The balls on the table at the strike, the ball to strike, and extra start positions."""
    if game == "ficha":
        return sorted(state.balls.on_table | state.balls.lifted), "cue", {}
    if game == "brasileira":
        return ["cue", *sorted(state.on_table)], "cue", {}
    kind = state.next_kind
    if kind == BREAK_OFF:
        white = next(b for b in state.trough if b != "red")
        red = "red" if "red" in state.trough else next(b for b in state.trough if b != white)
        return [white, red], white, {red: bb.SPOT, white: bb.D_CENTRE}
    if kind == FROM_D:
        ball = "red" if "red" in state.trough else state.trough[0]
        return [*state.table, ball], ball, {ball: bb.IN_D}
    if kind == FROM_TABLE:
        ball = bb.ENGINE.nearest_to_baulk(state.table, state.options.tie_mm)[0]
        return list(state.table), ball, {ball: bb.IN_D}
    return list(state.in_play), state.in_play[0], {state.in_play[0]: bb.D_CENTRE}


def _random_shot(data, game: str, state: Any, t0: float, taken: set[str] = frozenset()) -> list[Event]:
    """A shot any player could play: contacts, cushions, pots, balls off the table and jumps among the
    balls actually on the table (not those ``taken`` off it by hand since the last shot), some seen with
    low confidence."""
    balls, struck, placed = _on_table(game, state)
    balls = [b for b in balls if b not in taken]
    if data.draw(st.integers(0, 9)) == 0:
        struck = data.draw(st.sampled_from(balls))  # the cue strikes another ball
    positions = dict(placed)
    for b in balls:
        if b not in positions:
            positions[b] = (data.draw(st.floats(300.0, 1300.0)), data.draw(st.floats(100.0, 700.0)))
    events: list[Event] = [ShotStart(t_s=t0, ball=struck, xy_mm=positions[struck], positions=positions)]
    t = t0
    gone: set[str] = set()
    conf = st.sampled_from([1.0] * 8 + [0.3])
    for _ in range(data.draw(st.integers(0, 6))):
        t = round(t + 0.1, 3)
        alive = [b for b in balls if b not in gone]
        what = data.draw(st.sampled_from(["hit", "hit", "cushion", "pot", "off", "jump", "cue", "touch", "called"]))
        if what == "hit" and len(alive) > 1:
            a = struck if struck in alive and data.draw(st.booleans()) else data.draw(st.sampled_from(alive))
            b = data.draw(st.sampled_from([x for x in alive if x != a]))
            events.append(BallBall(t_s=t, a=a, b=b, confidence=data.draw(conf)))
        elif what == "cushion" and alive:
            events.append(BallCushion(t_s=t, ball=data.draw(st.sampled_from(alive)), cushion=data.draw(st.sampled_from(CUSHIONS[game]))))
        elif what in ("pot", "off") and alive:
            ball = data.draw(st.sampled_from(alive))
            gone.add(ball)
            if what == "pot":
                holes = sorted(bb.ENGINE.endgame_holes) if game == "bar-billiards" and state.endgame else POCKETS[game]
                events.append(Pot(t_s=t, ball=ball, pocket=data.draw(st.sampled_from(holes)), confidence=data.draw(conf)))
            else:
                events.append(OffTable(t_s=t, ball=ball, confidence=data.draw(conf)))
        elif what == "jump" and struck in alive:
            events.append(Jump(t_s=t, ball=struck, confidence=data.draw(conf)))
        elif what == "cue" and struck in alive:
            events.append(CueContact(t_s=t, ball=struck))
        elif what == "touch" and alive:
            events.append(BallTouched(t_s=t, ball=data.draw(st.sampled_from(alive))))
        elif what == "called" and game == "ficha":  # a foul only the operator sees, called during the shot
            events.append(OperatorFoul(t_s=t, player=state.shooter, rule=data.draw(st.sampled_from(["2.4", "5.5", "5.6", "5.7"]))))
    rest = {b: (data.draw(st.floats(300.0, 1300.0)), data.draw(st.floats(100.0, 700.0))) for b in balls if b not in gone}
    events.append(AtRest(t_s=round(t + 0.5, 3), positions=rest))
    return events


def _random_input(data, game: str, state: Any, players: Sequence[str], t: float) -> OperatorInput | None:
    player = data.draw(st.sampled_from(players))
    kind = data.draw(st.sampled_from(["concession", "foul", "override", "game", "game", "game"]))
    if kind == "concession":
        return Concession(t_s=t, player=player)
    if kind == "override":
        return Override(t_s=t, field="fouls", value=data.draw(st.sampled_from(["none", GAMES[IDS.index(game)].foul])))
    if game == "ficha":  # (its operator fouls come during a shot: one called between shots is judged at the next strike)
        if state.removals_due:
            return RemovalChoice(t_s=t, ball=data.draw(st.sampled_from(state.left(state.removals_due[0]))))
        return MisconductWarning(t_s=t, player=player)
    if game == "brasileira":
        if kind == "foul":
            return OperatorFoul(t_s=t, player=player, rule="1")
        if data.draw(st.booleans()):
            return PlayAgain(t_s=t)
        return Nomination(t_s=t, ball=data.draw(st.sampled_from(sorted(state.on_table))), pocket=data.draw(st.sampled_from(POCKETS[game])))
    if kind == "foul":
        return OperatorFoul(t_s=t, player=player, rule=data.draw(st.sampled_from(["3a c", "3b l", "3b p", "3b g"])))
    return data.draw(st.sampled_from([BarDropped(t_s=t), Interference(t_s=t)]))


def _balls_kept(game: str, state: Any) -> None:
    """No ball is created or lost."""
    if game == "ficha":
        b = state.balls
        assert sorted([*b.on_table, *b.potted, *b.removed, *b.lifted]) == sorted(fi.PROFILE.ball_ids), b
    elif game == "brasileira":
        on = [b for b in br.OBJECT_BALLS if b in state.on_table]  # the table holds the highest-valued balls
        assert on == list(br.OBJECT_BALLS[len(br.OBJECT_BALLS) - len(on):]) and (on or state.match_over), on
    else:
        assert sorted([*state.table, *state.trough, *state.out]) == sorted(bb.BALLS), state


def _frames_ended(game: str, state: Any) -> int:
    if game == "ficha":
        return sum(state.score)
    if game == "brasileira":
        return sum(state.frames_won.values())
    return int(state.frame_over)


OPTIONS = {"ficha": {"frames": 3}, "brasileira": {"frames": 3}, "bar-billiards": {"clock_minutes": 1.0}}


@pytest.mark.parametrize("game", IDS)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_random_physically_possible_play_always_gets_a_call(game, data):
    """Random shots and operator inputs: a shot that happened is never refused (only an operator's
    input may be, with a message naming the game), no ball is created or lost, and every frame that
    ends is counted exactly once, in the match score."""
    players = ("A", "B")
    referee = Referee(get_engine(game), players, OPTIONS[game])
    t = 1.0
    taken: set[str] = set()  # ficha: balls the removal choices take off before the next strike
    named: set[str] = set()  # the balls the last shot's events name
    for _ in range(data.draw(st.integers(5, 30), label="steps")):
        state = referee.state
        if referee.engine.over(state) is not None:
            break
        t = round(t + 2.0, 3)
        if referee.pending is not None:
            q = referee.pending
            options = list(q.options)
            if q.topic == "removal":  # the ball the non-offender lifted is not one the shot then moved
                options = [b for b in options if b not in named] or options
            steps = referee.feed(Answer(t_s=t, question=q.id, answer=data.draw(st.sampled_from(options))))
        elif data.draw(st.integers(0, 4)) == 0:
            e = _random_input(data, game, state, players, t)
            try:
                steps = referee.feed(e) if e is not None else []
            except RulesError as err:  # an input the rules cannot take: refused, nothing changes
                assert str(err).startswith(game) and referee.state == state, err
                continue
            if isinstance(e, RemovalChoice) and not steps:
                taken.add(e.ball)
        else:
            if game == "ficha":  # the non-offender lifts the ball the penalty removes (5.2)
                for side in state.removals_due:
                    left = [b for b in state.left(side) if b not in taken]
                    if left:
                        ball = data.draw(st.sampled_from(left))
                        if not referee.feed(RemovalChoice(t_s=t, ball=ball)):
                            taken.add(ball)
            events = _random_shot(data, game, state, t + 0.5, taken)
            named = {b for e in events for b in (getattr(e, "ball", None), getattr(e, "a", None), getattr(e, "b", None)) if b}
            t = events[-1].t_s
            taken = set()
            try:
                steps = [step for e in events for step in referee.feed(e)]
            except RulesError as err:
                # ficha: a foul while aiming (judged at the strike) ended the match, so no shot can follow
                assert game == "ficha" and "comes after the match ended" in str(err), err
                break
            assert steps, "a shot came to rest without a call"
        _balls_kept(game, referee.state)
        counted = sum(c.decision.frame_over + sum(p.frame_over for p in getattr(c.decision, "prior", ()))
                      for c in referee.history if c.decision.pending is None)
        assert _frames_ended(game, referee.state) == counted, (_frames_ended(game, referee.state), [(c.decision.explanation, c.decision.frame_over) for c in referee.history])
    over = referee.engine.over(referee.state)
    if over is not None:  # nothing is judged after the end
        with pytest.raises(RulesError, match="after the"):
            for e in (ShotStart(t_s=t + 5.0, ball="w1" if game == "bar-billiards" else "cue"), AtRest(t_s=t + 6.0)):
                referee.feed(e)



# ---- options: declared once (pydantic), refused with the game, the option and what it accepts ------------------


@pytest.mark.parametrize("game", IDS)
@pytest.mark.parametrize("options, message", [
    pytest.param({"colour": "red"}, r"unknown option\(s\) colour; the options are .*min_confidence", id="an unknown option"),
    pytest.param({"min_confidence": 2}, r"option min_confidence=2 must lie between 0 and 1", id="out of range"),
    pytest.param({"min_confidence": float("nan")}, r"option min_confidence=nan must lie between 0 and 1", id="not a number"),
    pytest.param({"min_confidence": "high"}, r"option min_confidence='high' is not a valid float", id="not a float"),
    pytest.param({"start": "halfway"}, r"option start='halfway' is not a valid FrameStart \(one of rack, mid_frame\)", id="not a choice"),
])
def test_options_are_refused_with_the_game_the_option_and_what_it_accepts(game, options, message):
    with pytest.raises(RulesError, match=f"^{game}: {message}"):
        get_engine(game).initial_state(("A", "B"), options)


@pytest.mark.parametrize("game, options, message", [
    ("ficha", {"frames": 2}, "frames=2 must be an odd number"),
    ("ficha", {"frozen_gap_mm": float("inf")}, "frozen_gap_mm=inf must be a finite number"),
    ("ficha", {"removal_of_last_ball_wins": "perhaps"}, "is not a valid bool"),
    ("brasileira", {"frames": 0}, "frames=0 must be an odd number"),
    ("brasileira", {"penalty_repeat": 3}, "is not a valid bool"),
    ("bar-billiards", {"clock_minutes": 0}, "clock_minutes=0 must be positive"),
    ("bar-billiards", {"clock_minutes": float("inf")}, "clock_minutes=inf must be a finite number"),
    ("bar-billiards", {"tie_mm": -1}, "tie_mm=-1 must not be negative"),
])
def test_each_options_range_is_declared(game, options, message):
    with pytest.raises(RulesError, match=message):
        get_engine(game).initial_state(("A", "B"), options)


@pytest.mark.parametrize("game, given, field, value", [
    ("ficha", {"frames": "3", "rule_4233_clear_opponent": "yes"}, "rule_4233_clear_opponent", True),
    ("brasileira", {"penalty_repeat": "false", "min_confidence": "0.4"}, "min_confidence", 0.4),
    ("bar-billiards", {"clock_minutes": "14"}, "clock_minutes", 14.0),
])
def test_options_given_as_text_on_a_command_line_are_converted(game, given, field, value):
    state = get_engine(game).initial_state(("A", "B"), given)
    assert getattr(state.options, field) == value


def test_a_refused_input_is_no_part_of_the_next_shot():
    """A nomination of a ball no longer on the table is refused at once (rule 4), and the shot that
    follows is judged on the nomination given before it."""
    g = br.bonus_after_red()
    assert g.input(Nomination(t_s=g.t_s + 1, ball="yellow", pocket="TL")) is None
    with pytest.raises(RulesError, match="the red is not on the table"):
        g.input(Nomination(t_s=g.t_s + 2, ball="red", pocket="BR"))
    d = g.play(None, first="yellow", pots=[("yellow", "TL")])
    assert d.nomination == ("yellow", "TL") and d.fouls == () and d.points_potted == 2
