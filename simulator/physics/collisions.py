"""What happens at a contact: each kind of contact is one mixin of the simulation
(:class:`~simulator.physics.engine._Sim`), which finds the contacts and calls ``_on_<kind>``.

* :class:`BallBallContacts`: simultaneous ball-ball impulses with restitution and contact friction
  (the throw of a cut);
* :class:`CushionContacts`: cushion noses and jaw points (restitution, the nose's height, friction),
  a ball flying over the rail, the bar-billiards backboard;
* :class:`PocketContacts`: pockets (capture or rattle), the table's bounds, bed holes (drop, skim or
  teeter on the edge);
* :class:`PinContacts`: bar-billiards pins knocked down or moved.

The frame is the right-handed ``(x, y, z = x cross y)``; impulses are per unit mass."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from simulator.physics.timeline import _PinSeg
from simulator.physics.world import PinState
from simulator.scene import BallStatus
from tracking.events import BallBall, BallCushion, OffTable, PinDown, PinMoved, Pot

if TYPE_CHECKING:
    from simulator.physics.engine import _B



class BallBallContacts:
    """Ball-ball contacts (a mixin of the simulation)."""

    def _on_balls(self, pairs: tuple[tuple[str, str], ...]) -> None:
        """Resolve simultaneous ball-ball contacts: normal impulses J solve
        ``sum_j J_j (n_j . n_k) (s(b_k, j) - s(a_k, j)) = (1 + e) u_k`` (each contact separates at -e
        times its approach speed), contacts that would pull are dropped; then friction at each contact
        (the throw), bounded by ``mu_ball * J``. Equal masses; per unit mass."""
        t, R, p = self.t, self.R, self.p
        ids = sorted({i for pr in pairs for i in pr}, key=lambda i: self.index[i])
        st = {i: self._state(self.balls[self.index[i]], t) for i in ids}
        vel = {i: [st[i][1][0], st[i][1][1]] for i in ids}
        spin = {i: list(st[i][2]) for i in ids}
        cs = []
        strikers: dict[tuple[str, str], tuple[str, str]] = {}
        for a, b in pairs:
            ra, rb = st[a][0], st[b][0]
            nx, ny = rb[0] - ra[0], rb[1] - ra[1]
            dn = math.hypot(nx, ny) or 1.0
            nx, ny = nx / dn, ny / dn
            u = (vel[a][0] - vel[b][0]) * nx + (vel[a][1] - vel[b][1]) * ny
            cs.append((a, b, nx, ny, u))
            # the striker (named first in the event) is the ball running harder into the contact
            strikers[(a, b)] = (a, b) if vel[a][0] * nx + vel[a][1] * ny >= -(vel[b][0] * nx + vel[b][1] * ny) else (b, a)
        active = [k for k, c in enumerate(cs) if c[4] > 0]
        jn = {k: 0.0 for k in range(len(cs))}
        while active:
            m: list[list[float]] = []
            rhs: list[float] = []
            for k in active:
                ak, bk, nxk, nyk, uk = cs[k]
                rhs.append((1.0 + p.e_ball) * uk)
                row = []
                for j in active:
                    aj, bj, nxj, nyj, _ = cs[j]
                    s_b = -1.0 if bk == aj else (1.0 if bk == bj else 0.0)
                    s_a = -1.0 if ak == aj else (1.0 if ak == bj else 0.0)
                    row.append((s_b - s_a) * (nxj * nxk + nyj * nyk))
                m.append(row)
            sol = _solve(m, rhs)
            if all(x >= -1e-12 for x in sol):
                for r_, k in enumerate(active):
                    jn[k] = max(0.0, sol[r_])
                break
            active = [k for r_, k in enumerate(active) if sol[r_] > 0]
        for k, (a, b, nx, ny, u) in enumerate(cs):
            j = jn[k]
            vel[a][0] -= j * nx
            vel[a][1] -= j * ny
            vel[b][0] += j * nx
            vel[b][1] += j * ny
        for k, (a, b, nx, ny, u) in enumerate(cs):
            j = jn[k]
            if p.mu_ball > 0 and j > 0:
                ca, cb = (R * nx, R * ny, 0.0), (-R * nx, -R * ny, 0.0)
                sa = _add((vel[a][0], vel[a][1], 0.0), _cross(spin[a], ca))
                sb = _add((vel[b][0], vel[b][1], 0.0), _cross(spin[b], cb))
                sl = (sa[0] - sb[0], sa[1] - sb[1], sa[2] - sb[2])
                sn = sl[0] * nx + sl[1] * ny
                tan = (sl[0] - sn * nx, sl[1] - sn * ny, sl[2])
                smag = math.sqrt(tan[0] ** 2 + tan[1] ** 2 + tan[2] ** 2)
                if smag > 1e-9:
                    f = min(smag / 7.0, p.mu_ball * j)
                    fd = (-f * tan[0] / smag, -f * tan[1] / smag, -f * tan[2] / smag)  # on a; -fd on b
                    vel[a][0] += fd[0]
                    vel[a][1] += fd[1]
                    vel[b][0] -= fd[0]
                    vel[b][1] -= fd[1]
                    kk = 5.0 / (2.0 * R * R)
                    ta = _cross(ca, fd)
                    tb = _cross(cb, (-fd[0], -fd[1], -fd[2]))
                    spin[a] = [spin[a][i] + kk * ta[i] for i in range(3)]
                    spin[b] = [spin[b][i] + kk * tb[i] for i in range(3)]
            ra = st[a][0]
            first, second = strikers[(a, b)]
            self._emit(BallBall(t_s=t, a=first, b=second, xy_mm=(ra[0] + R * nx, ra[1] + R * ny)))
        for i in ids:
            b = self.balls[self.index[i]]
            self._set(b, t, st[i][0], vel[i], spin[i], st[i][3], st[i][4], b.status)


class CushionContacts:
    """Cushions, jaws, the rail and the backboard (a mixin of the simulation)."""

    def _cushion_impulse(self, b: _B, nx: float, ny: float, e: float, mu: float, sin_t: float):
        """Velocity and spin after hitting a nose with inward normal (nx, ny) whose contact lies
        ``asin(sin_t)`` above the ball's centre. Per unit mass; the cloth takes the vertical part."""
        R = self.R
        r, v, w, h, vz = self._state(b, self.t)
        vn = v[0] * nx + v[1] * ny
        if vn >= 0:
            return r, v, w, h, vz
        cos_t = math.sqrt(max(0.0, 1.0 - sin_t * sin_t))
        jn = (1.0 + e) * (-vn)
        v2 = [v[0] + jn * nx, v[1] + jn * ny]
        w2 = list(w)
        if mu > 0:
            c = (-R * cos_t * nx, -R * cos_t * ny, R * sin_t)
            sc = _add((v[0], v[1], 0.0), _cross(w, c))
            # remove the component along the impulse line (from the contact to the centre)
            ln = (cos_t * nx, cos_t * ny, -sin_t)
            sl = sc[0] * ln[0] + sc[1] * ln[1] + sc[2] * ln[2]
            st = (sc[0] - sl * ln[0], sc[1] - sl * ln[1], sc[2] - sl * ln[2])
            smag = math.sqrt(st[0] ** 2 + st[1] ** 2 + st[2] ** 2)
            if smag > 1e-9:
                f = min(2.0 * smag / 7.0, mu * jn / max(cos_t, 1e-6))
                fd = (-f * st[0] / smag, -f * st[1] / smag, -f * st[2] / smag)
                v2[0] += fd[0]
                v2[1] += fd[1]
                tq = _cross(c, fd)
                k = 5.0 / (2.0 * R * R)
                w2 = [w[i] + k * tq[i] for i in range(3)]
        return r, v2, w2, h, vz

    def _nose_sin(self) -> float:
        R = self.R
        return min(0.9, max(0.0, (self.prof.cushion_nose_height_mm - R) / R))

    def _on_backboard(self, bid: str) -> None:
        b = self.balls[self.index[bid]]
        r, v, w, h, vz = self._state(b, self.t)
        self._restart(b, self.t, v=(-0.5 * v[0], 0.8 * v[1]))
        b.leaving = True

    def _on_cushion(self, bid: str, cid: str) -> None:
        b = self.balls[self.index[bid]]
        c = next(c for c in self.cushions if c[0] == cid)
        n = c[3]
        r, v, w, h, vz = self._state(b, self.t)
        if b.mode == "air" and h >= self.prof.cushion_nose_height_mm:
            # over the nose: the ball leaves the table and lands beyond the rail
            self._emit(OffTable(t_s=self.t, ball=bid, xy_mm=r))
            self._restart(b, self.t)
            b.leaving = True
            return
        self._emit(BallCushion(t_s=self.t, ball=bid, cushion=cid, xy_mm=(r[0] - self.R * n[0], r[1] - self.R * n[1])))
        r, v2, w2, h, vz = self._cushion_impulse(b, n[0], n[1], self.p.e_cushion, self.p.mu_cushion, self._nose_sin())
        self._set(b, self.t, r, v2, w2, h, vz, b.status)

    def _on_jaw(self, bid: str, cid: str, jaw) -> None:
        b = self.balls[self.index[bid]]
        r, v, w, h, vz = self._state(b, self.t)
        nx, ny = r[0] - jaw[0], r[1] - jaw[1]
        d = math.hypot(nx, ny) or 1.0
        if b.mode == "air" and h >= self.prof.cushion_nose_height_mm:
            self._emit(OffTable(t_s=self.t, ball=bid, xy_mm=r))
            self._restart(b, self.t)
            b.leaving = True
            return
        self._emit(BallCushion(t_s=self.t, ball=bid, cushion=cid, xy_mm=(float(jaw[0]), float(jaw[1]))))
        r, v2, w2, h, vz = self._cushion_impulse(b, nx / d, ny / d, self.p.e_jaw, self.p.mu_cushion, self._nose_sin())
        self._set(b, self.t, r, v2, w2, h, vz, b.status)


