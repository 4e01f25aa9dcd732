"""Values given on the command line, parsed once for every command: rules options
(``--option NAME=VALUE``), player lists, and numbers that must be positive."""

from __future__ import annotations

import json
import math
from typing import Any, Sequence

from cueref.errors import UserError

__all__ = ["parse_option_args", "parse_players", "require_positive"]


def parse_option_args(pairs: Sequence[str]) -> dict[str, Any]:
    """``["next_break=winner", "limit=3"]`` -> ``{"next_break": "winner", "limit": 3}``: each value is
    read as JSON when it is JSON (numbers, true/false) and kept as text otherwise; the engine checks
    names and types."""
    out: dict[str, Any] = {}
    for pair in pairs:
        if "=" not in pair:
            raise ValueError(f"--option {pair!r} must be NAME=VALUE")
        k, v = pair.split("=", 1)
        try:
            out[k.strip()] = json.loads(v)
        except json.JSONDecodeError:
            out[k.strip()] = v
    return out


def parse_players(text: str) -> list[str]:
    """``"Ana,Bia"`` -> ``["Ana", "Bia"]`` (break order); empty names are refused."""
    players = [p.strip() for p in text.split(",")]
    if not all(players):
        raise UserError(f"--players {text!r} has an empty name: give names separated by commas, e.g. --players Ana,Bia")
    return players


def require_positive(flag: str, value: float | None, unit: str) -> None:
    """Refuse a number that must be positive and finite (``None``: not given, fine)."""
    if value is not None and not (math.isfinite(value) and value > 0):
        raise UserError(f"{flag} {value:g} must be a positive number of {unit}: leave it out if you do not know it")
