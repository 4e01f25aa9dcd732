"""Event inference: per-frame tracks in, the event log out (``docs/event-log.md``, ``docs/tracking.md``).

``EventInferer(profile).step(tracks)`` is called with every snapshot of the tracker and returns the
events that became certain with that frame; ``finish()`` at the end of the video returns the rest.

Between shots it watches for balls placed and removed by hand and for balls that start to move.
The first ball to move opens an episode; a few frames from before it (the pre-roll) give every
ball's place at rest. When every ball has been still for ``rest_window_s`` (a frame that repeats the
last counts: nothing moved in it) or has dropped (a ball whose path ran into a pocket or a hole and
that no frame has seen since is not waited for until the tracker gives it up) the episode is analysed
as a whole (:mod:`tracking.infer.shot`): the struck ball, its strike, contacts, cushions, pots, jumps,
balls off the table, pins, touched balls, a double hit, and everything at rest; the shot's events come
out then, a fraction of a second after the last ball stopped. An episode whose first ball was not
struck by the cue (nothing cue-shaped at it, too slow for a strike) is a touch. Frames vision could not read become ``unobserved`` spans, except
inside a shot where nothing could happen in them (every ball at rest or rolling on, clear of
everything). Events come out in time order.

``settled_s`` is the watermark a live referee reads after each ``step``: every event before it has
been given. Between shots it follows the frames within a frame or two (held back by a ball put down
and not yet settled, a ball hidden since its last measurement, a ball starting to move); through a
shot it stays before the strike. An operator input given live enters the log once it passes.

One module per kind of event: ``contact``, ``frozen``, ``cushion``, ``pot``, ``off_table``,
``jump``, ``pin``, ``touched``, ``double_hit``; ``segments`` fits the pieces of free motion they
all read, ``shot`` holds a shot's frames and each ball's motion.
"""

from __future__ import annotations

import bisect
import dataclasses
import logging
import math
from collections import deque
from dataclasses import dataclass

import numpy as np

from calibration.numeric import median
from calibration.table import TableProfile
from tracking.events import (AtRest, BallPlaced, BallRemoved, BallTouched, Event, PinDown, ShotStart, Unobserved,
                             event_from_dict, event_to_dict)
from tracking.geometry import TableGeometry
from tracking.infer.contact import contact_events, infer_contacts
from tracking.infer.cushion import infer_cushions
from tracking.infer.double_hit import infer_double_hit
from tracking.infer.frozen import frozen_pushes
from tracking.infer.hand import removed_in_shot
from tracking.infer.jump import implied_jumps, infer_jumps, parallax_jumps
from tracking.infer.off_table import infer_off_table
from tracking.infer.pin import infer_pins
from tracking.infer.pot import infer_pots, vanished
from tracking.infer.shot import BallMotion, ShotContext, ShotFrames, build_context
from tracking.infer.touched import infer_touched, is_strike
from tracking.tracks import Tracks, TrackState
from vision.types import PinState

__all__ = ["InferConfig", "EventInferer", "analyse_shot"]

log = logging.getLogger(__name__)

UNREADABLE = "the frames could not be read against the table"
MOTION_SLACK_MM = 1.5  # how far the place at rest a shot's analysis takes may differ from the one kept between shots


