"""Per-player statistics from the facts of their shots (``cueref.stats.facts``) and the calls.

Figures are kept per player *and game* (a pot in Sinuca Brasileira and a break in bar billiards do
not add up). The definitions of the shot facts are in ``cueref.stats.facts`` and ``docs/store.md``;
here:

* **shots**: shots the player struck (a shot whose call is pending counts as a shot, nothing else of
  it is counted); **frames**: the frames (racks) in which the player struck at least one shot;
  **shots per frame**: their ratio;
* **pot success** by distance and by cut angle: made / attempted in each bin of the attempt's
  distance (object ball to pocket) and of its cut angle (direct hits only);
* **fouls by kind**: the fouls of the calls on the player's shots and on operator inputs about them;
* **breaks**: a *visit* is a run of shots by one player within a frame; its break is the sum of its
  shots' points (``facts.shot_points``). Bar billiards also counts, from the engine's own calls,
  **banked breaks** (calls that bank points), the **highest break** (the engine's ``break_score``) and
  **black-pin disasters** (calls with the ``black_pin`` foul, rule 3a a, and the score they lost);
* **cue-ball speed**: the mean of the shots' cue-ball speeds; **cue-ball positions** and **pots by
  pocket or hole** feed the heat maps.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from cueref.stats.facts import ShotFacts

__all__ = ["DISTANCE_BINS_MM", "CUT_BINS_DEG", "PlayerStats", "MatchFacts", "summarise", "bin_label"]

DISTANCE_BINS_MM = (0.0, 300.0, 600.0, 900.0, 1200.0, math.inf)
CUT_BINS_DEG = (0.0, 15.0, 30.0, 45.0, 60.0, 90.0)


def bin_label(edges: Sequence[float], i: int) -> str:
    lo, hi = edges[i], edges[i + 1]
    return f"{lo:g}+" if math.isinf(hi) else f"{lo:g}-{hi:g}"


def _bin(edges: Sequence[float], value: float) -> int:
    for i in range(len(edges) - 1):
        if value < edges[i + 1] or (i == len(edges) - 2 and value <= edges[i + 1]):
            return i
    return len(edges) - 2


@dataclass(slots=True)
class PlayerStats:
    """One player's figures in one game."""

    player: str
    game: str
    matches: int = 0
    frames: int = 0
    shots: int = 0
    pots_attempted: int = 0
    pots_made: int = 0
    by_distance: list[list[int]] = field(default_factory=lambda: [[0, 0] for _ in range(len(DISTANCE_BINS_MM) - 1)])  # [attempted, made]
    by_cut: list[list[int]] = field(default_factory=lambda: [[0, 0] for _ in range(len(CUT_BINS_DEG) - 1)])
    fouls: Counter = field(default_factory=Counter)
    safeties: int = 0
    breaks: list[int] = field(default_factory=list)  # every visit's break (points), visits that scored
    banked_breaks: list[int] = field(default_factory=list)  # bar billiards
    highest_break: int = 0
    black_pin_disasters: int = 0
    black_pin_lost: int = 0
    speeds_mm_s: list[float] = field(default_factory=list)
    cue_rest_xy_mm: list[tuple[float, float]] = field(default_factory=list)
    pots_by_pocket: Counter = field(default_factory=Counter)

    @property
    def pot_success(self) -> float | None:
        return self.pots_made / self.pots_attempted if self.pots_attempted else None

    @property
    def shots_per_frame(self) -> float | None:
        return self.shots / self.frames if self.frames else None

    @property
    def mean_cue_speed_mm_s(self) -> float | None:
        return sum(self.speeds_mm_s) / len(self.speeds_mm_s) if self.speeds_mm_s else None

    def to_dict(self) -> dict[str, Any]:
        """Every figure as JSON values (the heat-map samples included)."""
        return {
            "player": self.player, "game": self.game, "matches": self.matches, "frames": self.frames, "shots": self.shots,
            "shots_per_frame": self.shots_per_frame, "pots_attempted": self.pots_attempted, "pots_made": self.pots_made,
            "pot_success": self.pot_success,
            "pot_success_by_distance_mm": {bin_label(DISTANCE_BINS_MM, i): {"attempted": a, "made": m} for i, (a, m) in enumerate(self.by_distance)},
            "pot_success_by_cut_deg": {bin_label(CUT_BINS_DEG, i): {"attempted": a, "made": m} for i, (a, m) in enumerate(self.by_cut)},
            "fouls": dict(sorted(self.fouls.items())), "fouls_total": sum(self.fouls.values()), "safeties": self.safeties,
            "breaks": len(self.breaks), "highest_break": self.highest_break, "banked_breaks": len(self.banked_breaks),
            "highest_banked_break": max(self.banked_breaks, default=0), "black_pin_disasters": self.black_pin_disasters,
            "black_pin_lost": self.black_pin_lost, "mean_cue_speed_mm_s": self.mean_cue_speed_mm_s,
            "pots_by_pocket": dict(sorted(self.pots_by_pocket.items())),
            "cue_rest_xy_mm": [list(p) for p in self.cue_rest_xy_mm],
        }


