"""Sample clips: a simulated match rendered to an H.264 video, with its ground truth beside it.

``make_clip(run, profile, camera, out_path, fps, seed)`` takes a played match (a
:class:`simulator.script.ScriptRun`, or anything with its ``events``, ``timeline``, ``expected``,
``game``, ``players`` and ``options``; a script file or mapping is played first), adds what the
physics does not model but a camera sees, renders every frame and writes three files:

* ``<clip>.mp4``: H.264 through :class:`cueref.video.VideoWriter`; frame ``k`` shows time
  ``k / fps`` exactly (29.97 is 30000/1001), the exposure centred on that time;
* ``<clip>.truth.json``: the ground truth (:mod:`simulator.groundtruth`, ``docs/simulator-render.md``);
* ``<clip>.events.jsonl``: the true event log with a header, which ``cueref judge`` replays.

What is added (the choreography, drawn from ``seed``):

* the **cue** comes in from beyond the rail along the shot line 0.85 s before each ShotStart, draws
  back, strikes the ball at the ShotStart's time, follows through without passing the ball, and
  withdraws beyond the rail by 0.9 s after;
* sometimes (``arm_probability``) the bridge **arm** lies over the table during the stroke;
* a **hand** holds every ball that the physics has in hand (placing or lifting), carries it in from
  the nearer long side before a placement and away after a removal (those frames show the ball
  ``in_hand`` in the truth), comes in empty before a lift and leaves empty after a placement, and
  nudges a ball at a BallTouched;
* a **camera bump** (optional): from ``bump_at_s`` the camera is rotated and shifted a little; the
  truth lists every camera with the first frame it took.
"""

from __future__ import annotations

import logging
import math
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable, Mapping, Protocol, Sequence

import numpy as np

from calibration.table import TableProfile
from simulator.camera import CameraModel
from simulator.groundtruth import TruthRecorder, events_path_for, truth_path_for
from simulator.render import RenderOptions, Renderer
from simulator.scene import BallPose, BallStatus, Occluder, Scene
from cueref.video import VideoWriter
from tracking.events import BallPlaced, BallRemoved, BallTouched, Event, LogHeader, ShotStart, write_events

__all__ = ["ClipOptions", "ClipResult", "MatchRun", "Choreography", "make_clip", "render_still", "exposure_scenes", "frame_rate", "frame_times"]

log = logging.getLogger(__name__)

CUE_LENGTH_MM = 1450.0
CARRY_S = 0.5        # a hand carries a ball between the rail and its spot in this time
CARRY_H_MM = 120.0   # at this height (the physics lowers and lifts balls from/to it)


@dataclass(frozen=True, slots=True)
class ClipOptions:
    """How a clip is made. Every field is recorded in the truth's ``generator``."""

    exposure_s: float | None = None     # shutter time; None: half the frame interval (a 180-degree shutter)
    max_blur_samples: int = 9           # scenes averaged at most per frame (odd; fast balls use more)
    blur_px_per_sample: float = 1.5     # one more sample per this many pixels of motion in the exposure (none below)
    crf: int = 23                       # x264 quality: lower is better and bigger
    cue: bool = True                    # draw the cue stroke of every shot
    arm_probability: float = 0.35       # chance that the bridge arm lies over the table in a shot
    hands: bool = True                  # hands placing, lifting and touching balls
    tail_s: float = 0.5                 # video after the last moment of the match
    bump_at_s: float | None = None      # the camera is knocked at this time (None: never)
    bump_rot_deg: tuple[float, float, float] = (0.7, -0.5, 0.4)   # about the camera's x, y, z axes
    bump_shift_mm: tuple[float, float, float] = (8.0, -5.0, 0.0)  # of the camera's centre, table frame
    render: RenderOptions = field(default_factory=RenderOptions)


@dataclass(frozen=True, slots=True)
class ClipResult:
    """The files a clip made and its size in frames."""

    video_path: Path
    truth_path: Path
    events_path: Path
    n_frames: int
    fps: Fraction
    duration_s: float


class MatchRun(Protocol):
    """What :func:`make_clip` needs of a played match (:class:`simulator.script.ScriptRun` has it)."""

    events: Sequence[Event]
    expected: Sequence[Any]
    game: str
    players: Sequence[str]
    options: Mapping[str, Any]

    @property
    def timeline(self) -> Any: ...  # .at(t_s) -> Scene, .t_end_s


