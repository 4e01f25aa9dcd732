"""The Norwich league match record for 4-pin bar billiards (league rules 4-8): bookkeeping around the
frames, not refereeing (the referee of one frame is :mod:`rules.bar_billiards`).

:func:`draw_league_match` draws six singles then three doubles frames from a seeded RNG, with the
five-player rule (8 a-c); :class:`LeagueMatch` records each frame's score (7 e), from a number or from
the engine's final state of the frame.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any, Mapping, Sequence

import numpy as np

from rules.bar_billiards import GAME, State
from rules.base import RulesError

__all__ = ["LeagueFrame", "LeagueMatch", "draw_league_match"]

@dataclass(frozen=True, slots=True)
class LeagueFrame:
    """One frame of a league match: who plays it, which team referees it (6), and its score."""

    number: int  # 1-6 singles, 7-9 doubles
    kind: str  # "singles" | "doubles"
    home: tuple[str, ...]
    away: tuple[str, ...]
    referee: str  # "home" | "away": the home team referees frame 1, then the teams alternate (6)
    notes: tuple[str, ...] = ()  # how a five-player team's extra name was drawn (8 b, 8 c)
    home_score: int | None = None
    away_score: int | None = None

    @property
    def players(self) -> tuple[str, ...]:
        """The engine's player order: home first (A1 B1 A2 B2 in doubles)."""
        if self.kind == "singles":
            return (self.home[0], self.away[0])
        return (self.home[0], self.away[0], self.home[1], self.away[1])

    @property
    def result(self) -> str | None:
        """``home``, ``away``, ``shared`` (equal scores, 2i) or None before it is played."""
        if self.home_score is None or self.away_score is None:
            return None
        if self.home_score == self.away_score:
            return "shared"
        return "home" if self.home_score > self.away_score else "away"


@dataclass(frozen=True, slots=True)
class LeagueMatch:
    """A Norwich league match: six singles frames then three doubles (6), drawn with a seeded RNG."""

    home_team: str
    away_team: str
    home_players: tuple[str, ...]
    away_players: tuple[str, ...]
    seed: int
    clock_minutes: float
    frames: tuple[LeagueFrame, ...]

    @property
    def frame_options(self) -> Mapping[str, Any]:
        """The engine options every frame of the match is played under (the clock, rule 5)."""
        return MappingProxyType({"clock_minutes": self.clock_minutes})

    def record(self, number: int, home_score: int, away_score: int) -> "LeagueMatch":
        """The match with frame ``number``'s final score written on the scorecard (7 e)."""
        if not 1 <= number <= len(self.frames):
            raise RulesError(f"{GAME} league: there is no frame {number} (frames 1-{len(self.frames)})")
        for v in (home_score, away_score):
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise RulesError(f"{GAME} league: frame {number}: scores must be whole points, zero or more; got {v!r}")
        frame = self.frames[number - 1]
        frames = list(self.frames)
        frames[number - 1] = replace(frame, home_score=home_score, away_score=away_score)
        return replace(self, frames=tuple(frames))

    def record_state(self, number: int, state: State) -> "LeagueMatch":
        """Record a finished frame from the engine's final state (players in :attr:`LeagueFrame.players` order)."""
        frame = self.frames[number - 1] if 1 <= number <= len(self.frames) else None
        if frame is None:
            raise RulesError(f"{GAME} league: there is no frame {number}")
        if not state.frame_over:
            raise RulesError(f"{GAME} league: frame {number} is not over yet")
        if state.players != frame.players:
            raise RulesError(f"{GAME} league: frame {number} is {frame.players}, the state is of {state.players}")
        home_side, away_side = state.sides
        return self.record(number, state.banked[home_side], state.banked[away_side])

    @property
    def frames_won(self) -> Mapping[str, float]:
        """Frames won by each team; a shared frame counts a half to each."""
        won = {"home": 0.0, "away": 0.0}
        for f in self.frames:
            if f.result == "shared":
                won["home"] += 0.5
                won["away"] += 0.5
            elif f.result is not None:
                won[f.result] += 1.0
        return MappingProxyType(won)

    @property
    def over(self) -> bool:
        return all(f.result is not None for f in self.frames)

    @property
    def winner(self) -> str | None:
        """The winning team's name once every frame is recorded (None while unfinished or level)."""
        if not self.over:
            return None
        won = self.frames_won
        if won["home"] == won["away"]:
            return None
        return self.home_team if won["home"] > won["away"] else self.away_team


def _draw_team(players: tuple[str, ...], team: str, opponent: str, rng: np.random.Generator) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]], dict[int, str]]:
    """Singles (6 names) and doubles (3 pairs) for one team; a team of five follows rule 8 a-c."""
    notes: dict[int, str] = {}
    hat = [players[i] for i in rng.permutation(len(players))]
    singles = [(name,) for name in hat[:6]]
    hat = [players[i] for i in rng.permutation(len(players))]
    pairs = [tuple(hat[i:i + 2]) for i in range(0, 6, 2)]
    if len(players) == 5:
        # 8 b: the sixth singles frame: all five names back in the hat, one drawn by the opponents
        extra = players[int(rng.integers(len(players)))]
        singles.append((extra,))
        notes[6] = f"8 b: {opponent} drew {extra} from {team}'s five names"
        # 8 c: the third doubles frame: the player who played twice in the singles is left out
        half = pairs[2]
        pool = [p for p in players if p != extra and p not in half]
        partner = pool[int(rng.integers(len(pool)))]
        pairs[2] = half + (partner,)
        notes[9] = f"8 c: {opponent} drew {partner} from {team}'s names (without {extra}, who played two singles)"
    return singles, pairs, notes


def draw_league_match(home_team: str, home_players: Sequence[str], away_team: str, away_players: Sequence[str],
                      seed: int, clock_minutes: float = 15.0) -> LeagueMatch:
    """Draw a league match (6, 8): six singles then three doubles, names drawn from a hat.

    Each team needs at least five players (8); a team of five plays under 8 a-c. The draw is
    reproducible from ``seed``; the clock must be 14 to 18 minutes (5).
    """
    if not 14.0 <= clock_minutes <= 18.0:
        raise RulesError(f"{GAME} league: the game clock must be between 14 and 18 minutes (rule 5), got {clock_minutes:g}")
    teams = ((home_team, tuple(home_players)), (away_team, tuple(away_players)))
    for name, players in teams:
        if len(set(players)) != len(players):
            raise RulesError(f"{GAME} league: {name} lists a player twice: {players}")
        if len(players) < 5:
            raise RulesError(f"{GAME} league: {name} has {len(players)} players; a match needs at least five a side (rule 8)")
    if set(home_players) & set(away_players):
        raise RulesError(f"{GAME} league: {', '.join(sorted(set(home_players) & set(away_players)))} cannot play for both teams")
    rng = np.random.default_rng(seed)
    hs, hd, hn = _draw_team(teams[0][1], home_team, away_team, rng)
    as_, ad, an = _draw_team(teams[1][1], away_team, home_team, rng)
    frames = []
    for i in range(9):
        number = i + 1
        kind = "singles" if i < 6 else "doubles"
        home = hs[i] if i < 6 else hd[i - 6]
        away = as_[i] if i < 6 else ad[i - 6]
        notes = tuple(n for n in (hn.get(number), an.get(number)) if n)
        frames.append(LeagueFrame(number, kind, home, away, "home" if number % 2 else "away", notes))
    return LeagueMatch(home_team, away_team, teams[0][1], teams[1][1], seed, clock_minutes, tuple(frames))
