"""Matches for the tracking bench, played by the simulator from seeds (no rendering).

* :func:`generated`: whole frames played by the simulator's automatic player (``generate_frame``),
  the bulk of every figure;
* :func:`staged`: staged Sinuca de Ficha shots from random layouts for the kinds whole frames seldom
  show: ``near_miss`` (the cue ball passes 1-3 mm from a ball on its way to another), ``jump`` (jump
  shots, some of which leave the table), ``touched`` (a ball nudged by hand between shots),
  ``double_hit`` (the cue ball put down 2-30 mm from a ball and struck at it, at a cut of up to 15
  degrees: every other shot the cue follows through and, the ball in front having stopped the cue
  ball, touches it again; the others are one touch, for the false calls).

Every match is returned as a :class:`bench.simtruth.TruthClip` at the asked frame rate; its seeds
are printed by the bench so that anyone can replay it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bench.simtruth import TruthClip, from_run
from calibration.table import resolve_profile

__all__ = ["generated", "staged", "STAGED"]

STAGED = ("near_miss", "jump", "touched", "double_hit")
GAME_PROFILE = {"ficha": "ficha", "brasileira": "brasileira", "bar-billiards": "bar-billiards"}


def generated(game: str, seed: int, fps: float, max_shots: int = 40) -> TruthClip:
    """A whole frame of ``game`` played by the automatic player from ``seed``."""
    from simulator.player import generate_frame

    profile = resolve_profile(GAME_PROFILE[game])
    run = generate_frame(game, profile, seed=seed, max_shots=max_shots).run
    return from_run(run, profile, f"{game}-{seed}", fps, seed, game)


def _spread(rng: np.random.Generator, n: int, R: float, L: float, W: float, avoid: list[tuple[np.ndarray, np.ndarray]],
            keep: list[np.ndarray]) -> list[np.ndarray]:
    """``n`` places on the cloth clear of the cushions, of the places in ``keep`` and of the segments in ``avoid``."""
    out: list[np.ndarray] = []
    for _ in range(4000):
        if len(out) == n:
            break
        p = np.array([rng.uniform(3 * R, L - 3 * R), rng.uniform(3 * R, W - 3 * R)])
        if any(np.linalg.norm(p - q) < 4 * R for q in keep + out):
            continue
        if any(_seg_dist(p, a, b) < 4 * R for a, b in avoid):
            continue
        out.append(p)
    return out


def _seg_dist(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    d = b - a
    t = float(np.clip((p - a) @ d / max(float(d @ d), 1e-9), 0.0, 1.0))
    return float(np.linalg.norm(p - (a + t * d)))


def staged(kind: str, seed: int, fps: float, shots: int = 8) -> TruthClip:
    """A ficha clip of staged shots of ``kind`` (see the module docstring) from ``seed``: one near miss,
    or ``shots`` jump shots, shots each followed by a ball nudged by hand, or double hits."""
    from simulator.physics import PhysicsError, Shot
    from simulator.scene import BallStatus
    from simulator.script import Runner, ScriptError

    if kind not in STAGED:
        raise ValueError(f"unknown staged corpus {kind!r}: {', '.join(STAGED)}")
    profile = resolve_profile("ficha")
    R, L, W = profile.ball_radius_mm, profile.length_mm, profile.width_mm
    rng = np.random.default_rng([seed, 99])
    others = [b for b in profile.ball_ids if b != "cue"]
    for _ in range(200):
        cue = np.array([rng.uniform(300, L - 300), rng.uniform(200, W - 200)])
        if kind == "near_miss":
            # the cue ball aimed full at r1; y4 beside the path, 1-3 mm clear of the cue ball's way
            ang = rng.uniform(0, 2 * math.pi)
            u = np.array([math.cos(ang), math.sin(ang)])
            dist = rng.uniform(450, 800)
            target = cue + u * dist
            if not (3 * R < target[0] < L - 3 * R and 3 * R < target[1] < W - 3 * R):
                continue
            side = np.array([-u[1], u[0]]) * (1 if rng.uniform() < 0.5 else -1)
            near = cue + u * dist * rng.uniform(0.35, 0.65) + side * (2 * R + rng.uniform(1.0, 3.0))
            rest = _spread(rng, len(others) - 2, R, L, W, [(cue, target + u * 400)], [cue, target, near])
            pos = {"cue": cue, "r1": target, "y4": near, **dict(zip([b for b in others if b not in ("r1", "y4")], rest))}
        else:
            pos = {"cue": cue, **dict(zip(others, _spread(rng, len(others), R, L, W, [], [cue])))}
        if len(pos) != len(profile.ball_ids):
            continue
        runner = Runner("ficha", profile, seed, 1.0)
        try:
            runner.start_frame({"positions": {k: (float(v[0]), float(v[1])) for k, v in pos.items()}})
            n = 1 if kind == "near_miss" else shots
            for k in range(n):
                world = runner.world
                on = [b.id for b in world.balls if b.status is BallStatus.ON_TABLE and b.id != "cue"]
                if world.ball("cue").status is not BallStatus.ON_TABLE:
                    runner.step({"kind": "place", "ball": "cue", "xy_mm": _free(world, rng)})
                if kind == "near_miss":
                    step = {"kind": "shot", "shot": Shot("cue", 0.0, float(rng.uniform(700, 2500)), top=float(rng.uniform(-0.2, 0.4))),
                            "at": "r1", "offset_deg": 0.0}
                elif kind == "jump" and k % 2 == 1:
                    # at the nearest cushion, hard and steep: many of these leave the table
                    x, y = world.ball("cue").xy_mm
                    ang = min(((x, 180.0), (L - x, 0.0), (y, 270.0), (W - y, 90.0)))[1] + float(rng.uniform(-15, 15))
                    step = {"kind": "shot", "shot": Shot("cue", ang, float(rng.uniform(2500, 3800)),
                                                         elevation_deg=float(rng.uniform(45, 65)))}
                elif kind == "jump":
                    step = {"kind": "shot", "shot": Shot("cue", float(rng.uniform(0, 360)), float(rng.uniform(1500, 3500)),
                                                         elevation_deg=float(rng.uniform(15, 60)))}
                elif kind == "double_hit":
                    place, ang = _close_to(world, on, rng)
                    runner.step({"kind": "place", "ball": "cue", "xy_mm": place})
                    step = {"kind": "shot", "shot": Shot("cue", ang, float(rng.uniform(500, 1500)), double_hit=k % 2 == 0)}
                else:
                    step = {"kind": "shot", "shot": Shot("cue", 0.0, float(rng.uniform(600, 2200))),
                            "at": str(rng.choice(on)), "offset_deg": float(rng.uniform(-20, 20))}
                runner.step(step)
                if kind == "touched":
                    world = runner.world
                    on = [b.id for b in world.balls if b.status is BallStatus.ON_TABLE]
                    ang = rng.uniform(0, 2 * math.pi)
                    speed = rng.uniform(60, 200)
                    runner.step({"kind": "touch", "ball": str(rng.choice(on)), "velocity_mm_s": (speed * math.cos(ang), speed * math.sin(ang))})
        except (ScriptError, PhysicsError):
            continue  # a placement or an aim the table does not allow: draw again
        run = runner.finish(("A", "B"), {})
        return from_run(run, profile, f"{kind}-{seed}", fps, seed, "ficha")
    raise RuntimeError(f"no playable {kind} layout from seed {seed}")


def _close_to(world: Any, on: list[str], rng: np.random.Generator) -> tuple[tuple[float, float], float]:
    """A place for the cue ball 2-30 mm (along its way) from one of the balls ``on`` the table, and the
    direction (degrees) that meets that ball there at a cut of up to 15 degrees."""
    prof = world.profile
    R = prof.ball_radius_mm
    others = {b.id: np.array(b.xy_mm) for b in world.balls if b.on_table and b.id != "cue"}
    for _ in range(1000):
        target = others[str(rng.choice(on))]
        a = rng.uniform(0, 2 * math.pi)
        d = np.array([math.cos(a), math.sin(a)])
        cut = math.radians(rng.uniform(-15, 15))
        n = np.array([d[0] * math.cos(cut) - d[1] * math.sin(cut), d[0] * math.sin(cut) + d[1] * math.cos(cut)])
        p = target - 2 * R * n - rng.uniform(2.0, 30.0) * d
        if not (2 * R < p[0] < prof.length_mm - 2 * R and 2 * R < p[1] < prof.width_mm - 2 * R):
            continue
        if all(np.linalg.norm(p - q) > 2 * R + 1.0 for q in others.values()):
            return (float(p[0]), float(p[1])), math.degrees(a)
    raise RuntimeError("no place close to a ball")


def _free(world: Any, rng: np.random.Generator) -> tuple[float, float]:
    """A free place for the cue ball in hand."""
    prof = world.profile
    R = prof.ball_radius_mm
    taken = [b.xy_mm for b in world.balls if b.on_table]
    for _ in range(1000):
        p = (float(rng.uniform(3 * R, prof.length_mm - 3 * R)), float(rng.uniform(3 * R, prof.width_mm - 3 * R)))
        if all(math.dist(p, q) > 3 * R for q in taken):
            return p
    raise RuntimeError("no free place on the table")
