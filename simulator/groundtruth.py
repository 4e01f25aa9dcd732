"""Ground truth beside a simulated clip: ``<clip>.truth.json`` (format in ``docs/simulator-render.md``).

The truth records what was *drawn*: the camera (and every change of it), every ball's and pin's
table position and state in every frame, the occluders, every event with its exact time and the
referee decisions the script expects. It is written deterministically (fixed key order, rounded
numbers, no wall-clock time), so the same seed gives a byte-for-byte equal file.

:class:`TruthRecorder` collects frames while a clip is rendered; :func:`read_truth` loads a file back
into a :class:`ClipTruth` whose arrays are NumPy arrays.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from calibration.table import TableProfile
from simulator.camera import CameraModel
from simulator.scene import BallStatus, Scene
from tracking.events import Event, event_to_dict

__all__ = ["TRUTH_FORMAT", "TRUTH_VERSION", "STATUS_CODES", "TruthRecorder", "ClipTruth", "read_truth", "truth_path_for", "events_path_for"]

TRUTH_FORMAT = "cueref-sim-truth"
TRUTH_VERSION = 1
# one character per ball status in the per-frame status strings
STATUS_CODES = {
    BallStatus.ON_TABLE: "T",
    BallStatus.AIRBORNE: "A",
    BallStatus.IN_HAND: "H",
    BallStatus.POCKETED: "P",
    BallStatus.OFF_TABLE: "O",
    BallStatus.IN_TROUGH: "Q",
}
_DRAWN = (BallStatus.ON_TABLE, BallStatus.AIRBORNE, BallStatus.IN_HAND)


def truth_path_for(video_path: str | Path) -> Path:
    """``clip.mp4`` -> ``clip.truth.json`` beside it."""
    p = Path(video_path)
    return p.with_name(p.stem + ".truth.json")


def events_path_for(video_path: str | Path) -> Path:
    """``clip.mp4`` -> ``clip.events.jsonl`` beside it."""
    p = Path(video_path)
    return p.with_name(p.stem + ".events.jsonl")


def _r(v: float, nd: int) -> float:
    x = round(float(v), nd)
    return 0.0 if x == 0 else x


def _camera_entry(camera: CameraModel, profile: TableProfile) -> dict[str, Any]:
    d = camera.to_dict()
    d["table_corners_px"] = [[_r(u, 3), _r(v, 3)] for u, v in camera.table_corners_px(profile)]
    d["height_mm"] = _r(camera.height_mm, 3)
    return d


def _runs(codes: Sequence[str]) -> list[list[Any]]:
    """Run-length form ``[[first_frame, value], ...]`` of a per-frame sequence."""
    out: list[list[Any]] = []
    for i, c in enumerate(codes):
        if not out or out[-1][1] != c:
            out.append([i, c])
    return out


def _unruns(runs: Sequence[Sequence[Any]], n: int) -> list[Any]:
    out: list[Any] = [None] * n
    for k, (start, value) in enumerate(runs):
        end = runs[k + 1][0] if k + 1 < len(runs) else n
        out[start:end] = [value] * (end - start)
    return out


class TruthRecorder:
    """Collects the drawn scenes of a clip, frame by frame, and writes the truth file."""

    def __init__(self, profile: TableProfile, camera: CameraModel, ball_ids: Sequence[str], pin_ids: Sequence[str] = ()):
        self.profile = profile
        self.ball_ids = tuple(ball_ids)
        self.pin_ids = tuple(pin_ids)
        self.cameras: list[tuple[int, float, CameraModel]] = [(0, 0.0, camera)]
        self.t_s: list[float] = []
        self._balls = {b: {"x": [], "y": [], "h": [], "u": [], "v": [], "s": [], "hid": []} for b in self.ball_ids}
        self._pins = {p: {"x": [], "y": [], "up": [], "tilt": []} for p in self.pin_ids}
        self._occluders: list[dict[str, Any]] = []

    def camera_changed(self, t_s: float, camera: CameraModel) -> None:
        """From the next recorded frame on, the picture comes from ``camera`` (a bump at ``t_s``)."""
        self.cameras.append((len(self.t_s), float(t_s), camera))

    def add(self, scene: Scene, hidden: Mapping[str, float] | None = None) -> None:
        """Record one frame: the scene drawn at the frame's time (its centre sample when blurred) and,
        per ball, the fraction of it that occluders hide (:meth:`Renderer.hidden_fraction`)."""
        k = len(self.t_s)
        self.t_s.append(scene.t_s)
        camera = self.cameras[-1][2]
        r = self.profile.ball_radius_mm
        poses = {b.id: b for b in scene.balls}
        drawn = [b for b in scene.balls if b.id in self._balls and b.status in _DRAWN]
        px = camera.project(np.array([[b.xy_mm[0], b.xy_mm[1], r + b.h_mm] for b in drawn])) if drawn else np.zeros((0, 2))
        px_of = {b.id: px[i] for i, b in enumerate(drawn)}
        for bid, rec in self._balls.items():
            b = poses.get(bid)
            if b is None:
                for key in ("x", "y", "h", "u", "v"):
                    rec[key].append(None)
                rec["s"].append("-")
                rec["hid"].append(0.0)
                continue
            rec["x"].append(_r(b.xy_mm[0], 3))
            rec["y"].append(_r(b.xy_mm[1], 3))
            rec["h"].append(_r(b.h_mm, 3))
            p = px_of.get(bid)
            rec["u"].append(None if p is None else _r(p[0], 3))
            rec["v"].append(None if p is None else _r(p[1], 3))
            rec["s"].append(STATUS_CODES[BallStatus(b.status)])
            rec["hid"].append(_r((hidden or {}).get(bid, 0.0), 2))
        pins = {p.id: p for p in scene.pins}
        for pid, rec in self._pins.items():
            q = pins.get(pid)
            rec["x"].append(None if q is None else _r(q.xy_mm[0], 3))
            rec["y"].append(None if q is None else _r(q.xy_mm[1], 3))
            rec["up"].append("-" if q is None else ("S" if q.standing else "F"))
            rec["tilt"].append(None if q is None else _r(q.tilt_rad, 4))
        for o in scene.occluders:
            d: dict[str, Any] = {"frame": k, "kind": o.kind, "h_mm": _r(o.h_mm, 2)}
            if o.kind in ("cue", "hand"):
                d["tip_xy_mm"] = [_r(o.tip_xy_mm[0], 2), _r(o.tip_xy_mm[1], 2)]
                d["butt_xy_mm"] = [_r(o.butt_xy_mm[0], 2), _r(o.butt_xy_mm[1], 2)]
            if o.kind == "arm":
                d["points_mm"] = [[_r(x, 2), _r(y, 2)] for x, y in o.points_mm]
                d["width_mm"] = _r(o.width_mm, 2)
            self._occluders.append(d)

    def to_dict(self, *, video: Mapping[str, Any], events: Sequence[Event], expected: Sequence[Mapping[str, Any]],
                 game: str | None, players: Sequence[str], options: Mapping[str, Any], seed: int,
                 generator: Mapping[str, Any], profile_ref: str | None = None) -> dict[str, Any]:
        t = np.asarray(self.t_s)
        event_frames = [int(np.searchsorted(t, e.t_s - 1e-9)) for e in events]
        balls = []
        for bid, rec in self._balls.items():
            balls.append({
                "id": bid,
                "status": _runs(rec["s"]),
                "x_mm": rec["x"], "y_mm": rec["y"], "h_mm": rec["h"],
                "u_px": rec["u"], "v_px": rec["v"],
                "hidden": _runs(rec["hid"]),
            })
        pins = [{"id": pid, "standing": _runs(rec["up"]), "x_mm": rec["x"], "y_mm": rec["y"], "tilt_rad": rec["tilt"]}
                for pid, rec in self._pins.items()]
        return {
            "format": TRUTH_FORMAT,
            "version": TRUTH_VERSION,
            "game": game,
            "profile": profile_ref or self.profile.name,
            "players": list(players),
            "options": dict(options),
            "seed": int(seed),
            "generator": dict(generator),
            "video": dict(video),
            "ball_radius_mm": self.profile.ball_radius_mm,
            "cameras": [{"from_frame": f, "t_s": _r(ts, 6), **_camera_entry(c, self.profile)} for f, ts, c in self.cameras],
            "frames": {"n": len(self.t_s), "t_s": [_r(x, 6) for x in self.t_s]},
            "balls": balls,
            "pins": pins,
            "occluders": self._occluders,
            "events": [event_to_dict(e) for e in events],
            "event_frames": event_frames,
            "expected_decisions": [dict(e) for e in expected],
        }

    def write(self, path: str | Path, **kwargs: Any) -> Path:
        """Write the truth file (keyword arguments as :meth:`to_dict`); returns its path."""
        path = Path(path)
        text = json.dumps(self.to_dict(**kwargs), separators=(",", ":"), ensure_ascii=True, allow_nan=False)
        tmp = path.with_name(path.name + ".part")
        tmp.write_text(text + "\n", encoding="utf-8")
        tmp.replace(path)
        return path


@dataclass(frozen=True, slots=True, eq=False)
class ClipTruth:
    """A truth file loaded back: per-frame arrays (NaN where a ball is absent or not drawn).

    ``xy_mm[ball]`` is (n, 2), ``h_mm[ball]`` (n,), ``px[ball]`` (n, 2) the projected centre,
    ``status[ball]`` a list of :class:`BallStatus` (None before the ball exists), ``hidden[ball]``
    (n,) the fraction of the ball that occluders hide."""

    raw: Mapping[str, Any]
    t_s: np.ndarray
    xy_mm: Mapping[str, np.ndarray]
    h_mm: Mapping[str, np.ndarray]
    px: Mapping[str, np.ndarray]
    status: Mapping[str, list[BallStatus | None]]
    hidden: Mapping[str, np.ndarray]
    pins_standing: Mapping[str, list[bool | None]] = field(default_factory=dict)

    @property
    def n_frames(self) -> int:
        return len(self.t_s)

    def camera_at(self, frame: int) -> CameraModel:
        """The camera that took frame ``frame``."""
        cams = [c for c in self.raw["cameras"] if c["from_frame"] <= frame]
        return CameraModel.from_dict(cams[-1])


def read_truth(path: str | Path) -> ClipTruth:
    """Load a ``.truth.json`` file."""
    raw = json.loads(Path(path).read_text(encoding="utf-8"))
    if raw.get("format") != TRUTH_FORMAT:
        raise ValueError(f"{path}: not a cueref simulator truth file (format {raw.get('format')!r})")
    if raw.get("version") != TRUTH_VERSION:
        raise ValueError(f"{path}: truth format version {raw.get('version')!r} is not supported (this cueref reads {TRUTH_VERSION})")
    n = raw["frames"]["n"]
    codes = {v: k for k, v in STATUS_CODES.items()}

    def arr(values: Sequence[Any]) -> np.ndarray:
        return np.array([np.nan if v is None else v for v in values], dtype=np.float64)

    xy, h, px, status, hidden = {}, {}, {}, {}, {}
    for b in raw["balls"]:
        xy[b["id"]] = np.column_stack([arr(b["x_mm"]), arr(b["y_mm"])])
        h[b["id"]] = arr(b["h_mm"])
        px[b["id"]] = np.column_stack([arr(b["u_px"]), arr(b["v_px"])])
        status[b["id"]] = [codes.get(c) for c in _unruns(b["status"], n)]
        hidden[b["id"]] = np.asarray(_unruns(b["hidden"], n), dtype=np.float64)
    pins = {p["id"]: [None if c == "-" else c == "S" for c in _unruns(p["standing"], n)] for p in raw["pins"]}
    return ClipTruth(raw, np.asarray(raw["frames"]["t_s"], dtype=np.float64), xy, h, px, status, hidden, pins)
