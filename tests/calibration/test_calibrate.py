"""Automatic and manual calibration on synthetic views with a known camera."""

from dataclasses import replace

import numpy as np
import pytest

from calibration.calibrate import calibrate_frames, calibrate_image, calibrate_manual, landmarks_mm
from calibration.homography import CalibrationError
from calibration.table import profile_from_spec, resolve_profile
from tests.calibration._views import corner_errors_mm, project, view


@pytest.mark.parametrize("args", [
    pytest.param(("ficha", (1280, 720), 1400.0, 0.0, 0.0, 0.0, 0.0, 1, False), id="ficha 720p straight down"),
    pytest.param(("ficha", (1280, 720), 1300.0, 9.0, 30.0, 2.0, -0.25, 2, True), id="ficha 720p tilt 9 k1 -0.25 low light"),
    pytest.param(("brasileira", (1920, 1080), 2000.0, 5.0, 200.0, -3.0, -0.1, 3, False), id="brasileira 1080p"),
])
def test_automatic_corners_within_3mm_and_pockets_found(args):
    v = view(*args)
    cal = calibrate_image(v.image, v.profile)
    err = corner_errors_mm(cal, v)
    assert err.max() < 3.0, err  # the bar: worst corner under 4 mm
    lm = cal.residuals["landmarks_mm"]
    assert len(lm) >= 5 and np.median(list(lm.values())) < 3.0, lm
    assert max(cal.residuals["line_rms_px"].values()) < 1.0


def test_distortion_is_estimated_from_the_cushions():
    v = view("ficha", (1280, 720), 1300.0, 9.0, 30.0, 2.0, -0.25, 2, True)
    cal = calibrate_image(v.image, v.profile)
    assert cal.dist_coeffs[0] < -0.05  # barrel distortion found
    before, after = cal.residuals["straightness_rms_px"]["before"], cal.residuals["straightness_rms_px"]["after"]
    assert after < 0.5 * before
    # A table point away from the cushions (the lens bends the middle of the picture too).
    mid = np.array([[355.0, 202.0], [1065.0, 608.0]])
    assert np.abs(cal.to_table_mm(project(v.camera, mid)) - mid).max() < 2.0


def test_bar_billiards_holes_are_located():
    v = view("bar-billiards", (1280, 720), 1600.0, 4.0, 90.0, 0.0, -0.1, 5)
    cal = calibrate_image(v.image, v.profile)
    assert corner_errors_mm(cal, v).max() < 2.0
    lm = cal.residuals["landmarks_mm"]
    assert set(lm) == {f"hole:{h.id}" for h in v.profile.holes}
    assert max(lm.values()) < 2.0
    pins = cal.residuals["pins_mm"]
    assert set(pins) == {f"pin:{p.id}" for p in v.profile.pins}
    assert max(pins.values()) < 4.0


@pytest.mark.parametrize("args", [
    pytest.param(((1280, 720), 1600.0, 4.0, 90.0, 0.0, -0.1, 5), id="720p tilt 4"),
    pytest.param(((1920, 1080), 1900.0, 7.0, 250.0, -2.0, -0.2, 8), id="1080p tilt 7 k1 -0.2"),
])
def test_bar_billiards_with_the_scoreboard_down(args):
    """Endgame (2i): the folded scoreboard hides the far end; the open part and its holes fix the map."""
    v = view("bar-billiards", *args, scoreboard_down=True)
    cal = calibrate_image(v.image, v.profile)
    open_part = np.array([(x, y) for x in np.linspace(0.0, v.profile.scoreboard_x_mm, 8) for y in (0.0, 450.0, 900.0)])
    err = np.linalg.norm(cal.to_table_mm(project(v.camera, open_part)) - open_part, axis=1)
    assert err.max() < 3.0, err
    assert corner_errors_mm(cal, v).max() < 5.0  # the far corners, under the scoreboard, are extrapolated
    assert set(cal.residuals["landmarks_mm"]) >= {"hole:h200", "hole:h100", "hole:h50t", "hole:h50b"}


def test_a_wrong_layout_in_the_profile_shows_in_the_residuals():
    """The user's profile puts the 100 hole and the red pin 40 mm off; the residuals say so."""
    v = view("bar-billiards", (1280, 720), 1600.0, 4.0, 90.0, 0.0, -0.1, 5)
    p = v.profile
    holes = tuple(replace(h, xy_mm=(h.xy_mm[0] + 40.0, h.xy_mm[1])) if h.id == "h100" else h for h in p.holes)
    pins = tuple(replace(q, xy_mm=(q.xy_mm[0], q.xy_mm[1] - 40.0)) if q.id == "red" else q for q in p.pins)
    cal = calibrate_image(v.image, p.with_overrides(holes=holes, pins=pins))
    lm, found = cal.residuals["landmarks_mm"], cal.residuals["landmarks_found_mm"]
    assert lm["hole:h100"] == pytest.approx(40.0, abs=3.0)
    assert cal.residuals["pins_mm"]["pin:red"] == pytest.approx(40.0, abs=4.0)
    assert found["hole:h100"] == pytest.approx(list(p.hole("h100").xy_mm), abs=3.0)  # where it really is
    assert max(v for k, v in lm.items() if k != "hole:h100") < 2.0