class PocketContacts:
    """Pockets, the table's bounds and bed holes (a mixin of the simulation)."""

    def _pocket_near(self, r) -> str | None:
        best = None
        for pk in self.prof.pockets:
            d = math.dist(r, pk.xy_mm)
            if d <= 2.0 * pk.radius_mm and (best is None or d < best[0]):
                best = (d, pk.id)
        return best[1] if best else None

    def _pot(self, b: _B, where: str, r, edge_wait_s: float = 0.0) -> None:
        self._emit(Pot(t_s=self.t, ball=b.id, pocket=where, xy_mm=r, edge_wait_s=edge_wait_s))
        status = BallStatus.POCKETED
        if self.prof.kind == "bar_billiards" and self.world.trough_open:
            status = BallStatus.IN_TROUGH  # bar billiards 2g: it runs back to the trough
        self._set(b, self.t, r, (0, 0), (0, 0, 0), 0.0, 0.0, status)

    def _on_capture(self, bid: str, pocket_id: str) -> None:
        b = self.balls[self.index[bid]]
        pk = self.prof.pocket(pocket_id)
        r, v, w, h, vz = self._state(b, self.t)
        speed = math.hypot(*v)
        limit = self.p.capture_speed_corner_mm_s if pk.kind == "corner" else self.p.capture_speed_middle_mm_s
        if speed <= limit:
            self._pot(b, pocket_id, r)
            return
        # rattles: bounces off the back of the pocket, turned a little at random
        nx, ny = r[0] - pk.xy_mm[0], r[1] - pk.xy_mm[1]
        d = math.hypot(nx, ny) or 1.0
        nx, ny = nx / d, ny / d
        vn = v[0] * nx + v[1] * ny
        vx, vy = v[0] - (1.0 + 0.5) * vn * nx, v[1] - (1.0 + 0.5) * vn * ny
        ang = math.radians(float(self.rng.uniform(-1.0, 1.0)) * self.p.rattle_jitter_deg)
        ca, sa = math.cos(ang), math.sin(ang)
        vx, vy = vx * ca - vy * sa, vx * sa + vy * ca
        self._set(b, self.t, r, (vx * 0.6, vy * 0.6), (0.0, 0.0, 0.0), 0.0, 0.0, BallStatus.ON_TABLE)

    def _on_bounds(self, bid: str) -> None:
        b = self.balls[self.index[bid]]
        r, *_ = self._state(b, self.t)
        pk = self._pocket_near(r)
        if pk is not None:
            self._pot(b, pk, r)
        else:
            self._emit(OffTable(t_s=self.t, ball=bid, xy_mm=r))
            self._set(b, self.t, r, (0, 0), (0, 0, 0), 0.0, 0.0, BallStatus.OFF_TABLE)

    def _on_hole(self, bid: str, hole_id: str) -> None:
        b = self.balls[self.index[bid]]
        r, v, w, h, vz = self._state(b, self.t)
        if math.hypot(*v) <= self.p.hole_drop_speed_mm_s:
            self._pot(b, hole_id, r)
        else:  # skims across, a little slowed
            self._set(b, self.t, r, (v[0] * 0.97, v[1] * 0.97), w, h, vz, b.status)
            b.skimming.add(hole_id)

    def _check_rest_over_hole(self, b: _B, r) -> None:
        for hole in self.holes:
            d = math.dist(r, hole.xy_mm)
            if d < hole.radius_mm:
                self._pot(b, hole.id, r)
                return
            if d <= hole.radius_mm + self.p.hole_edge_band_mm:
                wait = float(self.rng.uniform(0.5, 7.0))
                self.scheduled.append((self.t + wait, "edge_drop", (b.id, hole.id, b.t0)))
                return

    def _on_edge_drop(self, bid: str, hole_id: str, since: float) -> None:
        self.scheduled = [s for s in self.scheduled if not (s[1] == "edge_drop" and s[2][0] == bid)]
        b = self.balls[self.index[bid]]
        if b.mode != "rest" or b.t0 != since:
            return  # hit again before it dropped
        r, *_ = self._state(b, self.t)
        wait = self.t - b.t0
        self._pot(b, hole_id, r, edge_wait_s=wait)


