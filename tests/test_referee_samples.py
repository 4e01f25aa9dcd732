"""The referee from video, end to end on the real stages: every bundled sample clip is calibrated,
detected, tracked, its events inferred and refereed by ``cueref batch`` (the local pool, both cores),
and the calls made from the video alone (with the clip's operator inputs: Sinuca Brasileira's
nominations) are compared with the calls written for it.

For the 24 staged clips the expected calls were written by hand from the rulebooks; for the four
generated frames (``ficha/frame``, ``brasileira/frame``, ``bar-billiards/visit``,
``hard/close-colours``) they are the engine's own calls on the true log, regression goldens
(``tests/test_sample_videos.py`` says which is which). A question the referee cannot settle from the
video takes the camera's own reading (an assumed answer), as in any recorded run.

Clips in ``KNOWN_WRONG`` are called wrongly today; each says why, and the mark is strict: a clip that
starts passing fails the test until its mark is removed. Clips in ``FRAGILE`` are called right on one
machine and wrongly on another (a measurement at a rule's boundary that the machine's floating point
tips); each says why, and its mark is not strict."""

from __future__ import annotations

import pytest

from cueref.compare import compare
from cueref.pipeline import missing_stages
from cueref.store import video_digest
from tests.batch._standins import SAMPLES, batch, sample_list, stored
from tests.pipeline._standins import load_clip

# clip -> what goes wrong (measured by this test; bench/samples_e2e.py prints the differences)
KNOWN_WRONG: dict[str, str] = {}
# clip -> why it is called right on one machine and wrong on another (not strict: it may pass)
FRAGILE: dict[str, str] = {
    "bar-billiards/visit": "shot 6: the red set down in the D and struck is named only as it leaves (vision scores it 0.5 at "
                           "rest in its shadow, where a fingertip scores as much; its first moving sighting goes to a "
                           "hand's candidate), so its place is taken 90 mm off: 15 mm inside the D on one machine, outside "
                           "on another (a false not_from_d, bar billiards 3b c)",
}


@pytest.fixture(scope="module")
def refereed(tmp_path_factory):
    if missing_stages():
        pytest.skip(f"the vision and tracking stages are not installed: {', '.join(missing_stages())}")
    tmp = tmp_path_factory.mktemp("samples")
    store = tmp / "store.sqlite"
    code = batch([sample_list(tmp, SAMPLES), "--out", tmp / "out", "--store", store, "--jobs", 2, "--no-video"], stages=None)
    return code, stored(store)


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(reason=KNOWN_WRONG[n], strict=True))
                                  if n in KNOWN_WRONG else
                                  pytest.param(n, marks=pytest.mark.xfail(reason=FRAGILE[n], strict=False))
                                  if n in FRAGILE else n for n in SAMPLES])
def test_the_calls_made_from_the_video_are_the_clips_calls(refereed, name):
    _, matches = refereed
    clip = load_clip(name)
    match = matches.get(video_digest(clip.video))
    assert match is not None, f"{name}: not refereed (see the batch's report)"
    assert match["status"] == "complete"
    made = [type("Call", (), data) for *_, data in match["decisions"]]
    assert compare(made, clip.expected) == []
