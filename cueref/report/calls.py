"""How a call is shown to people: the score line, the rule of each foul, the rulebook it comes from.

Reads the calls as ``Decision.to_dict()`` gives them (plain JSON values), so it serves the live
annotated video and the stored report alike.
"""

from __future__ import annotations

import importlib
from functools import lru_cache
from typing import Any, Mapping

__all__ = ["RULEBOOKS", "score_line", "foul_rule", "call_text"]

#: the rulebook each game's rule numbers come from, by its title
RULEBOOKS: Mapping[str, str] = {
    "ficha": "Sinuca de Ficha. Regra Oficiosa",
    "brasileira": "Sinuca Brasileira (Brazilian Snooker)",
    "bar-billiards": "4-pin bar billiards: the how-to-play guide, the rules and the Norwich league rules",
}


def _pair(values: Mapping[str, Any] | None, sep: str = " - ") -> str:
    return sep.join(f"{k} {v}" for k, v in (values or {}).items())


def score_line(game: str, call: Mapping[str, Any] | None) -> str:
    """The score after a call, in the game's own terms."""
    if not call:
        return ""
    if game == "ficha":
        line = f"frames {_pair(call.get('score'))}"
        balls = call.get("balls") or {}
        if balls.get("on_table"):
            n = len([b for b in balls["on_table"] if b != "cue"])
            line += f"; {n} object ball{'' if n == 1 else 's'} on the table"
        return line
    if game == "brasileira":
        return f"points {_pair(call.get('scores'))}; frames {_pair(call.get('frames_won'))}"
    if game == "bar-billiards":
        line = f"banked {_pair(call.get('banked'))}"
        if call.get("break_score") and not call.get("visit_over"):
            line += f"; {call.get('player')}'s break {call['break_score']}"
        return line
    return ""


@lru_cache(maxsize=None)
def _foul_rules(game: str) -> Mapping[str, str]:
    """Foul value -> rule number, from the game's rule table (``RULES``, a :class:`rules.base.RuleTable`)."""
    from rules import GAMES

    if game not in GAMES:
        return {}
    table = importlib.import_module(GAMES[game][0]).RULES
    return {str(getattr(k, "value", k)): str(v) for k, v in table.fouls.items()}


def foul_rule(game: str, foul: str) -> str | None:
    """The rule number that makes ``foul`` a foul in ``game`` (None when the engine does not say)."""
    return _foul_rules(game).get(foul)


def call_text(call: Mapping[str, Any] | None) -> str:
    """One line: the call's explanation (which quotes its rule numbers), or the pending question."""
    if not call:
        return "not judged: the rules stopped before this shot (a question pending, or a log they cannot judge)"
    if call.get("pending"):
        q = call["pending"]
        return f"PENDING: {q['text']} [{' / '.join(q['options'])}]"
    return str(call.get("explanation") or "")
