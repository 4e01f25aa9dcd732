"""The corner editor behind ``--interactive`` (the window itself needs a display)."""

import numpy as np

from calibration.interactive import CornerEditor


def test_clicks_place_then_drag_moves_the_nearest_corner():
    ed = CornerEditor((1280, 720), centre=(640, 360))
    for xy in [(100, 100), (1100, 100), (1100, 600), (100, 600)]:
        ed.press(*xy)
        ed.release()
    assert list(ed.corners) == ["TL", "TR", "BR", "BL"]
    ed.press(1095, 598)  # near BR
    ed.drag(1110, 610)
    ed.release()
    assert ed.corners["BR"] == (1110, 610) and ed.corners["TL"] == (100, 100)


def test_zoom_keeps_the_point_under_the_cursor():
    ed = CornerEditor((1280, 720), centre=(640, 360))
    before = ed.to_image(300, 200)
    ed.zoom_at(300, 200, 4.0)
    assert np.allclose(ed.to_image(300, 200), before)
    ed.press(300, 200)
    assert np.allclose(ed.corners["TL"], before)  # a click at 4x places a corner at the same image point
    assert np.allclose(ed.to_window(*ed.to_image(10, 20)), (10, 20))
    view = ed.view(np.zeros((720, 1280, 3), np.uint8))
    assert view.shape == (720, 1280, 3)