@dataclass(frozen=True, slots=True)
class MatchFacts:
    """One match's shot facts (in shot order) and its calls."""

    match_id: int
    game: str
    facts: Sequence[ShotFacts]
    input_calls: Sequence[Mapping[str, Any]] = ()
    calls: Sequence[Mapping[str, Any]] = ()  # every call that stands, in order (bar billiards breaks read them)


def summarise(matches: Iterable[MatchFacts], player: str | None = None) -> list[PlayerStats]:
    """Per (player, game) figures over the matches, sorted by game then player; only ``player``'s when given."""
    table: dict[tuple[str, str], PlayerStats] = {}

    def row(name: str, game: str) -> PlayerStats:
        return table.setdefault((name, game), PlayerStats(name, game))

    for m in matches:
        frames_of: dict[str, set[int]] = {}
        visit: tuple[str, int] | None = None
        points = 0

        def close_visit() -> None:
            if visit is not None and points > 0:
                s = row(visit[0], m.game)
                s.breaks.append(points)
                if m.game != "bar-billiards":
                    s.highest_break = max(s.highest_break, points)

        for f in m.facts:
            if f.player is None:
                continue
            if visit != (f.player, f.frame):
                close_visit()
                visit, points = (f.player, f.frame), 0
            points += f.points
            s = row(f.player, m.game)
            frames_of.setdefault(f.player, set()).add(f.frame)
            s.shots += 1
            if f.pending:
                continue
            s.fouls.update(f.fouls)
            s.safeties += f.safety
            if f.attempted:
                s.pots_attempted += 1
                s.pots_made += f.made
                if f.pot_distance_mm is not None:
                    s.by_distance[_bin(DISTANCE_BINS_MM, f.pot_distance_mm)][0] += 1
                    s.by_distance[_bin(DISTANCE_BINS_MM, f.pot_distance_mm)][1] += f.made
                if f.cut_deg is not None:
                    s.by_cut[_bin(CUT_BINS_DEG, f.cut_deg)][0] += 1
                    s.by_cut[_bin(CUT_BINS_DEG, f.cut_deg)][1] += f.made
            if f.cue_speed_mm_s is not None:
                s.speeds_mm_s.append(f.cue_speed_mm_s)
            if f.cue_rest_xy_mm is not None:
                s.cue_rest_xy_mm.append(f.cue_rest_xy_mm)
            s.pots_by_pocket.update(pocket for _, pocket in f.pots)
        close_visit()
        for call in m.input_calls:
            if call.get("player") and call.get("fouls"):
                row(call["player"], m.game).fouls.update(call["fouls"])
        if m.game == "bar-billiards":
            for call in m.calls:
                who = call.get("player")
                if not who or call.get("pending"):
                    continue
                s = row(who, m.game)
                s.highest_break = max(s.highest_break, int(call.get("break_score") or 0))
                if int(call.get("banked_now") or 0) > 0:
                    s.banked_breaks.append(int(call["banked_now"]))
                if "black_pin" in (call.get("fouls") or ()):
                    s.black_pin_disasters += 1
                    s.black_pin_lost += int(call.get("lost_banked") or 0) + int(call.get("lost_break") or 0)
        for name, frames in frames_of.items():
            s = row(name, m.game)
            s.matches += 1
            s.frames += len(frames)
    out = [s for (name, _), s in sorted(table.items(), key=lambda kv: (kv[0][1], kv[0][0])) if player in (None, name)]
    return out
