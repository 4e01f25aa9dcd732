"""Bar-billiards pins (rules 2h, 3a, 3b of the bar billiards rules: a pin down costs the break or
the score): standing, down, and states that hold while a ball passes."""

import numpy as np
import pytest

from simulator.scene import BallPose, PinPose
from vision import PinState

from tests.vision._scenes import noisy, run, table


@pytest.fixture(scope="module")
def bar():
    return table("bar-billiards", seed=4)


def pins(profile, down: dict[str, float] | None = None):
    down = down or {}
    return [PinPose(p.id, p.xy_mm, standing=p.id not in down, lean_dir_rad=down.get(p.id, 0.0)) for p in profile.pins]


def test_standing_pins_stand(bar):
    rng = np.random.default_rng(1)
    frame = bar.render([BallPose("red", (800.0, 450.0))])
    out = run(bar.detector(), [frame] + [noisy(frame, rng) for _ in range(3)])
    p = out[-1].pins
    assert p.ids == bar.profile.pin_ids if hasattr(bar.profile, "pin_ids") else tuple(q.id for q in bar.profile.pins)
    assert (p.state == PinState.STANDING).all()
    assert np.allclose(p.xy_mm, [q.xy_mm for q in bar.profile.pins])


@pytest.mark.parametrize("pin", ["black", "white1"])
def test_a_knocked_pin_is_down_after_a_few_frames(bar, pin):
    rng = np.random.default_rng(2)
    up = bar.render([BallPose("red", (800.0, 450.0))])
    fallen = bar.render([BallPose("red", (800.0, 450.0))], pins=pins(bar.profile, {pin: 0.6}))
    det = bar.detector()
    out = run(det, [up, noisy(up, rng)] + [noisy(fallen, rng) for _ in range(5)])
    k = [q.id for q in bar.profile.pins].index(pin)
    assert out[2].pins.state[k] == PinState.STANDING  # one frame is not enough to call it
    assert out[-1].pins.state[k] == PinState.DOWN
    others = np.arange(len(bar.profile.pins)) != k
    assert (out[-1].pins.state[others] == PinState.STANDING).all()
    spot = np.asarray(bar.profile.pin(pin).xy_mm)
    assert np.linalg.norm(out[-1].pins.xy_mm[k] - spot) < bar.profile.pin(pin).height_mm  # near where it lies


def test_a_ball_against_a_pin_does_not_knock_it_down(bar):
    rng = np.random.default_rng(3)
    pin = bar.profile.pin("red")
    r = bar.profile.ball_radius_mm
    touching = (pin.xy_mm[0] - pin.radius_mm - r - 1.0, pin.xy_mm[1])
    frames = [bar.render([BallPose("red", (800.0, 450.0))])] + [noisy(bar.render([BallPose("w1", touching)]), rng) for _ in range(5)]
    out = run(bar.detector(), frames)
    assert (out[-1].pins.state == PinState.STANDING).all()


@pytest.mark.parametrize("pin, lean", [("white1", 2.8), ("white2", 0.79), ("red", 1.2)])
def test_a_fallen_pin_is_neither_occluder_nor_ball(bar, pin, lean):
    """A pin knocked over (3b a) is a pin down: its body lying on the cloth is no ball (a white one
    looks like a white ball's blob) and nothing a ball could hide under."""
    rng = np.random.default_rng(6)
    up = bar.render([])
    fallen = bar.render([], pins=pins(bar.profile, {pin: lean}))
    out = run(bar.detector(), [up, noisy(up, rng)] + [noisy(fallen, rng) for _ in range(8)])
    assert all(len(f.occluders) == 0 for f in out), [len(f.occluders) for f in out]
    assert out[-1].pins.state[[q.id for q in bar.profile.pins].index(pin)] == PinState.DOWN
    assert len(out[-1].balls) == 0, out[-1].balls.xy_mm


def _count_matches(monkeypatch) -> list:
    """From now on every template match the pin watcher makes is counted (one entry each)."""
    import cv2

    import vision.pins as pins_module

    calls, real = [], cv2.matchTemplate

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(pins_module.cv2, "matchTemplate", counted)
    return calls


def test_a_repeated_picture_reuses_the_match_and_a_new_one_does_not(bar, monkeypatch):
    """The pins' masked correlation is skipped only when the picture and the mask are those of the
    pin's last match, bit for bit; what it gives is what the correlation gives."""
    import cv2

    rng = np.random.default_rng(5)
    up = bar.render([BallPose("red", (800.0, 450.0))])
    real = cv2.matchTemplate
    det = bar.detector()
    run(det, [up, noisy(up, rng)])
    watcher = det._pins
    image = noisy(up, rng)
    score = det._last_score
    calls = _count_matches(monkeypatch)
    first = watcher.detect(image, score, np.zeros((0, 2)), np.zeros(0))
    n = len(calls)
    assert n == len(bar.profile.pins)
    again = watcher.detect(image.copy(), score, np.zeros((0, 2)), np.zeros(0))
    assert len(calls) == n  # the same picture: no new correlation
    assert np.array_equal(first.state, again.state) and np.array_equal(first.score, again.score)
    other = noisy(up, rng)
    fresh = watcher.detect(other, score, np.zeros((0, 2)), np.zeros(0))
    assert len(calls) == 2 * n  # a new picture: every pin matched again
    for i, pin in enumerate(bar.profile.pins):  # and the answer is the correlation's own
        tmpl, _, fp = watcher._template[i]
        x0, y0, x1, y1 = watcher._box[i]
        grey = cv2.cvtColor(other[y0:y1, x0:x1], cv2.COLOR_BGR2GRAY)
        found = real(grey, tmpl, cv2.TM_CCOEFF_NORMED, mask=fp.astype(np.float32))
        assert fresh.score[i] == pytest.approx(float(np.nan_to_num(found, nan=-1.0).max()), abs=1e-6)


def test_only_the_pins_where_the_picture_changed_are_matched_again(bar, monkeypatch):
    """A ball rolling far from the pins leaves them as they stood, unmatched (a masked correlation
    costs milliseconds a pin); a pin knocked over is still seen, since its picture changes."""
    rng = np.random.default_rng(6)
    det = bar.detector()
    run(det, [noisy(bar.render([BallPose("red", (300.0, 450.0))]), rng) for _ in range(3)])
    calls = _count_matches(monkeypatch)
    for k, x in enumerate((330.0, 360.0, 390.0)):  # a ball rolling in the baulk end, far from every pin
        d = det.detect(noisy(bar.render([BallPose("red", (x, 450.0))]), rng), 3 + k, (3 + k) / 30)
        assert (d.pins.state == PinState.STANDING).all()
    assert calls == []
    pin = "black"
    fallen = bar.render([BallPose("red", (390.0, 450.0))], pins=pins(bar.profile, {pin: 0.6}))
    out = [det.detect(noisy(fallen, rng), 6 + k, (6 + k) / 30) for k in range(5)]
    assert calls  # the fallen pin's picture changed: it was looked at
    k = [q.id for q in bar.profile.pins].index(pin)
    assert out[-1].pins.state[k] == PinState.DOWN
