"""Inputs every video command checks the same way before any long work: the match (game, table, players,
rules options, calls files), and a CAL.json made for this table and this camera's image size (without
one, the table is found in the first frame)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from calibration import calfile
from calibration.calibrate import calibrate_image
from calibration.camera import Calibration
from calibration.table import TableProfile, resolve_profile
from cueref.calls import merge_by_time, read_calls
from cueref.errors import UserError
from cueref.options import parse_option_args, parse_players
from rules import GAMES, get_engine
from rules.base import Referee
from tracking.events import Event, LogHeader

__all__ = ["add_game_arguments", "GameInputs", "game_inputs", "match_inputs", "load_calibration", "calibration_for", "SIZE_TOLERANCE_MM"]

SIZE_TOLERANCE_MM = 1.0  # a table measured again differs by a millimetre or so; a different table by far more


def add_game_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of a video command that say what is played and where its run goes (read back by
    :func:`game_inputs`, :func:`calibration_for` and :func:`cueref.outputs.run_folder`)."""
    p.add_argument("--game", required=True, choices=sorted(GAMES), help="the game being played")
    p.add_argument("--table", help="table profile: built-in name, .yaml file or LENGTHxWIDTH spec (default: the game's)")
    p.add_argument("--players", default="A,B", help="comma-separated player names in break order (default A,B)")
    p.add_argument("--option", action="append", default=[], metavar="NAME=VALUE", help="a rules option (repeatable)")
    p.add_argument("--calls", type=Path, action="append", default=[],
                   help="operator inputs the camera cannot see (nominations, concessions, answers), JSON Lines in the "
                        "event-log format; merged in by time (repeatable)")
    p.add_argument("--calibration", help="a CAL.json from `cueref calibrate` (default: find the table in the first frame)")
    p.add_argument("--out", help="folder for the calibration, event log, decisions and tracks "
                                 "(default: cueref-out/VIDEO-NAME/, or VIDEO-NAME-2/ ... beside an earlier run)")
    p.add_argument("--overwrite", action="store_true", help="replace the results of an earlier run in --out")
    p.add_argument("--store", help="match store: SQLite file or postgresql:// URL (default: $CUEREF_STORE or "
                                   "cueref-out/matches.sqlite); a re-run of the same video updates its match")


@dataclass(frozen=True)
class GameInputs:
    """The match a video command referees (``--game``, ``--table``, ``--players``, ``--option``, ``--calls``)."""

    game: str
    profile_ref: str  # the table as given (--table) or the game's own
    profile: TableProfile
    engine: Any
    players: list[str]
    options: dict[str, Any]
    calls: list[Event]

    def referee(self) -> Referee:
        return Referee(self.engine, self.players, self.options)

    def header(self, source: str) -> LogHeader:
        """The event log's first line for a run of ``source``."""
        return LogHeader(game=self.game, profile=self.profile_ref, players=tuple(self.players), options=self.options,
                         source=source)


def game_inputs(args: argparse.Namespace) -> GameInputs:
    """Read and check the match's arguments: the table, the players, the rules options (the engine builds
    its first state from them) and the calls files."""
    return match_inputs(args.game, args.table, parse_players(args.players), parse_option_args(args.option), args.calls)


def match_inputs(game: str, table: str | None, players: Sequence[str], options: Mapping[str, Any],
                 calls: Sequence[str | Path] = ()) -> GameInputs:
    """:func:`game_inputs` from values already parsed (``cueref batch``'s list lines)."""
    ref = table or GAMES[game][2]
    profile = resolve_profile(ref)
    engine = get_engine(game, profile)
    players, options = list(players), dict(options)
    engine.initial_state(players, options)
    return GameInputs(game, ref, profile, engine, players, options, merge_by_time([], read_calls([Path(c) for c in calls])))


def load_calibration(path: str | Path, profile: TableProfile, image_size: tuple[int, int]) -> Calibration:
    """Read a CAL.json and refuse it when it was made for another table (its playing surface or ball
    size differs from ``profile``'s) or for another image size (``(width, height)`` px of the video)."""
    cal = calfile.load(path)
    made = f"{path} was made for"
    redo = f"calibrate this video's table with: cueref calibrate VIDEO --table {profile.name} --out CAL.json (or leave --calibration out)"
    table = (cal.length_mm, cal.width_mm)
    if max(abs(cal.length_mm - profile.length_mm), abs(cal.width_mm - profile.width_mm)) > SIZE_TOLERANCE_MM:
        raise UserError(f"{made} the {cal.profile_name or 'unnamed'} table ({table[0]:g} x {table[1]:g} mm), not the "
                        f"{profile.name} table ({profile.length_mm:g} x {profile.width_mm:g} mm): {redo}")
    if abs(cal.ball_radius_mm - profile.ball_radius_mm) > 0.5:
        raise UserError(f"{made} balls of {2 * cal.ball_radius_mm:g} mm, the {profile.name} table's are "
                        f"{profile.ball_diameter_mm:g} mm: {redo}")
    if tuple(cal.image_size) != tuple(image_size):
        raise UserError(f"{made} {cal.image_size[0]}x{cal.image_size[1]} images, the video is "
                        f"{image_size[0]}x{image_size[1]}: {redo}")
    return cal


def first_frame(reader: Any, video: str) -> tuple[Any, str]:
    """The first frame of an open :class:`~cueref.video.VideoReader` and the line that describes the video;
    a video with no frame is refused."""
    first = reader.read()
    if first is None:
        raise UserError(f"{video}: the video holds no frame")
    info = reader.info
    return first, (f"video: {video}, {info.width}x{info.height}, {f'{info.fps:.3f}' if info.fps else 'unknown'} fps, "
                   f"{info.frame_count or 'unknown'} frames")


def calibration_for(path: str | Path | None, profile: TableProfile, first_image: np.ndarray, out: Path,
                    source: str, t_s: float) -> tuple[Calibration, str]:
    """The calibration a run uses and a line that says where it came from: ``path`` (a CAL.json, checked
    by :func:`load_calibration`), or the table found in ``first_image`` and saved as ``out/calibration.json``."""
    if path:
        cal = load_calibration(path, profile, (first_image.shape[1], first_image.shape[0]))
        return cal, f"calibration: {path} ({cal.method})"
    cal = calibrate_image(first_image, profile)
    out.mkdir(parents=True, exist_ok=True)
    saved = calfile.save(cal, out / "calibration.json", source={"video": source, "t_s": t_s})
    rms = cal.residuals.get("landmark_rms_mm")
    return cal, (f"calibration: found the {profile.name} table automatically in the first frame "
                 f"(landmark residual {rms if rms is not None else 'n/a'} mm) -> {saved}")