def frame_rate(fps: float | int | Fraction) -> Fraction:
    """The exact frame rate: NTSC rates snap (29.97 -> 30000/1001), others as given."""
    if isinstance(fps, Fraction):
        return fps
    x = float(fps)
    if not math.isfinite(x) or x <= 0:
        raise ValueError(f"fps must be a positive number, got {fps!r}")
    for base in (24, 30, 48, 60, 120):
        if abs(x - base * 1000 / 1001) < 5e-3:
            return Fraction(base * 1000, 1001)
    return Fraction(x).limit_denominator(1001)


def frame_times(duration_s: float, fps: float | int | Fraction) -> np.ndarray:
    """Times ``k / fps`` of the frames from 0 to ``duration_s`` inclusive."""
    rate = frame_rate(fps)
    n = int(math.floor(Fraction(duration_s) * rate)) + 1
    return np.array([float(Fraction(k) / rate) for k in range(n)])


def _ease(a: float, b: float, x: float) -> float:
    """Smooth 0 -> 1 as x goes from a to b."""
    t = min(1.0, max(0.0, (x - a) / (b - a)))
    return t * t * (3 - 2 * t)


@dataclass(frozen=True, slots=True)
class _Stroke:
    t_s: float
    ball: str
    xy: tuple[float, float]
    u: tuple[float, float]
    back_mm: float
    off_mm: float  # the tip's distance from the ball when the cue is off the table
    arm: tuple[tuple[float, float], ...] | None


@dataclass(frozen=True, slots=True)
class _Carry:
    """A hand moving from ``a`` to ``b``, carrying ``ball`` (None: an empty hand coming or going)."""

    ball: str | None
    t0: float
    t1: float
    a: tuple[float, float]
    b: tuple[float, float]
    outwards: bool  # from the spot to the side


@dataclass(frozen=True, slots=True)
class _Touch:
    t_s: float
    xy: tuple[float, float]
    u: tuple[float, float]


