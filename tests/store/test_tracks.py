"""Tracks: a shot's packed blob and tracks.csv give back what went in (hypothesis over random rows),
and bad files are refused with the line and the reason."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cueref.store.tracks import TRACK_COLUMNS, TrackPoint, Tracks, TracksError, pack_tracks, read_tracks_csv, unpack_tracks, write_tracks_csv

ids = st.sampled_from(["cue", "r1", "r2", "y10", "w1", "red"])
mm = st.one_of(st.floats(-100.0, 3000.0, allow_nan=False), st.just(float("nan")))
rows = st.lists(st.builds(TrackPoint, st.integers(0, 10**6), st.floats(0, 10**4, allow_nan=False), ids,
                          st.sampled_from(["white", "red", "yellow"]), mm, mm, st.sampled_from(["moving", "at_rest", "lost"]),
                          st.floats(0, 1)), max_size=60)


def _same(a: Tracks, b: Tracks, atol: float) -> None:
    assert len(a) == len(b)
    for name in ("frame", "ball", "cls", "state"):
        assert (getattr(a, name) == getattr(b, name)).all(), name
    assert np.allclose(a.t_s, b.t_s, rtol=0, atol=1e-6)
    assert np.allclose(a.xy_mm, b.xy_mm, rtol=0, atol=atol, equal_nan=True)
    assert np.allclose(a.confidence, b.confidence, rtol=0, atol=1e-3)


@settings(max_examples=60, deadline=None)
@given(rows)
def test_a_packed_shot_gives_back_its_tracks(points):
    tracks = Tracks.from_points(points)
    back = unpack_tracks(pack_tracks(tracks))
    _same(tracks, back, atol=3e-4)  # float32 positions: a quarter of a micrometre at 3 m
    assert np.array_equal(back.t_s, tracks.t_s)  # times and frames exactly


@settings(max_examples=30, deadline=None)
@given(rows)
def test_tracks_csv_gives_back_its_rows(tmp_path_factory, points):
    path = tmp_path_factory.mktemp("csv") / "tracks.csv"
    tracks = Tracks.from_points(points)
    _same(tracks, read_tracks_csv(write_tracks_csv(path, tracks)), atol=5e-4)  # written to the micrometre


def test_a_tracks_file_that_is_not_tracks_csv_is_refused_with_the_line(tmp_path):
    bad = tmp_path / "t.csv"
    bad.write_text("frame,t,ball\n")
    with pytest.raises(TracksError, match="line 1: the header must be frame,t_s,ball,class,x_mm,y_mm,state,confidence"):
        read_tracks_csv(bad)
    bad.write_text(",".join(TRACK_COLUMNS) + "\n0,0.0,cue,white,1.0,2.0,moving,1\n1,0.03,cue,white,abc,2.0,moving,1\n")
    with pytest.raises(TracksError, match="line 3: x_mm must be a number, got 'abc'"):
        read_tracks_csv(bad)
    with pytest.raises(TracksError, match="does not exist"):
        read_tracks_csv(tmp_path / "missing.csv")
    with pytest.raises(TracksError, match="not a cueref tracks blob"):
        unpack_tracks(b"nonsense")