@dataclass(frozen=True, slots=True)
class InferConfig:
    """How events are read from tracks. Lengths in mm, times in s, speeds in mm/s."""

    # rest and motion
    sigma_rest_mm: float = 1.5  # a ball's position noise at rest when too few frames tell it
    blur_s: float = 0.001  # the noise grows by this times the speed (motion blur)
    covered_doubt: float = 3.0  # the noise of a ball an occluder partly covers, in multiples of its noise
    move_mm: float = 4.0  # a ball this far from its rest place (and 4 of its noise) in three frames running has moved
    nudge_mm: float = 2.5  # a ball whose place at rest changed by more than this was moved, if only a little
    rest_samples: int = 10  # measurements averaged for a place at rest
    rest_window_s: float = 0.25  # every ball still this long: the shot is over (its events come out then)
    rest_tol_mm: float = 4.0  # still: moving less than this (and 3 noise) within the window ...
    creep_mm: float = 1.8  # ... and its halves' medians less than this apart (a ball creeping to a stop is not still)
    creep_mm_s: float = 15.0  # ... and its straight-line speed over the window under this, or under 3 of its own noise
    preroll_s: float = 1.0  # frames kept from before a shot (the balls at rest, the cue coming in)
    max_shot_s: float = 90.0  # a shot that never comes to rest is cut here
    edge_wait_max_s: float = 7.5  # bar billiards: a ball on a hole's edge may still drop (2f b waits 5 s)
    hole_edge_mm: float = 3.0  # a ball's centre this close outside a hole's rim sits on its edge
    lip_mm: float = 15.0  # a ball's centre this close to a pocket's drop circle is at its lip ...
    lip_wait_s: float = 0.75  # ... and may still creep in: the shot waits this long for it
    drop_wait_s: float = 0.1  # a ball whose path ran into a drop circle, unseen this long (and pot_horizon_frames), has dropped
    # pieces of free motion
    piece_penalty: float = 12.0  # the residual (in noise units squared) one more piece must remove ...
    piece_penalty_log: float = 3.0  # ... plus this times the log of the number of measurements (BIC)
    min_dv_mm_s: float = 60.0  # a smaller change of velocity is no event
    max_accel_mm_s2: float = 50000.0  # no piece of free motion turns harder (sliding friction: about 3000)
    # contacts
    contact_tol_mm: float = 8.0  # two paths this close to one ball width apart may touch
    contact_time_tol_s: float = 0.04  # the struck ball left within this of the striker's arrival
    slow_start_s: float = 0.1  # ... and this much earlier for a ball leaving so slowly that move_mm takes it longer
    chain_gap_mm: float = 3.0  # balls closer than this at rest pass a hit on (a cluster)
    frozen_gap_mm: float = 2.0  # a ball this close to the struck ball at the strike is frozen to it
    hidden_confidence: float = 0.5  # an event under an occluder: the rules engine asks
    hidden_min_s: float = 0.15  # ... a drop into a pocket is under one if it covers the ball at least this long
    loose_contact_mm: float = 40.0  # a ball leaving with a moving ball this close to touching it was hit by it ...
    loose_confidence: float = 0.65  # ... with this confidence (no closer fit found)
    # cushions
    cushion_tol_mm: float = 5.0  # a kink this close to the line one radius off a cushion nose ...
    cushion_tol_s: float = 0.02  # ... plus its speed across the cushion times this (where pieces meet is less sure)
    frozen_cushion_mm: float = 1.0  # a ball resting this close to a cushion bounces off it when pushed in
    frozen_along_cos: float = 0.1  # ... even struck along it, the line of centres this far (cosine) out of it, by a ball clear of its line
    graze_from_mm: float = 1.5  # a path coming in from at least this far off a cushion line and reaching it grazes it
    start_time_s: float = 0.005  # a ball's start between frames is known to about this (its rest place, a sample of its way in)
    bounce_window_s: float = 0.3  # a bounce's arms are fitted over at most this long either side ...
    bounce_chi2: float = 4.0  # ... as long as a straight line fits them within this many noise variances a sample
    apex_window_s: float = 0.05  # ... its apex is the sample nearest the line within this of it
    bounce_gap_s: float = 0.2  # no ball bounces off one cushion twice this soon (a V in the noise beside a bounce is the same one)
    bounce_reach_mm: float = 60.0  # a ball at rest this close to a cushion, struck into it and first seen coming away, bounced ...
    bounce_min_cos: float = 0.15  # ... when the blow sends it into the cushion at least this squarely
    # pots and balls off the table
    pot_horizon_frames: float = 3.0  # a vanished ball's path is followed this many frames on
    pot_reach_mm: float = 150.0  # ... at most this far
    pot_near_mm: float = 60.0  # and must come this close to a drop circle to be potted there
    over_drop_mm: float = 2.0  # a ball last seen with its centre this close to a drop circle (or over it) was tipping in
    off_table_reach_mm: float = 60.0  # a ball vanishing this close to a cushion line may have left over it
    beyond_line_mm: float = 8.0  # a ball measured this far beyond a cushion's line, alongside the cushion, is in the air over it
    # jumps
    jump_min_mm: float = 5.0  # off the cloth by more than this: a jump
    jump_over_mm: float = 15.0  # a path this far into a ball at rest (less than two radii from its centre) flew over it ...
    jump_over_still_s: float = 0.3  # ... if that ball stayed still at least this long after (else it was struck, its start seen late)
    flight_window_s: float = 0.6  # a jump shot's flight is looked for in the struck ball's path this long after the strike ...
    flight_max_s: float = 0.4  # ... lasting up to this long (a flight 200 mm high) ...
    flight_after_s: float = 0.3  # ... on the samples up to this long after it lands ...
    flight_gain: float = 10.0  # ... and believed when it explains the path better by this much (noise units squared) ...
    flight_ask_gain: float = 8.0  # ... (by this much, less than flight_gain: a jump at a confidence that makes the rules engine ask) ...
    flight_shift_sigmas: float = 4.0  # ... and moves some measured place by this many times its noise
    # pins
    pin_settle_s: float = 0.3  # a pin read down for most of the shot's last this long is down
    pin_moved_mm: float = 3.0  # a standing pin this far from where it stood has moved
    pin_touch_mm: float = 1.5  # a ball's path this close to touching a pin (beyond both radii) touched it (a pass 2 mm clear looks alike)
    pin_fall_s: float = 0.4  # a standing pin a ball came within touching distance of may still fall this long after: the shot waits
    # the cue, hands and touches
    cue_window_s: float = 0.4  # the cue is looked for this long before a ball starts
    cue_reach_mm: float = 60.0  # ... this close to the ball's surface
    cue_min_length_mm: float = 250.0  # a cue-shaped occluder is at least this long ...
    cue_max_width_mm: float = 50.0  # ... and at most this wide
    cue_gap_mm: float = 25.0  # a cue a ball cuts in two: its pieces are up to the ball's width and this apart along it
    tip_slack_mm: float = 10.0  # the ball the cue strikes lies ahead of its tip by a radius, less this
    strike_speed_mm_s: float = 350.0  # the first ball leaving faster with no cue seen was struck all the same
    double_hit_window_s: float = 0.2  # the cue touching the struck ball again this soon is a double hit
    follow_mm: float = 100.0  # a cue follows through this far past the ball's place at most (a push through, ficha 5.7)
    push_share: float = 0.5  # ... and the struck ball going on after a ball it met, along their line, at this share of that ball's speed was pushed
    push_min_mm_s: float = 150.0  # ... when that ball leaves at least this fast (slower: the share is noise)
    push_along: float = 0.7  # ... and the struck ball goes mostly that way (this share of its speed; a cut sends it sideways) ...
    spin_accel_mm_s2: float = 2000.0  # ... or faster along it than a follow's spin can take it by then: the cloth's sliding friction (0.2 g) at most
    spin_margin_mm_s: float = 100.0  # ... by this much (the noise of a speed fitted to two or three places) ...
    cue_push_mm: float = 30.0  # ... with the cue's tip this close to its surface (not merely within cue_reach_mm)
    backed_mm: float = 15.0  # ... and that ball was not this close to a cushion or a ball behind it (they pass the hit on)
    touch_min_mm: float = 10.0  # a ball must move at least this far, with nothing to explain it, to be called touched
    place_settle_s: float = 0.3  # a ball put down must rest this long before it counts as placed
    startup_s: float = 1.0  # balls first seen this soon after the first readable frame were already there