class Choreography:
    """The scenes of a clip: the physics' timeline plus cue, arms and hands, at any time."""

    def __init__(self, profile: TableProfile, timeline: Any, events: Sequence[Event], rng: np.random.Generator,
                 options: ClipOptions):
        self.profile, self.timeline, self.options = profile, timeline, options
        self.r = profile.ball_radius_mm
        self.strokes: list[_Stroke] = []
        self.carries: list[_Carry] = []
        self.touches: list[_Touch] = []
        for e in events:
            if isinstance(e, ShotStart) and options.cue:
                self.strokes.append(self._stroke(e, rng))
            elif isinstance(e, BallPlaced) and options.hands and e.xy_mm is not None:
                t_in = self._in_hand_edge(e.ball, e.t_s, -1)
                if t_in is not None:
                    side = self._side_point(e.xy_mm)
                    self.carries.append(_Carry(e.ball, t_in - CARRY_S, t_in, side, e.xy_mm, False))
                    self.carries.append(_Carry(None, e.t_s, e.t_s + CARRY_S, e.xy_mm, side, True))
            elif isinstance(e, BallRemoved) and options.hands and e.xy_mm is not None:
                t_out = self._in_hand_edge(e.ball, e.t_s, +1)
                if t_out is not None:
                    side = self._side_point(e.xy_mm)
                    self.carries.append(_Carry(None, e.t_s - CARRY_S, e.t_s, side, e.xy_mm, False))
                    self.carries.append(_Carry(e.ball, t_out, t_out + CARRY_S, e.xy_mm, side, True))
            elif isinstance(e, BallTouched) and options.hands and e.xy_mm is not None:
                v = self._pose(e.ball, e.t_s + 2e-3)
                self.touches.append(_Touch(e.t_s, e.xy_mm, _unit(v.velocity_mm_s if v else (1.0, 0.0))))

    # ---- set-up ----------------------------------------------------------------------------------
    def _pose(self, ball: str, t_s: float) -> BallPose | None:
        for b in self.timeline.at(t_s).balls:
            if b.id == ball:
                return b
        return None

    def _in_hand_edge(self, ball: str, t_s: float, direction: int) -> float | None:
        """Where the physics' in-hand time of ``ball`` around ``t_s`` begins (direction -1, a
        placement) or ends (+1, a removal); None when the ball is never in hand there."""
        probe = t_s + direction * 0.05
        p = self._pose(ball, probe)
        if p is None or p.status != BallStatus.IN_HAND:
            return None
        t = probe
        for _ in range(400):
            nxt = t + direction * 0.005
            q = self._pose(ball, nxt)
            if q is None or q.status != BallStatus.IN_HAND:
                return t
            t = nxt
        return t

    def _side_point(self, xy: tuple[float, float]) -> tuple[float, float]:
        """The point off the nearer long side where a hand comes from."""
        W = self.profile.width_mm
        off = self.profile.rail_width_mm + 250.0
        return (xy[0], -off) if xy[1] < W / 2 else (xy[0], W + off)

    def _stroke(self, e: ShotStart, rng: np.random.Generator) -> _Stroke:
        pose = self._pose(e.ball, e.t_s + 2e-3)
        xy = e.xy_mm if e.xy_mm is not None else (pose.xy_mm if pose else (0.0, 0.0))
        v = pose.velocity_mm_s if pose is not None else (1.0, 0.0)
        speed = math.hypot(*v)
        u = _unit(v)
        back = float(np.clip(60.0 + speed / 30.0, 60.0, 220.0) * rng.uniform(0.85, 1.15))
        arm = None
        if rng.uniform() < self.options.arm_probability:
            reach = self.r + float(rng.uniform(170, 260))
            bridge = (xy[0] - u[0] * reach, xy[1] - u[1] * reach)
            if self.profile.contains(bridge, 40.0):
                perp = (-u[1], u[0])
                # the arm leaves towards the nearer long side
                if (perp[1] > 0) != (bridge[1] > self.profile.width_mm / 2):
                    perp = (-perp[0], -perp[1])
                elbow = (bridge[0] + perp[0] * 260 - u[0] * 120, bridge[1] + perp[1] * 260 - u[1] * 120)
                shoulder = (elbow[0] + perp[0] * 280 - u[0] * 160, elbow[1] + perp[1] * 280 - u[1] * 160)
                arm = (bridge, elbow, shoulder)
        # the cue comes from, and goes back to, beyond the rail behind the ball
        m = self.profile.rail_width_mm + 150.0
        exits = []
        for c, d, lo, hi in ((xy[0], -u[0], -m, self.profile.length_mm + m), (xy[1], -u[1], -m, self.profile.width_mm + m)):
            if abs(d) > 1e-9:
                exits.append(((hi if d > 0 else lo) - c) / d)
        off = max(400.0, min(exits) - self.r)
        return _Stroke(e.t_s, e.ball, (float(xy[0]), float(xy[1])), u, back, off, arm)

    @property
    def t_end_s(self) -> float:
        """When the last thing moves: the physics' end, or the last cue withdrawn or ball carried off."""
        ends = [self.timeline.t_end_s] + [s.t_s + 0.9 for s in self.strokes] + [c.t1 for c in self.carries]
        return max(ends + [t.t_s + 0.15 for t in self.touches])

    # ---- per time ----------------------------------------------------------------------------------
    def _cue_gap(self, s: _Stroke, t: float, ball_xy: tuple[float, float] | None) -> float | None:
        """Distance from the cue's tip to the struck ball's surface at its place before the strike
        (negative: the tip has passed that place, following through)."""
        tau = t - s.t_s
        if tau < -0.85 or tau > 0.9:
            return None
        if tau < -0.40:
            return s.off_mm - (s.off_mm - 20.0) * _ease(-0.85, -0.40, tau)
        if tau < -0.12:
            return 20.0 + s.back_mm * _ease(-0.40, -0.12, tau)
        if tau < 0.0:
            x = (tau + 0.12) / 0.12
            return (20.0 + s.back_mm) * (1 - x * x)
        moved = math.dist(ball_xy, s.xy) if ball_xy is not None else 1e9
        follow = min(80.0 * min(tau, 0.12) / 0.12, max(moved - 2.0, 0.0))
        if tau < 0.3:
            return -follow
        return -follow + (s.off_mm + follow) * _ease(0.3, 0.9, tau)

    def scene(self, t_s: float) -> Scene:
        base = self.timeline.at(t_s)
        balls = {b.id: b for b in base.balls}
        occluders: list[Occluder] = []
        for c in self.carries:
            if c.t0 <= t_s < c.t1:
                k = _ease(c.t0, c.t1, t_s)
                xy = (c.a[0] + (c.b[0] - c.a[0]) * k, c.a[1] + (c.b[1] - c.a[1]) * k)
                if c.ball is not None:
                    balls[c.ball] = BallPose(c.ball, xy, BallStatus.IN_HAND, CARRY_H_MM)
                else:
                    # an empty hand: at the top of the ball by the spot, higher further away
                    away = k if c.outwards else 1 - k
                    occluders.append(self._hand_over(xy, CARRY_H_MM * away))
        for s in self.strokes:
            if s.arm is not None and -0.9 <= t_s - s.t_s <= 0.5:
                occluders.append(Occluder("arm", points_mm=s.arm, width_mm=85.0, h_mm=110.0))
        for s in self.strokes:
            b = balls.get(s.ball)
            gap = self._cue_gap(s, t_s, b.xy_mm if b is not None else None)
            if gap is None:
                continue
            d = self.r + gap
            tip = (s.xy[0] - s.u[0] * d, s.xy[1] - s.u[1] * d)
            butt = (tip[0] - s.u[0] * CUE_LENGTH_MM, tip[1] - s.u[1] * CUE_LENGTH_MM)
            occluders.append(Occluder("cue", tip_xy_mm=tip, butt_xy_mm=butt, h_mm=self.r))
        for tch in self.touches:
            tau = t_s - tch.t_s
            if -0.35 <= tau <= 0.15:
                back = self.r + 45.0 + 180.0 * (1 - _ease(-0.35, 0.0, tau)) + 60.0 * _ease(0.0, 0.15, tau)
                tip = (tch.xy[0] - tch.u[0] * back, tch.xy[1] - tch.u[1] * back)
                wrist = (tip[0] - tch.u[0] * 250, tip[1] - tch.u[1] * 250)
                occluders.append(Occluder("hand", tip_xy_mm=tip, butt_xy_mm=wrist, h_mm=10.0))
        if self.options.hands:
            for b in balls.values():
                if b.status == BallStatus.IN_HAND:
                    occluders.append(self._hand_over(b.xy_mm, b.h_mm))
        return Scene(t_s, tuple(balls.values()), base.pins, tuple(occluders), base.scoreboard_down)

    def _hand_over(self, xy: tuple[float, float], h_ball_mm: float) -> Occluder:
        """A hand from the nearer side whose fingers hold a ball at ``xy`` (bottom ``h_ball_mm`` up)."""
        wrist = self._side_point(xy)
        d = _unit((xy[0] - wrist[0], xy[1] - wrist[1]))
        tip = (xy[0] - d[0] * 35.0, xy[1] - d[1] * 35.0)
        return Occluder("hand", tip_xy_mm=tip, butt_xy_mm=wrist, h_mm=h_ball_mm + 2 * self.r - 30.0)

    def motion_mm(self, t0: float, t1: float) -> float:
        """The largest distance any ball or cue tip moves between two times."""
        a, b = self.scene(t0), self.scene(t1)
        pa = {x.id: x for x in a.balls}
        m = 0.0
        for x in b.balls:
            y = pa.get(x.id)
            if y is not None and x.status == y.status:
                m = max(m, math.dist(x.xy_mm, y.xy_mm) + abs(x.h_mm - y.h_mm))
        cues_a = [o.tip_xy_mm for o in a.occluders if o.kind == "cue"]
        cues_b = [o.tip_xy_mm for o in b.occluders if o.kind == "cue"]
        for p, q in zip(cues_a, cues_b):
            m = max(m, math.dist(p, q))
        return m