class PinContacts:
    """Bar-billiards pins (a mixin of the simulation)."""

    def _on_pin(self, bid: str, pid: str) -> None:
        b = self.balls[self.index[bid]]
        pin = self.pins[pid]
        r, v, w, h, vz = self._state(b, self.t)
        nx, ny = pin.xy_mm[0] - r[0], pin.xy_mm[1] - r[1]
        d = math.hypot(nx, ny) or 1.0
        nx, ny = nx / d, ny / d
        vn = v[0] * nx + v[1] * ny
        if vn <= 0:
            return
        lean = math.atan2(ny, nx)
        if vn >= self.p.pin_fall_speed_mm_s:
            self.pins[pid] = PinState(pid, pin.xy_mm, "fallen", lean)
            self.pin_segs[pid].append(_PinSeg(self.t, pin.xy_mm, "falling", lean))
            self._emit(PinDown(t_s=self.t, pin=pid, xy_mm=pin.xy_mm))
            keep = 0.6  # the pin is light: the ball runs on, slowed
            v2 = (v[0] - (1 - keep) * vn * nx, v[1] - (1 - keep) * vn * ny)
        else:
            push = min(self.p.pin_push_max_mm, self.p.pin_push_s * vn)
            xy = (pin.xy_mm[0] + push * nx, pin.xy_mm[1] + push * ny)
            self.pins[pid] = PinState(pid, xy, "moved", lean)
            self.pin_segs[pid].append(_PinSeg(self.t, xy, "moved", lean, wobble_rad=min(0.3, vn / 800.0)))
            self._emit(PinMoved(t_s=self.t, pin=pid, xy_mm=xy))
            v2 = (v[0] - (1 + self.p.e_pin) * vn * nx, v[1] - (1 + self.p.e_pin) * vn * ny)
        self._set(b, self.t, r, v2, w, h, vz, b.status)


def _solve(m: list[list[float]], rhs: list[float]) -> list[float]:
    """Solve the small system ``m x = rhs`` by Gaussian elimination with partial pivoting (plain
    floating point, the same on every machine); a vanishing pivot (a symmetric cluster whose
    contacts are not independent) is regularised by 1e-9."""
    n = len(rhs)
    a = [row[:] + [rhs[i]] for i, row in enumerate(m)]
    for col in range(n):
        piv = max(range(col, n), key=lambda r: abs(a[r][col]))
        a[col], a[piv] = a[piv], a[col]
        if abs(a[col][col]) < 1e-12:
            a[col][col] += 1e-9
        for r in range(col + 1, n):
            f = a[r][col] / a[col][col]
            if f:
                for c in range(col, n + 1):
                    a[r][c] -= f * a[col][c]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        x[r] = (a[r][n] - sum(a[r][c] * x[c] for c in range(r + 1, n))) / a[r][r]
    return x

def _cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])

def _add(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])
