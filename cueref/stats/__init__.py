"""Shot statistics over one match or a whole store: per player and game, from the event log and the
calls that stand (``docs/store.md`` defines every figure).

    stats = player_stats(store, game="ficha", player="Ana")      # list[PlayerStats]
"""

from __future__ import annotations

from datetime import date

from calibration.table import resolve_profile
from cueref.stats.facts import ShotFacts, heading_into, shot_facts, shot_points
from cueref.stats.summary import CUT_BINS_DEG, DISTANCE_BINS_MM, MatchFacts, PlayerStats, bin_label, summarise
from cueref.store import MatchStore, MatchSummary
from cueref.store.corrections import standing_calls

__all__ = [
    "ShotFacts", "shot_facts", "heading_into", "shot_points", "PlayerStats", "MatchFacts", "summarise", "bin_label",
    "DISTANCE_BINS_MM", "CUT_BINS_DEG", "match_facts", "select_matches", "player_stats",
]


def match_facts(store: MatchStore, match: MatchSummary) -> MatchFacts:
    """The facts of every shot of a stored match under the calls that stand."""
    profile = resolve_profile(match.profile)
    events = [e.event for e in store.events(match.id)]
    decisions = store.decisions(match.id)
    standing = standing_calls(decisions)
    facts = []
    for s in store.shots(match.id):
        call = standing.get(s.number)
        facts.append(shot_facts(profile, match.game, events[s.first_seq:s.last_seq + 1], dict(call.data) if call else None,
                                match_id=match.id, shot=s.number, frame=s.frame_number))
    kept = {id(d) for d in standing.values()}
    calls = [d.data for d in decisions if d.shot is None or id(d) in kept]
    return MatchFacts(match.id, match.game, facts, [d.data for d in decisions if d.shot is None], calls)


def select_matches(store: MatchStore, match: int | str | None = None, *, game: str | None = None, player: str | None = None,
                   since: date | None = None, until: date | None = None) -> list[MatchSummary]:
    """One match (by reference), or every match the filters keep."""
    if match is not None:
        return [store.match(match)]
    return store.matches(game=game, player=player, since=since, until=until)


def player_stats(store: MatchStore, match: int | str | None = None, *, game: str | None = None, player: str | None = None,
                 since: date | None = None, until: date | None = None) -> list[PlayerStats]:
    """Per (player, game) figures over one match or the matches the filters keep."""
    matches = select_matches(store, match, game=game, player=player, since=since, until=until)
    return summarise((match_facts(store, m) for m in matches), player=player)
