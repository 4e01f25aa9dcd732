"""The physics against closed forms (head-on collision, stopping distance, cushion angle, stun), and
its hard cases: near misses, two pots in one instant, clusters, jumps, pockets, holes and pins."""

from __future__ import annotations

import itertools
import math
import time

import numpy as np
import pytest

from calibration.table import resolve_profile
from simulator.physics import (
    G_MM_S2,
    BallState,
    PhysicsError,
    PhysicsParams,
    PinState,
    Shot,
    World,
    place_ball,
    rack_bar_billiards,
    rack_brasileira,
    rack_ficha,
    remove_ball,
    simulate,
    touch_ball,
)
from simulator.scene import BallStatus
from tracking.events import (
    AtRest,
    BallBall,
    BallCushion,
    BallPlaced,
    BallRemoved,
    BallTouched,
    CueContact,
    Jump,
    OffTable,
    PinDown,
    PinMoved,
    Pot,
    ShotStart,
)

FICHA = resolve_profile("ficha")
BAR = resolve_profile("bar-billiards")
R = FICHA.ball_radius_mm
P = PhysicsParams()
ROLL = 0.4  # a tip offset of 2/5 R above centre gives natural roll at once


def world(*balls: tuple[str, float, float], profile=FICHA) -> World:
    return World(profile, tuple(BallState(i, (x, y)) for i, x, y in balls))


def of(events, kind):
    return [e for e in events if isinstance(e, kind)]


def test_head_on_collision_time_and_velocities():
    """A rolling ball meets a resting one: time from d - 2R = v0 t - mu_r g t^2 / 2; after it the
    striker keeps (1 - e)/2 and the struck ball takes (1 + e)/2 of the speed (no throw head-on)."""
    v0, x0, x1 = 1500.0, 300.0, 800.0
    res = simulate(world(("cue", x0, 405.0), ("r1", x1, 405.0)), Shot("cue", 0.0, v0, top=ROLL), t0_s=2.0)
    hit = of(res.events, BallBall)[0]
    f = P.mu_roll * G_MM_S2
    d = x1 - x0 - 2 * R
    t_hit = (v0 - math.sqrt(v0 * v0 - 2 * f * d)) / f
    assert abs(hit.t_s - (2.0 + t_hit)) < 1e-6
    assert (hit.a, hit.b) == ("cue", "r1")
    assert hit.xy_mm[0] == pytest.approx(x1 - R, abs=1e-6)
    vc = v0 - f * t_hit
    after = 2.0 + t_hit + 1e-7
    cue_v = res.timeline.ball_pose("cue", after).velocity_mm_s[0]
    obj_v = res.timeline.ball_pose("r1", after).velocity_mm_s[0]
    assert cue_v == pytest.approx((1 - P.e_ball) / 2 * vc, rel=1e-4)
    assert obj_v == pytest.approx((1 + P.e_ball) / 2 * vc, rel=1e-4)
    assert res.timeline.t_start_s == 2.0 and isinstance(res.events[0], ShotStart)


def test_rolling_stopping_distance_and_time():
    v0 = 500.0
    res = simulate(world(("cue", 100.0, 405.0)), Shot("cue", 0.0, v0, top=ROLL))
    f = P.mu_roll * G_MM_S2
    end = res.world_after.ball("cue").xy_mm
    assert end[0] - 100.0 == pytest.approx(v0 * v0 / (2 * f), abs=1e-6)
    assert end[1] == pytest.approx(405.0, abs=1e-9)
    assert res.timeline.t_end_s == pytest.approx(v0 / f, abs=1e-9)
    assert isinstance(res.events[-1], AtRest)


def test_stun_shot_rolls_on_at_five_sevenths():
    v0 = 1000.0
    res = simulate(world(("cue", 100.0, 405.0)), Shot("cue", 0.0, v0))
    tau = 2 * v0 / (7 * P.mu_slide * G_MM_S2)
    v_after = res.timeline.ball_pose("cue", tau + 1e-6).velocity_mm_s[0]
    v_before = res.timeline.ball_pose("cue", tau - 1e-6).velocity_mm_s[0]
    assert v_after == pytest.approx(5 / 7 * v0, rel=1e-5)
    assert v_before == pytest.approx(5 / 7 * v0, rel=1e-5)  # continuous at the transition
    assert res.timeline.ball_pose("cue", tau / 2).velocity_mm_s[0] == pytest.approx(v0 - P.mu_slide * G_MM_S2 * tau / 2)


