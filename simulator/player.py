"""The automatic player, and whole frames generated from a seed.

:class:`AutoPlayer` picks the easiest pot (ghost-ball plans ranked by cut angle and distances, each
verified in the simulator by :func:`~simulator.aim.aim_pot`), or else plays safe (a full-ball hit on a
legal ball at a moderate speed, checked to touch it first). :func:`generate_frame` plays a whole frame
with two automatic players, the game's rules engine deciding after every shot who plays next and
whether the frame is over; the hand actions each game needs between shots (ficha removals and
re-spots, brasileira nominations, re-spots and the cue ball in hand, bar-billiards balls back to the
trough and pins reset) are played too. In brasileira the player takes a penalty shot at another
colour (rules 9, 11) when the ball on offers no pot but that colour does. The result is a :class:`~simulator.script.Script` (replayable with
:func:`~simulator.script.run_script` to the same events) with the engine's decisions recorded as
the expected ones, and its run.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, replace
from typing import Any, Mapping, Sequence

import numpy as np

from calibration.table import TableProfile, resolve_profile
from rules import GAMES, get_engine
from simulator.aim import aim_pot, pot_geometry
from simulator.physics import DEFAULT_PARAMS, PhysicsError, PhysicsParams, Shot, World, open_holes, simulate
from simulator.scene import BallStatus
from simulator.script import Runner, Script, ScriptRun, default_profile, make_expected
from tracking.events import BallBall, BallCushion, Event, OperatorInput, Pot, ShotStart

__all__ = ["Choice", "AutoPlayer", "GeneratedFrame", "generate_frame"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Choice:
    """What the automatic player will play: the shot, and for a pot the ball and pocket (a nomination)."""

    shot: Shot
    kind: str  # "pot" | "safe" | "kick"
    ball: str | None = None
    pocket: str | None = None


class AutoPlayer:
    """Aims at the easiest pot, or plays safe. ``rng`` varies speeds and spin; ``tries`` bounds how
    many pot plans are verified in the simulator per shot (each costs one to a dozen simulations)."""

    def __init__(self, game: str, rng: np.random.Generator, params: PhysicsParams = DEFAULT_PARAMS, tries: int = 4):
        if game not in GAMES:
            raise ValueError(f"unknown game {game!r}: {', '.join(GAMES)}")
        self.game, self.rng, self.params, self.tries = game, rng, params, tries

    def choose(self, world: World, targets: Sequence[str], cue: str | None = None,
               pockets: Sequence[str] | None = None, places: Sequence[tuple[float, float]] = (),
               pot: bool = True) -> Choice:
        """A shot for ``cue`` (placed first at one of ``places`` if given) at one of ``targets``:
        the easiest verified pot into ``pockets`` (default: every pocket, or every open bed hole),
        else a safe full-ball contact, else a kick in a random direction."""
        prof = world.profile
        cue = cue or prof.cue_ball
        assert cue is not None
        if pockets is None:
            pockets = [p.id for p in prof.pockets] or [h.id for h in open_holes(world)]
        spots: list[tuple[float, float] | None] = list(places) or [None]
        on = [t for t in targets if world.ball(t).status is BallStatus.ON_TABLE and t != cue]
        if pot:
            plans = []
            for place in spots:
                for ball in on:
                    for pk in pockets:
                        plan = pot_geometry(world, ball, pk, cue, place)
                        if plan is not None:
                            plans.append((plan.difficulty, plan, place))
            plans.sort(key=lambda p: p[0])
            for _, plan, place in plans[: self.tries]:
                top = float(self.rng.uniform(0.0, 0.3))
                shot = aim_pot(world, plan.ball, plan.pocket, cue=cue, top=top, place_xy_mm=place, params=self.params)
                if shot is not None:
                    return Choice(shot, "pot", plan.ball, plan.pocket)
        for place in spots:
            for ball in sorted(on, key=lambda b: math.dist(world.ball(b).xy_mm, place or world.ball(cue).xy_mm)):
                start = place or world.ball(cue).xy_mm
                bx, by = world.ball(ball).xy_mm
                direction = math.degrees(math.atan2(by - start[1], bx - start[0]))
                for _ in range(3):
                    speed = float(self.rng.uniform(1000.0, 2200.0))
                    shot = Shot(cue, direction + float(self.rng.uniform(-4.0, 4.0)), speed, top=0.1, place_xy_mm=place)
                    if _safe(world, shot, ball, self.params):
                        return Choice(shot, "safe", ball, None)
        place = spots[0]
        return Choice(Shot(cue, float(self.rng.uniform(0, 360)), float(self.rng.uniform(1500, 3000)), place_xy_mm=place), "kick")


def _safe(world: World, shot: Shot, ball: str, params: PhysicsParams) -> bool:
    """Whether ``shot`` touches ``ball`` first and neither pots nor loses the struck ball."""
    try:
        res = simulate(world, shot, params=params)
    except PhysicsError:  # an impossible placement: not a usable shot
        return False
    first = next((e for e in res.events if isinstance(e, BallBall)), None)
    if first is None or {first.a, first.b} != {shot.ball, ball}:
        return False
    return res.world_after.ball(shot.ball).status is BallStatus.ON_TABLE


@dataclass(frozen=True, slots=True, eq=False)
class GeneratedFrame:
    """A generated frame: the replayable script, its run (events, timeline pieces, expectations) and
    the rules engine's decisions in order (None when the engine is not installed)."""

    script: Script
    run: ScriptRun
    decisions: tuple[Any, ...]
    complete: bool  # the engine called the frame over within the shot limit


