"""Contact times as polynomial roots: between changes of state every ball moves on a quadratic in
time, so a contact with a cushion line is the root of a quadratic and one with a ball, a jaw point,
a pocket's capture circle, a bed hole or a pin the root of a quartic. Real roots are isolated
between the critical points and refined to the last bit, in plain floating point (the same on every
machine)."""

from __future__ import annotations

from typing import Sequence


def _polyval(c: Sequence[float], t: float) -> float:
    r = 0.0
    for x in c:
        r = r * t + x
    return r

def _deriv(c: Sequence[float]) -> list[float]:
    n = len(c) - 1
    return [x * (n - i) for i, x in enumerate(c[:-1])]

def _monotone_root(c: Sequence[float], d: Sequence[float], a: float, b: float, fa: float, fb: float) -> float:
    """The root of ``c`` in [a, b], where ``c`` is monotone and changes sign: bisection, accelerated by
    Newton steps that stay inside the bracket, to the last bit."""
    for _ in range(200):
        x = a if abs(fa) < abs(fb) else b
        m = 0.5 * (a + b)
        dx = _polyval(d, x)
        if dx != 0.0:
            xn = x - _polyval(c, x) / dx
            if a < xn < b:
                m = xn
        if m <= a or m >= b:
            break
        fm = _polyval(c, m)
        if fm == 0.0:
            return m
        if (fm > 0.0) == (fa > 0.0):
            a, fa = m, fm
        else:
            b, fb = m, fm
        if b - a <= 4e-16 * max(1.0, abs(a)):
            break
    return a if abs(fa) <= abs(fb) else b

def _real_roots(c: Sequence[float], lo: float, hi: float) -> list[float]:
    """The real roots of the polynomial ``c`` (highest power first) in [lo, hi], in order: the
    critical points (roots of the derivative, recursively) split [lo, hi] into monotone pieces, and
    each piece whose ends differ in sign holds one root. Pure floating point, so the same on every
    machine. A root of even multiplicity (a tangency: no crossing) may be missed."""
    i = 0
    while i < len(c) - 1 and c[i] == 0.0:
        i += 1
    c = c[i:]
    n = len(c) - 1
    if n < 1:
        return []
    if n == 1:
        t = -c[1] / c[0]
        return [t] if lo <= t <= hi else []
    d = _deriv(c)
    pts = [lo] + [x for x in _real_roots(d, lo, hi) if lo < x < hi] + [hi]
    out: list[float] = []
    for a, b in zip(pts, pts[1:]):
        fa, fb = _polyval(c, a), _polyval(c, b)
        if fa == 0.0:
            if not out or out[-1] != a:
                out.append(a)
        elif fb == 0.0:
            out.append(b)
        elif (fa > 0.0) != (fb > 0.0):
            out.append(_monotone_root(c, d, a, b, fa, fb))
    return out

def _first_entry(c: Sequence[float], horizon: float) -> float | None:
    """The first time in [0, horizon] where the polynomial ``c`` (highest power first; ``c(t) < 0``
    means contact) crosses from positive to negative, or 0 when it already is in contact and decreasing."""
    c = list(c)
    while c and abs(c[0]) < 1e-18:
        c.pop(0)
    if len(c) < 2:
        return None
    d = _deriv(c)
    f0, d0 = c[-1], d[-1]
    if f0 <= 1e-9 * max(1.0, abs(f0)) and d0 < 0:
        return 0.0
    for t in _real_roots(c, 0.0, horizon):
        if _polyval(d, t) < 0.0:
            return t
    return None

def _point_quartic(px: float, py: float, v, a, rad: float) -> list[float]:
    """|p + v t + a t^2/2|^2 - rad^2 as a quartic (highest power first)."""
    qx, qy = v
    sx, sy = a
    return [
        0.25 * (sx * sx + sy * sy),
        qx * sx + qy * sy,
        qx * qx + qy * qy + px * sx + py * sy,
        2 * (px * qx + py * qy),
        px * px + py * py - rad * rad,
    ]
