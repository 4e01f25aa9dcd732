"""Tracks shaped like ``tracks.csv`` built from a simulated clip's ground truth: what a perfect tracker
would report (tests and benches only: the product never reads the simulator)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from calibration.table import TableProfile, resolve_profile
from cueref.store.tracks import Tracks
from simulator.groundtruth import read_truth
from simulator.scene import BallStatus

MOVING_MM = 0.5  # a ball that moved more than this since the previous frame is "moving"
_SEEN = (BallStatus.ON_TABLE, BallStatus.AIRBORNE)


def truth_tracks(truth_path: str | Path, profile: TableProfile | None = None) -> Tracks:
    """One row per ball per frame while the ball is on the table (or in the air above it)."""
    truth = read_truth(truth_path)
    profile = profile or resolve_profile(truth.raw["profile"])
    parts = []
    for ball, xy in truth.xy_mm.items():
        seen = np.array([s in _SEEN for s in truth.status[ball]], dtype=bool) & np.isfinite(xy).all(axis=1)
        step = np.r_[np.inf, np.hypot(*np.diff(xy, axis=0).T)]
        moving = np.where(np.nan_to_num(step, nan=np.inf) > MOVING_MM, "moving", "at_rest")
        k = np.flatnonzero(seen)
        colour = profile.ball(ball).colour if ball in profile.ball_ids else ball
        parts.append(Tracks(k.astype(np.int64), truth.t_s[k], np.full(len(k), ball), np.full(len(k), colour), xy[k],
                            moving[k], np.ones(len(k))))
    tracks = Tracks.concat(parts)
    order = np.lexsort((tracks.ball, tracks.frame))
    return tracks[order]