# ---- per-game glue ---------------------------------------------------------------------------------


def _free_spot(world: World, preferred: Sequence[tuple[float, float]], ignore: str) -> tuple[float, float]:
    """The first of ``preferred`` points (then points spiralling out from the first) where a ball fits."""
    prof = world.profile
    R = prof.ball_radius_mm
    others = [b.xy_mm for b in world.balls if b.on_table and b.id != ignore]

    def free(p: tuple[float, float]) -> bool:
        return prof.contains(p, R + 0.05) and all(math.dist(p, o) >= 2 * R + 0.5 for o in others)

    for p in preferred:
        if free(p):
            return p
    x0, y0 = preferred[0]
    for k in range(1, 400):
        ang = k * 2.4
        rad = 4.0 * math.sqrt(k) * R / 4
        p = (x0 + rad * math.cos(ang), y0 + rad * math.sin(ang))
        if free(p):
            return p
    raise RuntimeError("no free place on the table")


class _Game:
    """What a game needs from the generator: who plays, at what, and the hands between shots."""

    def __init__(self, game: str, profile: TableProfile, engine: Any, players: Sequence[str]):
        self.game, self.profile, self.engine, self.players = game, profile, engine, tuple(players)

    def player(self, state: Any) -> str:
        for name in ("shooter", "to_play", "player"):
            v = getattr(state, name, None)
            if isinstance(v, str):
                return v
        return self.players[0]


def _ficha_turn(g: _Game, state: Any, world: World, ap: AutoPlayer) -> tuple[list[dict], Choice]:
    side = next(i for i, ps in enumerate(state.side_players) if g.player(state) in ps)
    targets = [b for b in state.group_balls[side] if world.ball(b).status is BallStatus.ON_TABLE]
    return [], ap.choose(world, targets)


def _ficha_after(g: _Game, state: Any, world: World) -> list[dict]:
    steps: list[dict] = []
    prof = g.profile
    R = prof.ball_radius_mm
    # 5.3.1: a ball off the table comes back: the cue ball to the centre, others against a cushion
    w = world
    for b in world.balls:
        if b.status is BallStatus.OFF_TABLE:
            if b.id == prof.cue_ball:
                pref = [prof.spots.get("centre", (prof.length_mm / 2, prof.width_mm / 2))]
            else:
                pref = [(prof.length_mm * f, R + 0.01) for f in (0.3, 0.7, 0.2, 0.8)]
            xy = _free_spot(w, pref, b.id)
            steps.append({"kind": "place", "ball": b.id, "xy_mm": xy})
            w = w.with_ball(replace(b, xy_mm=xy, status=BallStatus.ON_TABLE))
    # 5.2-5.7: a removal owed by a side: its ball nearest a pocket goes
    for side in getattr(state, "removals_due", ()):
        own = [b for b in state.group_balls[side] if w.ball(b).status is BallStatus.ON_TABLE]
        if not own:
            continue
        ball = min(own, key=lambda b: min(math.dist(w.ball(b).xy_mm, p.xy_mm) for p in prof.pockets))
        steps.append({"kind": "remove", "ball": ball, "to": "pocketed"})
        w = w.with_ball(replace(w.ball(ball), status=BallStatus.POCKETED))
    return steps


