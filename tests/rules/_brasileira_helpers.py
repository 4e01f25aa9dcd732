"""Builders for the Sinuca Brasileira tests: events for one shot, and a small driver that plays
shots and inputs through a :class:`rules.base.Referee`, the way :func:`rules.base.replay` does."""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping, Sequence

from calibration.table import resolve_profile
from rules.base import Referee, Shot
from tests.rules._driven import Driven
from rules.brasileira import BrasileiraDecision, BrasileiraRules
from tracking.events import (
    AtRest,
    BallBall,
    Event,
    Nomination,
    OperatorInput,
    Pot,
    ShotStart,
)

PROFILE = resolve_profile("brasileira")
SPOTS: Mapping[str, tuple[float, float]] = PROFILE.spots
CUE_IN_D = SPOTS["cue"]
CUE_REST = (1500.0, 1200.0)  # where the cue ball stops by default: a clear view of every spot
OBJECT_BALLS = ("red", "yellow", "green", "brown", "blue", "pink", "black")
VALUES = {"red": 1, "yellow": 2, "green": 3, "brown": 4, "blue": 5, "pink": 6, "black": 7}


def layout(on_table: Iterable[str], cue: tuple[float, float] | None = CUE_REST,
           moved: Mapping[str, tuple[float, float]] | None = None) -> dict[str, tuple[float, float]]:
    """Positions: every ball of ``on_table`` on its spot, the cue ball at ``cue`` (None: off the
    table), and ``moved`` balls where given."""
    pos = {b: SPOTS[b] for b in on_table}
    if cue is not None:
        pos["cue"] = cue
    pos.update(moved or {})
    return pos


def shot_events(t_s: float, *, first: str | None = "red", pots: Sequence[tuple[str, str]] = (), struck: str = "cue",
                start: Mapping[str, tuple[float, float]] | None = None, end: Mapping[str, tuple[float, float]] | None = None,
                extra: Sequence[Event] = (), confidence: Mapping[str, float] | None = None) -> list[Event]:
    """The camera events of one shot starting at ``t_s``: the strike, the cue ball's first contact
    (None: no ball hit), the pots in order, ``extra`` events, and the at-rest positions.
    ``confidence`` may give ``first`` or a potted ball id a confidence below 1."""
    conf = dict(confidence or {})
    events: list[Event] = [ShotStart(t_s=t_s, ball=struck, positions=start or {})]
    if first is not None:
        events.append(BallBall(t_s=t_s + 0.5, a="cue", b=first, confidence=conf.get("first", 1.0)))
    for i, (ball, pocket) in enumerate(pots):
        events.append(Pot(t_s=t_s + 1.0 + 0.1 * i, ball=ball, pocket=pocket, confidence=conf.get(ball, 1.0)))
    events.extend(extra)
    events.sort(key=lambda e: e.t_s)
    events.append(AtRest(t_s=t_s + 5.0, positions=end or {}))
    return events


