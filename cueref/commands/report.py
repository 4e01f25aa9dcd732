"""``cueref report``: the review report of a match (one HTML page beside the annotated video).

* ``cueref report MATCH`` writes the page of a stored match (after ``cueref review`` corrected it,
  say) into ``--out`` (default: ``cueref-out/VIDEO-NAME/``), playing its annotated video.
* ``cueref report --run DIR`` takes a ``cueref referee`` run folder (``events.jsonl``, ``tracks.csv``,
  ``calibration.json``; the video named in the log's header) and writes the report into it;
* ``cueref report --events LOG --video VIDEO`` takes what a refereed run wrote (the event log, and
  ``--tracks tracks.csv``, ``--calibration CAL.json`` and ``--calls`` when there are some): it judges
  the log, prints each call, stores the match, writes the annotated video (ball ids and trails when
  there are tracks, the score and the current call) and the report. Re-running it on the same video
  updates the stored match.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from tqdm import tqdm

from calibration import calfile
from calibration.calibrate import calibrate_image
from calibration.homography import CalibrationError
from calibration.table import resolve_profile
from cueref.calls import merge_by_time, read_calls
from cueref.errors import UserError
from cueref.options import parse_option_args, parse_players
from cueref.report.outputs import MatchOutputs
from cueref.report.page import write_report
from cueref.store import MatchStore, StoppingReferee, frames_of, read_tracks_csv, record_log
from cueref.video import VideoReader
from rules import GAMES, get_engine
from tracking.events import read_events

log = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("match", nargs="?", help="a stored match (id, start of its video hash, or the video file)")
    p.add_argument("--store", help="match store: SQLite file or postgresql:// URL (default: $CUEREF_STORE or cueref-out/matches.sqlite)")
    p.add_argument("--out", type=Path, help="folder for the report (default: cueref-out/VIDEO-NAME/)")
    p.add_argument("--run", type=Path, metavar="DIR", help="a cueref referee run folder: its events.jsonl, tracks.csv, calibration.json "
                   "and the video its log names; the report is written into it")
    p.add_argument("--events", type=Path, help="a refereed run's event log (JSON Lines): judge, store and report it")
    p.add_argument("--video", type=Path, help="the video the log was made from (with --events); or the video a stored match's page plays")
    p.add_argument("--tracks", type=Path, help="the run's tracks.csv (ball ids and trails on the video, tracked paths on the diagrams)")
    p.add_argument("--calibration", type=Path, help="the run's CAL.json (default: calibrate the first frame, as cueref referee does)")
    p.add_argument("--calls", type=Path, action="append", default=[], help="operator inputs recorded apart (JSON Lines), merged in by time")
    p.add_argument("--game", choices=sorted(GAMES), help="the game (default: the log header's)")
    p.add_argument("--table", help="table profile (default: the header's, else the game's)")
    p.add_argument("--players", help="comma-separated player names in break order (default: the header's, else A,B)")
    p.add_argument("--option", action="append", default=[], metavar="NAME=VALUE", help="a rules option (repeatable)")
    p.add_argument("--no-video", action="store_true", help="do not write the annotated video (the page plays the source video)")
    p.add_argument("--no-plots", action="store_true", help="leave the statistics plots out of the page")


def _from_store(args: argparse.Namespace) -> int:
    with MatchStore(args.store) as store:
        m = store.match(args.match)
        out = args.out or Path("cueref-out") / Path(m.video_path).stem
        path = write_report(store, m.id, out, video=args.video, plots=not args.no_plots)
    print(f"report: {path}")
    return 0


def _from_log(args: argparse.Namespace) -> int:
    if args.video is None:
        raise UserError("--events needs --video: the video the log was made from (its content identifies the match)")
    header, events = read_events(args.events)
    if args.calls:
        events = merge_by_time(events, read_calls(args.calls))
    game = args.game or (header.game if header else None)
    if game is None:
        raise UserError(f"{args.events}: the log has no header naming the game: give --game ({', '.join(GAMES)})")
    profile_ref = args.table or (header.profile if header and header.profile else GAMES[game][2])
    profile = resolve_profile(profile_ref)
    players = parse_players(args.players) if args.players else (list(header.players) if header and header.players else ["A", "B"])
    options = dict(header.options) if header else {}
    options.update(parse_option_args(args.option))
    engine = get_engine(game, profile)
    tracks = read_tracks_csv(args.tracks) if args.tracks else None
    out = args.out or Path("cueref-out") / args.video.stem

    if args.no_video:  # no picture to draw on: judge and store the log (and tracks), the page plays the source video
        with MatchStore(args.store) as store:
            result = record_log(store, video=args.video, engine=engine, game=game, profile=profile_ref, players=players,
                                options=options, events=events, tracks=tracks, on_decision=lambda d: print(d.summary()))
            path = write_report(store, result.match_id, out, video=args.video, plots=not args.no_plots)
            _done(store.url, result.match_id, path, result.error, result.warning)
        return 0

    by_frame = {f: rows for f, _, rows in frames_of(tracks)} if tracks is not None else {}
    with VideoReader(args.video) as reader:
        first = reader.read()
        if first is None:
            raise UserError(f"{args.video}: the video holds no frame")
        cal = None
        if args.calibration:
            cal = calfile.load(args.calibration)
        elif tracks is not None:
            try:
                cal = calibrate_image(first.image, profile)
            except CalibrationError as e:
                log.warning("the table was not found in the first frame (%s): the video shows no ball ids; give --calibration", e)
        outputs = MatchOutputs.open(out, video=args.video, game=game, profile=profile, profile_ref=profile_ref, players=players,
                                    options=options, calibration=cal, fps=reader.fps, store=args.store,
                                    keep_tracks=tracks is not None, plots=not args.no_plots)
        referee = StoppingReferee(engine, players, options)
        pending = iter(events)
        nxt = next(pending, None)

        def feed_until(t_s: float) -> None:
            nonlocal nxt
            while nxt is not None and nxt.t_s <= t_s:
                outputs.event(nxt)
                for d in referee.feed(nxt):
                    outputs.decision(d)
                    tqdm.write(d.summary())
                nxt = next(pending, None)

        try:
            with tqdm(total=reader.frame_count, desc="annotated video", unit="frame") as bar:
                frame = first
                while frame is not None:
                    feed_until(frame.t_s)
                    outputs.frame(frame, by_frame.get(frame.index))
                    bar.update(1)
                    frame = reader.read()
            feed_until(float("inf"))
            for d in referee.finish():
                outputs.decision(d)
                print(d.summary())
        except BaseException:
            outputs.abort()
            raise
        path = outputs.close()
    _done(outputs.store.url, outputs.recorder.match_id, path, referee.error, outputs.warning)
    return 0


def _done(url: str, match_id: int, path: Path, error: str | None, warning: str | None) -> None:
    if error:
        print(f"the rules stopped judging: {error}\n(every event is stored; settle it with cueref review {match_id} --shot N ..., "
              f"then cueref report {match_id})")
    if warning:
        print(warning)
    print(f"match {match_id} stored in {url}")
    print(f"report: {path}")


def _run_folder(args: argparse.Namespace) -> None:
    """Fill --events, --tracks, --calibration, --video and --out from a referee run folder."""
    folder = args.run
    if not (folder / "events.jsonl").is_file():
        raise UserError(f"--run {folder}: no events.jsonl in it: give the folder cueref referee wrote (cueref-out/VIDEO-NAME/)")
    args.events = folder / "events.jsonl"
    for name, attr in (("tracks.csv", "tracks"), ("calibration.json", "calibration")):
        if getattr(args, attr) is None and (folder / name).is_file():
            setattr(args, attr, folder / name)
    if args.video is None:
        header, _ = read_events(args.events)
        source = Path(header.source) if header and header.source else None
        if source is None or not source.is_file():
            raise UserError(f"--run {folder}: the video its log names ({source}) is not there: give it with --video")
        args.video = source
    args.out = args.out or folder


def run(args: argparse.Namespace) -> int:
    if args.run is not None:
        if args.events is not None:
            raise UserError("give either --run DIR or --events LOG, not both")
        _run_folder(args)
    if args.events is not None:
        if args.match is not None:
            raise UserError("give either a stored MATCH or --events LOG --video VIDEO, not both")
        return _from_log(args)
    if args.match is None:
        raise UserError("which match? cueref report MATCH (`cueref review` lists them), or cueref report --events LOG --video VIDEO")
    return _from_store(args)