def _brasileira_turn(g: _Game, state: Any, world: World, ap: AutoPlayer) -> tuple[list[dict], Choice]:
    prof = g.profile
    on = [b for b in state.on_table if world.ball(b).status is BallStatus.ON_TABLE]
    values = {b.id: b.value for b in prof.balls}
    mode = str(getattr(state, "mode", "choice"))
    places: list[tuple[float, float]] = []
    cue = world.ball(prof.cue_ball)
    if cue.status is not BallStatus.ON_TABLE:
        d = prof.d_centre_mm or (prof.baulk_x_mm or 500.0, prof.width_mm / 2)
        r = (prof.d_radius_mm or 200.0) * 0.5
        places = [_free_spot(world, [(d[0] - r, d[1] + dy) for dy in (0.0, -r, r)], prof.cue_ball)]
    if mode == "opening":
        red = "red" if "red" in on else min(on, key=lambda b: values[b])
        c = ap.choose(world, [red], places=places, pot=False)
        return [], c
    if mode == "bonus":
        targets = sorted(on, key=lambda b: values[b])
    else:
        targets = [min(on, key=lambda b: values[b])] if on else []
    c = ap.choose(world, targets, places=places)
    if mode == "choice" and c.kind != "pot" and len(on) > 1:
        # 9, 11: no pot on the ball on: a penalty shot at another colour, if one is sure to drop
        other = ap.choose(world, [b for b in on if b not in targets], places=places)
        if other.kind == "pot":
            c = other
    ball = c.ball or (targets[0] if targets else None)
    pocket = c.pocket
    if ball is not None and pocket is None:
        bxy = world.ball(ball).xy_mm
        pocket = min(prof.pockets, key=lambda p: math.dist(p.xy_mm, bxy)).id
    steps = []
    if ball is not None:
        steps.append({"kind": "input", "input": {"kind": "nomination", "ball": ball, "pocket": pocket}})
    return steps, c


def _brasileira_after(g: _Game, decision: Any, world: World) -> list[dict]:
    steps: list[dict] = []
    w = world
    for ball, xy in getattr(decision, "respots", ()):
        b = w.ball(ball)
        if b.on_table and math.dist(b.xy_mm, xy) < 0.5:
            continue
        if b.on_table:
            steps.append({"kind": "remove", "ball": ball, "to": "pocketed"})
            w = w.with_ball(replace(b, status=BallStatus.POCKETED))
        spot = _free_spot(w, [tuple(xy)], ball)
        steps.append({"kind": "place", "ball": ball, "xy_mm": spot})
        w = w.with_ball(replace(w.ball(ball), xy_mm=spot, status=BallStatus.ON_TABLE))
    return steps


def _bar_endgame(world: World, ball: str, ap: AutoPlayer) -> Choice:
    """2i: the last ball, from the centre of the D, must come off a cushion before it drops: a search
    over directions towards the side cushions and speeds, the first shot that pots wins; failing
    that, one that touches a cushion and stays on the table."""
    d = world.profile.d_centre_mm
    assert d is not None
    fallback = None
    for _ in range(40):
        direction = float(ap.rng.uniform(15.0, 75.0)) * (1 if ap.rng.random() < 0.5 else -1)
        shot = Shot(ball, direction, float(ap.rng.uniform(1200.0, 3500.0)), place_xy_mm=tuple(d))
        try:
            res = simulate(world, shot, params=ap.params)
        except PhysicsError:
            continue
        cushion = next((e.t_s for e in res.events if isinstance(e, BallCushion) and e.ball == ball), None)
        pots = [e for e in res.events if isinstance(e, Pot) and e.ball == ball]
        if cushion is not None and pots and pots[0].t_s > cushion:
            return Choice(shot, "pot", ball, pots[0].pocket)
        if fallback is None and cushion is not None and res.world_after.ball(ball).status is BallStatus.ON_TABLE:
            fallback = Choice(shot, "safe", ball)
    return fallback or Choice(Shot(ball, 45.0, 1500.0, place_xy_mm=tuple(d)), "kick")