class Game(Driven):
    """Plays shots through a :class:`BrasileiraRules` engine, keeping the state and the calls."""

    def __init__(self, options: Mapping[str, Any] | None = None, players: Sequence[str] = ("A", "B"), profile: str = "brasileira"):
        self.engine = BrasileiraRules(resolve_profile(profile))
        self.referee = Referee(self.engine, players, options)
        self.t_s = 0.0
        self.index = 0
        self.decisions: list[BrasileiraDecision] = []
        self.log: list[Event] = []  # every event and input played, in order (for replay)

    def shot(self, nominate: tuple[str, str] | None = None, *, first: str | None = "red",
             pots: Sequence[tuple[str, str]] = (), struck: str = "cue",
             start: Mapping[str, tuple[float, float]] | None = None, end: Mapping[str, tuple[float, float]] | None = None,
             extra: Sequence[Event] | Callable[[float], Sequence[Event]] = (),
             confidence: Mapping[str, float] | None = None, before: Sequence[Event] = ()) -> Shot:
        """The next shot (not judged). Default positions: the balls on the table on their spots;
        the cue ball in the D when in hand, else at CUE_REST; at rest, the potted balls gone.
        ``extra`` may be a function of the shot's start time returning more camera events."""
        t = self.t_s + 10.0
        on = set(self.state.on_table)
        if start is None:
            start = layout(on, CUE_IN_D if self.state.cue_in_hand else CUE_REST)
        if end is None:
            down = {b for b, _ in pots}
            end = layout(on - down, None if "cue" in down else CUE_REST)
        ins: list[Event] = list(before)
        if nominate is not None:
            ins.append(Nomination(t_s=t - 1.0, ball=nominate[0], pocket=nominate[1]))
        events = shot_events(t, first=first, pots=pots, struck=struck, start=start, end=end,
                             extra=list(extra(t) if callable(extra) else extra), confidence=confidence)
        return Shot(self.index, tuple(events), tuple(ins))

    def judge(self, shot: Shot) -> BrasileiraDecision:
        """Feed the shot's inputs and events to the referee; the call on the shot."""
        self.log.extend(shot.before + shot.events)
        steps = [st for e in shot.before + shot.events for st in self.referee.feed(e)]
        self._take(steps)
        self.t_s = shot.events[-1].t_s
        self.index += 1
        return steps[-1].decision

    def play(self, nominate: tuple[str, str] | None = None, **kw: Any) -> BrasileiraDecision:
        return self.judge(self.shot(nominate, **kw))

    def input(self, event: OperatorInput) -> BrasileiraDecision | None:
        steps = self.referee.feed(event)
        self.log.append(event)
        self._take(steps)
        return steps[-1].decision if steps else None

    def _take(self, steps) -> None:
        self.decisions += [st.decision for st in steps]

    def open(self) -> BrasileiraDecision:
        """A legal opening shot (rule 12): the red hit, nothing potted, no snooker."""
        return self.play(first="red")

    @property
    def scores(self) -> dict[str, int]:
        return dict(self.state.scores)


# ---- positions of the table after a few standard sequences (the "setups" of the rule tests) ----------


def clear_to(game: Game, ball: str) -> Game:
    """Play legal shots until ``ball`` is the ball on: the player at the table pots the ball on as a
    free shot, then misses the bonus at the next ball (hitting it: no foul), and the turn passes."""
    if game.state.mode.value == "opening":
        game.open()
    while game.engine.ball_on(game.state.on_table) != ball:
        on = game.engine.ball_on(game.state.on_table)
        game.play((on, "TR"), first=on, pots=[(on, "TR")])
        nxt = game.engine.ball_on(game.state.on_table)
        game.play((nxt, "TL"), first=nxt)
    return game


def fresh(options: Mapping[str, Any] | None = None) -> Game:
    """The opening shot to play: A breaks."""
    return Game(options)


def opened(options: Mapping[str, Any] | None = None) -> Game:
    """After a legal opening shot by A: B to play, the red on, B's choice (rule 13)."""
    g = Game(options)
    g.open()
    return g


def bonus_after_red(options: Mapping[str, Any] | None = None) -> Game:
    """B potted the red (free shot): B has the bonus (13.1)."""
    g = opened(options)
    g.play(("red", "BR"), first="red", pots=[("red", "BR")])
    return g


def in_hand(options: Mapping[str, Any] | None = None) -> Game:
    """B went in-off at the red: A to play with the cue ball in hand."""
    g = opened(options)
    g.play(("red", "BR"), first="red", pots=[("cue", "TL")])
    return g


def on_ball(ball: str) -> Callable[[Mapping[str, Any] | None], Game]:
    """The lowest ball on the table is ``ball`` (reached by clear_to)."""
    def setup(options: Mapping[str, Any] | None = None) -> Game:
        return clear_to(Game(options), ball)
    setup.__name__ = f"on_{ball}"
    return setup
