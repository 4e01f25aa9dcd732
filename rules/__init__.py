"""Rules engines: one module per game, all behind the interface of :mod:`rules.base`.

``get_engine(game, profile)`` returns an engine by its game name. Engines are imported lazily, so
listing games costs nothing; no engine imports OpenCV.
"""

from __future__ import annotations

import importlib
from typing import Any

from calibration.table import TableProfile, resolve_profile

# game name -> (module, class, default table profile)
GAMES: dict[str, tuple[str, str, str]] = {
    "ficha": ("rules.ficha", "FichaRules", "ficha"),
    "brasileira": ("rules.brasileira", "BrasileiraRules", "brasileira"),
    "bar-billiards": ("rules.bar_billiards", "BarBilliardsRules", "bar-billiards"),
}


class UnknownGameError(ValueError):
    pass


def get_engine(game: str, profile: TableProfile | str | None = None) -> Any:
    """The rules engine of ``game`` (``ficha``, ``brasileira``, ``bar-billiards``) for a table profile
    (its default profile when none is given)."""
    if game not in GAMES:
        raise UnknownGameError(f"unknown game {game!r}: choose one of {', '.join(GAMES)}")
    module_name, class_name, default_profile = GAMES[game]
    module = importlib.import_module(module_name)
    if profile is None or isinstance(profile, str):
        profile = resolve_profile(profile or default_profile)
    return getattr(module, class_name)(profile)