def _bar_turn(g: _Game, state: Any, world: World, ap: AutoPlayer) -> tuple[list[dict], Choice]:
    prof = g.profile
    d = prof.d_centre_mm
    assert d is not None and prof.d_radius_mm is not None
    on = [b.id for b in world.balls if b.status is BallStatus.ON_TABLE]
    trough = [b for b in state.trough if world.ball(b).status is not BallStatus.ON_TABLE]
    steps: list[dict] = []
    if getattr(state, "endgame", False):
        last = (on + trough)[0]
        if not world.scoreboard_down:
            steps.append({"kind": "set", "set": {"scoreboard_down": True}, "pause_s": 0.5})
            world = replace(world, scoreboard_down=True)
        return steps, _bar_endgame(world, last, ap)
    if not on:  # 2b break-off: the red on its spot, a white from the D's centre at the red
        steps.append({"kind": "place", "ball": "red", "xy_mm": tuple(prof.spots["break"])})
        white = next(b for b in trough if b != "red")
        red = prof.spots["break"]
        # a half-ball-or-thinner hit sends the red aside, clear of the pin straight behind its spot
        cut = float(ap.rng.uniform(3.0, 6.0)) * (1 if ap.rng.random() < 0.5 else -1)
        direction = math.degrees(math.atan2(red[1] - d[1], red[0] - d[0])) + cut
        return steps, Choice(Shot(white, direction, float(ap.rng.uniform(1800, 3000)), place_xy_mm=tuple(d)), "safe", "red")
    if trough:
        cue = "red" if "red" in trough else trough[0]
        r = prof.d_radius_mm * 0.6
        places = [(d[0] + r * 0.5, d[1] + dy) for dy in (0.0, -r, r, -r / 2, r / 2)]
        places = [p for p in places if _fits(world, p, cue)]
        return steps, ap.choose(world, on, cue=cue, places=places)
    # 2c c: no ball in the trough: the ball nearest the baulk line is played from the D
    cue = min(on, key=lambda b: (world.ball(b).xy_mm[0], math.dist(world.ball(b).xy_mm, d)))
    r = prof.d_radius_mm * 0.6
    places = [p for p in ((d[0] + r * 0.5, d[1] + dy) for dy in (0.0, -r, r)) if _fits(world, p, cue)]
    return steps, ap.choose(world, [b for b in on if b != cue], cue=cue, places=places)


def _fits(world: World, xy: tuple[float, float], ball: str) -> bool:
    R = world.profile.ball_radius_mm
    return all(math.dist(xy, b.xy_mm) >= 2 * R + 0.5 for b in world.balls if b.on_table and b.id != ball)


def _bar_after(g: _Game, state: Any, decision: Any, world: World) -> list[dict]:
    """Balls the engine sent back to the trough are lifted there; balls off the table go back to the
    trough (picked up off the floor: no event); pins down, or moved at the end of a visit, are set
    back up (no event kind exists for that; the renderer sees them standing again)."""
    steps: list[dict] = []
    table = getattr(state, "table", {})
    out = set(getattr(state, "out", ()))
    for b in world.balls:
        if b.status is BallStatus.ON_TABLE and b.id not in table:
            steps.append({"kind": "remove", "ball": b.id, "to": "pocketed" if b.id in out else "in_trough"})
    w = world
    for bid, xy in table.items():
        if w.ball(bid).status is not BallStatus.ON_TABLE:  # the engine puts it back (an endgame ball, 2i)
            spot = _free_spot(w, [tuple(xy)], bid)
            steps.append({"kind": "place", "ball": bid, "xy_mm": spot})
            w = w.with_ball(replace(w.ball(bid), xy_mm=spot, status=BallStatus.ON_TABLE))
    reset = any(not p.up for p in world.pins) or (getattr(decision, "visit_over", False) and any(p.state != "standing" for p in world.pins))
    collect = any(b.status is BallStatus.OFF_TABLE for b in world.balls)
    gone = sorted(b.id for b in world.balls if b.id in out and b.status is BallStatus.IN_TROUGH)
    if reset or collect or gone:
        steps.append({"kind": "set", "set": {"reset_pins": reset, "collect": collect, "out_of_play": gone}, "pause_s": 0.0})
    return steps


# ---- the frame generator -----------------------------------------------------------------------------


def _judge(engine: Any, state: Any, shot_events: Sequence[Event], before: Sequence[Event], index: int) -> tuple[Any, Any]:
    from rules.base import Shot as RulesShot

    decision = engine.judge(state, RulesShot(index, tuple(shot_events), tuple(before)))
    return decision, engine.advance(state, decision)