def exposure_scenes(choreo: Choreography, t_s: float, exposure_s: float, options: ClipOptions, px_per_mm: float) -> list[Scene]:
    """The scenes averaged into the frame at ``t_s``: an odd number spread over the exposure centred
    on ``t_s`` (the middle one at ``t_s`` itself), one more per ``blur_px_per_sample`` pixels that
    anything moves during the exposure; a single scene when nothing moves that far."""
    moved_px = choreo.motion_mm(t_s - exposure_s / 2, t_s + exposure_s / 2) * px_per_mm
    n = int(min(options.max_blur_samples, 1 + math.floor(moved_px / options.blur_px_per_sample)))
    n += (n + 1) % 2
    centre = choreo.scene(t_s)
    if n == 1:
        return [centre]
    offs = (np.arange(n) / (n - 1) - 0.5) * exposure_s
    return [centre if j == n // 2 else choreo.scene(t_s + float(o)) for j, o in enumerate(offs)]


def render_still(run: MatchRun, profile: TableProfile, camera: CameraModel, t_s: float, fps: float | int | Fraction = 30,
                 seed: int = 0, options: ClipOptions | None = None) -> np.ndarray:
    """The picture ``make_clip`` would encode at time ``t_s`` (for previews and documentation):
    the same choreography, blur, flicker and noise, before compression. ``bump_at_s`` is ignored."""
    options = options or ClipOptions()
    exposure = options.exposure_s if options.exposure_s is not None else 0.5 / float(frame_rate(fps))
    choreo = Choreography(profile, run.timeline, tuple(run.events), np.random.default_rng([int(seed), 7]), options)
    renderer = Renderer(profile, camera, seed, options.render)
    return renderer.render(exposure_scenes(choreo, float(t_s), exposure, options, camera.fx / camera.height_mm))


def _unit(v: Sequence[float]) -> tuple[float, float]:
    n = math.hypot(v[0], v[1])
    return (1.0, 0.0) if n < 1e-9 else (v[0] / n, v[1] / n)


def _play(script: Any, profile: TableProfile, seed: int) -> MatchRun:
    from simulator.script import run_script  # only needed when given a script, not a played run

    return run_script(script, profile, seed)


def make_clip(run: MatchRun | Any, profile: TableProfile, camera: CameraModel,
              out_path: str | Path, fps: float | int | Fraction = 30, seed: int = 0,
              options: ClipOptions | None = None, profile_ref: str | None = None,
              progress: Callable[[int, int], None] | None = None) -> ClipResult:
    """Render a played match (or play a script first) to ``out_path`` (.mp4) with its truth and log.

    ``seed`` drives the choreography, the textures, the lamps and the sensor noise; with the same
    match, camera, fps, options and seed, the truth and event files come out byte-for-byte equal.
    ``profile_ref`` is how the log header and the truth name the table (a built-in name, a file or
    a spec string that :func:`calibration.table.resolve_profile` reads back); default its name.
    ``progress(n, total)`` is called before frame ``n`` of ``total`` is rendered (for a progress bar)."""
    options = options or ClipOptions()
    if isinstance(run, (str, Path, Mapping)) or not hasattr(run, "timeline"):
        run = _play(run, profile, seed)  # a script (file, mapping or Script), not yet played
    out_path = Path(out_path)
    rate = frame_rate(fps)
    exposure = options.exposure_s if options.exposure_s is not None else 0.5 / float(rate)
    timeline = run.timeline
    events = tuple(run.events)
    rng = np.random.default_rng([int(seed), 7])
    choreo = Choreography(profile, timeline, events, rng, options)
    renderer = Renderer(profile, camera, seed, options.render)
    bumped: Renderer | None = None
    if options.bump_at_s is not None:
        bumped = renderer.with_camera(camera.moved(options.bump_rot_deg, options.bump_shift_mm))
    ball_ids = [b.id for b in timeline.at(timeline.t_end_s).balls]
    pin_ids = [p.id for p in timeline.at(timeline.t_end_s).pins]
    recorder = TruthRecorder(profile, camera, ball_ids, pin_ids)
    times = frame_times(choreo.t_end_s + options.tail_s, rate)
    ppm = camera.fx / camera.height_mm
    current = renderer
    last_key: Any = None
    canvas = renderer.background
    with VideoWriter(out_path, rate, size=camera.size, crf=options.crf) as writer:
        for n, t in enumerate(times):
            if progress is not None:
                progress(n, len(times))
            if bumped is not None and current is renderer and t >= options.bump_at_s:  # type: ignore[operator]
                current = bumped
                recorder.camera_changed(float(options.bump_at_s), bumped.camera)  # type: ignore[arg-type]
            scenes = exposure_scenes(choreo, float(t), exposure, options, ppm)
            centre = scenes[len(scenes) // 2]
            key = (current, tuple((sc.balls, sc.pins, sc.occluders, sc.scoreboard_down) for sc in scenes))
            if key != last_key:  # while nothing moves, the composed picture is reused
                canvas, last_key = current.compose(scenes), key
            writer.write(current.finish(canvas, float(t)))
            recorder.add(centre, current.hidden_fraction(centre))
    expected = [e.to_dict() if hasattr(e, "to_dict") else dict(e) for e in run.expected]
    generator = {
        "fps": f"{rate.numerator}/{rate.denominator}",
        "exposure_s": round(exposure, 9),
        "clip_options": _jsonable(asdict(options)),
        "lamps": [_jsonable(asdict(lamp)) for lamp in renderer.lamps],
        "texture_px_per_mm": round(renderer.texture.s, 6),
    }
    video = {"file": out_path.name, "fps": f"{rate.numerator}/{rate.denominator}", "fps_float": round(float(rate), 6),
             "size": list(camera.size), "n_frames": len(times), "codec": "h264", "crf": options.crf}
    truth = recorder.write(truth_path_for(out_path), video=video, events=events, expected=expected, game=run.game,
                           players=tuple(run.players), options=dict(run.options), seed=seed, generator=generator,
                           profile_ref=profile_ref or profile.name)
    header = LogHeader(game=run.game, profile=profile_ref or profile.name, players=tuple(run.players), options=dict(run.options),
                       source=out_path.name)
    log_path = events_path_for(out_path)
    write_events(log_path, events, header)
    log.info("clip %s: %d frames at %s fps, %d events", out_path, len(times), rate, len(events))
    return ClipResult(out_path, truth, log_path, len(times), rate, float(times[-1]))


def _jsonable(v: Any) -> Any:
    if isinstance(v, Mapping):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, float):
        return round(v, 9)
    return v
