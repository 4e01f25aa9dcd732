"""The renderer: a :class:`~simulator.scene.Scene` seen through a :class:`~simulator.camera.CameraModel`.

How a frame is made
-------------------
1. Once per camera: the static table (cloth with fibre and mottling, cushions, wooden rails with
   grain and sights, pocket openings or bed holes, markings, the lamps' uneven light) is painted in a
   table-aligned texture (``texture_px_per_mm`` pixels per millimetre). Every picture pixel gets its
   ray (OpenCV's undistortion of the pixel, so the lens distortion is exact); the ray is met with the
   plane of the rails' top (``cushion_nose_height_mm``) and with the cloth (h = 0): a ray that meets
   the rail plane outside the playing surface sees the rail, else the cloth, and a ray between the
   two sees a cushion's or a pocket's wall. One ``cv2.remap`` turns the texture into the background,
   then vignetting is applied. This is cached; a frame starts from a copy of it.
2. Per scene: soft shadows of the balls on the cloth (one per lamp, the sphere's shadow cast by a
   lamp of finite size, plus a contact shadow), pins and balls in far-to-near order, the folded
   scoreboard, and the occluders (cue, arm, hand) with their shadows. A ball is ray-traced in its
   own small window of the per-pixel rays: the sphere of radius r centred at ``(x, y, r + h_mm)``, so
   its silhouette, its size (an airborne ball looks larger) and its position are exactly what a
   pinhole camera with this distortion sees; the pixel of the ball's centre in the ground truth is
   ``camera.project((x, y, r + h_mm))``. Shading: Lambert from each lamp plus ambient, a Blinn-Phong
   highlight, edge antialiasing from the exact distance between the ray and the sphere.
3. Several scenes spread over the exposure are averaged (motion blur); then the per-frame
   brightness flicker (mains-powered lamps beat against the frame rate) and sensor noise (a
   pre-drawn noise field shifted at random per frame) are applied in one ``cv2.addWeighted``.

A perspective note: the silhouette of a sphere off the optical axis is an ellipse whose centre lies
slightly outwards of the projection of the sphere's centre, by about ``f * tan(theta) * (r / D)^2``
(under 0.2 px for a 52 mm ball 1.5 m under a 720p camera). The ground truth is the projection of the
centre, which is what a detector that fits the silhouette should correct for.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Sequence

import cv2
import numpy as np

from calibration.table import NAMED_COLOURS, TableProfile
from simulator.camera import CameraModel, table_to_world as table_world
from simulator.scene import BallPose, BallStatus, Occluder, PinPose, Scene

__all__ = ["RenderOptions", "Renderer", "Lamp", "default_lamps"]

log = logging.getLogger(__name__)

DRAWN = (BallStatus.ON_TABLE, BallStatus.AIRBORNE, BallStatus.IN_HAND)
_SHIFT = 4  # sub-pixel bits for cv2 drawing
_ONE = 1 << _SHIFT

SKIN_BGR = (120, 155, 205)
SLEEVE_BGR = (90, 60, 45)
WOOD_BGR = (45, 85, 135)
CUE_BGR = (130, 185, 225)
CUE_BUTT_BGR = (30, 40, 70)
PIN_BGR = {"white": (225, 228, 232), "red": (40, 30, 190), "black": (25, 25, 28)}  # other colours: NAMED_COLOURS


@dataclass(frozen=True, slots=True)
class RenderOptions:
    """How the picture looks. The defaults make a realistic bar camera; tests switch things off."""

    texture: bool = True          # cloth fibre and mottling, wood grain; off: flat colours
    lighting: bool = True         # the lamps' uneven light on the table; off: even light
    vignetting: float = 0.30      # darkening in the picture's corners (0: none); real lenses 0.2-0.5
    shadows: bool = True          # ball, pin and occluder shadows
    noise_sigma: float = 2.0      # sensor noise, 8-bit grey levels (doubled in low light)
    flicker: float = 0.015        # relative amplitude of the per-frame brightness flicker
    low_light: bool = False       # a dim, warm lamp: darker picture, more noise
    texture_px_per_mm: float | None = None  # texture resolution; None: 1.5 times the picture's
    markings: bool = True         # baulk line, D, spots, rail sights
    lens_blur_px: float = 0.5     # Gaussian softness of a real lens and sensor (sigma, px); 0: razor sharp


@dataclass(frozen=True, slots=True)
class Lamp:
    """A lamp over the table: position in the table frame (``h_mm`` up from the cloth), the radius of
    its diffuser (softens shadows) and its share of the light."""

    xy_mm: tuple[float, float]
    h_mm: float
    radius_mm: float = 110.0
    power: float = 1.0


def default_lamps(profile: TableProfile, rng: np.random.Generator | None = None) -> tuple[Lamp, ...]:
    """One lamp over the centre of a short table, two over a long one, 0.8-1.0 m above the cloth,
    a little off the centre line (at random with ``rng``)."""
    L, W = profile.length_mm, profile.width_mm
    jitter = (lambda s: float(rng.normal(0, s))) if rng is not None else (lambda s: 0.0)
    h = 900.0 + (jitter(40.0) if rng is not None else 0.0)
    if L <= 1700:
        xs = [L / 2]
    else:
        xs = [L * 0.3, L * 0.7]
    return tuple(Lamp((x + jitter(30.0), W / 2 + jitter(40.0)), h, 110.0, 1.0) for x in xs)


def _smoothstep(e0: float | np.ndarray, e1: float | np.ndarray, x: np.ndarray) -> np.ndarray:
    t = np.clip((x - e0) / (e1 - e0), 0.0, 1.0)
    return t * t * (3 - 2 * t)


def _bgr(rgb: tuple[int, int, int]) -> np.ndarray:
    return np.array([rgb[2], rgb[1], rgb[0]], dtype=np.float32)


class _Texture:
    """The static table painted in a table-aligned image: pixel (u, v) is table point
    ((u / s) - margin, (v / s) - margin) in millimetres."""

    def __init__(self, profile: TableProfile, lamps: Sequence[Lamp], options: RenderOptions, s: float, rng: np.random.Generator):
        self.s = s
        p = profile
        self.margin_mm = p.rail_width_mm + 120.0
        L, W, M = p.length_mm, p.width_mm, self.margin_mm
        self.cushion_w_mm = min(50.0, 0.5 * p.rail_width_mm)
        tw, th = int(math.ceil((L + 2 * M) * s)), int(math.ceil((W + 2 * M) * s))
        u = (np.arange(tw, dtype=np.float32) + 0.5) / s - M
        v = (np.arange(th, dtype=np.float32) + 0.5) / s - M
        X, Y = np.meshgrid(u, v)
        dx = np.maximum(np.maximum(-X, X - L), 0)
        dy = np.maximum(np.maximum(-Y, Y - W), 0)
        d_out = np.maximum(dx, dy)
        cloth = d_out <= 0
        cush = (d_out > 0) & (d_out <= self.cushion_w_mm)
        rail = (d_out > self.cushion_w_mm) & (d_out <= p.rail_width_mm)

        def noise(scale_mm: float, aniso: tuple[float, float] = (1.0, 1.0)) -> np.ndarray:
            """Smooth noise of unit deviation with features of ``scale_mm`` (stretched by ``aniso``)."""
            gw = max(4, int(tw / (s * scale_mm * aniso[0])) + 2)
            gh = max(4, int(th / (s * scale_mm * aniso[1])) + 2)
            g = rng.normal(0, 1, (gh, gw)).astype(np.float32)
            out = cv2.resize(g, (tw, th), interpolation=cv2.INTER_CUBIC)
            return out / max(float(out.std()), 1e-6)

        tex = np.zeros((th, tw, 3), np.float32)
        cloth_bgr = _bgr(p.cloth_rgb)
        if options.texture:
            fibre = rng.normal(0, 1, (th, tw)).astype(np.float32)
            fibre = cv2.GaussianBlur(fibre, (0, 0), sigmaX=max(0.6, 1.5 * s), sigmaY=max(0.3, 0.4 * s))
            fibre /= max(float(fibre.std()), 1e-6)
            cloth_f = 1 + 0.035 * fibre + 0.03 * noise(120.0) + 0.015 * noise(25.0, (3.0, 1.0))
        else:
            cloth_f = np.ones_like(X)
        tex[cloth] = (cloth_bgr[None, :] * cloth_f[cloth][:, None])
        # Cushions: cloth-covered rubber, darker at the nose (in the shadow of its overhang).
        nose = _smoothstep(0.0, self.cushion_w_mm, d_out)
        cush_f = (0.62 + 0.25 * nose) * cloth_f
        cush_f = np.where(d_out < 3.0, cush_f * 0.75, cush_f)
        tex[cush] = cloth_bgr[None, :] * cush_f[cush][:, None]
        # Rails: wood with grain along each rail.
        along = np.where(dy >= dx, X, Y)
        across = d_out
        if options.texture:
            warp = 3.0 * noise(200.0) + 4.0 * np.sin(along / 170.0)
            grain = np.sin(2 * np.pi * (across + warp) / 6.0) * 0.5 + 0.5 * np.sin(2 * np.pi * (across + 1.7 * warp) / 2.3)
            wood_f = 0.9 + 0.06 * grain + 0.05 * noise(60.0, (4.0, 1.0)) + 0.02 * rng.normal(0, 1, X.shape).astype(np.float32)
        else:
            wood_f = np.ones_like(X)
        bevel = np.where(p.rail_width_mm - d_out < 8.0, 0.7, 1.0) * np.where(d_out - self.cushion_w_mm < 3.0, 0.55, 1.0)
        wood = np.array(WOOD_BGR, np.float32)
        tex[rail] = wood[None, :] * (wood_f * bevel)[rail][:, None]
        floor = d_out > p.rail_width_mm
        floor_f = 1 + 0.1 * noise(40.0) if options.texture else np.ones_like(X)
        tex[floor] = np.array([28, 30, 34], np.float32)[None, :] * floor_f[floor][:, None]

        self.tex = tex
        # Where the rails stand (solid at the rail plane): not the cloth, not a pocket opening.
        solid = (~cloth).astype(np.uint8)
        if options.markings:
            self._markings(p, cloth)
        for pocket in p.pockets:
            self._pocket(pocket, solid)
        for hole in p.holes:
            self._hole(hole)
        self.solid = solid
        # Light: each lamp lights the table as a point source over a horizontal surface, a bit
        # more sharply than 1/d^3 (lamp shades).
        if options.lighting:
            light = np.zeros_like(X)
            h_surface = np.where(cloth | floor, 0.0, p.cushion_nose_height_mm).astype(np.float32)
            for lamp in lamps:
                H = lamp.h_mm - h_surface
                d2 = (X - lamp.xy_mm[0]) ** 2 + (Y - lamp.xy_mm[1]) ** 2 + H**2
                light += lamp.power * (H**2 / d2) ** 2.2
            light /= float(light.max())
            self.tex *= (0.35 + 0.65 * light)[..., None]
        if options.low_light:
            self.tex *= np.array([0.38, 0.45, 0.55], np.float32)
        self.tex_u8 = np.clip(self.tex, 0, 255).astype(np.uint8)
        if options.texture:
            self.tex_u8 = cv2.GaussianBlur(self.tex_u8, (0, 0), 0.5)

    def to_px(self, xy_mm: Sequence[float] | np.ndarray) -> np.ndarray:
        return (np.asarray(xy_mm, dtype=np.float64) + self.margin_mm) * self.s - 0.5

    def _fixed(self, xy_mm: Sequence[float] | np.ndarray) -> np.ndarray:
        return np.round(self.to_px(xy_mm) * _ONE).astype(np.int32)

    def _circle(self, img: np.ndarray, xy_mm, r_mm: float, colour, thickness: int = -1) -> None:
        c = self._fixed(xy_mm)
        cv2.circle(img, (int(c[0]), int(c[1])), int(round(r_mm * self.s * _ONE)), colour, thickness, cv2.LINE_AA, _SHIFT)

    def _markings(self, p: TableProfile, cloth: np.ndarray) -> None:
        """Chalk lines and spots (baulk line and D, spots), blended on the cloth."""
        overlay = np.zeros(self.tex.shape[:2], np.float32)
        lw = max(1, int(round(2.0 * self.s)))
        if p.baulk_x_mm is not None:
            a, b = self._fixed((p.baulk_x_mm, 0.0)), self._fixed((p.baulk_x_mm, p.width_mm))
            cv2.line(overlay, tuple(a), tuple(b), 1.0, lw, cv2.LINE_AA, _SHIFT)
            if p.d_radius_mm and p.d_centre_mm is not None:
                c = self._fixed(p.d_centre_mm)
                start = 90 if p.d_direction < 0 else -90
                cv2.ellipse(overlay, tuple(c), (int(p.d_radius_mm * self.s * _ONE),) * 2, 0, start, start + 180, 1.0, lw, cv2.LINE_AA, _SHIFT)
        for name, xy in p.spots.items():
            if name != "cue":
                self._circle(overlay, xy, 3.0, 1.0)
        overlay *= cloth
        white = np.array([215, 225, 225], np.float32)
        self.tex += (white[None, None, :] - self.tex) * (0.55 * overlay)[..., None]
        if p.kind == "six_pocket":
            L, W, cw = p.length_mm, p.width_mm, self.cushion_w_mm
            mid = cw + (p.rail_width_mm - cw) / 2
            sights = [(L * i / 8, -mid) for i in (1, 2, 3, 5, 6, 7)] + [(L * i / 8, W + mid) for i in (1, 2, 3, 5, 6, 7)]
            sights += [(-mid, W * i / 4) for i in (1, 2, 3)] + [(L + mid, W * i / 4) for i in (1, 2, 3)]
            for xy in sights:
                self._circle(self.tex, xy, 4.0, (200, 215, 220))

    def _local(self, xy_mm, r_mm: float) -> tuple[slice, slice, np.ndarray]:
        """The texture window around a disc (rows, cols) and its origin in texture pixels."""
        c = self.to_px(xy_mm)
        rr = r_mm * self.s + 3
        th, tw = self.tex.shape[:2]
        x0, y0 = max(0, int(c[0] - rr)), max(0, int(c[1] - rr))
        x1, y1 = min(tw, int(c[0] + rr) + 2), min(th, int(c[1] + rr) + 2)
        return slice(y0, y1), slice(x0, x1), np.array([x0, y0], np.float64)

    def _pocket(self, pocket, solid: np.ndarray) -> None:
        """The pocket's opening cut through the cushion and rail, and its dark drop."""
        c = np.asarray(pocket.xy_mm)
        reach = max(pocket.radius_mm + float(np.linalg.norm(c - np.asarray(j))) for j in pocket.jaws_mm)
        rows, cols, o = self._local(c, reach)
        ang = np.linspace(0, 2 * np.pi, 48, endpoint=False)
        circle = c[None, :] + pocket.radius_mm * np.stack([np.cos(ang), np.sin(ang)], 1)
        pts = np.concatenate([circle, np.asarray(pocket.jaws_mm)])
        hull = cv2.convexHull(np.round((self.to_px(pts) - o) * _ONE).astype(np.int32))
        sub_solid = solid[rows, cols]
        cv2.fillConvexPoly(sub_solid, hull, 0, cv2.LINE_AA, _SHIFT)
        throat = np.zeros(sub_solid.shape, np.uint8)
        cv2.fillConvexPoly(throat, hull, 255, cv2.LINE_AA, _SHIFT)
        # the bed stays cloth up to the line between the jaws; beyond it, the opening's floor (dark
        # cloth running into the pocket) and the drop
        (ax, ay), (bx, by) = pocket.jaws_mm
        nx, ny = -(by - ay), bx - ax
        th_, tw_ = solid.shape
        L, W = tw_ / self.s - 2 * self.margin_mm, th_ / self.s - 2 * self.margin_mm
        if nx * (L / 2 - ax) + ny * (W / 2 - ay) < 0:
            nx, ny = -nx, -ny
        X = (np.arange(cols.start, cols.stop, dtype=np.float32) + 0.5) / self.s - self.margin_mm
        Y = (np.arange(rows.start, rows.stop, dtype=np.float32) + 0.5) / self.s - self.margin_mm
        beyond = (nx * (X[None, :] - ax) + ny * (Y[:, None] - ay)) <= 0
        tex = self.tex[rows, cols]
        tex[(throat > 0) & beyond] = np.array([20, 45, 30], np.float32) * 0.9
        drop = np.zeros(sub_solid.shape, np.float32)
        cc = _fx((self.to_px(c) - o))
        cv2.circle(drop, cc, int(round(pocket.radius_mm * self.s * _ONE)), 1.0, -1, cv2.LINE_AA, _SHIFT)
        drop *= beyond
        tex *= 1 - 0.85 * drop[..., None]
        tex += np.array([8, 8, 10], np.float32) * drop[..., None]

    def _hole(self, hole) -> None:
        """A bed hole: a dark cup with a pale rim."""
        r = hole.radius_mm
        rows, cols, o = self._local(hole.xy_mm, r + 3)
        tex = self.tex[rows, cols]
        cc = _fx(self.to_px(hole.xy_mm) - o)
        rim = np.zeros(tex.shape[:2], np.float32)
        cv2.circle(rim, cc, int(round((r + 1.5) * self.s * _ONE)), 1.0, -1, cv2.LINE_AA, _SHIFT)
        tex += (np.array([150, 160, 165], np.float32) - tex) * (0.5 * rim)[..., None]
        inner = np.zeros(tex.shape[:2], np.float32)
        cv2.circle(inner, cc, int(round(r * self.s * _ONE)), 1.0, -1, cv2.LINE_AA, _SHIFT)
        tex *= 1 - 0.9 * inner[..., None]
        tex += np.array([10, 10, 12], np.float32) * inner[..., None]