def analyse_shot(frames: ShotFrames, ids: tuple[str, ...], geometry: TableGeometry, cfg: InferConfig,
                 camera_xyh_mm: tuple[float, float, float] | None = None) -> list[Event]:
    """The events of one finished episode (a shot, or a touch), in time order; ``camera_xyh_mm`` (where the
    camera hangs, as the calibration says) lets a jump shot's flight be read off its parallax."""
    ctx = build_context(frames, ids, geometry, cfg, camera_xyh_mm)
    moving = [m for m in ctx.moving() if m.t_start is not None and m.r0 is not None]
    if not moving:
        return []
    first = _striker(ctx, moving)
    ctx.striker, ctx.t_strike = first.i, float(first.t_start)
    cause, strike_conf = is_strike(ctx, first)
    first.cause = cause
    touch: Event | None = None
    if cause == "hand":
        # a touch: unless the cue then struck a ball in the same episode (the touched ball still rolling)
        struck = _later_strike(ctx, first)
        if struck is not None:
            touch = BallTouched(t_s=ctx.t_strike, ball=first.id, xy_mm=_xy(first.r0), confidence=strike_conf)
            first, cause, strike_conf = struck, "cue", 0.9
            ctx.striker, ctx.t_strike = first.i, float(first.t_start)
            first.cause = "cue"
    strike = cause == "cue"
    if cause == "carry":
        # a hand lifting a ball and taking it away: a removal, nothing else happened
        if ctx.frames.state[-1, first.i] == TrackState.OFF:
            return [BallRemoved(t_s=ctx.t_strike, ball=first.id, xy_mm=_xy(first.r0), confidence=strike_conf)]
        return []
    contacts = infer_contacts(ctx, frozen_pushes(ctx) if strike else [])
    events: list[Event] = [touch] if touch is not None else []
    jumps: list[Event] = []
    if not strike:
        events.append(BallTouched(t_s=ctx.t_strike, ball=first.id, xy_mm=_xy(first.r0), confidence=strike_conf))
    else:
        positions = {ids[m.i]: _xy(m.r0) for m in ctx.motions if m.r0 is not None and m.present0}
        positions[first.id] = _xy(first.r0)
        events.append(ShotStart(t_s=ctx.t_strike, ball=first.id, xy_mm=_xy(first.r0), positions=positions,
                                confidence=strike_conf))
        jumps = infer_jumps(ctx)
        if not any(j.ball == first.id for j in jumps):
            jumps += parallax_jumps(ctx, contacts)
        events += jumps
        events += contact_events(ctx, contacts)
    pots, potted = infer_pots(ctx, contacts)
    events += pots
    off, gone = infer_off_table(ctx, potted)
    events += off
    events += implied_jumps(ctx, jumps, off) if strike else []
    events += infer_cushions(ctx, contacts, off + pots) if strike else []
    removed, lifted = removed_in_shot(ctx, potted | gone)
    events += removed
    gone |= lifted
    if strike:
        events += infer_pins(ctx)
        events += infer_double_hit(ctx, contacts)
        events += infer_touched(ctx)
    events += _lost(ctx, potted | gone)
    t_end = _end_time(ctx, events)
    events = [e for e in events if not (isinstance(e, Unobserved) and e.until_s < e.t_s)]
    if strike:
        events.append(_at_rest(ctx, t_end, potted | gone, {e.pin for e in events if isinstance(e, PinDown)}))
    # every event within the shot, in time order (ties keep the order above: the strike first)
    lo = ctx.t_strike
    events = [e if isinstance(e, BallRemoved) or e is touch else _clamp(e, lo, t_end) for e in events]
    events.sort(key=lambda e: (e.t_s, 0 if isinstance(e, ShotStart) else 2 if isinstance(e, AtRest) else 1))
    return events


def _creeping(t: np.ndarray, z: np.ndarray, floor_mm_s: float) -> bool:
    """Whether measurements ``z`` (n, 2) at times ``t`` (n,) run on in a straight line faster than
    ``floor_mm_s`` and than three times the noise of that speed (the line's residuals tell it): a ball
    still rolling at 30 mm/s moves 7.5 mm in a rest window, which vision's noise of 2 mm a frame can
    hide from the halves' medians, not from a line through every measurement."""
    tc = t - t.mean()
    stt = float(tc @ tc)
    if len(t) < 4 or stt <= 0.0:
        return False
    zc = z - z.mean(axis=0)
    v = (tc @ zc) / stt  # (2,) least-squares velocity
    res = zc - np.outer(tc, v)
    sigma_v = math.sqrt(float(np.sum(res * res)) / (2 * (len(t) - 2)) / stt)  # per axis
    return bool(np.linalg.norm(v) > max(floor_mm_s, 3.0 * sigma_v))


def _on_table(state: np.ndarray) -> np.ndarray:
    """Which balls are on the table between shots: not off it, and not in a pocket's net (a ball taken
    from the net and put down is a placement)."""
    return (state != TrackState.OFF) & (state != TrackState.IN_POCKET)


def _quiet_gap(ctx: ShotContext, t0: float, t1: float) -> bool:
    """Whether frames that could not be read from ``t0`` to ``t1`` hid nothing of the shot: every ball
    was at rest through them, or rolling on one piece of free motion across them (the same motion
    before and after), and no rolling ball came near a cushion, a pocket or another ball meanwhile.
    Then no event can have happened in the gap (a camera knocked during a slow roll)."""
    cfg = ctx.config
    g = ctx.geometry
    margin = cfg.contact_tol_mm
    ts = np.linspace(t0, t1, 25)
    paths = {}
    for m in ctx.motions:
        if m.r0 is None or not m.present0:
            continue
        if not m.moved or m.t_stop is not None and m.t_stop < t0:
            paths[m.i] = np.repeat((m.r1 if m.moved else m.r0)[None], len(ts), axis=0)
            continue
        if m.t_start is not None and m.t_start > t1 + ctx.dt:
            paths[m.i] = np.repeat(m.r0[None], len(ts), axis=0)  # it started after the gap
            continue
        if m.nudged or m.t_start is None or m.t_start > t0 or m.r1 is None and m.end_state != TrackState.SEEN:
            return False
        if not any(p.t_first < t0 and p.t_last > t1 for p in m.pieces):
            return False  # it started, stopped or changed its way unseen
        pos = next(p for p in m.pieces if p.t_first < t0 and p.t_last > t1).at(ts)
        if any(np.any(line.distance(pos) < margin) for line in g.main_lines):
            return False
        if len(g.pocket_xy) and np.any(np.linalg.norm(pos[:, None, :] - g.pocket_xy[None], axis=2) - g.pocket_r[None] < ctx.R + margin):
            return False
        paths[m.i] = pos
    for i, a in paths.items():
        for j, b in paths.items():
            if i < j and np.any(np.linalg.norm(a - b, axis=1) < 2 * ctx.R + margin):
                return False
    return True


def _striker(ctx: ShotContext, moving: list[BallMotion]) -> BallMotion:
    """The ball the cue struck: the one a cue-shaped occluder's tip was at when the first ball moved
    (a frozen ball may leave faster than the struck one, which may hardly move at all), else the
    first to move."""
    cfg = ctx.config
    earliest = min(m.t_start for m in moving)
    pointed = []
    for m in ctx.motions:
        if m.r0 is None or not m.present0 or (m.moved and m.t_start is not None and m.t_start - earliest > cfg.cue_window_s):
            continue
        if not m.moved and not _frozen_to_mover(ctx, m, earliest):
            continue  # a ball the cue strikes moves, or passes the hit on to one frozen to it
        # where the tip was at the strike (before it, in the back swing, it may pass over other balls)
        _, tip = ctx.cue_tip(m.r0, earliest - 2.5 * ctx.dt, earliest + ctx.dt, ctx.R + cfg.cue_reach_mm)
        if tip > ctx.R + cfg.cue_reach_mm:  # or just after it, followed through past where it stood
            _, tip = ctx.cue_tip(m.r0, earliest, earliest + ctx.dt, ctx.R + cfg.cue_reach_mm, past_mm=cfg.follow_mm)
        if tip <= ctx.R + cfg.cue_reach_mm:
            pointed.append((tip, m))
    if pointed:
        m = min(pointed, key=lambda p: p[0])[1]  # the ball the tip was closest to (a cue lies along a line of balls)
        m.t_start = earliest if m.t_start is None else min(m.t_start, earliest)
        return m
    return min(moving, key=lambda m: m.t_start)


