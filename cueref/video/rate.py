"""Frame rates as exact fractions: the one place a rate given as a number becomes a
:class:`~fractions.Fraction` (the writer's ``fps`` argument, a camera's reported rate), and the rate a
PyAV stream declares."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

__all__ = ["fps_fraction", "stream_rate"]

NTSC_BASES = (24, 30, 48, 60, 120, 240)  # rates that NTSC slows by 1000/1001


def fps_fraction(fps: float | int | Fraction) -> Fraction:
    """A frame rate as an exact Fraction; floats close to NTSC rates snap to ``n * 1000 / 1001``
    (29.97 -> 30000/1001), others to the nearest fraction with a denominator up to 1001.

    Raises ValueError for anything that is not a positive finite number."""
    if isinstance(fps, bool):
        raise ValueError(f"fps must be a positive number, got {fps!r}")
    if isinstance(fps, Fraction):
        f = fps
    elif isinstance(fps, (int, np.integer)):
        f = Fraction(int(fps))
    else:
        try:
            x = float(fps)
        except (TypeError, ValueError):
            raise ValueError(f"fps must be a positive number, got {fps!r}") from None
        if not math.isfinite(x):
            raise ValueError(f"fps must be a positive number, got {fps!r}")
        f = next((Fraction(b * 1000, 1001) for b in NTSC_BASES if abs(x - b * 1000 / 1001) < 5e-3), None)
        if f is None:
            f = Fraction(x).limit_denominator(1001)
    if f <= 0:
        raise ValueError(f"fps must be a positive number, got {fps!r}")
    return f


def stream_rate(stream) -> Fraction | None:
    """The average frame rate a PyAV video stream declares (else its guessed or base rate), or None."""
    for attr in ("average_rate", "guessed_rate", "base_rate"):
        r = getattr(stream, attr, None)
        if r:
            return Fraction(r)
    return None

#: MPEG clock; divisible by every common frame duration (1/24, 1/25, 1/30,
#: 1001/30000, 1/50, 1/60, 1001/60000 ...) and by milliseconds.
BASE_CLOCK = 90_000