def test_head_option_turns_the_frame():
    v = view("ficha", seed=6)
    left = calibrate_image(v.image, v.profile)
    right = calibrate_image(v.image, v.profile, head="right")
    L, W = v.profile.length_mm, v.profile.width_mm
    px = project(v.camera, [[100.0, 200.0]])
    assert np.allclose(right.to_table_mm(px), [[L - 100.0, W - 200.0]], atol=2.0)
    assert np.allclose(left.to_table_mm(px), [[100.0, 200.0]], atol=2.0)


def test_several_frames_keep_the_middle_one():
    frames = [view("ficha", seed=1, tilt_deg=0.0, height_mm=1400.0).image, view("ficha", seed=6).image,
              np.zeros((720, 1280, 3), np.uint8)]
    cal = calibrate_frames(frames, resolve_profile("ficha"))
    assert cal.residuals["frames_used"] == 2 and cal.residuals["frames_refused"] == 1


# ---- refusals -------------------------------------------------------------------------------

@pytest.mark.parametrize("image, match", [
    pytest.param(np.zeros((720, 1280, 3), np.uint8), "black", id="black frame"),
    pytest.param(np.full((720, 1280, 3), 128, np.uint8), "grey", id="grey frame"),
    pytest.param(np.random.default_rng(0).integers(0, 255, (720, 1280, 3), dtype=np.uint8), "cloth", id="noise"),
])
def test_no_table_is_refused(image, match):
    with pytest.raises(CalibrationError, match=match) as e:
        calibrate_image(image, resolve_profile("ficha"))
    assert e.value.hint


def test_a_green_wall_is_not_a_table():
    img = np.zeros((720, 1280, 3), np.uint8)
    img[:] = (40, 120, 50)  # the whole picture is cloth-coloured: no outline, no cushions
    with pytest.raises(CalibrationError):
        calibrate_image(img, resolve_profile("ficha"))


def test_wrong_aspect_profile_is_refused():
    v = view("brasileira", (1920, 1080), 2000.0, 5.0, 200.0, -3.0, -0.1, 3, False)  # a 2:1 table
    with pytest.raises(CalibrationError, match="times as long as it is wide") as e:
        calibrate_image(v.image, resolve_profile("ficha"))  # 1.75:1
    assert "--table" in e.value.hint


def test_calibration_error_is_a_value_error():
    assert issubclass(CalibrationError, ValueError)


# ---- manual ---------------------------------------------------------------------------------

def test_manual_corners_match_the_truth():
    v = view("ficha", seed=6)
    corners_px = project(v.camera, v.profile.corners_mm)
    cal = calibrate_manual(dict(zip(["TL", "TR", "BR", "BL"], corners_px)), v.profile, (1280, 720))
    assert corner_errors_mm(cal, v).max() < 1e-3
    assert cal.method == "manual"


def test_manual_with_more_landmarks_reports_residuals():
    v = view("ficha", seed=6)
    names = ["corner:TL", "corner:TR", "corner:BR", "corner:BL", "pocket:TM", "spot:centre"]
    known = landmarks_mm(v.profile)
    pts = {n: project(v.camera, [known[n]])[0] for n in names}
    pts["pocket:TM"] = pts["pocket:TM"] + (0.0, 6.0)  # a misplaced click
    cal = calibrate_manual(pts, v.profile, (1280, 720))
    res = cal.residuals["landmarks_mm"]
    assert max(res, key=res.get) == "pocket:TM"


@pytest.mark.parametrize("points, match", [
    pytest.param({"TL": (10, 10), "TR": (100, 10), "BR": (100, 60)}, "four or more", id="three points"),
    pytest.param({"TL": (10, 10), "TR": (100, 10), "BR": (100, 60), "XX": (10, 60)}, "unknown landmark", id="bad name"),
    pytest.param({"TL": (100, 10), "TR": (10, 10), "BR": (10, 60), "BL": (100, 60)}, "mirrored", id="wrong order"),
    pytest.param({"TL": (10, 10), "TR": (1900, 10), "BR": (1900, 60), "BL": (10, 60)}, "outside", id="outside picture"),
])
def test_manual_refusals(points, match):
    with pytest.raises(CalibrationError, match=match):
        calibrate_manual(points, resolve_profile("ficha"), (1280, 720))


def test_manual_wrong_aspect_is_refused():
    p = profile_from_spec("2000x1000")
    with pytest.raises(CalibrationError, match="times as long"):
        calibrate_manual({"TL": (100, 100), "TR": (700, 100), "BR": (700, 500), "BL": (100, 500)}, p, (800, 600))
