"""A shot drawn on its table, to scale, as SVG: the table (cushions, pockets or holes and pins, the
baulk line and the D), every ball where it lay at the strike (faint) and at rest (solid, with its id),
each moving ball's path in its own colour, and the events: ball contacts (numbered in order),
cushion contacts and pots.

The paths come from the tracks when the shot has them (what the tracker saw, frame by frame) and
otherwise from the event log (straight legs between the ball's events, drawn dashed), so a shot is
drawn even from a hand-written log. The SVG's user units are table millimetres.
"""

from __future__ import annotations

import html
from typing import Iterable, Sequence

import numpy as np

from calibration.table import TableProfile
from cueref.stats.facts import centre_at
from cueref.store.tracks import Tracks
from tracking.events import AtRest, BallBall, BallCushion, Event, OffTable, PinDown, PinMoved, Pot, ShotStart, balls_involved

__all__ = ["shot_svg"]

CLOTH, RAIL, HOLE = "#2f7d4a", "#5b3a1e", "#111"
PATH_STEP_MM = 3.0  # tracked points closer than this to the last kept one are dropped (the SVG stays small)


def _rgb(rgb: Sequence[int]) -> str:
    return "#%02x%02x%02x" % tuple(int(c) for c in rgb)


def _f(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".")


def _polyline(points: Iterable[Sequence[float]]) -> str:
    return " ".join(f"{_f(x)},{_f(y)}" for x, y in points)


def _thin(xy: np.ndarray) -> np.ndarray:
    """Keep points at least PATH_STEP_MM apart (and the last one)."""
    if len(xy) < 3:
        return xy
    keep, last = [0], xy[0]
    for i in range(1, len(xy) - 1):
        if np.hypot(*(xy[i] - last)) >= PATH_STEP_MM:
            keep.append(i)
            last = xy[i]
    keep.append(len(xy) - 1)
    return xy[keep]


def _table(profile: TableProfile) -> list[str]:
    L, W, rail = profile.length_mm, profile.width_mm, profile.rail_width_mm * 0.6
    out = [f'<rect x="{_f(-rail)}" y="{_f(-rail)}" width="{_f(L + 2 * rail)}" height="{_f(W + 2 * rail)}" rx="{_f(rail / 2)}" fill="{RAIL}"/>',
           f'<rect width="{_f(L)}" height="{_f(W)}" fill="{CLOTH}"/>']
    line = 'stroke="#ffffff55" stroke-width="2" fill="none"'
    if profile.baulk_x_mm is not None:
        out.append(f'<line x1="{_f(profile.baulk_x_mm)}" y1="0" x2="{_f(profile.baulk_x_mm)}" y2="{_f(W)}" {line}/>')
    if profile.d_centre_mm is not None and profile.d_radius_mm:
        (cx, cy), r = profile.d_centre_mm, profile.d_radius_mm
        sweep = 1 if profile.d_direction < 0 else 0
        out.append(f'<path d="M{_f(cx)},{_f(cy - r)} A{_f(r)},{_f(r)} 0 0 {sweep} {_f(cx)},{_f(cy + r)}" {line}/>')
    for p in profile.pockets:
        out.append(f'<circle cx="{_f(p.xy_mm[0])}" cy="{_f(p.xy_mm[1])}" r="{_f(p.radius_mm)}" fill="{HOLE}"><title>{p.id}</title></circle>')
    for h in profile.holes:
        out.append(f'<circle cx="{_f(h.xy_mm[0])}" cy="{_f(h.xy_mm[1])}" r="{_f(h.radius_mm)}" fill="{HOLE}"><title>{h.id} ({h.value})</title></circle>')
    return out


def _event_paths(profile: TableProfile, events: Sequence[Event]) -> dict[str, list[tuple[float, float]]]:
    """Each ball's path from the log: where it lay, its centre at each of its events, where it stopped."""
    start = events[0]
    assert isinstance(start, ShotStart)
    r = profile.ball_radius_mm
    normals = {c.id: c.normal for c in profile.cushions}
    at_strike = dict(start.positions)
    rest = events[-1].positions if isinstance(events[-1], AtRest) else {}
    paths: dict[str, list[tuple[float, float]]] = {}
    moved: set[str] = set()
    for e in events[1:]:
        for ball in balls_involved(e):
            if ball not in at_strike:
                continue
            c = centre_at(e, ball, r, normals, at_strike, moved - {ball})
            if c is not None:
                paths.setdefault(ball, [at_strike[ball]]).append(c)
        moved.update(balls_involved(e))
    moved.add(start.ball)
    for ball in moved:
        if ball in rest and ball in at_strike:
            paths.setdefault(ball, [at_strike[ball]]).append(rest[ball])
    return paths


