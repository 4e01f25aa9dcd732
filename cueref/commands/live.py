"""``cueref live --camera 0|URL|FILE --game GAME``: referee a match as it is played, with the operator's
console and the scoreboard in a browser.

Everything that can be checked is checked before the camera opens (the game's options, the calls file,
the output folder, the console's address). Then the source opens, the table is calibrated from its
first frame (or ``--calibration`` read), the console starts, and the pipeline referees until the
source ends (a file) or Ctrl-C (a camera or a stream, which is reopened whenever it stalls). The run's
files are those of ``cueref referee`` (events.jsonl with every operator input, decisions.jsonl,
tracks.csv), streamed as the match goes, so an interrupted session keeps everything up to its end; the
match goes into the store call by call and its review report is written at the end
(:class:`cueref.report.outputs.MatchOutputs`, without the annotated video: encoding it would compete
with the referee for the machine).
"""

from __future__ import annotations

import argparse
import hashlib
import threading
from datetime import datetime, timezone

import cv2
from tqdm import tqdm

from cueref.console import ShotPrinter
from cueref.errors import UserError
from cueref.inputs import add_game_arguments, calibration_for, game_inputs
from cueref.live.server import LiveServer, check_host
from cueref.live.session import Announcer, LiveSession
from cueref.live.source import LiveSource, SourceConfig, source_kind
from cueref.options import require_positive
from cueref.outputs import RUN_FILES, RunFiles, refuse_output_onto_inputs, run_folder
from cueref.pipeline import load_stages, missing_stages
from cueref.report.outputs import MatchOutputs

