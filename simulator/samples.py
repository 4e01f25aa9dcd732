"""The sample-video set and corpora: which matches are rendered, through which cameras, how.

:data:`SAMPLES` lists the committed sample clips and the hard cases
(each a staged scenario of :mod:`simulator.scenarios` or a frame played by the automatic player of
:mod:`simulator.player`), with the camera, frame rate, light and seed of each, so that
:func:`build_samples` rebuilds them with byte-for-byte equal ground truth. :func:`corpus_specs`
makes any number of generated frames with random cameras for larger corpora. A command line
(``cueref simulate``) only needs to call these.

Whose word are the expected decisions? A staged scenario's were written by hand from the rulebook
(independent checks of the rules engines); a generated frame's were written by the engine as it
played (``"rules engine at generation: ..."`` in each note): regression goldens
(:attr:`SampleSpec.golden`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from calibration.table import resolve_profile
from simulator.camera import mount_camera
from simulator.clip import ClipOptions, ClipResult, make_clip
from simulator.player import generate_frame
from simulator.render import RenderOptions
from simulator.scenarios import scenario
from simulator.script import run_script

__all__ = ["SampleSpec", "SAMPLES", "sample", "build_sample", "build_samples", "corpus_specs"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class SampleSpec:
    """One clip: ``name`` is its path under the output directory without ``.mp4`` (``ficha/frame``).

    The match is the staged ``scenario`` or, without one, a frame of ``game`` played by the automatic
    player from ``match_seed`` (at most ``max_shots`` shots). ``profile`` overrides the game's table
    (a built-in name or a spec string, e.g. close colours). ``seed`` draws the camera mount, the
    choreography, the textures and the noise."""

    name: str
    game: str
    scenario: str | None = None
    match_seed: int = 0
    max_shots: int = 40
    profile: str | None = None
    resolution: tuple[int, int] = (1280, 720)
    fps: float = 30.0
    seed: int = 0
    low_light: bool = False
    bump_at_s: float | None = None
    crf: int = 26
    note: str = ""

    def options(self) -> ClipOptions:
        return ClipOptions(crf=self.crf, bump_at_s=self.bump_at_s, render=RenderOptions(low_light=self.low_light))

    @property
    def golden(self) -> bool:
        """Whether this clip's expected decisions are regression goldens: a frame of the automatic
        player, whose expectations the rules engine itself wrote when the frame was generated (they
        catch a change of the engine's calls, not a wrong call). A staged scenario's expectations are
        written by hand from the rulebook: independent checks of the engines."""
        return self.scenario is None


def _s(name: str, scenario: str, game: str, seed: int, **kw) -> SampleSpec:
    return SampleSpec(name=name, game=game, scenario=scenario, seed=seed, **kw)


SAMPLES: tuple[SampleSpec, ...] = (
    # Sinuca de Ficha: a whole frame from the break to the win, then one clip per visible foul
    SampleSpec("ficha/frame", "ficha", match_seed=3, seed=3, note="a whole frame from the break to the win"),
    _s("ficha/miss", "ficha_miss", "ficha", 11, note="5.2 miss, then the removal by hand"),
    _s("ficha/wrong-ball-first", "ficha_wrong_ball_first", "ficha", 12, fps=25, note="5.2 opponent ball first"),
    _s("ficha/suicide", "ficha_suicide", "ficha", 13, note="4.2.2 / 5.1 suicide"),
    _s("ficha/opponent-ball-last", "ficha_opponent_ball_last", "ficha", 14, fps=50, note="4.2.3 opponent ball last"),
    _s("ficha/off-table", "ficha_off_table", "ficha", 15, resolution=(1920, 1080), note="5.3 ball off the table"),
    _s("ficha/jump", "ficha_jump", "ficha", 16, fps=60, note="5.4 jump"),
    _s("ficha/frozen-ball-moved", "ficha_frozen_ball_moved", "ficha", 17, note="4.5 frozen ball moved"),
    _s("ficha/double-hit", "ficha_double_hit", "ficha", 18, fps=29.97, note="5.7 double hit"),
    _s("ficha/both-last-balls", "ficha_both_last_balls", "ficha", 19, note="4.2.3.2 both last balls in one shot"),
    _s("ficha/both-last-balls-own-last", "ficha_both_last_balls_own_last", "ficha", 20, note="4.2.3.1 both last balls, the shooter's last"),
    _s("ficha/ball-touched", "ficha_ball_touched", "ficha", 10, note="5.6 ball touched by hand"),
    # Sinuca Brasileira
    SampleSpec("brasileira/frame", "brasileira", match_seed=1, seed=21, fps=25, crf=28,
               note="a whole frame: free, bonus and penalty shots as the automatic players make them"),
    _s("brasileira/opening-reset", "brasileira_opening_reset", "brasileira", 22, note="12 opening shot reset"),
    _s("brasileira/wrong-pocket", "brasileira_wrong_pocket", "brasileira", 23, note="4 pot in the wrong pocket"),
    _s("brasileira/penalty-missed", "brasileira_penalty_missed", "brasileira", 24, note="8, 11 penalty shot missed"),
    # Bar billiards
    SampleSpec("bar-billiards/visit", "bar-billiards", match_seed=2, max_shots=8, seed=31, fps=25, crf=28,
               note="the start of a frame: several visits and pots"),
    _s("bar-billiards/white-pin-down", "bar_white_pin_down", "bar-billiards", 32, note="3b a white pin down"),
    _s("bar-billiards/black-pin-down", "bar_black_pin_down", "bar-billiards", 33, note="3a a black pin down"),
    _s("bar-billiards/baulk", "bar_baulk", "bar-billiards", 34, note="3b f red back in baulk"),
    _s("bar-billiards/miss", "bar_miss", "bar-billiards", 35, note="3b d miss"),
    _s("bar-billiards/endgame", "bar_endgame", "bar-billiards", 36, note="2i endgame shot off the cushion"),
    # Hard cases
    _s("hard/near-miss", "hard_near_miss", "ficha", 41, resolution=(1920, 1080), note="the cue ball passes 2 mm from a ball"),
    _s("hard/two-pots", "hard_two_pots", "ficha", 42, fps=60, note="two pots within 50 ms"),
    _s("hard/kiss-cluster", "hard_kiss_cluster", "ficha", 43, note="a kiss cluster"),
    SampleSpec("hard/close-colours", "ficha", match_seed=5, max_shots=6, seed=44,
               profile="1420x810,ball=52,corner=95,middle=105,groups=orange+yellow,name=ficha-orange",
               note="orange and yellow groups"),
    _s("hard/low-light", "ficha_wrong_ball_first", "ficha", 45, low_light=True, note="a dim, warm lamp"),
    _s("hard/camera-bump", "ficha_miss", "ficha", 46, bump_at_s=3.0, note="the camera is knocked at 3 s"),
)


def sample(name: str) -> SampleSpec:
    """A sample of :data:`SAMPLES` by name."""
    for s in SAMPLES:
        if s.name == name:
            return s
    raise KeyError(f"unknown sample {name!r}: {', '.join(s.name for s in SAMPLES)}")


def build_sample(spec: SampleSpec, out_dir: str | Path,
                 progress: Callable[[int, int], None] | None = None) -> ClipResult:
    """Play (or stage) the match of ``spec`` and render it under ``out_dir`` (``progress`` as in
    :func:`simulator.clip.make_clip`)."""
    if spec.scenario is not None:
        script = scenario(spec.scenario)
        profile = resolve_profile(spec.profile or script.profile)
        run = run_script(script, profile, spec.seed)
    else:
        profile = resolve_profile(spec.profile or spec.game)
        run = generate_frame(spec.game, profile, seed=spec.match_seed, max_shots=spec.max_shots).run
    camera = mount_camera(profile, resolution=spec.resolution, rng=np.random.default_rng([spec.seed, 11]))
    out = Path(out_dir) / f"{spec.name}.mp4"
    out.parent.mkdir(parents=True, exist_ok=True)
    log.info("sample %s: %s", spec.name, spec.note)
    return make_clip(run, profile, camera, out, fps=spec.fps, seed=spec.seed, options=spec.options(),
                     profile_ref=spec.profile, progress=progress)


def build_samples(out_dir: str | Path, names: Sequence[str] | None = None,
                  on_done: Callable[[SampleSpec, ClipResult], None] | None = None) -> list[ClipResult]:
    """Build every sample (or the ``names`` given) under ``out_dir``."""
    specs = SAMPLES if names is None else tuple(sample(n) for n in names)
    results = []
    for spec in specs:
        res = build_sample(spec, out_dir)
        if on_done is not None:
            on_done(spec, res)
        results.append(res)
    return results


def corpus_specs(games: Iterable[str], n: int, seed: int = 0, resolution: tuple[int, int] = (1280, 720),
                 fps: float = 30.0, max_shots: int = 40) -> list[SampleSpec]:
    """``n`` generated frames of each game, each with its own match seed, random camera mount and
    random light (one in five dim, one in five with a camera bump), named ``corpus/<game>-<k>``."""
    rng = np.random.default_rng(seed)
    out = []
    for game in games:
        for k in range(n):
            s = int(rng.integers(0, 2**31 - 1))
            spec = SampleSpec(f"corpus/{game}-{k:04d}", game, match_seed=s, max_shots=max_shots, seed=s,
                              resolution=resolution, fps=fps)
            draw = rng.uniform()
            if draw < 0.2:
                spec = replace(spec, low_light=True)
            elif draw < 0.4:
                spec = replace(spec, bump_at_s=float(rng.uniform(3.0, 20.0)))
            out.append(spec)
    return out