def _cushion_bounce(params: PhysicsParams, angle_deg: float):
    """A rolling ball with no side spin hits the top cushion at angle_deg from its normal."""
    a = math.radians(angle_deg)
    direction = -90.0 + angle_deg  # towards y = 0
    v0 = 1200.0
    res = simulate(world(("cue", 150.0, 250.0)), Shot("cue", direction, v0, top=ROLL), params=params)
    hit = of(res.events, BallCushion)[0]
    before = res.timeline.ball_pose("cue", hit.t_s - 1e-7).velocity_mm_s
    after = res.timeline.ball_pose("cue", hit.t_s + 1e-7).velocity_mm_s
    return a, hit, before, after


@pytest.mark.parametrize("angle_deg", [0.0, 20.0, 45.0, 60.0])
def test_cushion_angle_without_friction(angle_deg):
    """tan(out) = tan(in) / e with a frictionless nose; the contact is on the cushion line y = 0."""
    _, hit, before, after = _cushion_bounce(PhysicsParams(mu_cushion=0.0), angle_deg)
    assert hit.cushion == "T1" and hit.xy_mm[1] == pytest.approx(0.0, abs=1e-9)
    assert after[1] == pytest.approx(-P.e_cushion * before[1], rel=1e-6)
    assert after[0] == pytest.approx(before[0], rel=1e-6, abs=1e-6)
    t_in = math.atan2(before[0], -before[1])
    t_out = math.atan2(after[0], after[1])
    assert math.tan(t_out) == pytest.approx(math.tan(t_in) / P.e_cushion, rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("angle_deg", [20.0, 45.0])
def test_cushion_angle_with_nose_friction(angle_deg):
    """The simplified nose model: for a rolling ball the slip at the nose is (1 + sin t) (v_t, v_n);
    friction min(2|s|/7, mu J / cos t) opposes it (t: the nose's angle above the ball's centre)."""
    _, hit, before, after = _cushion_bounce(P, angle_deg)
    sin_t = (FICHA.cushion_nose_height_mm - R) / R
    cos_t = math.sqrt(1 - sin_t**2)
    vt, vn = before[0], before[1]  # normal (0, 1): vn < 0 into the cushion
    s_t, s_2 = (1 + sin_t) * vt, (1 + sin_t) * vn
    smag = math.hypot(s_t, s_2)
    jn = (1 + P.e_cushion) * -vn
    f = min(2 * smag / 7, P.mu_cushion * jn / cos_t)
    assert after[0] == pytest.approx(vt - f * s_t / smag, rel=1e-6)
    assert after[1] == pytest.approx(-P.e_cushion * vn - f * s_2 / smag * sin_t, rel=1e-6)


@pytest.mark.parametrize("gap_mm", [1.0, 2.0, 3.0])
def test_near_miss_has_no_contact(gap_mm):
    """A cue ball passing 1-3 mm from a ball does not touch it (the rendered gap is real)."""
    res = simulate(world(("cue", 200.0, 405.0), ("r1", 700.0, 405.0 + 2 * R + gap_mm)), Shot("cue", 0.0, 1500.0, top=ROLL))
    assert not of(res.events, BallBall)
    assert res.world_after.ball("r1").xy_mm == (700.0, 405.0 + 2 * R + gap_mm)
    # the closest approach really is the gap, within a micrometre
    ts = np.linspace(0.25, 0.4, 3001)
    gaps = [math.dist(res.timeline.ball_pose("cue", t).xy_mm, (700.0, 405.0 + 2 * R + gap_mm)) - 2 * R for t in ts]
    assert min(gaps) == pytest.approx(gap_mm, abs=1e-3)


def test_overlap_of_half_a_millimetre_is_a_contact():
    res = simulate(world(("cue", 200.0, 405.0), ("r1", 700.0, 405.0 + 2 * R - 0.5)), Shot("cue", 0.0, 1500.0, top=ROLL))
    assert len(of(res.events, BallBall)) >= 1


def test_two_pots_within_fifty_ms_from_a_split():
    """The cue ball splits two balls either side of its line into the two foot corners."""
    w = world(("cue", 300.0, 405.0), ("r1", 820.0, 405.0 - R - 0.5), ("r2", 820.0, 405.0 + R + 0.5))
    res = simulate(w, Shot("cue", 0.0, 3000.0))
    pots = of(res.events, Pot)
    assert {(p.ball, p.pocket) for p in pots} == {("r1", "TR"), ("r2", "BR")}
    assert abs(pots[0].t_s - pots[1].t_s) < 0.05
    first = of(res.events, BallBall)[:2]
    assert first[0].t_s == first[1].t_s  # one simultaneous double contact, resolved together


def _no_overlaps(res, profile, step_s=0.002, tol_mm=0.01):
    t = res.timeline.t_start_s
    while t <= res.timeline.t_end_s:
        scene = res.timeline.at(t)
        on = [b for b in scene.balls if b.status in (BallStatus.ON_TABLE, BallStatus.AIRBORNE) and b.h_mm == 0]
        for a, b in itertools.combinations(on, 2):
            assert math.dist(a.xy_mm, b.xy_mm) >= 2 * profile.ball_radius_mm - tol_mm, (t, a.id, b.id)
        t += step_s


def test_kiss_cluster_settles_without_overlaps():
    """A struck ball into a cluster of four touching balls: a cascade of contacts, no interpenetration."""
    cx, cy = 900.0, 405.0
    cluster = [("r1", cx, cy), ("r2", cx + 2 * R, cy), ("y1", cx + R, cy - math.sqrt(3) * R), ("y2", cx + R, cy + math.sqrt(3) * R)]
    res = simulate(world(("cue", 300.0, 400.0), *cluster), Shot("cue", 0.0, 2500.0, top=0.2))
    contacts = of(res.events, BallBall)
    assert len(contacts) >= 4
    assert len({frozenset((c.a, c.b)) for c in contacts}) >= 3
    times = [e.t_s for e in res.events]
    assert times == sorted(times)
    _no_overlaps(res, FICHA)


def test_ficha_break_is_fast_and_sane():
    rng = np.random.default_rng(7)
    w = rack_ficha(FICHA, rng)
    t = time.perf_counter()
    res = simulate(w, Shot("cue", 180.0 + 12.0, 3500.0, side=0.1, top=0.1), rng=rng)
    assert time.perf_counter() - t < 1.0
    for b in res.world_after.balls:
        if b.status is BallStatus.ON_TABLE:
            assert FICHA.contains(b.xy_mm, R - 1e-6), b
    _no_overlaps(res, FICHA, step_s=0.01)
    # determinism
    res2 = simulate(rack_ficha(FICHA, np.random.default_rng(7)), Shot("cue", 192.0, 3500.0, side=0.1, top=0.1),
                    rng=np.random.default_rng(7))
    assert [type(e) for e in res.events] == [type(e) for e in res2.events]


def test_cut_shot_throw_turns_the_object_ball():
    """With ball friction the object ball leaves a little off the line of centres, towards the cue
    ball's travel; with mu_ball = 0 exactly along it."""
    w = world(("cue", 300.0, 405.0), ("r1", 700.0, 405.0 + R))  # a half-ball hit: 30 degrees
    ang = {}
    for mu in (0.0, 0.06):
        res = simulate(w, Shot("cue", 0.0, 1500.0), params=PhysicsParams(mu_ball=mu))
        hit = of(res.events, BallBall)[0]
        v = res.timeline.ball_pose("r1", hit.t_s + 1e-7).velocity_mm_s
        ang[mu] = math.degrees(math.atan2(v[1], v[0]))
    assert ang[0.0] == pytest.approx(30.0, abs=1e-6)
    assert 0.5 < ang[0.0] - ang[0.06] < 4.0


def test_straight_pot_and_rattle():
    """Down the diagonal into the top-left corner: slow, the ball drops where its centre enters the
    capture circle; too fast, it bounces back out of the pocket at that instant."""
    tl = FICHA.pocket("TL")
    start = (200.0, 200.0)
    entry = math.dist(start, tl.xy_mm) - tl.radius_mm  # along the diagonal, clear of both jaws
    f = P.mu_roll * G_MM_S2
    for v0 in (1500.0, 6000.0):
        t_in = (v0 - math.sqrt(v0 * v0 - 2 * f * entry)) / f
        res = simulate(world(("cue", *start)), Shot("cue", -135.0, v0, top=ROLL))
        pots = of(res.events, Pot)
        if v0 < P.capture_speed_corner_mm_s:
            assert pots[0].pocket == "TL" and pots[0].t_s == pytest.approx(t_in, abs=1e-9)
            assert res.world_after.ball("cue").status is BallStatus.POCKETED
        else:
            assert not pots or pots[0].t_s > t_in + 0.05
            vx, vy = res.timeline.ball_pose("cue", t_in + 1e-6).velocity_mm_s
            assert vx + vy > 0  # on its way back out


def test_ball_stopping_on_a_hole_edge_drops_later():
    """A ball that stops 0.7 mm outside a hole's rim teeters and drops after a wait (2f b)."""
    h = BAR.hole("h200")
    d_stop = 300.0
    start = (h.xy_mm[0] - h.radius_mm - 0.7 - d_stop, h.xy_mm[1] + 80.0)
    w = World(BAR, (BallState("w1", start),), ())
    # roll straight along +x at y + 80: it never crosses the rim; aim so it stops beside the hole
    v0 = math.sqrt(2 * P.mu_roll * G_MM_S2 * d_stop)
    res = simulate(w, Shot("w1", 0.0, v0, top=ROLL), rng=5)
    assert not of(res.events, Pot)  # 80 mm aside: at rest, no drop
    start = (h.xy_mm[0] - h.radius_mm - 0.7 - d_stop, h.xy_mm[1])
    w = World(BAR, (BallState("w1", start),), ())
    res = simulate(w, Shot("w1", 0.0, v0, top=ROLL), rng=5)
    pot = of(res.events, Pot)
    stop_t = v0 / (P.mu_roll * G_MM_S2)
    assert len(pot) == 1 and pot[0].pocket == "h200"
    assert 0.5 <= pot[0].edge_wait_s <= 7.0
    assert pot[0].t_s == pytest.approx(stop_t + pot[0].edge_wait_s, abs=1e-9)
    assert res.events[-1].t_s >= pot[0].t_s and isinstance(res.events[-1], AtRest)


def test_jump_over_a_ball_and_off_the_table():
    w = world(("cue", 300.0, 405.0), ("r1", 520.0, 405.0))
    res = simulate(w, Shot("cue", 0.0, 3200.0, elevation_deg=45.0))
    jumps = of(res.events, Jump)
    assert jumps and jumps[0].airborne_s > 0.15
    assert not any(isinstance(e, BallBall) and 0 < e.t_s < jumps[0].airborne_s for e in res.events)
    mid = res.timeline.ball_pose("cue", jumps[0].airborne_s / 2)
    assert mid.status is BallStatus.AIRBORNE and mid.h_mm > 2 * R
    # a jump at the cushion leaves the table
    res = simulate(world(("cue", 1300.0, 405.0)), Shot("cue", 0.0, 3000.0, elevation_deg=60.0))
    off = of(res.events, OffTable)
    assert off and res.world_after.ball("cue").status is BallStatus.OFF_TABLE


def test_low_jump_hits_the_cushion_below_the_nose():
    res = simulate(world(("cue", 1350.0, 405.0)), Shot("cue", 0.0, 1500.0, elevation_deg=15.0))
    assert of(res.events, Jump) and not of(res.events, OffTable)
    assert of(res.events, BallCushion)[0].cushion == "R"


def test_a_free_ball_runs_away_from_the_cue_following_through():
    """The struck ball leaves the tip faster than the tip goes: following through, the cue never
    touches it again on its own (ficha 5.7 needs something to slow the ball within the stroke)."""
    res = simulate(world(("cue", 300.0, 405.0)), Shot("cue", 0.0, 1500.0, double_hit=True), t0_s=1.0)
    assert not of(res.events, CueContact)
    plain = simulate(world(("cue", 300.0, 405.0)), Shot("cue", 0.0, 1500.0), t0_s=1.0)
    assert res.events[-1].positions == plain.events[-1].positions


@pytest.mark.parametrize("gap_mm", [3.0, 12.0, 30.0])
def test_the_cue_following_through_catches_a_ball_stopped_close_in_front(gap_mm):
    """A ball struck full at a ball ``gap_mm`` in front stops dead on it; the tip, following through,
    reaches it a few milliseconds later and pushes it on after the object ball: one cue contact, after
    the ball contact, within the follow-through's reach of the ball's place and time."""
    v = 900.0
    x_red = 700.0 + 2 * R + gap_mm
    res = simulate(world(("cue", 700.0, 405.0), ("r1", x_red, 405.0)), Shot("cue", 0.0, v, double_hit=True), t0_s=1.0)
    (cc,) = of(res.events, CueContact)
    first = of(res.events, BallBall)[0]
    v_tip = v / P.cue_speed_gain
    assert first.t_s < cc.t_s <= 1.0 + P.cue_follow_mm / v_tip
    assert cc.t_s == pytest.approx(1.0 + gap_mm / v_tip, abs=0.004)  # the tip gets where the ball stopped
    assert 0.0 < cc.xy_mm[0] - 700.0 < gap_mm + 1.0
    # pushed on: at rest further on than after the single touch, which leaves the cue ball by the red
    plain = simulate(world(("cue", 700.0, 405.0), ("r1", x_red, 405.0)), Shot("cue", 0.0, v), t0_s=1.0)
    assert res.events[-1].positions["cue"][0] > plain.events[-1].positions["cue"][0] + 100.0
    assert not of(plain.events, CueContact)


def test_bar_billiards_hole_drop_skim_and_pins():
    base = rack_bar_billiards(BAR)
    h = BAR.hole("h100")
    # slow over the 100 hole: drops; fast: skims across
    for speed, drops in ((700.0, True), (2500.0, False)):
        w = base.with_ball(BallState("w1", (h.xy_mm[0] - 200.0, h.xy_mm[1] + 10.0)))
        w = World(BAR, w.balls, tuple(PinState(p.id, p.xy_mm) for p in BAR.pins if p.id != "red"))
        v_need = math.sqrt(speed**2 + 2 * P.mu_roll * G_MM_S2 * 200.0)  # so it arrives at ~speed
        res = simulate(w, Shot("w1", 0.0, v_need, top=ROLL), rng=1)
        pots = [p for p in of(res.events, Pot) if p.pocket == "h100"]
        assert bool(pots) == drops, (speed, res.events)
        if drops:
            assert res.world_after.ball("w1").status is BallStatus.IN_TROUGH
    # pins: a hard hit knocks the red pin down, a soft one moves it
    pin = BAR.pin("red")
    for speed, kind in ((1500.0, PinDown), (120.0, PinMoved)):
        start = (pin.xy_mm[0] - 150.0, pin.xy_mm[1])
        w = base.with_ball(BallState("w2", start))
        v_need = math.sqrt(speed**2 + 2 * P.mu_roll * G_MM_S2 * 100.0)
        res = simulate(w, Shot("w2", 0.0, v_need, top=ROLL))
        assert of(res.events, kind), (speed, res.events)
        standing = res.events[-1].pins
        assert ("red" in standing) == (kind is PinMoved)


def test_bar_billiards_placement_in_the_d():
    w = rack_bar_billiards(BAR)
    res = simulate(w, Shot("w1", 0.0, 1200.0, place_xy_mm=(400.0, 450.0)))
    assert isinstance(res.events[0], BallPlaced) and isinstance(res.events[1], ShotStart)
    with pytest.raises(PhysicsError):
        simulate(w, Shot("w1", 0.0, 1200.0))  # still in the trough


def test_hand_actions():
    w = rack_brasileira(resolve_profile("brasileira"))
    out = remove_ball(w, "red", 3.0)
    assert isinstance(out.events[0], BallRemoved) and out.events[0].t_s == 3.0
    assert out.world.ball("red").status is BallStatus.POCKETED
    assert out.timeline.at(3.3).balls[1].status is BallStatus.IN_HAND
    back = place_ball(out.world, "red", (2130.0, 1065.0), 4.0)
    assert isinstance(back.events[0], BallPlaced) and back.events[0].t_s == pytest.approx(4.6)
    pose = back.timeline.ball_pose("red", 4.3)
    assert pose.status is BallStatus.IN_HAND and 0 < pose.h_mm < 120
    with pytest.raises(PhysicsError):
        place_ball(back.world, "red", (586.5, 710.0), 5.0)  # on the brown
    moved = touch_ball(back.world, "blue", (300.0, 0.0), 6.0)
    assert isinstance(moved.events[0], BallTouched)
    assert moved.world.ball("blue").xy_mm[0] > 1420.0 + 100.0


def test_shot_validation():
    with pytest.raises(PhysicsError):
        Shot("cue", 0.0, -5.0)
    with pytest.raises(PhysicsError):
        Shot("cue", 0.0, 1000.0, side=0.5, top=0.5)
    with pytest.raises(PhysicsError):
        simulate(world(("cue", 100.0, 100.0)), Shot("nope", 0.0, 1000.0))


def test_ficha_rack_follows_rule_3():
    rng = np.random.default_rng(3)
    w = rack_ficha(FICHA, rng)
    pos = w.positions()
    assert pos["cue"] == (710.0, 405.0)
    for group, end_x in (("red", R), ("yellow", FICHA.length_mm - R)):
        ids = FICHA.group(group)
        a, b = pos[ids[0]], pos[ids[1]]
        assert a[0] == pytest.approx(end_x, abs=0.02) and b[0] == pytest.approx(end_x, abs=0.02)
        assert (a[1] + b[1]) / 2 == pytest.approx(FICHA.width_mm / 2)
        assert 10.0 <= abs(a[1] - b[1]) - 2 * R <= 2 * R
        c, d = pos[ids[2]], pos[ids[3]]
        assert c[0] == d[0] and 150 <= abs(c[0] - FICHA.length_mm / 2) <= 250
        assert (c[0] - FICHA.length_mm / 2) * (end_x - FICHA.length_mm / 2) > 0


@pytest.mark.parametrize("name", ["ficha", "brasileira", "bar-billiards"])
def test_random_shots_keep_the_invariants(name):
    """Random layouts and shots: time-ordered events from ShotStart to AtRest, nothing overlapping at
    rest, every ball at rest on the cloth, and under a second per shot."""
    prof = resolve_profile(name)
    r = prof.ball_radius_mm
    rng = np.random.default_rng(42)
    for k in range(12):
        balls: list[BallState] = []
        for spec in prof.balls:
            for _ in range(200):
                xy = (rng.uniform(r + 1, prof.length_mm - r - 1), rng.uniform(r + 1, prof.width_mm - r - 1))
                clear = all(math.dist(xy, o.xy_mm) >= 2 * r + 0.01 for o in balls)
                clear &= all(math.dist(xy, p.xy_mm) > r + p.radius_mm + 1 for p in prof.pins)
                clear &= all(math.dist(xy, h.xy_mm) > h.radius_mm + 2 for h in prof.holes)
                if clear:
                    balls.append(BallState(spec.id, xy))
                    break
        w = World(prof, tuple(balls), tuple(PinState(p.id, p.xy_mm) for p in prof.pins))
        shot = Shot(balls[0].id, rng.uniform(0, 360), rng.uniform(300, 7000), side=rng.uniform(-0.4, 0.4),
                    top=rng.uniform(-0.4, 0.4), elevation_deg=rng.uniform(10, 60) if k % 4 == 0 else 0.0)
        t = time.thread_time()  # CPU time: a shot's wall time depends on what else the machine runs
        res = simulate(w, shot, rng=k)
        assert time.thread_time() - t < 1.0
        times = [e.t_s for e in res.events]
        assert times == sorted(times)
        assert isinstance(res.events[0], ShotStart) and isinstance(res.events[-1], AtRest)
        on = [b for b in res.world_after.balls if b.status is BallStatus.ON_TABLE]
        for a, b in itertools.combinations(on, 2):
            assert math.dist(a.xy_mm, b.xy_mm) >= 2 * r - 0.01, (k, a.id, b.id)
        for b in res.world_after.balls:
            assert b.h_mm == 0.0 and b.velocity_mm_s == (0.0, 0.0)
            assert b.status is not BallStatus.AIRBORNE


def test_ball_ball_names_the_striker_first():
    """Both moving: the cue ball drifts left slowly, r1 is struck hard into it: BallBall(a=r1, b=cue)."""
    w = World(FICHA, (BallState("cue", (700.0, 405.0), velocity_mm_s=(-150.0, 0.0)), BallState("r1", (300.0, 405.0))))
    res = simulate(w, Shot("r1", 0.0, 1500.0, top=ROLL))
    hit = of(res.events, BallBall)[0]
    assert (hit.a, hit.b) == ("r1", "cue")


def test_moving_a_ball_by_hand_lifts_carries_and_lowers_it():
    w = rack_brasileira(resolve_profile("brasileira"))
    start = w.ball("blue").xy_mm
    out = place_ball(w, "blue", (1420.0, 300.0), 2.0)
    tl = out.timeline
    assert out.events[0].t_s == pytest.approx(3.3)
    lifted = tl.ball_pose("blue", 2.3)
    assert lifted.status is BallStatus.IN_HAND and lifted.xy_mm == pytest.approx(start) and lifted.h_mm == pytest.approx(120.0)
    mid = tl.ball_pose("blue", 2.5)
    assert mid.xy_mm == pytest.approx(((start[0] + 1420.0) / 2, (start[1] + 300.0) / 2))
    assert tl.ball_pose("blue", 3.4).status is BallStatus.ON_TABLE and tl.ball_pose("blue", 3.4).xy_mm == (1420.0, 300.0)


def test_bar_billiards_ball_off_the_far_end_can_come_back():
    """A high jump over the foot cushion hits the board behind it: back on the table (Returned, 2d a);
    a flatter one lands beyond the cushion and stays off."""
    from tracking.events import Returned

    w = World(BAR, (BallState("w1", (1800.0, 200.0)),))
    back = simulate(w, Shot("w1", 0.0, 4000.0, elevation_deg=70.0))
    off, ret = of(back.events, OffTable), of(back.events, Returned)
    assert len(off) == 1 and len(ret) == 1 and ret[0].t_s > off[0].t_s
    assert BAR.contains(ret[0].xy_mm, BAR.ball_radius_mm)
    assert back.world_after.ball("w1").status is BallStatus.ON_TABLE
    gone = simulate(w, Shot("w1", 0.0, 2500.0, elevation_deg=50.0))
    assert of(gone.events, OffTable) and not of(gone.events, Returned)
    assert gone.world_after.ball("w1").status is BallStatus.OFF_TABLE


def test_jump_shot_for_a_given_airborne_time():
    from simulator.physics import jump_shot

    shot = jump_shot("cue", 0.0, 0.2, 1500.0)
    res = simulate(world(("cue", 300.0, 405.0)), shot)
    jump = of(res.events, Jump)[0]
    assert jump.airborne_s == pytest.approx(0.2, rel=1e-9)
    landed = res.timeline.ball_pose("cue", 0.2 + 1e-6)
    assert landed.h_mm == 0.0 and landed.xy_mm[0] == pytest.approx(300.0 + 0.2 * 1500.0, abs=0.01)
    assert res.timeline.ball_pose("cue", 0.1).h_mm == pytest.approx(G_MM_S2 * 0.2**2 / 8, rel=1e-9)


def test_bar_billiards_endgame_scoreboard_is_a_cushion_and_covers_holes():
    """2i: with the scoreboard down a ball rolls slowly over a covered 50 hole and rebounds off the
    scoreboard's edge; the 100 and 200 holes stay open."""
    h50 = BAR.hole("h50t")
    w = World(BAR, (BallState("w1", (h50.xy_mm[0] - 150.0, h50.xy_mm[1])),), scoreboard_down=True)
    res = simulate(w, Shot("w1", 0.0, 700.0, top=ROLL))
    assert not of(res.events, Pot)
    hit = of(res.events, BallCushion)[0]
    assert hit.cushion == "scoreboard" and hit.xy_mm[0] == pytest.approx(BAR.scoreboard_x_mm)
    h100 = BAR.hole("h100")
    w = World(BAR, (BallState("w1", (h100.xy_mm[0] - 150.0, h100.xy_mm[1])),), scoreboard_down=True)
    assert [p.pocket for p in of(simulate(w, Shot("w1", 0.0, 500.0, top=ROLL)).events, Pot)] == ["h100"]


def test_root_isolation_matches_known_roots():
    """The contact-time solver against quartics built from known roots (some clustered)."""
    from simulator.physics.collisions import _solve
    from simulator.physics.roots import _real_roots

    rng = np.random.default_rng(9)
    for _ in range(300):
        roots = np.sort(rng.uniform(-1.0, 3.0, 4))
        coeffs = list(np.poly(roots) * rng.uniform(0.1, 1e4))
        inside = [r for r in roots if 0.0 <= r <= 2.0]
        found = _real_roots(coeffs, 0.0, 2.0)
        if len(found) == len(inside):  # clustered pairs closer than rounding can merge
            assert np.allclose(found, inside, atol=1e-8)
        else:
            assert min(np.diff(roots)) < 1e-3
    x = _solve([[2.0, 0.5], [0.5, 2.0]], [1.0, 2.0])
    assert np.allclose(np.array([[2.0, 0.5], [0.5, 2.0]]) @ x, [1.0, 2.0])