_SOURCE = SourceConfig()  # the defaults


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--camera", required=True, metavar="0|URL|FILE",
                   help="a camera index (0, 1 ...), a stream URL (rtsp://, http:// ...) or a video file")
    p.add_argument("--realtime", action="store_true",
                   help="play a file at the speed of its timestamps, as a camera would deliver it (a camera or a "
                        "stream is always live)")
    add_game_arguments(p)
    p.add_argument("--host", default="127.0.0.1",
                   help="address the console listens on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8765, help="the console's port (default 8765; 0: any free one)")
    p.add_argument("--allow-remote", action="store_true",
                   help="allow --host off this machine; every request then needs the token printed at start")
    p.add_argument("--speak", action="store_true", help="read each call aloud with espeak-ng on this machine")
    p.add_argument("--stall", type=float, default=_SOURCE.stall_s, metavar="SECONDS",
                   help=f"a camera or stream silent this long is reopened (default {_SOURCE.stall_s:g})")
    p.add_argument("--max-gap", type=float, default=_SOURCE.max_gap_s, metavar="SECONDS",
                   help=f"frames further apart are logged unobserved (default {_SOURCE.max_gap_s:g})")


def run(args: argparse.Namespace) -> int:
    cv2.setNumThreads(1)  # OpenCV's own threads slow small kernels down on a few cores
    given = game_inputs(args)  # checked before the camera opens
    profile, players = given.profile, given.players
    for flag, value in (("--stall", args.stall), ("--max-gap", args.max_gap)):
        require_positive(flag, value, "seconds")
    check_host(args.host, args.allow_remote)
    if not 0 <= args.port <= 65535:
        raise UserError(f"--port {args.port} is not a port number (0 to 65535)")
    announcer = Announcer() if args.speak else None
    kind = source_kind(args.camera)
    if args.realtime and kind != "file":
        print(f"note: --realtime only paces files; the {kind} is live already")
    out = run_folder(args.out, str(args.camera), args.overwrite)
    refuse_output_onto_inputs([("the output", out / name) for name in RUN_FILES],
                              [("video", args.camera if kind == "file" else None), ("--calibration file", args.calibration),
                               *(("--calls file", c) for c in args.calls)])

    config = SourceConfig(stall_s=args.stall, max_gap_s=args.max_gap)
    with LiveSource(args.camera, realtime=args.realtime, config=config) as source:
        info, first = source.info, source.first
        print(f"source: {args.camera} ({kind}), {info.width}x{info.height}, "
              f"{f'{info.fps:.3f}' if info.fps else 'unknown'} fps" + (", played in real time" if source.realtime else ""))
        cal, said = calibration_for(args.calibration, profile, first.image, out, str(args.camera), first.t_s)
        print(said)
        missing = missing_stages()
        if missing:
            print(f"cueref live: {args.camera} opens, the table is calibrated and the {args.game} rules engine is ready, "
                  f"but this build has no {' or '.join(missing)} stage yet, so nothing can be refereed from the camera. "
                  f"To referee a match whose events are logged, run: cueref judge EVENTS.jsonl --game {args.game}.")
            return 2
        stages = load_stages(profile, cal, given.referee(), first.image)
        header = given.header(str(args.camera))
        bar = tqdm(total=info.frame_count if kind == "file" else None, unit="frame", desc="live", dynamic_ncols=True)
        printer = ShotPrinter(tqdm.write)
        # a file is its match (a re-run updates it); a camera's or a stream's session is a match of its own
        session_id = None if kind == "file" else hashlib.sha256(
            f"cueref live {args.camera} {datetime.now(timezone.utc).isoformat()}".encode()).hexdigest()
        with RunFiles(out, header) as files, bar, MatchOutputs.open(
                out, video=args.camera, game=args.game, profile=profile, profile_ref=header.profile, players=players,
                options=given.options, calibration=cal, fps=info.fps, store=args.store, annotate=False, video_sha256=session_id,
        ) as match:
            session = LiveSession(source, stages, game=args.game, profile=profile, players=players, calls=given.calls,
                                  consumers=[files, match, printer, _Progress(bar, source), *([announcer] if announcer else [])])
            with LiveServer(session, args.host, args.port, allow_remote=args.allow_remote) as server:
                tqdm.write(f"console: {server.url}\nscoreboard: {server.url_of('/scoreboard')}"
                           + (f"\ntoken: {server.token} (needed on every request from another machine)" if server.token else "")
                           + ("\nCtrl-C ends the session" if kind != "file" else ""))
                _run_until_interrupted(session)
    if match.warning:
        print(f"store: {match.warning}")
    print(f"review report: {match.report}")
    print(f"{bar.n} frames; {printer.n_shots} shot(s) called"
          + (f", {printer.n_pending} pending an answer" if printer.n_pending else "")
          + f"; {source.gaps} gap(s) in the source ({source.stalls} stall(s), {source.reopens} reopen(s), "
            f"{source.dropped} frame(s) dropped); written to {out}/: events.jsonl ({files.n_events} events), "
            f"decisions.jsonl ({files.n_decisions}), tracks.csv")
    return 0


class _Progress:
    """The terminal's progress line (a consumer): frames, and the source's gaps."""

    def __init__(self, bar: tqdm, source: LiveSource):
        self.bar, self.source = bar, source

    def add(self, result) -> None:
        self.bar.update(0 if result.end_only else 1)
        if result.index % 30 == 0 or result.last:
            self.bar.set_postfix(t=f"{result.t_s:.0f}s", gaps=self.source.gaps, dropped=self.source.dropped, refresh=False)


def _run_until_interrupted(session: LiveSession) -> None:
    """Referee in a worker thread so that Ctrl-C here ends the session cleanly: the source is closed and the
    pipeline finishes as at the end of a video (every held input enters the log, the open shot is closed)."""
    failure: list[BaseException] = []

    def work() -> None:
        try:
            session.run()
        except BaseException as e:  # noqa: BLE001 - raised again in the main thread
            failure.append(e)

    worker = threading.Thread(target=work, name="cueref-live-referee")
    worker.start()
    try:
        while worker.is_alive():
            worker.join(timeout=0.5)
    except KeyboardInterrupt:
        tqdm.write("cueref live: stopping: the open shot is closed and every input kept")
        session.stop()
        worker.join()
    if failure:
        raise failure[0]