def _frozen_to_mover(ctx: ShotContext, m: BallMotion, earliest: float) -> bool:
    """Whether a ball frozen to ``m`` (within what the rest places tell) started to move with the first motion."""
    cfg = ctx.config
    for b in ctx.moving():
        if b is m or b.r0 is None or b.t_start is None or b.t_start - earliest > 2.5 * ctx.dt:
            continue
        if float(np.linalg.norm(b.r0 - m.r0)) - 2 * ctx.R < cfg.frozen_gap_mm + 2 * max(m.sigma0, b.sigma0):
            return True
    return False


def _later_strike(ctx: ShotContext, touched: BallMotion) -> BallMotion | None:
    """A ball that started after ``touched`` with the cue's tip at it: the shot that followed a touch
    before everything was still again."""
    cfg = ctx.config
    for m in sorted(ctx.moving(), key=lambda m: m.t_start if m.t_start is not None else math.inf):
        if m is touched or m.t_start is None or m.r0 is None or m.t_start <= touched.t_start:
            continue
        _, tip = ctx.cue_tip(m.r0, m.t_start - cfg.cue_window_s, m.t_start + ctx.dt, ctx.R + cfg.cue_reach_mm)
        if tip <= ctx.R + cfg.cue_reach_mm:
            return m
    return None


def _xy(p: np.ndarray) -> tuple[float, float]:
    return (float(p[0]), float(p[1]))


def _clamp(e: Event, lo: float, hi: float) -> Event:
    """The event moved into [lo, hi] (through its JSON form: the event types are only built by keyword)."""
    if lo <= e.t_s <= hi:
        return e
    return event_from_dict({**event_to_dict(e), "t_s": min(max(e.t_s, lo), hi)})


def _end_time(ctx: ShotContext, events: list[Event]) -> float:
    stops = [m.t_stop for m in ctx.motions if m.moved and m.t_stop is not None]
    stops += [m.t_last for m in ctx.motions if m.moved and m.r1 is None and len(m.ts)]
    stops += [e.t_s for e in events]
    t = max(stops) if stops else ctx.t_strike
    return float(min(t, ctx.frames.t[-1]))


def _lost(ctx: ShotContext, accounted: set[int]) -> list[Unobserved]:
    """Balls that vanished in the middle of the table (vision lost them): nothing can be said of
    them from then on; the rules engine asks."""
    out = []
    for m in ctx.motions:
        if m.i in accounted:
            continue
        last = vanished(ctx, m)
        if last is None:
            continue
        out.append(Unobserved(t_s=last[0], until_s=float(ctx.frames.t[-1]), reason=f"{m.id} was lost from view"))
    return out


def _at_rest(ctx: ShotContext, t_end: float, gone: set[int], down: set[str]) -> AtRest:
    """Where the balls and pins stand at the end of the shot; not the pins ``down`` in it (one set up
    again before the shot was called over is not standing yet as the rules count the shot)."""
    positions = {}
    for m in ctx.motions:
        if m.i in gone:
            continue
        end = ctx.frames.state[-1, m.i]
        if end in (TrackState.OFF, TrackState.IN_POCKET):
            continue
        p = m.r1 if m.r1 is not None else (m.r0 if not m.moved else ctx.frames.xy[-1, m.i])
        if p is not None and np.all(np.isfinite(p)):
            positions[m.id] = _xy(p)
    pins = {}
    f = ctx.frames
    g = ctx.geometry
    if f.pin_state is not None:
        tail = f.t >= f.t[-1] - ctx.config.pin_settle_s
        for j, pid in enumerate(g.pin_ids[: f.pin_state.shape[1]]):
            st = f.pin_state[tail, j]
            if pid in down or np.mean(st == PinState.DOWN) > 0.5:
                continue
            xy = f.pin_xy[tail, j][st != PinState.DOWN]
            xy = xy[np.isfinite(xy[:, 0])]
            p = np.median(xy, axis=0) if len(xy) else g.pin_xy[j]
            pins[pid] = _xy(p)
    return AtRest(t_s=t_end, positions=positions, pins=pins)