class Renderer:
    """Draws scenes of one table through one camera. Construction paints and warps the static table
    (about a second); :meth:`render` then costs milliseconds per frame.

    ``seed`` fixes the cloth and wood textures, the lamps' placement and every frame's noise and
    flicker (a frame's noise depends on the seed and its time only, so frames can be rendered in any
    order and come out the same).
    """

    def __init__(self, profile: TableProfile, camera: CameraModel, seed: int = 0, options: RenderOptions | None = None,
                 lamps: Sequence[Lamp] | None = None, _texture: _Texture | None = None):
        self.profile = profile
        self.camera = camera
        self.seed = int(seed)
        self.options = options or RenderOptions()
        rng = np.random.default_rng([self.seed, 1])
        self.lamps = tuple(lamps) if lamps is not None else default_lamps(profile, rng)
        self.light_scale = 0.45 if self.options.low_light else 1.0
        self.light_tint = np.array([0.85, 1.0, 1.22] if self.options.low_light else [1.0, 1.0, 1.0], np.float32)
        self.noise_sigma = self.options.noise_sigma * (2.5 if self.options.low_light else 1.0)
        if _texture is None:
            s = self.options.texture_px_per_mm or float(np.clip(1.5 * camera.fx / camera.height_mm, 0.5, 3.0))
            _texture = _Texture(profile, self.lamps, self.options, s, np.random.default_rng([self.seed, 2]))
        self.texture = _texture
        self._build_background()
        self._build_noise(np.random.default_rng([self.seed, 3]))
        log.debug("renderer for %s at %dx%d: texture %.2f px/mm, %d lamp(s)", profile.name, *camera.size,
                  self.texture.s, len(self.lamps))
        self._ball_bgr = {b.id: _bgr(b.rgb) for b in profile.balls}

    def with_camera(self, camera: CameraModel) -> "Renderer":
        """The same table, lamps and textures seen through another camera (a bumped camera)."""
        return Renderer(self.profile, camera, self.seed, self.options, self.lamps, self.texture)

    # ---- static background ----------------------------------------------------------------
    def _build_background(self) -> None:
        cam, p, t = self.camera, self.profile, self.texture
        w, h = cam.size
        yy, xx = np.mgrid[0:h, 0:w]
        rays = cam.pixel_rays(np.stack([xx, yy], -1).astype(np.float64))
        O = cam.centre_world
        self.rays = rays.astype(np.float32)
        self.origin = O
        dz = rays[..., 2]
        dz = np.where(np.abs(dz) < 1e-9, 1e-9, dz)

        def meet(h_mm: float) -> np.ndarray:
            s_ = (-h_mm - O[2]) / dz
            s_ = np.where(s_ > 0, s_, np.inf)
            return np.stack([O[0] + s_ * rays[..., 0], O[1] + s_ * rays[..., 1]], -1)

        p0 = meet(0.0)
        p1 = meet(p.cushion_nose_height_mm)
        self.cloth_xy = p0.astype(np.float32)

        def lookup(img: np.ndarray, xy: np.ndarray) -> np.ndarray:
            uv = t.to_px(np.nan_to_num(xy, posinf=-1e6, neginf=-1e6)).astype(np.float32)
            return cv2.remap(img, uv[..., 0], uv[..., 1], cv2.INTER_NEAREST, borderMode=cv2.BORDER_CONSTANT, borderValue=0)

        solid_top = lookup(t.solid, p1) > 0
        solid_bottom = lookup(t.solid, p0) > 0
        use_top = solid_top
        wall = ~solid_top & solid_bottom
        self.cloth_mask = ~use_top & ~wall & np.isfinite(p0[..., 0])
        self._cloth_w = self.cloth_mask.astype(np.float32)
        src = np.where(use_top[..., None], p1, p0)
        uv = t.to_px(np.nan_to_num(src, posinf=-1e6, neginf=-1e6)).astype(np.float32)
        bg = cv2.remap(t.tex_u8, uv[..., 0], uv[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        wall_bgr = _bgr(p.cloth_rgb) * 0.35 * self.light_scale
        bg[wall] = wall_bgr.astype(np.uint8)
        # vignetting: cos^4-like fall-off towards the corners
        r2 = ((xx - cam.cx) ** 2 + (yy - cam.cy) ** 2) / float(cam.cx**2 + cam.cy**2)
        self.vignette = (1.0 - self.options.vignetting * r2).astype(np.float32)
        self.background = np.clip(bg.astype(np.float32) * self.vignette[..., None], 0, 255).astype(np.uint8)

    def _build_noise(self, rng: np.random.Generator) -> None:
        w, h = self.camera.size
        self._noise_pad = 32
        if self.noise_sigma > 0:
            n = rng.normal(128.0, self.noise_sigma, (h + self._noise_pad, w + self._noise_pad, 3))
            self._noise = np.clip(n, 0, 255).astype(np.uint8)
        else:
            self._noise = None

    # ---- per frame ----------------------------------------------------------------------------
    def render(self, scenes: Sequence[Scene] | Scene) -> np.ndarray:
        """One picture (h, w, 3) uint8 BGR. Several scenes are sub-frame samples over the exposure and
        are averaged (motion blur); one scene is a sharp frame."""
        if isinstance(scenes, Scene):
            scenes = (scenes,)
        return self.finish(self.compose(scenes), scenes[len(scenes) // 2].t_s)

    def compose(self, scenes: Sequence[Scene]) -> np.ndarray:
        """The picture before flicker and noise (what :meth:`render` passes to :meth:`finish`); a clip
        reuses it while nothing moves."""
        if not scenes:
            raise ValueError("render needs at least one scene")
        if len(scenes) == 1:
            canvas = self.background.copy()
            self._draw_scene(canvas, scenes[0])
        else:
            canvas = self._blurred(scenes)
        if self.options.lens_blur_px > 0:
            canvas = cv2.GaussianBlur(canvas, (0, 0), self.options.lens_blur_px)
        return canvas

    def _blurred(self, scenes: Sequence[Scene]) -> np.ndarray:
        """Average of the scenes. Balls and pins that do not move during the exposure are drawn once
        (with their shadows) under the moving ones; only the rectangles the moving things touch are
        averaged."""
        first = scenes[0]
        still_balls = [b for b in first.balls if all(b in sc.balls for sc in scenes[1:])]
        still_pins = [p for p in first.pins if all(p in sc.pins for sc in scenes[1:])]
        # a still ball or pin near a moving ball is redrawn with it, so that the moving ball's shadow
        # darkens only the cloth
        sb0 = set(still_balls)
        movers = [b.xy_mm for sc in scenes for b in sc.balls if b not in sb0 and b.status in DRAWN]
        reach = 8.0 * self.profile.ball_radius_mm

        def alone(xy: tuple[float, float]) -> bool:
            return all(math.dist(xy, m) > reach for m in movers)

        still_balls = [b for b in still_balls if alone(b.xy_mm)]
        still_pins = [p for p in still_pins if alone(p.xy_mm)]
        base = self.background.copy()
        if still_balls or still_pins:
            self._draw_scene(base, Scene(first.t_s, tuple(still_balls), tuple(still_pins)))
        sb, sp = set(still_balls), set(still_pins)
        layers, rects = [], []
        for sc in scenes:
            layer = base.copy()
            moving = Scene(sc.t_s, tuple(b for b in sc.balls if b not in sb), tuple(p for p in sc.pins if p not in sp),
                           sc.occluders, sc.scoreboard_down)
            rects += self._draw_scene(layer, moving)
            layers.append(layer)
        out = base
        for x0, y0, x1, y1 in _merge_rects(rects):
            acc = np.zeros((y1 - y0, x1 - x0, 3), np.float32)
            for layer in layers:
                acc += layer[y0:y1, x0:x1]
            out[y0:y1, x0:x1] = np.clip(acc / len(layers) + 0.5, 0, 255).astype(np.uint8)
        return out

    def finish(self, canvas: np.ndarray, t_s: float) -> np.ndarray:
        """Flicker and sensor noise of the frame at ``t_s`` applied to a composed picture."""
        rng = np.random.default_rng([self.seed, 4, int(round(t_s * 1e6))])
        gain = 1.0
        if self.options.flicker > 0:
            # 100 Hz mains flicker sampled at the frame times, plus a little random drift
            phase = (self.seed % 997) / 997 * 2 * np.pi
            gain += self.options.flicker * (math.sin(2 * np.pi * 100.0 * t_s + phase) + 0.5 * float(rng.normal()))
        if self._noise is None:
            return canvas if gain == 1.0 else cv2.convertScaleAbs(canvas, alpha=gain)
        w, h = self.camera.size
        ox, oy = (int(v) for v in rng.integers(0, self._noise_pad, 2))
        noise = self._noise[oy:oy + h, ox:ox + w]
        return cv2.addWeighted(canvas, gain, noise, 1.0, -128.0)

    def _draw_scene(self, canvas: np.ndarray, scene: Scene) -> list[tuple[int, int, int, int]]:
        """Draw the dynamic part of a scene; returns the rectangles touched (x0, y0, x1, y1)."""
        rects: list[tuple[int, int, int, int]] = []
        r = self.profile.ball_radius_mm
        balls = [b for b in scene.balls if b.status in DRAWN]
        if self.options.shadows:
            for b in balls:
                rects += self._ball_shadow(canvas, b)
        items: list[tuple[float, str, object]] = []
        for b in balls:
            c = np.array([[b.xy_mm[0], b.xy_mm[1], r + b.h_mm]])
            items.append((float(np.linalg.norm(table_world(c)[0] - self.origin)), "ball", b))
        for pin in scene.pins:
            spec = self.profile.pin(pin.id)
            c = np.array([[pin.xy_mm[0], pin.xy_mm[1], spec.height_mm / 2 if pin.standing else spec.radius_mm]])
            items.append((float(np.linalg.norm(table_world(c)[0] - self.origin)), "pin", pin))
        items.sort(key=lambda it: -it[0])
        for _, kind, obj in items:
            if kind == "ball":
                rect = self._ball(canvas, obj)  # type: ignore[arg-type]
            else:
                rect = self._pin(canvas, obj)  # type: ignore[arg-type]
            if rect is not None:
                rects.append(rect)
        if scene.scoreboard_down and self.profile.scoreboard_x_mm is not None:
            rects.append(self._scoreboard(canvas))
        for occ in scene.occluders:
            rect = self._occluder(canvas, occ)
            if rect is not None:
                rects.append(rect)
        return rects

    def hidden_fraction(self, scene: Scene) -> dict[str, float]:
        """For every drawn ball of ``scene``: the fraction of its picture disc that the scene's
        occluders (cue, arms, hands) cover, 0 to 1. Balls hidden by nothing are 0."""
        balls = [b for b in scene.balls if b.status in DRAWN]
        out = {b.id: 0.0 for b in balls}
        if not scene.occluders or not balls:
            return out
        w, h = self.camera.size
        mask = np.zeros((h, w, 3), np.uint8)
        for occ in scene.occluders:
            self._occluder(mask, occ, shadows=False)
        covered = mask.max(axis=2) > 0
        r = self.profile.ball_radius_mm
        for b in balls:
            c_tab = np.array([[b.xy_mm[0], b.xy_mm[1], r + b.h_mm]])
            c = self.camera.project(c_tab)[0]
            rp = r * self._px_per_mm(c_tab)
            win = self._window(c, rp)
            if win is None:
                continue
            x0, y0, x1, y1 = win
            ys, xs = np.mgrid[y0:y1, x0:x1]
            disc = (xs - c[0]) ** 2 + (ys - c[1]) ** 2 <= rp * rp
            if disc.any():
                out[b.id] = float(covered[y0:y1, x0:x1][disc].mean())
        return out

    # ---- balls ----------------------------------------------------------------------------------
    def _window(self, centre_px: np.ndarray, radius_px: float) -> tuple[int, int, int, int] | None:
        w, h = self.camera.size
        x0 = max(0, int(math.floor(centre_px[0] - radius_px)))
        y0 = max(0, int(math.floor(centre_px[1] - radius_px)))
        x1 = min(w, int(math.ceil(centre_px[0] + radius_px)) + 1)
        y1 = min(h, int(math.ceil(centre_px[1] + radius_px)) + 1)
        if x1 <= x0 or y1 <= y0:
            return None
        return x0, y0, x1, y1

    def _px_per_mm(self, xyh_mm: np.ndarray) -> float:
        return float(self.camera.fx / max(self.camera.depth_mm(xyh_mm)[0], 1.0))

    def _ball(self, canvas: np.ndarray, b: BallPose) -> tuple[int, int, int, int] | None:
        r = self.profile.ball_radius_mm
        c_tab = np.array([[b.xy_mm[0], b.xy_mm[1], r + b.h_mm]])
        if self.camera.depth_mm(c_tab)[0] <= r:
            return None
        ppm = self._px_per_mm(c_tab)
        win = self._window(self.camera.project(c_tab)[0], r * ppm * 1.3 + 3)
        if win is None:
            return None
        x0, y0, x1, y1 = win
        U = self.rays[y0:y1, x0:x1].astype(np.float64)
        C = table_world(c_tab)[0]
        V = C - self.origin
        bdot = U @ V
        d2 = np.maximum(float(V @ V) - bdot**2, 0.0)
        d = np.sqrt(d2)
        mm_per_px = float(np.linalg.norm(V)) / self.camera.fx
        alpha = np.clip((r - d) / mm_per_px + 0.5, 0.0, 1.0)
        if not alpha.any():
            return None
        t_hit = bdot - np.sqrt(np.maximum(r * r - d2, 0.0))
        P = self.origin + t_hit[..., None] * U
        n = P - C
        n /= np.maximum(np.linalg.norm(n, axis=-1, keepdims=True), 1e-9)
        if b.id not in self._ball_bgr:
            raise KeyError(f"scene has ball {b.id!r}, which table profile {self.profile.name!r} does not have")
        albedo = (self._ball_bgr[b.id] / 255.0) ** 2.2
        up = np.array([0.0, 0.0, -1.0])
        ambient = (0.16 + 0.10 * (n @ up))[..., None] * self.light_scale
        # light bounced off the cloth onto the ball's lower half
        bounce = (np.clip(-(n @ up), 0, 1) * 0.12 * self.light_scale)[..., None] * (_bgr(self.profile.cloth_rgb) / 255.0) ** 2.2
        lin = albedo * ambient + bounce * albedo * 3
        spec = np.zeros(alpha.shape)
        view = -U
        total = sum(l.power for l in self.lamps)
        for lamp in self.lamps:
            Lw = np.array([lamp.xy_mm[0], lamp.xy_mm[1], -lamp.h_mm])
            l = Lw - P
            l /= np.linalg.norm(l, axis=-1, keepdims=True)
            diff = np.clip(np.einsum("...k,...k", n, l), 0, None) * (lamp.power / total) * 1.05 * self.light_scale
            lin = lin + albedo * diff[..., None]
            hv = l + view
            hv /= np.linalg.norm(hv, axis=-1, keepdims=True)
            nh = np.clip(np.einsum("...k,...k", n, hv), 0, None)
            spec += (lamp.power / total) * 0.9 * nh**90 * self.light_scale
        lin = lin * self.light_tint + spec[..., None]
        col = 255.0 * np.clip(lin, 0, 1.0) ** (1 / 2.2) * self.vignette[y0:y1, x0:x1, None]
        patch = canvas[y0:y1, x0:x1].astype(np.float32)
        a = alpha[..., None].astype(np.float32)
        canvas[y0:y1, x0:x1] = np.clip(patch * (1 - a) + col * a + 0.5, 0, 255).astype(np.uint8)
        return win

    def _ball_shadow(self, canvas: np.ndarray, b: BallPose) -> list[tuple[int, int, int, int]]:
        """Soft shadows of one ball on the cloth, one per lamp, and a contact shadow under it."""
        r = self.profile.ball_radius_mm
        ch = r + b.h_mm
        cx, cy = b.xy_mm
        total = sum(l.power for l in self.lamps)
        centres, reach = [], []
        for lamp in self.lamps:
            if lamp.h_mm <= ch + 1:
                continue
            k = lamp.h_mm / (lamp.h_mm - ch)
            sx = lamp.xy_mm[0] + (cx - lamp.xy_mm[0]) * k
            sy = lamp.xy_mm[1] + (cy - lamp.xy_mm[1]) * k
            centres.append((lamp, sx, sy, k))
            reach.append(((sx, sy), (r + lamp.radius_mm * ch / (lamp.h_mm - ch)) * k + 4))
        reach.append(((cx, cy), r * 1.6))
        pts = np.array([[x, y, 0.0] for (x, y), _ in reach])
        px = self.camera.project(pts)
        rects = []
        boxes = [self._window(px[i], reach[i][1] * self._px_per_mm(pts[i:i + 1]) + 2) for i in range(len(reach))]
        boxes = [bx for bx in boxes if bx is not None]
        if not boxes:
            return rects
        x0, y0 = min(bx[0] for bx in boxes), min(bx[1] for bx in boxes)
        x1, y1 = max(bx[2] for bx in boxes), max(bx[3] for bx in boxes)
        q = self.cloth_xy[y0:y1, x0:x1].astype(np.float64)
        mask = self.cloth_mask[y0:y1, x0:x1]
        if not mask.any():
            return rects
        lit = np.ones(q.shape[:2])
        for lamp, sx, sy, k in centres:
            # distance between the ball's centre and the line from the cloth point to the lamp,
            # measured in the horizontal plane through the centre (the line is steep)
            t = ch / lamp.h_mm
            hx = q[..., 0] + t * (lamp.xy_mm[0] - q[..., 0]) - cx
            hy = q[..., 1] + t * (lamp.xy_mm[1] - q[..., 1]) - cy
            dist = np.sqrt(hx * hx + hy * hy)
            pen = lamp.radius_mm * ch / (lamp.h_mm - ch) + 1.0
            shadow = 1.0 - _smoothstep(r - pen, r + pen, dist)
            lit -= 0.55 * (lamp.power / total) * shadow
        dxy2 = (q[..., 0] - cx) ** 2 + (q[..., 1] - cy) ** 2
        lit *= 1.0 - 0.45 * math.exp(-b.h_mm / r) * np.exp(-dxy2 / (2 * (0.45 * r) ** 2))
        lit = np.where(mask, lit, 1.0).astype(np.float32)
        patch = canvas[y0:y1, x0:x1].astype(np.float32) * lit[..., None]
        canvas[y0:y1, x0:x1] = np.clip(patch + 0.5, 0, 255).astype(np.uint8)
        rects.append((x0, y0, x1, y1))
        return rects

    # ---- pins -----------------------------------------------------------------------------------
    def _pin(self, canvas: np.ndarray, pin: PinPose) -> tuple[int, int, int, int] | None:
        """A standing pin seen from above: its body from base to top and a shaded round head; a
        fallen pin: a capsule lying on the cloth from ``xy_mm`` towards ``lean_dir_rad``."""
        spec = self.profile.pin(pin.id)
        named = NAMED_COLOURS.get(spec.colour.lower(), (200, 200, 200))  # an unknown colour name: a grey pin
        base = PIN_BGR.get(spec.colour.lower(), (named[2], named[1], named[0]))
        colour = np.array(base, np.float32) * self.light_scale * self.light_tint
        r, H = spec.radius_mm, spec.height_mm
        x, y = pin.xy_mm
        cd, sd = math.cos(pin.lean_dir_rad), math.sin(pin.lean_dir_rad)
        if pin.standing:
            lean = H * math.sin(pin.tilt_rad)
            base = np.array([x, y, 0.0])
            top = np.array([x + lean * cd, y + lean * sd, H * math.cos(pin.tilt_rad)])
            neck = base + 0.55 * (top - base)
            pts = np.stack([base, neck, top])
            px = self.camera.project(pts)
            ppm = [self._px_per_mm(p[None]) for p in pts]
            if self.options.shadows:
                self._soft_shadow(canvas, [np.stack([base, top])], [r * 1.6])
            self._capsule(canvas, px[0], px[1], r * ppm[0], r * 0.55 * ppm[1], colour * 0.7)
            self._capsule(canvas, px[1], px[2], r * 0.55 * ppm[1], r * 0.8 * ppm[2], colour * 0.85)
            self._shaded_disc(canvas, px[2], r * 0.8 * ppm[2], colour)
            rad = max(r * ppm[0], r * ppm[2]) + 3
        else:
            a = np.array([x, y, r])
            b = np.array([x + H * cd, y + H * sd, r * 0.8])
            px = self.camera.project(np.stack([a, b]))
            ppm = [self._px_per_mm(a[None]), self._px_per_mm(b[None])]
            if self.options.shadows:
                self._soft_shadow(canvas, [np.stack([a, b])], [r * 1.3])
            self._capsule(canvas, px[0], px[1], r * ppm[0], r * 0.8 * ppm[1], colour * 0.75)
            self._capsule(canvas, px[0], px[1], r * 0.45 * ppm[0], r * 0.35 * ppm[1], np.minimum(colour * 1.1 + 25, 255))
            rad = H * max(ppm) + r * max(ppm) + 3
        mid = px.mean(axis=0)
        return self._window(mid, rad + float(np.max(np.linalg.norm(px - mid, axis=1))))

    def _capsule(self, canvas: np.ndarray, a_px: np.ndarray, b_px: np.ndarray, ra_px: float, rb_px: float, colour: np.ndarray) -> None:
        """A tapered capsule: two discs joined by their tangent quad."""
        col = tuple(float(c) for c in colour)
        for c, rr in ((a_px, ra_px), (b_px, rb_px)):
            cv2.circle(canvas, _fx(c), max(1, int(rr * _ONE)), col, -1, cv2.LINE_AA, _SHIFT)
        d = b_px - a_px
        n = np.linalg.norm(d)
        if n < 1e-6:
            return
        perp = np.array([-d[1], d[0]]) / n
        quad = np.array([a_px + perp * ra_px, b_px + perp * rb_px, b_px - perp * rb_px, a_px - perp * ra_px])
        cv2.fillConvexPoly(canvas, np.round(quad * _ONE).astype(np.int32), col, cv2.LINE_AA, _SHIFT)

    def _shaded_disc(self, canvas: np.ndarray, c_px: np.ndarray, r_px: float, colour: np.ndarray) -> None:
        cv2.circle(canvas, _fx(c_px), max(1, int(r_px * _ONE)), tuple(float(c) for c in colour * 0.8), -1, cv2.LINE_AA, _SHIFT)
        cv2.circle(canvas, _fx(c_px - 0.15 * r_px), max(1, int(0.7 * r_px * _ONE)), tuple(float(c) for c in colour), -1, cv2.LINE_AA, _SHIFT)
        hl = tuple(float(min(255.0, c + 60)) for c in colour)
        cv2.circle(canvas, _fx(c_px - 0.35 * r_px), max(1, int(0.22 * r_px * _ONE)), hl, -1, cv2.LINE_AA, _SHIFT)

    # ---- scoreboard and occluders --------------------------------------------------------------
    def _poly_px(self, pts_tab: np.ndarray, step_mm: float = 40.0) -> np.ndarray:
        """A closed 3D polygon in table coordinates, edges subdivided so the lens's curvature shows,
        projected to pixels."""
        out = []
        n = len(pts_tab)
        for i in range(n):
            a, b = pts_tab[i], pts_tab[(i + 1) % n]
            k = max(1, int(np.linalg.norm(b - a) / step_mm))
            out.append(a[None] + (b - a)[None] * (np.arange(k)[:, None] / k))
        return self.camera.project(np.concatenate(out))

    def _fill(self, canvas: np.ndarray, pts_tab: np.ndarray, colour) -> tuple[int, int, int, int] | None:
        px = self._poly_px(pts_tab)
        cv2.fillPoly(canvas, [np.round(px * _ONE).astype(np.int32)], tuple(float(c) for c in colour), cv2.LINE_AA, _SHIFT)
        return self._bbox(px)

    def _bbox(self, px: np.ndarray) -> tuple[int, int, int, int] | None:
        lo, hi = px.min(axis=0), px.max(axis=0)
        return self._window((lo + hi) / 2, float(np.max(hi - lo)) / 2 + 3)

    def _scoreboard(self, canvas: np.ndarray) -> tuple[int, int, int, int]:
        p = self.profile
        x0, x1 = p.scoreboard_x_mm, p.length_mm + p.rail_width_mm
        hgt = p.cushion_nose_height_mm + 40.0
        pts = np.array([[x0, -p.rail_width_mm, hgt], [x1, -p.rail_width_mm, hgt], [x1, p.width_mm + p.rail_width_mm, hgt], [x0, p.width_mm + p.rail_width_mm, hgt]])
        wood = np.array(WOOD_BGR, np.float32) * 0.8 * self.light_scale
        rect = self._fill(canvas, pts, wood)
        inset = pts + np.array([[25, 25, 0], [-25, 25, 0], [-25, -25, 0], [25, -25, 0]])
        self._fill(canvas, inset, np.array([40, 40, 38], np.float32) * self.light_scale)
        return rect  # type: ignore[return-value]

    def _soft_shadow(self, canvas: np.ndarray, polylines: list[np.ndarray], widths_mm: list[float], strength: float = 0.45) -> tuple[int, int, int, int] | None:
        """The shadow of thick 3D polylines (table coordinates, heights up) cast on the cloth by the
        brightest lamp, blurred by the lamp's size."""
        lamp = max(self.lamps, key=lambda l: l.power)
        L = np.array([lamp.xy_mm[0], lamp.xy_mm[1], lamp.h_mm])
        shapes = []
        for line, wmm in zip(polylines, widths_mm):
            hh = np.minimum(line[:, 2], lamp.h_mm * 0.8)
            k = lamp.h_mm / (lamp.h_mm - hh)
            on_cloth = L[None, :2] + (line[:, :2] - L[None, :2]) * k[:, None]
            pts = np.concatenate([on_cloth, np.zeros((len(line), 1))], axis=1)
            px = self.camera.project(pts)
            ppm = self._px_per_mm(pts[:1])
            blur = lamp.radius_mm * float(np.max(hh)) / (lamp.h_mm - float(np.max(hh))) * ppm
            shapes.append((px, max(1.0, wmm * float(np.mean(k)) * ppm), blur))
        allpx = np.concatenate([s[0] for s in shapes])
        pad = max(s[1] + 3 * s[2] for s in shapes) + 4
        lo, hi = allpx.min(0) - pad, allpx.max(0) + pad
        win = self._window((lo + hi) / 2, float(np.max(hi - lo)) / 2)
        if win is None:
            return None
        x0, y0, x1, y1 = win
        # soft shadows are drawn and blurred at a quarter of the resolution (they have no fine detail)
        k = 4.0
        small = (max(1, int(math.ceil((x1 - x0) / k))), max(1, int(math.ceil((y1 - y0) / k))))
        m = np.zeros((small[1], small[0]), np.float32)
        blur = 0.0
        for px, wpx, bl in shapes:
            q = (px - np.array([x0, y0])) / k
            cv2.polylines(m, [np.round(q * _ONE).astype(np.int32)], False, 1.0, max(1, int(round(wpx / k))), cv2.LINE_AA, _SHIFT)
            for c in (q[0], q[-1]):
                cv2.circle(m, _fx(c), max(1, int(wpx / k / 2 * _ONE)), 1.0, -1, cv2.LINE_AA, _SHIFT)
            blur = max(blur, bl / k)
        if blur > 0.3:
            m = cv2.GaussianBlur(m, (0, 0), blur)
        m = cv2.resize(m, (int(small[0] * k), int(small[1] * k)), interpolation=cv2.INTER_LINEAR)[: y1 - y0, : x1 - x0]
        m *= self._cloth_w[y0:y1, x0:x1]
        # darken only where the shadow falls (8-bit weights: 255 = unshaded)
        ys, xs = np.nonzero(m > 0.004)
        if len(ys) == 0:
            return win
        ya, yb, xa, xb = int(ys.min()), int(ys.max()) + 1, int(xs.min()), int(xs.max()) + 1
        w8 = np.round(255.0 * (1 - strength * m[ya:yb, xa:xb])).astype(np.uint8)
        sub = canvas[y0 + ya:y0 + yb, x0 + xa:x0 + xb]
        sub[...] = cv2.multiply(sub, cv2.merge([w8, w8, w8]), scale=1 / 255.0)
        return win

    def _thick(self, canvas: np.ndarray, line_tab: np.ndarray, width_mm: float, colour, step_mm: float = 40.0) -> tuple[int, int, int, int] | None:
        """A thick 3D polyline with round ends (an arm, a finger)."""
        pts = [line_tab[0]]
        for a, b in zip(line_tab[:-1], line_tab[1:]):
            k = max(1, int(np.linalg.norm(b - a) / step_mm))
            pts += [a + (b - a) * (i / k) for i in range(1, k + 1)]
        pts_a = np.array(pts)
        px = self.camera.project(pts_a)
        ppm = self._px_per_mm(pts_a[len(pts_a) // 2][None])
        wpx = max(1, int(round(width_mm * ppm)))
        col = tuple(float(c) for c in colour)
        cv2.polylines(canvas, [np.round(px * _ONE).astype(np.int32)], False, col, wpx, cv2.LINE_AA, _SHIFT)
        for c in (px[0], px[-1]):
            cv2.circle(canvas, _fx(c), max(1, int(width_mm * ppm / 2 * _ONE)), col, -1, cv2.LINE_AA, _SHIFT)
        lo, hi = px.min(0) - wpx, px.max(0) + wpx
        return self._window((lo + hi) / 2, float(np.max(hi - lo)) / 2)

    def _occluder(self, canvas: np.ndarray, occ: Occluder, shadows: bool | None = None) -> tuple[int, int, int, int] | None:
        """Draw one occluder (and, with ``shadows``, default the options', its shadow)."""
        shadows = self.options.shadows if shadows is None else shadows
        ls, tint = self.light_scale, self.light_tint
        skin = np.array(SKIN_BGR, np.float32) * ls * tint
        if occ.kind == "cue":
            tip = np.array([occ.tip_xy_mm[0], occ.tip_xy_mm[1], occ.h_mm])
            butt2 = np.array(occ.butt_xy_mm, dtype=np.float64)
            length = float(np.linalg.norm(butt2 - tip[:2]))
            if length < 1:
                return None
            # a cue is held rising towards the butt (about 8 degrees)
            butt = np.array([butt2[0], butt2[1], occ.h_mm + 0.14 * length])
            axis = (butt - tip) / np.linalg.norm(butt - tip)
            side = np.array([-axis[1], axis[0], 0.0])
            side /= max(np.linalg.norm(side), 1e-9)

            def section(s0: float, s1: float, colour) -> tuple[int, int, int, int] | None:
                w0, w1 = 12 + 18 * s0, 12 + 18 * s1
                a, b = tip + (butt - tip) * s0, tip + (butt - tip) * s1
                quad = np.array([a + side * w0 / 2, b + side * w1 / 2, b - side * w1 / 2, a - side * w0 / 2])
                return self._fill(canvas, quad, np.asarray(colour, np.float32) * ls * tint)

            if shadows:
                self._soft_shadow(canvas, [np.stack([tip, butt])], [20.0], 0.35)
            rects = [section(0.0, 0.6, CUE_BGR), section(0.6, 1.0, CUE_BUTT_BGR),
                     section(25 / length, 0.6, np.array(CUE_BGR) * 1.08)]
            rects.append(section(12 / length, 35 / length, (235, 238, 240)))   # ferrule
            rects.append(section(0.0, 12 / length, (150, 95, 60)))              # chalked tip
            good = [r for r in rects if r is not None]
            return _union(good) if good else None
        if occ.kind == "arm":
            pts = np.array([[x, y, occ.h_mm] for x, y in occ.points_mm], dtype=np.float64)
            if len(pts) < 2:
                return None
            width = occ.width_mm or 90.0
            if shadows:
                self._soft_shadow(canvas, [pts], [width], 0.4)
            sleeve_from = max(1, len(pts) // 2)
            rects = [self._thick(canvas, pts[sleeve_from - 1:], width * 1.15, np.array(SLEEVE_BGR, np.float32) * ls * tint),
                     self._thick(canvas, pts[:sleeve_from + 1] if sleeve_from > 1 else pts[:2], width, skin)]
            hand = pts[0]
            d = pts[0] - pts[1]
            d /= max(np.linalg.norm(d), 1e-9)
            rects.append(self._thick(canvas, np.stack([hand, hand + d * width * 0.9]), width * 1.15, skin * 1.05))
            good = [r for r in rects if r is not None]
            return _union(good) if good else None
        if occ.kind == "hand":
            c = np.array([occ.tip_xy_mm[0], occ.tip_xy_mm[1], occ.h_mm + 30.0])
            wrist = np.array([occ.butt_xy_mm[0], occ.butt_xy_mm[1], occ.h_mm + 120.0])
            if np.linalg.norm(wrist[:2] - c[:2]) < 1:
                wrist = c + np.array([0.0, -300.0, 90.0])
            d = (c - wrist)[:2]
            d /= max(np.linalg.norm(d), 1e-9)
            perp = np.array([-d[1], d[0]])
            parts = []
            if shadows:
                self._soft_shadow(canvas, [np.stack([wrist, c])], [80.0], 0.4)
            parts.append(self._thick(canvas, np.stack([wrist, c - np.append(d * 20, 0)]), 75.0, np.array(SLEEVE_BGR, np.float32) * ls * tint))
            parts.append(self._thick(canvas, np.stack([c - np.append(d * 40, 0), c + np.append(d * 10, 0)]), 85.0, skin))
            for k, off in enumerate((-30.0, -10.0, 10.0, 30.0)):
                base = c + np.append(d * 25 + perp * off, 0)
                tipf = base + np.append(d * (45 + 8 * (k in (1, 2))) + perp * off * 0.25, -25.0)
                parts.append(self._thick(canvas, np.stack([base, tipf]), 17.0, skin * 0.95))
            good = [r for r in parts if r is not None]
            return _union(good) if good else None
        raise ValueError(f"unknown occluder kind {occ.kind!r} (cue, arm, hand)")


def _fx(c: np.ndarray) -> tuple[int, int]:
    return (int(round(float(c[0]) * _ONE)), int(round(float(c[1]) * _ONE)))


def _union(rects: Sequence[tuple[int, int, int, int]]) -> tuple[int, int, int, int]:
    return (min(r[0] for r in rects), min(r[1] for r in rects), max(r[2] for r in rects), max(r[3] for r in rects))


def _merge_rects(rects: Sequence[tuple[int, int, int, int]]) -> list[tuple[int, int, int, int]]:
    """Merge overlapping rectangles until none overlap (so no pixel is averaged twice)."""
    out = list(rects)
    merged = True
    while merged:
        merged = False
        for i in range(len(out)):
            for j in range(i + 1, len(out)):
                a, b = out[i], out[j]
                if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]:
                    out[i] = _union([a, b])
                    del out[j]
                    merged = True
                    break
            if merged:
                break
    return out
