"""Statistics on a generated corpus of whole frames of the three games match the figures computed
from the frames' ground truth (tests/report/_truth_stats.py says what is independent of what)."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from calibration.table import resolve_profile
from cueref.stats import CUT_BINS_DEG, DISTANCE_BINS_MM, player_stats
from cueref.store import MatchStore, record_log
from rules import get_engine
from simulator.player import generate_frame
from tests.report._truth_stats import truth_figures

# frames of each game; seeds not used while the statistics were written (those were 101, 102, 201, 302)
CORPUS = {"ficha": (111, 112, 113, 114), "brasileira": (211, 212), "bar-billiards": (311, 312)}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    store = MatchStore(tmp_path_factory.mktemp("stats") / "corpus.sqlite")
    frames = []
    for game, seeds in CORPUS.items():
        profile = resolve_profile(game)
        for seed in seeds:
            gf = generate_frame(game, profile, seed=seed, max_shots=30)
            run = gf.run
            digest = hashlib.sha256(f"{game}-{seed}".encode()).hexdigest()
            result = record_log(store, video=f"corpus/{game}-{seed}.mp4", engine=get_engine(game, profile), game=game, profile=game,
                                players=list(run.players), options=dict(run.options), events=list(run.events), video_sha256=digest)
            assert result.error is None, f"{game} seed {seed}: {result.error}"
            frames.append((game, seed, gf, profile))
    print("stats corpus seeds:", CORPUS)
    yield store, frames
    store.close()


@pytest.mark.parametrize("game", list(CORPUS))
def test_statistics_match_the_ground_truth(corpus, game):
    store, frames = corpus
    truth = {}
    for g, seed, gf, profile in frames:
        if g != game:
            continue
        for player, fig in truth_figures(gf, profile, DISTANCE_BINS_MM, CUT_BINS_DEG).items():
            total = truth.setdefault(player, type(fig)())
            for name in ("shots", "attempted", "made", "safeties"):
                setattr(total, name, getattr(total, name) + getattr(fig, name))
            for name in ("by_distance", "by_cut", "fouls", "pots_by_pocket"):
                getattr(total, name).update(getattr(fig, name))
            total.speeds += fig.speeds
            total.rests += fig.rests
            total.targets += [(seed, *t) for t in fig.targets]
            total.frames |= {(seed, f) for f in fig.frames}
    stats = {s.player: s for s in player_stats(store, game=game)}
    assert set(stats) == set(truth)
    checked = 0
    for player, want in truth.items():
        got = stats[player]
        assert got.shots == want.shots
        assert got.frames == len(want.frames)
        assert (got.pots_attempted, got.pots_made) == (want.attempted, want.made), f"{player}: truth's targets per shot {want.targets}"
        assert {(i, bool(m)): n for i, (a, made) in enumerate(got.by_distance) for m, n in ((1, made), (0, a - made)) if n} == \
            {k: v for k, v in want.by_distance.items() if v}
        assert {(i, bool(m)): n for i, (a, made) in enumerate(got.by_cut) for m, n in ((1, made), (0, a - made)) if n} == \
            {k: v for k, v in want.by_cut.items() if v}
        assert got.safeties == want.safeties
        assert dict(got.fouls) == dict(want.fouls)
        assert dict(got.pots_by_pocket) == dict(want.pots_by_pocket)
        assert len(got.speeds_mm_s) == len(want.speeds)
        assert got.mean_cue_speed_mm_s == pytest.approx(sum(want.speeds) / len(want.speeds), rel=1e-3)
        assert np.allclose(sorted(got.cue_rest_xy_mm), sorted(want.rests), atol=0.01)
        checked += got.shots
    assert checked >= 20


# ---- the definitions on hand-made shots (docs/store.md), figures worked out by hand ---------------------

def _shot(object_next, t_next=2.2):
    """The cue ball (300, 374) rolls along +x and hits the object ball (800, 400) at 1.5 s with a 30 deg
    cut: its centre is then at (754.97, 374), the contact point at (777.48, 387)."""
    from tracking.events import AtRest, BallBall, ShotStart

    return [
        ShotStart(t_s=1.0, ball="cue", xy_mm=(300.0, 374.0), positions={"cue": (300.0, 374.0), "r1": (800.0, 400.0)}),
        BallBall(t_s=1.5, a="cue", b="r1", xy_mm=(800.0 - 26 * 0.8660254, 400.0 - 26 * 0.5)),
        object_next,
        AtRest(t_s=t_next + 2, positions={"cue": (760.0, 300.0)}),
    ]


def test_a_cut_that_rattles_in_the_jaws_is_an_attempt_at_that_pocket():
    from cueref.stats import shot_facts
    from tracking.events import BallCushion

    # the object ball leaves along the line of centres, 30 deg below +x, and hits the right cushion at
    # y = 400 + 620 tan 30 = 758: 70.8 mm from BR's centre, inside its jaws (85.6 mm)
    facts = shot_facts(resolve_profile("ficha"), "ficha", _shot(BallCushion(t_s=2.2, ball="r1", cushion="R", xy_mm=(1420.0, 757.96))),
                       {"player": "A", "fouls": []})
    assert facts.object_ball == "r1" and facts.direct
    assert facts.cut_deg == pytest.approx(30.0, abs=0.01)
    assert (facts.attempted, facts.made, facts.target) == (True, False, "BR")
    assert facts.pot_distance_mm == pytest.approx(766.6, abs=0.1)
    assert facts.cue_speed_mm_s == pytest.approx((754.97 - 300.0) / 0.5, rel=1e-4)
    assert not facts.safety and facts.cue_rest_xy_mm == (760.0, 300.0)


def test_an_object_ball_sent_to_a_cushion_far_from_any_pocket_is_a_safety():
    from cueref.stats import shot_facts
    from tracking.events import BallCushion

    # 20 deg off the same line it meets the right cushion at y = 400 + 620 tan 10 = 509: no pocket near
    facts = shot_facts(resolve_profile("ficha"), "ficha", _shot(BallCushion(t_s=2.2, ball="r1", cushion="R", xy_mm=(1420.0, 509.3))),
                       {"player": "A", "fouls": []})
    assert (facts.attempted, facts.target, facts.safety) == (False, None, True)
    foul = shot_facts(resolve_profile("ficha"), "ficha", _shot(BallCushion(t_s=2.2, ball="r1", cushion="R", xy_mm=(1420.0, 509.3))),
                      {"player": "A", "fouls": ["double_hit"]})
    assert not foul.safety


def test_the_stats_command_prints_a_table_csv_and_json_and_draws_the_plots(tmp_path, capsys):
    import csv
    import json

    from cueref.cli import main
    from tests.store.test_store import BAR, FICHA, record

    path = tmp_path / "m.sqlite"
    with MatchStore(path) as store:
        record(store, FICHA)
        record(store, BAR)
    assert main(["stats", "--store", str(path)]) == 0
    table = capsys.readouterr().out
    assert "pots made / attempted" in table and "bar-billiards" in table and "black-pin disasters" in table
    assert main(["stats", "--store", str(path), "--format", "json", "--out", str(tmp_path / "s.json"), "--plots", str(tmp_path / "plots")]) == 0
    assert "plot:" in capsys.readouterr().out
    rows = json.loads((tmp_path / "s.json").read_text())
    by = {(r["player"], r["game"]): r for r in rows}
    assert by[("A", "ficha")]["shots"] + by[("B", "ficha")]["shots"] == 8
    assert by[("A", "bar-billiards")]["highest_break"] == 220  # the engine's break before the pin foul of shot 2
    pngs = sorted(p.name for p in (tmp_path / "plots").iterdir())
    assert len(pngs) == 8 and all((tmp_path / "plots" / p).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)
    assert main(["stats", "--store", str(path), "--format", "csv", "--player", "B", "--game", "ficha"]) == 0
    (row,) = list(csv.DictReader(capsys.readouterr().out.splitlines()))
    assert (row["player"], row["game"], row["shots"]) == ("B", "ficha", str(by[("B", "ficha")]["shots"]))


def test_matplotlib_is_loaded_only_when_a_plot_is_drawn():
    import subprocess
    import sys

    code = "import sys, cueref.stats, cueref.stats.plots, cueref.commands.stats; assert 'matplotlib' not in sys.modules, 'loaded'"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