class EventInferer:
    """Turns a stream of :class:`~tracking.tracks.Tracks` into events; see the module docstring."""

    def __init__(self, profile: TableProfile, config: InferConfig | None = None,
                 camera_xyh_mm: tuple[float, float, float] | None = None):
        self.profile = profile
        self.config = config or InferConfig()
        self.camera_xyh_mm = camera_xyh_mm  # where the camera hangs (a calibration's): jump shots' parallax
        self.geometry = TableGeometry(profile)
        self.ids = profile.ball_ids
        n = len(self.ids)
        self._preroll: deque[Tracks] = deque()
        self._shot: list[Tracks] | None = None
        self._present = np.zeros(n, dtype=bool)
        self._rest = np.full((n, 2), np.nan)
        self._recent: list[deque] = [deque(maxlen=self.config.rest_samples) for _ in range(n)]
        self._last_seen_t = np.full(n, -math.inf)
        self._appeared: dict[int, float] = {}
        self._queue: list[tuple[float, int, Event]] = []
        self._seq = 0
        self._last_t = -math.inf  # the time of the last event handed out
        self.settled_s = -math.inf  # every event before this time has been given (the live pipeline's watermark)
        self._invalid_from: float | None = None
        self._last_frame_t = -math.inf
        self._frame_ts: deque[float] = deque(maxlen=3)  # the last three readable frames' times
        self._seen_before_t = np.full(n, -math.inf)  # each ball's measurement before its last one
        self._edge_wait_from: float | None = None
        self._edge_wait_on: np.ndarray | None = None  # the balls on the table once only that wait held the shot
        self._first_t: float | None = None  # the first readable frame
        self._motion_from = (math.nan, math.nan)  # (frame time, the bound of _next_motion_from at it)
        self._trigger = 0  # the index, in the shot's frames, of the frame that found the first motion

    # ---- the per-frame entry point ----------------------------------------------------------
    def step(self, tracks: Tracks) -> list[Event]:
        """The events that became certain with this frame, in time order; :attr:`settled_s` then says
        how far the log is complete."""
        out = self._step(tracks)
        self.settled_s = max(self.settled_s, self._watermark())
        return out

    def _step(self, tracks: Tracks) -> list[Event]:
        t = float(tracks.t_s)
        if tracks.repeated:
            # no new measurement, but the picture is the last one's: nothing on the table moved since, so
            # the balls' stillness (and a dropped ball's absence) lasts until now (a still table's frames
            # encode the same: the shot must not wait for the next frame that differs)
            if self._shot is not None and tracks.valid and self._invalid_from is None and (dropped := self._shot_over(t)) is not None:
                self._end_shot(dropped=dropped)
                return self._release(math.inf)
            return []
        if not tracks.valid:
            if self._invalid_from is None:
                self._invalid_from = t
            self._last_frame_t = t
            return []
        if self._invalid_from is not None:
            self._push(Unobserved(t_s=self._invalid_from, until_s=t, reason=UNREADABLE))
            self._invalid_from = None
        self._last_frame_t = t
        self._frame_ts.append(t)
        self._seen(tracks)
        if self._shot is not None:
            self._shot.append(tracks)
            dropped = self._shot_over(t)
            if dropped is not None:
                self._end_shot(dropped=dropped)
                return self._release(math.inf)
            if self._edge_wait_on is None or not np.any(_on_table(tracks.state) & ~self._edge_wait_on):
                return []
            # the table had come to rest but for a ball on a hole's edge that may still drop (bar billiards
            # 2f b), and a ball has been put on the table: the next shot is being set up, so this one is
            # over as it stood before that ball came, and the frame is read as one between shots
            self._shot.pop()
            self._end_shot()
            out = self._release(math.inf)
            return out + self._between(tracks)
        return self._between(tracks)

    def _between(self, tracks: Tracks) -> list[Event]:
        """A frame between shots: hands putting balls down or taking them, and the start of a shot."""
        self._keep_preroll(tracks)
        self._hands(tracks)
        if self._starts_moving(tracks):
            self._shot = list(self._preroll)
            self._trigger = len(self._shot) - 1
            return self._release(math.inf)
        return self._release(self._watermark(queued=False))

    def finish(self) -> list[Event]:
        """The end of the video: an open shot is analysed as it stands (without ``at_rest`` if balls
        were still moving), an open unreadable span is closed, pending placements are settled."""
        if self._invalid_from is not None:
            self._push(Unobserved(t_s=self._invalid_from, until_s=max(self._last_frame_t, self._invalid_from),
                                  reason=UNREADABLE))
            self._invalid_from = None
        if self._shot is not None:
            self._end_shot(finished=False)
        out = self._release(math.inf)
        self.settled_s = math.inf  # nothing more comes
        return out

    # ---- bookkeeping -----------------------------------------------------------------------------
    def _push(self, e: Event) -> None:
        self._seq += 1
        bisect.insort(self._queue, (e.t_s, self._seq, e))

    def _frame_period(self) -> float:
        """The frame period, from the last readable frames (0 before two)."""
        return float(median(np.diff(self._frame_ts))) if len(self._frame_ts) >= 2 else 0.0

    def _watermark(self, queued: bool = True) -> float:
        """The time before which no event can come any more: the first event waiting in the queue (with
        ``queued``; without, the time up to which the queue may be given out), a ball put down and not
        yet settled (its placement is dated when it appeared), an unreadable span still open, the open
        shot's first frame (its events all fall after it) or, between shots, the earliest the next
        shot's first motion may be dated (:meth:`_next_motion_from`); at most the last frame. An event
        that would still come earlier is moved up to it (:meth:`_release`)."""
        bounds = [self._last_frame_t, *self._appeared.values()]
        if self._queue and queued:
            bounds.append(self._queue[0][0])
        if self._invalid_from is not None:
            bounds.append(self._invalid_from)
        if self._shot:
            bounds.append(self._shot[0].t_s)
        else:
            bounds.append(self._next_motion_from())
        return min(bounds)

    def _next_motion_from(self) -> float:
        """Between shots: the earliest time a shot not yet begun may date its first motion. The shot's
        analysis (:mod:`tracking.infer.shot`) dates a ball's start from the first of three measurements
        running off its place at rest (by more than ``move_mm``), at most a frame before the measurement
        preceding them. So: a frame before the measurement preceding a run of measurements off their
        place that has begun in the pre-roll (a ball nudged a little, or starting to roll; a run of one
        or two at the end may go on), and a frame before each ball's last measurement (a ball hidden now
        may be found moved, or gone, when it is seen again). A ball with no place at rest yet holds it
        at the pre-roll's first frame."""
        if self._motion_from[0] == self._last_frame_t:
            return self._motion_from[1]  # (asked twice a frame: to give out the queue, then for the watermark)
        pre = self._preroll
        dt = self._frame_period()
        bound = self._last_frame_t
        last_seen = self._last_seen_t[self._present & np.isfinite(self._last_seen_t)]
        if len(last_seen):  # (a ball lifted away unseen is removed when it was last seen)
            bound = min(bound, float(last_seen.min()) - dt)
        if pre:
            t = np.array([f.t_s for f in pre])
            z = np.stack([f.z_mm for f in pre])  # (frames, balls, 2)
            meas = np.isfinite(z[:, :, 0])
            seen = meas.any(axis=0)
            if np.any(seen & ~np.isfinite(self._rest[:, 0])):
                bound = float(t[0]) - dt
            elif seen.any():
                with np.errstate(invalid="ignore"):
                    off = np.linalg.norm(z - self._rest[None], axis=2) > self.config.move_mm - MOTION_SLACK_MM
                for i in np.flatnonzero(off.any(axis=0)):
                    ks = np.flatnonzero(meas[:, i])
                    r = off[ks, i]
                    # where a run of three off its place begins (or one of one or two at the end, which may go on)
                    runs = np.concatenate([r[:-2] & r[1:-1] & r[2:], [r[-2] & r[-1]] if len(r) >= 2 else [], r[-1:]])
                    if runs.any():
                        first = int(np.argmax(runs))
                        bound = min(bound, float(t[ks[first - 1]] if first > 0 else t[0] - dt) - dt)
        self._motion_from = (self._last_frame_t, bound)
        return bound

    def _release(self, until: float) -> list[Event]:
        out = []
        floor = max(self._last_t, self.settled_s)
        while self._queue and self._queue[0][0] <= until:
            _, _, e = self._queue.pop(0)
            if e.t_s < floor:
                # (a ball hidden under a hand, then found gone: its removal is dated no earlier than the log is complete)
                log.debug("event %s at %.3f s moved to %.3f s to keep the log in time order", e.kind, e.t_s, floor)
                e = _clamp(e, floor, math.inf)
            self._last_t = floor = e.t_s
            out.append(e)
        return out

    def _seen(self, tracks: Tracks) -> None:
        meas = tracks.measured
        self._seen_before_t[meas] = self._last_seen_t[meas]
        self._last_seen_t[meas] = tracks.t_s
        for i in np.flatnonzero(meas):
            self._recent[i].append(tracks.z_mm[i].copy())

    def _keep_preroll(self, tracks: Tracks) -> None:
        self._preroll.append(tracks)
        while self._preroll and self._preroll[0].t_s < tracks.t_s - self.config.preroll_s:
            self._preroll.popleft()

    def _settled(self, i: int) -> np.ndarray | None:
        """Where ball ``i`` stands still (:meth:`_still`), or, when its latest sightings do not all agree,
        where its last three do (as for a ball just put down): a ball found again where a hand left it,
        its earlier sightings elsewhere, may be struck before they have all gone."""
        c = self._still(i)
        if c is None and len(self._recent[i]) >= 5:
            c = self._still(i, 3, last=3)
        return c

    def _still(self, i: int, least: int = 5, last: int | None = None) -> np.ndarray | None:
        """Where ball ``i`` stands still (the median of its last, at least ``least``, measurements; of
        only its ``last`` ones when given), or None."""
        r = self._recent[i]
        if len(r) < min(least, self.config.rest_samples):
            return None
        z = np.array(r)[-last:] if last else np.array(r)
        c = median(z, axis=0)
        if np.max(np.linalg.norm(z - c, axis=1)) > self.config.rest_tol_mm * 1.5:
            return None
        return c

    # ---- between shots: hands and the start of motion -------------------------------------------
    def _hands(self, tracks: Tracks) -> None:
        cfg = self.config
        t = tracks.t_s
        on = _on_table(tracks.state)
        for i in np.flatnonzero(on & ~self._present):
            if self._first_t is None or t - self._first_t <= cfg.startup_s:
                continue  # the balls on the table when the camera starts were not placed in view
            self._appeared[i] = t
            self._recent[i].clear()  # what an earlier life of this id left; this frame's sighting stays
            if tracks.measured[i]:
                self._recent[i].append(tracks.z_mm[i].copy())
        for i in np.flatnonzero(~on & self._present):
            if i in self._appeared:
                del self._appeared[i]  # it came and went without settling
            else:
                xy = self._rest[i] if np.isfinite(self._rest[i, 0]) else tracks.xy_mm[i]
                if not np.all(np.isfinite(xy)):
                    xy = self._rest[i]
                self._push(BallRemoved(t_s=float(max(self._last_seen_t[i], self._last_t)), ball=self.ids[i],
                                       xy_mm=_xy(xy) if np.all(np.isfinite(xy)) else None))
            self._rest[i] = np.nan
        self._present = on.copy()
        if self._first_t is None:
            self._first_t = t
        for i, t0 in list(self._appeared.items()):
            # (where it stands now: its first sightings, the hand still letting go of it and vision's
            # measure of a ball half under the fingers off by a centimetre, are no part of its place)
            c = self._still(i, 3, last=3)
            if c is None:
                if not np.isfinite(self._rest[i, 0]) and len(self._recent[i]):
                    self._rest[i] = self._recent[i][0]  # where it was first seen, until it has settled
                continue
            self._rest[i] = c  # a ball just put down may be struck before it has settled long
            if t - t0 >= cfg.place_settle_s and tracks.state[i] == TrackState.SEEN:
                self._placed(i)
        for i in np.flatnonzero(on & ~np.isfinite(self._rest[:, 0])):
            if i in self._appeared:
                continue
            c = self._settled(i)
            if c is not None:
                self._rest[i] = c

    def _placed(self, i: int) -> None:
        self._push(BallPlaced(t_s=self._appeared.pop(i), ball=self.ids[i], xy_mm=_xy(self._rest[i])))

    def _starts_moving(self, tracks: Tracks) -> bool:
        cfg = self.config
        tol = max(cfg.move_mm, 4.0 * cfg.sigma_rest_mm)
        for i in np.flatnonzero(np.isfinite(self._rest[:, 0])):
            r = self._recent[i]
            if len(r) < 2:
                continue
            if tracks.measured[i]:
                moved = len(r) >= 3 and all(np.linalg.norm(z - self._rest[i]) > tol for z in list(r)[-3:])
            else:
                # seen at its place, in the next frame (or two, going faster away) a ball's width off
                # it, in the next not at all: struck off the table or into a pocket before a third frame
                # could see it on its way (not a ball lifted under a hand: that one was hidden before it
                # was seen away)
                ft = self._frame_ts
                off = [float(np.linalg.norm(z - self._rest[i])) for z in list(r)[-3:]]
                moved = len(ft) == 3 and self._last_seen_t[i] == ft[1] and self._seen_before_t[i] == ft[0] and \
                    off[-1] > self.geometry.R + tol and (off[-2] <= tol or (
                        len(off) == 3 and off[-3] <= tol and off[-1] > off[-2] + self.geometry.R))
            if moved:
                for j in list(self._appeared):
                    if np.isfinite(self._rest[j, 0]):
                        self._placed(j)  # put down and struck at once (bar billiards: a ball from the trough)
                return True
        return False

    # ---- the end of a shot -------------------------------------------------------------------------
    def _shot_over(self, t: float) -> tuple[int, ...] | None:
        """None while the shot goes on; when it is over, the balls that have dropped into a pocket or a
        hole though the tracker still has them missing (:meth:`_dropped`)."""
        cfg = self.config
        shot = self._shot
        assert shot is not None
        if t - shot[0].t_s > cfg.max_shot_s:
            log.warning("a shot from %.2f s has not come to rest after %.0f s: it is cut here", shot[0].t_s, cfg.max_shot_s)
            return ()
        window = [f for f in shot if f.t_s >= t - cfg.rest_window_s]
        if len(window) < 3 and t > shot[-1].t_s:
            window = shot[-3:]  # frames since that repeat the last: the last three that measured
        if len(window) < 3 or shot[0].t_s > t - cfg.rest_window_s - cfg.preroll_s * 0.5:
            return None
        if t - window[0].t_s < 0.75 * cfg.rest_window_s:
            return None  # frames missing in the window (unreadable ones): not long enough seen still
        last = window[-1]
        dropped: list[int] = []
        waiting = False  # a ball on a hole's edge may still drop
        for i in range(len(self.ids)):
            st = last.state[i]
            if st in (TrackState.OFF, TrackState.IN_POCKET):
                continue
            if st == TrackState.MISSING and self._dropped(i, t):
                dropped.append(i)
                continue
            if st in (TrackState.MISSING, TrackState.AIRBORNE):
                return None
            seen = [f for f in window if np.isfinite(f.z_mm[i, 0])]
            z = np.array([f.z_mm[i] for f in seen])
            if len(z) == 0:
                if st == TrackState.OCCLUDED and np.all(np.array([f.state[i] for f in window]) == TrackState.OCCLUDED):
                    continue  # hidden all along at one place
                return None
            if np.any(np.nan_to_num(last.v_mm_s[i]) != 0.0):
                return None  # the tracker has it moving still (a slow ball back off a jaw stays within the tolerances below a while)
            c = median(z, axis=0)
            if np.max(np.linalg.norm(z - c, axis=1)) > cfg.rest_tol_mm * 1.5:
                return None
            half = len(z) // 2
            if half >= 2 and np.linalg.norm(median(z[:half], axis=0) - median(z[half:], axis=0)) > cfg.creep_mm:
                return None  # still creeping
            if half >= 2 and _creeping(np.array([f.t_s for f in seen]), z, cfg.creep_mm_s):
                return None  # still creeping, as all its measurements in the window together say
            # (one frame that missed it among a window of a dozen or more, seen still on both sides, is no
            # motion: at 60 fps nine balls' 15 frames often hold one, and a shot could run on into the next)
            missed = np.array([f.state[i] for f in window]) == TrackState.MISSING
            if np.count_nonzero(missed) > (1 if len(window) >= 12 else 0) or missed[-2:].any():
                return None
            wait = self._edge_wait(c)
            if wait > 0:
                if self._edge_wait_from is None:
                    self._edge_wait_from = t
                if t - self._edge_wait_from < wait:
                    waiting = True
        if waiting:
            if self._edge_wait_on is None:
                self._edge_wait_on = _on_table(last.state)  # every other ball at rest
            return None
        if not self._pins_settled(t) or self._pin_may_fall(t):
            return None
        self._edge_wait_from, self._edge_wait_on = None, None
        return tuple(dropped)

    def _pins_settled(self, t: float) -> bool:
        """Whether every pin reads now as it mostly read over the last ``pin_settle_s`` (its last three
        readings alike): a pin still falling (read standing through its fall, down from when it lies)
        holds the end of the shot until it reads down for most of that time, as :mod:`tracking.infer.pin`
        reads it; a wobbling pin misread down now and then does not hold it long."""
        shot = self._shot
        assert shot is not None
        frames = [f for f in shot if f.t_s >= t - self.config.pin_settle_s and f.pins is not None and len(f.pins.ids)]
        if len(frames) < 3:
            return True
        n = min(len(f.pins.state) for f in frames)
        st = np.stack([f.pins.state[:n] for f in frames]) == PinState.DOWN  # (frames, pins)
        last = st[-3:]
        alike = np.all(last == last[:1], axis=0)
        return bool(np.all(alike & (last[0] == (st.mean(axis=0) > 0.5))))

    def _pin_may_fall(self, t: float) -> bool:
        """Whether a ball came within touching distance of a pin standing now (the ball's and the pin's
        radii plus ``cushion_tol_mm``: a frame's noise) less than ``pin_fall_s`` ago, on its way between
        two measurements: a touched pin tilts for a moment before it lies down, and its fall belongs to
        the shot (bar billiards 2h), so the shot is not over until it has had the time to fall."""
        cfg = self.config
        g = self.geometry
        shot = self._shot
        assert shot is not None
        last = shot[-1]
        if last.pins is None or not len(last.pins.ids) or len(g.pin_ids) == 0:
            return False
        n = min(len(last.pins.state), len(g.pin_ids))
        standing = np.flatnonzero(last.pins.state[:n] != PinState.DOWN)
        if not len(standing):
            return False
        recent = [f for f in shot if f.t_s >= t - cfg.pin_fall_s - 0.1]
        if len(recent) < 2:
            return False
        z = np.stack([f.z_mm for f in recent])  # (frames, balls, 2)
        rolling = np.any(np.nan_to_num(np.stack([f.v_mm_s for f in recent])) != 0.0, axis=2)  # (frames, balls)
        touch = g.R + g.pin_r[standing] + cfg.cushion_tol_mm  # (pins,)
        ts = np.array([f.t_s for f in recent])
        for i in range(z.shape[1]):
            ks = np.flatnonzero(np.isfinite(z[:, i, 0]))
            if len(ks) < 2:
                continue
            a, b = z[ks[:-1], i], z[ks[1:], i]  # each step between two measurements
            d = b - a
            # (a step of a ball the tracker has at rest at both ends is vision's noise: a ball resting
            # against a pin jitters by more than move_mm between two frames now and then)
            moving = (np.linalg.norm(d, axis=1) > cfg.move_mm) & (rolling[ks[:-1], i] | rolling[ks[1:], i])
            if not moving.any():
                continue
            a, d, t_b = a[moving], d[moving], ts[ks[1:]][moving]
            rel = g.pin_xy[standing][None] - a[:, None]  # (steps, pins, 2)
            u = np.clip(np.einsum("spk,sk->sp", rel, d) / np.einsum("sk,sk->s", d, d)[:, None], 0.0, 1.0)
            gap = np.linalg.norm(rel - u[..., None] * d[:, None], axis=2)  # closest approach of each step
            near = np.any(gap <= touch[None], axis=1)
            if np.any(near & (t_b >= t - cfg.pin_fall_s)):
                return True
        return False

    def _dropped(self, i: int, t: float) -> bool:
        """Whether ball ``i``, missing in this frame, has dropped into a pocket or a bed hole: when it was
        last seen it was rolling (the tracker's filtered velocity: a ball at rest has none, however its
        measurements jitter) on a path that runs into a drop circle within ``pot_horizon_frames`` frames
        (at most ``pot_reach_mm``, as :mod:`tracking.infer.pot` reads a pot), and every frame since, for
        ``drop_wait_s`` and at least that many frames, has missed it with nothing over it (under a hand
        it may have been taken instead; a ball still on a hole's edge may have been lifted: for those the
        shot waits for the tracker). The tracker says a lost ball has left the table only after
        ``coast_s`` (half a second); a ball that went down a pocket need not hold the call that long.

        A ball tipping over a drop circle's edge may be read in the air for a frame or two (vision sees
        the part of it still in view, off its place on the cloth, with a velocity the tracker then bends
        away): such sightings, within ``pot_near_mm`` of a drop circle, are passed over for the last one on
        the cloth. A ball last seen with its centre at a pocket's drop circle edge (``over_drop_mm``) has
        dropped however slowly it crept there. The frame period is the shot's (a still table's frames repeat: no
        measurement in them)."""
        cfg = self.config
        shot = self._shot
        assert shot is not None
        g = self.geometry
        last = cloth = None
        back = 0  # frames from the last sighting back to the last on the cloth
        for f in reversed(shot):
            if last is not None:
                back += 1
                if back > 2:
                    return False  # in the air longer: a jump, not a drop
            if np.isfinite(f.z_mm[i, 0]):
                if last is None:
                    last = f
                if f.state[i] != TrackState.AIRBORNE:
                    cloth = f
                    break
                gap = np.linalg.norm(g.pocket_xy - f.z_mm[i], axis=1) - g.pocket_r
                if not (gap.size and float(gap.min()) <= cfg.pot_near_mm):
                    return False  # in the air away from every drop circle
            elif last is None and f.state[i] != TrackState.MISSING:
                return False  # hidden, or off the cloth, since it was last seen
        if last is None or cloth is None:
            return False
        ts = [f.t_s for f in shot[-30:]]
        horizon_s = cfg.pot_horizon_frames * float(median(np.diff(ts))) if len(ts) >= 2 else 0.0
        if t - last.t_s < max(cfg.drop_wait_s, horizon_s):
            return False
        # a ball creeping over a pocket's edge, slower than the tracker calls moving: its centre was on the
        # drop circle's edge when it was last seen, where no ball rests (one held in the jaws rests outside
        # it; a ball on a bed hole's edge may hang there for seconds, and the shot waits for it)
        edge = np.linalg.norm(g.pocket_xy - cloth.z_mm[i], axis=1) - g.pocket_r
        if float(np.min(edge[~g.is_hole], initial=np.inf)) <= cfg.over_drop_mm:
            return True
        v = cloth.v_mm_s[i]
        speed = float(np.linalg.norm(v)) if np.all(np.isfinite(v)) else 0.0
        if speed == 0.0:
            return False
        path = cloth.z_mm[i] + np.linspace(0.0, 1.0, 16)[:, None] * (v / speed * min(speed * horizon_s, cfg.pot_reach_mm))
        d = np.linalg.norm(path[:, None, :] - g.pocket_xy[None], axis=2) - g.pocket_r[None]
        return bool(d.size) and float(d.min()) <= 0.0

    def _drop_quiet_gaps(self, frames: ShotFrames) -> None:
        """Unreadable spans inside the shot that hid nothing (:func:`_quiet_gap`) are no gap in what is
        known of it: they leave the log (the rules engine would ask about the shot for nothing)."""
        spans = [q for q in self._queue if isinstance(q[2], Unobserved) and q[2].reason == UNREADABLE
                 and frames.t[0] < q[2].t_s and q[2].until_s < frames.t[-1]]
        if not spans:
            return
        ctx = build_context(frames, self.ids, self.geometry, self.config)
        for q in spans:
            if _quiet_gap(ctx, q[2].t_s, q[2].until_s):
                log.info("frames from %.2f s to %.2f s could not be read, but nothing could happen in them", q[2].t_s, q[2].until_s)
                self._queue.remove(q)

    def _edge_wait(self, xy: np.ndarray) -> float:
        """How long to wait for a ball still at ``xy`` before calling the shot over: on a bed hole's
        edge it may drop seconds later (bar billiards 2f b); at a pocket's lip it may still be creeping
        in; elsewhere not at all."""
        g = self.geometry
        cfg = self.config
        d = np.linalg.norm(g.pocket_xy - xy, axis=1) - g.pocket_r
        if np.any(g.is_hole & (d > -1.5) & (d < cfg.hole_edge_mm)):
            return cfg.edge_wait_max_s
        if np.any(~g.is_hole & (d < cfg.lip_mm)):
            return cfg.lip_wait_s
        return 0.0

    def _end_shot(self, finished: bool = True, dropped: tuple[int, ...] = ()) -> None:
        shot = self._shot
        assert shot is not None
        self._shot = None
        self._edge_wait_from, self._edge_wait_on = None, None
        if dropped:
            # what the tracker will say once it stops coasting them: they have left the table
            last = shot[-1]
            state, xy = last.state.copy(), last.xy_mm.copy()
            state[list(dropped)], xy[list(dropped)] = TrackState.OFF, np.nan
            shot[-1] = dataclasses.replace(last, state=state, xy_mm=xy)
        frames = ShotFrames.stack(shot, self._trigger, lone_mm=self.config.move_mm)
        try:
            events = analyse_shot(frames, self.ids, self.geometry, self.config, self.camera_xyh_mm)
        except Exception:  # noqa: BLE001 - one bad shot must not stop a live referee; it is reported
            log.exception("the shot from %.2f s to %.2f s could not be analysed", frames.t[0], frames.t[-1])
            events = [Unobserved(t_s=float(frames.t[0]), until_s=float(frames.t[-1]), reason="the shot could not be analysed")]
        if not finished:
            events = [e for e in events if not isinstance(e, AtRest)]
        for e in events:
            self._push(e)
        self._drop_quiet_gaps(frames)
        # the new places at rest; the pre-roll starts again from the still frames at the end
        last = shot[-1]
        self._present = _on_table(last.state)
        for i in range(len(self.ids)):
            self._rest[i] = np.nan
            if self._present[i]:
                c = self._settled(i)
                if c is not None:
                    self._rest[i] = c
        self._appeared.clear()
        # the next pre-roll starts from the still frames at the end of this shot
        self._preroll = deque(f for f in shot if f.t_s >= last.t_s - self.config.rest_window_s)