def shot_svg(profile: TableProfile, events: Sequence[Event], tracks: Tracks | None = None, *, width_px: int = 520,
             title: str = "") -> str:
    """The SVG of one shot (module docstring); ``events`` run from its ``shot_start`` to its ``at_rest``."""
    start = events[0]
    assert isinstance(start, ShotStart), "a shot's events begin with its shot_start"
    L, W, rail = profile.length_mm, profile.width_mm, profile.rail_width_mm * 0.6
    r = profile.ball_radius_mm
    colour = {b.id: _rgb(b.rgb) for b in profile.balls}
    height_px = int(round(width_px * (W + 2 * rail) / (L + 2 * rail)))
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="{_f(-rail)} {_f(-rail)} {_f(L + 2 * rail)} {_f(W + 2 * rail)}" '
           f'width="{width_px}" height="{height_px}" class="table" role="img">']
    if title:
        out.append(f"<title>{html.escape(title)}</title>")
    out += _table(profile)
    rest = events[-1].positions if isinstance(events[-1], AtRest) else {}
    pins_up = events[-1].pins if isinstance(events[-1], AtRest) else {}
    for pin in profile.pins:
        down = any(isinstance(e, PinDown) and e.pin == pin.id for e in events)
        fill = "none" if down else _rgb((250, 250, 250) if pin.colour == "white" else (20, 20, 20))
        dash = ' stroke-dasharray="6 4"' if down else ""
        xy = pins_up.get(pin.id, pin.xy_mm)
        out.append(f'<circle cx="{_f(xy[0])}" cy="{_f(xy[1])}" r="{_f(pin.radius_mm * 1.5)}" fill="{fill}" stroke="#e0b000" '
                   f'stroke-width="3"{dash}><title>pin {pin.id}{" down" if down else ""}</title></circle>')
    for ball, xy in start.positions.items():
        out.append(f'<circle cx="{_f(xy[0])}" cy="{_f(xy[1])}" r="{_f(r)}" fill="{colour.get(ball, "#ccc")}" opacity="0.35"/>')
    tracked = tracks.paths() if tracks is not None and len(tracks) else {}
    drawn = set()
    for ball, (_, xy) in tracked.items():
        if len(xy) > 1 and np.ptp(xy, axis=0).max() > 2 * PATH_STEP_MM:
            out.append(f'<polyline points="{_polyline(_thin(xy))}" fill="none" stroke="{colour.get(ball, "#fff")}" stroke-width="5" '
                       f'stroke-linejoin="round" opacity="0.9"><title>{html.escape(ball)}: tracked path</title></polyline>')
            drawn.add(ball)
    for ball, pts in _event_paths(profile, events).items():
        if ball not in drawn and len(pts) > 1:
            out.append(f'<polyline points="{_polyline(pts)}" fill="none" stroke="{colour.get(ball, "#fff")}" stroke-width="5" '
                       f'stroke-dasharray="14 8" opacity="0.9"><title>{html.escape(ball)}: path from the events</title></polyline>')
    n = 0
    for e in events:
        if isinstance(e, BallBall) and e.xy_mm is not None:
            n += 1
            x, y = e.xy_mm
            out.append(f'<g class="contact"><circle cx="{_f(x)}" cy="{_f(y)}" r="14" fill="#fff" stroke="#c00" stroke-width="4"/>'
                       f'<text x="{_f(x)}" y="{_f(y + 7)}" font-size="20" text-anchor="middle" fill="#c00">{n}</text>'
                       f'<title>{n}: {html.escape(e.a)} hits {html.escape(e.b)} at {e.t_s:.3f} s</title></g>')
        elif isinstance(e, BallCushion) and e.xy_mm is not None:
            x, y = e.xy_mm
            out.append(f'<rect x="{_f(x - 7)}" y="{_f(y - 7)}" width="14" height="14" fill="{colour.get(e.ball, "#fff")}" stroke="#000" '
                       f'stroke-width="2" transform="rotate(45 {_f(x)} {_f(y)})"><title>{html.escape(e.ball)} on cushion {e.cushion} at {e.t_s:.3f} s</title></rect>')
        elif isinstance(e, (Pot, OffTable)):
            where = e.xy_mm or rest.get(e.ball) or start.positions.get(e.ball)
            if where is None:
                continue
            x, y = where
            label = f"{e.ball} in {e.pocket}" if isinstance(e, Pot) else f"{e.ball} off the table"
            out.append(f'<g class="pot"><circle cx="{_f(x)}" cy="{_f(y)}" r="{_f(r * 1.6)}" fill="none" stroke="#ffd000" stroke-width="6"/>'
                       f'<text x="{_f(x)}" y="{_f(y - r * 2)}" font-size="34" text-anchor="middle" fill="#ffd000" stroke="#000" stroke-width="1">'
                       f'{html.escape(e.ball)}</text><title>{html.escape(label)} at {e.t_s:.3f} s</title></g>')
        elif isinstance(e, PinMoved) and e.xy_mm is not None:
            out.append(f'<circle cx="{_f(e.xy_mm[0])}" cy="{_f(e.xy_mm[1])}" r="6" fill="#e0b000"><title>pin {e.pin} moved</title></circle>')
    for ball, xy in rest.items():
        out.append(f'<circle cx="{_f(xy[0])}" cy="{_f(xy[1])}" r="{_f(r)}" fill="{colour.get(ball, "#ccc")}" stroke="#000" stroke-width="2"/>'
                   f'<text x="{_f(xy[0])}" y="{_f(xy[1] - r - 6)}" font-size="28" text-anchor="middle" fill="#fff" stroke="#000" '
                   f'stroke-width="0.8">{html.escape(ball)}</text>')
    bar = 100.0 if L < 2000 else 200.0
    out.append(f'<g class="scale"><line x1="0" y1="{_f(W + rail * 0.6)}" x2="{_f(bar)}" y2="{_f(W + rail * 0.6)}" stroke="#fff" stroke-width="4"/>'
               f'<text x="{_f(bar + 10)}" y="{_f(W + rail * 0.6 + 9)}" font-size="26" fill="#fff">{bar:.0f} mm</text></g>')
    out.append("</svg>")
    return "".join(out)
