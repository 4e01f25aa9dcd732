"""What a referee run leaves behind, written as it goes: the match in the store, the annotated video
and, at the end, the review report. :class:`MatchOutputs` is the one consumer ``cueref referee``
adds beside its run files, fed each of the pipeline's per-frame results::

    with RunFiles(out, header) as files, MatchOutputs.open(out, video=args.video, game=args.game, profile=profile,
            profile_ref=header.profile, players=players, options=options, calibration=cal, fps=info.fps,
            store=args.store) as match, closing(run_pipeline(frames, stages, calls)) as results:
        for result in results:                 # cueref.pipeline.FrameResult
            files.add(result)
            match.add(result)                  # its events, the calls they completed, the frame and its tracks
    # leaving the block normally writes out/report.html (match.report); an error keeps what was decided

``cueref report --events LOG --video VIDEO`` drives the same consumer from a logged run's files,
through :meth:`~MatchOutputs.event`, :meth:`~MatchOutputs.decision` and :meth:`~MatchOutputs.frame`.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

from calibration.camera import Calibration
from calibration.table import TableProfile
from cueref.report.annotate import AnnotatedVideo
from cueref.report.page import write_report
from cueref.store import MatchRecorder, MatchStore
from cueref.store.tracks import TrackPoint, Tracks
from cueref.video import Frame
from rules.base import Decision
from tracking.events import Event

__all__ = ["MatchOutputs"]

log = logging.getLogger(__name__)

ANNOTATED = "annotated.mp4"


class MatchOutputs:
    """The store's recorder, the annotated video and the report of one run (module docstring)."""

    def __init__(self, out_dir: Path, store: MatchStore, recorder: MatchRecorder, annotated: AnnotatedVideo | None, *,
                 own_store: bool = False, plots: bool = True):
        self.out_dir, self.store, self.recorder, self.annotated = out_dir, store, recorder, annotated
        self._own_store, self._plots = own_store, plots
        self.call: Mapping[str, Any] | None = None  # the latest call, drawn on the video
        self.warning: str | None = None
        self.report: Path | None = None  # written by close()

    @classmethod
    def open(cls, out_dir: str | os.PathLike[str], *, video: str | os.PathLike[str], game: str, profile: TableProfile,
             players: Sequence[str], options: Mapping[str, Any] | None = None, calibration: Calibration | None = None,
             fps: float | None = None, store: MatchStore | str | os.PathLike[str] | None = None, profile_ref: str | None = None,
             annotate: bool = True, keep_tracks: bool = True, video_sha256: str | None = None, plots: bool = True) -> "MatchOutputs":
        """Start the outputs of a run: the match found (by the video's content) or made in ``store``
        (a :class:`MatchStore`, a location, or None for the default store), and the annotated video
        opened as ``out_dir/annotated.mp4`` when ``annotate`` (it needs ``fps``)."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        own = not isinstance(store, MatchStore)
        st = MatchStore(store) if own else store
        try:
            rec = MatchRecorder.open(st, video=video, game=game, profile=profile_ref or profile.name, players=players, options=options,
                                     video_sha256=video_sha256, keep_tracks=keep_tracks)
            annotated = None
            if annotate:
                if not fps:
                    raise ValueError("the annotated video needs the video's frame rate (fps)")
                annotated = AnnotatedVideo(out / ANNOTATED, fps=fps, profile=profile, game=game, calibration=calibration)
        except BaseException:
            if own:
                st.close()
            raise
        return cls(out, st, rec, annotated, own_store=own, plots=plots)

    def __enter__(self) -> "MatchOutputs":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()

    def add(self, result: Any) -> None:
        """One per-frame result of :func:`cueref.pipeline.run`: its events, the calls they completed,
        then the frame with its tracks (the tracker's snapshot, read through ``rows()``: one
        ``(ball, class, x_mm, y_mm, state, confidence)`` per track, as ``tracks.csv``)."""
        for e in result.events:
            self.event(e)
        for step in result.steps:
            self.decision(step.decision)
        rows = getattr(result.tracks, "rows", None)
        tracks = Tracks.from_points(TrackPoint(result.frame.index, result.frame.t_s, *row) for row in rows()) if rows else None
        self.frame(result.frame, tracks)

    def frame(self, frame: Frame, tracks: Tracks | None = None) -> None:
        """One video frame and the tracks the tracker has for it."""
        if tracks is not None:
            self.recorder.frame(frame.index, frame.t_s, tracks)
        if self.annotated is not None:
            self.annotated.frame(frame.image, frame.t_s, tracks, self.call)

    def event(self, e: Event) -> None:
        self.recorder.event(e)

    def decision(self, d: Decision) -> None:
        self.recorder.decision(d)
        self.call = d.to_dict()

    def close(self) -> Path:
        """Finish the match in the store, the annotated video, and write the report; returns its path."""
        try:
            self.recorder.finish()
            self.warning = self.recorder.warning
            if self.annotated is not None:
                self.store.set_annotated_video(self.recorder.match_id, self.annotated.close().resolve())
            self.report = write_report(self.store, self.recorder.match_id, self.out_dir, plots=self._plots)
            return self.report
        finally:
            if self._own_store:
                self.store.close()

    def abort(self) -> None:
        """The run stopped early: keep what was decided (the match stays ``recording``); drop the
        partial annotated video."""
        try:
            self.recorder.flush()
            if self.annotated is not None:
                self.annotated.abort()
        finally:
            if self._own_store:
                self.store.close()