def generate_frame(game: str, profile: TableProfile | str | None = None, seed: int = 0, max_shots: int = 40,
                   players: Sequence[str] = ("A", "B"), options: Mapping[str, Any] | None = None,
                   params: PhysicsParams = DEFAULT_PARAMS, tries: int = 4, start_t_s: float = 1.0,
                   bar_drops_after: int = 20) -> GeneratedFrame:
    """A whole frame of ``game`` played by two automatic players from ``seed``.

    The rules engine (``rules.get_engine``) judges every shot; its decisions become the script's
    expectations (so they test the pipeline from video to events, not the engine itself). The frame
    stops when the engine calls it over or after ``max_shots`` shots (``complete`` says which). In bar
    billiards the clock runs out (``bar_dropped``, 2g) after ``bar_drops_after`` shots, so that the
    table empties and the frame can end."""
    if game not in GAMES:
        raise ValueError(f"unknown game {game!r}: {', '.join(GAMES)}")
    if profile is None or isinstance(profile, str):
        profile = resolve_profile(profile or default_profile(game))
    engine = get_engine(game, profile)
    options = dict(options or {})
    state = engine.initial_state(tuple(players), options)
    g = _Game(game, profile, engine, players)
    ap = AutoPlayer(game, np.random.default_rng([seed, 1]), params, tries)
    runner = Runner(game, profile, seed, start_t_s, params)
    runner.start_frame("rack", "frame")
    steps: list[dict] = []
    decisions: list[Any] = []
    before: list[Event] = []
    complete = False

    def play(step: dict) -> tuple[Event, ...]:
        evs = runner.step(step, f"generated step {len(steps)}", len(steps))
        steps.append(step)
        return evs

    for n in range(max_shots):
        world = runner.world
        assert world is not None
        if game == "bar-billiards" and n == bar_drops_after and world.trough_open:
            evs = play({"kind": "input", "input": {"kind": "bar_dropped"}, "pause_s": 0.0})
            d = engine.on_input(state, evs[0])
            if d is not None:
                state = engine.advance(state, d)
            play({"kind": "set", "set": {"trough_open": False}, "pause_s": 0.3})
            before.extend(evs)
            world = runner.world
        if game == "ficha":
            pre, choice = _ficha_turn(g, state, world, ap)
        elif game == "brasileira":
            pre, choice = _brasileira_turn(g, state, world, ap)
        else:
            pre, choice = _bar_turn(g, state, world, ap)
        for st in pre:
            evs = play(st)
            before.extend(evs)
            for e in evs:
                if isinstance(e, OperatorInput):
                    d = engine.on_input(state, e)
                    if d is not None:
                        state = engine.advance(state, d)
        if choice.shot.place_xy_mm is not None and not _fits(runner.world, choice.shot.place_xy_mm, choice.shot.ball):
            choice = replace(choice, shot=replace(choice.shot, place_xy_mm=_free_spot(runner.world, [choice.shot.place_xy_mm], choice.shot.ball)))
        shot_step: dict[str, Any] = {"kind": "shot", "shot": choice.shot}
        evs = play(shot_step)
        k = next(i for i, e in enumerate(evs) if isinstance(e, ShotStart))
        decision, state = _judge(engine, state, evs[k:], before + list(evs[:k]), runner.shot_index - 1)
        decisions.append(decision)
        shot_step["expect"] = _expect_of(decision)
        runner.expected.append(make_expected(shot_step["expect"], evs[-1].t_s, runner.shot_index - 1, runner.frame, len(steps) - 1))
        before = []
        if getattr(decision, "pending", None) is not None:
            log.info("generate_frame: the engine asks %s; the frame stops here", decision.pending.text)
            break
        if decision.frame_over or getattr(decision, "match_over", False):
            complete = True
            break
        world = runner.world
        assert world is not None
        if game == "ficha":
            after = _ficha_after(g, state, world)
        elif game == "brasileira":
            after = _brasileira_after(g, decision, world)
        else:
            after = _bar_after(g, state, decision, world)
        for st in after:
            before.extend(play(st))
    script = Script(game=game, profile=profile.name, players=tuple(players), options=options, start_t_s=start_t_s,
                    frames=({"setup": "rack", "steps": steps, "note": f"generated by the automatic player, seed {seed}"},),
                    title=f"{game} frame, seed {seed}", seed=seed)
    return GeneratedFrame(script, runner.finish(tuple(players), options), tuple(decisions), complete)


def _expect_of(decision: Any) -> dict[str, Any]:
    fouls = [str(getattr(f, "value", f)) for f in decision.fouls]
    return {"fouls": fouls, "next_player": decision.next_player, "frame_over": bool(decision.frame_over),
            "winner": decision.winner, "note": f"rules engine at generation: {decision.explanation}"}

