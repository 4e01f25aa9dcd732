"""Statistics as a terminal table, CSV and JSON; the shots' facts as CSV."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from typing import Any, Iterable, Sequence, TextIO

from cueref.stats.facts import ShotFacts
from cueref.stats.summary import CUT_BINS_DEG, DISTANCE_BINS_MM, PlayerStats, bin_label

__all__ = ["format_table", "write_csv", "write_json", "write_shots_csv", "csv_rows"]


def _pct(made: int, attempted: int) -> str:
    return f"{made}/{attempted} {100 * made / attempted:.0f}%" if attempted else "-"


def _num(v: float | None, fmt: str = "{:.1f}") -> str:
    return "-" if v is None else fmt.format(v)


def format_table(stats: Sequence[PlayerStats]) -> str:
    """One column per player and game, one line per figure."""
    if not stats:
        return "no shot matches these filters"
    rows: list[tuple[str, list[str]]] = [
        ("game", [s.game for s in stats]),
        ("player", [s.player for s in stats]),
        ("matches", [str(s.matches) for s in stats]),
        ("frames", [str(s.frames) for s in stats]),
        ("shots", [str(s.shots) for s in stats]),
        ("shots per frame", [_num(s.shots_per_frame) for s in stats]),
        ("pots made / attempted", [_pct(s.pots_made, s.pots_attempted) for s in stats]),
    ]
    for i in range(len(DISTANCE_BINS_MM) - 1):
        rows.append((f"  at {bin_label(DISTANCE_BINS_MM, i)} mm", [_pct(s.by_distance[i][1], s.by_distance[i][0]) for s in stats]))
    for i in range(len(CUT_BINS_DEG) - 1):
        rows.append((f"  cut {bin_label(CUT_BINS_DEG, i)} deg", [_pct(s.by_cut[i][1], s.by_cut[i][0]) for s in stats]))
    rows += [
        ("safeties", [str(s.safeties) for s in stats]),
        ("fouls", [str(sum(s.fouls.values())) for s in stats]),
    ]
    for kind in sorted({k for s in stats for k in s.fouls}):
        rows.append((f"  {kind}", [str(s.fouls.get(kind, 0)) for s in stats]))
    rows += [
        ("scoring visits", [str(len(s.breaks)) for s in stats]),
        ("highest break", [str(s.highest_break) for s in stats]),
    ]
    if any(s.game == "bar-billiards" for s in stats):
        rows += [
            ("banked breaks", [str(len(s.banked_breaks)) if s.game == "bar-billiards" else "" for s in stats]),
            ("highest banked break", [str(max(s.banked_breaks, default=0)) if s.game == "bar-billiards" else "" for s in stats]),
            ("black-pin disasters", [f"{s.black_pin_disasters} (-{s.black_pin_lost})" if s.game == "bar-billiards" else "" for s in stats]),
        ]
    rows.append(("cue-ball speed m/s", [_num(None if s.mean_cue_speed_mm_s is None else s.mean_cue_speed_mm_s / 1000, "{:.2f}") for s in stats]))
    rows.append(("pots by pocket/hole", [" ".join(f"{k}:{v}" for k, v in sorted(s.pots_by_pocket.items())) or "-" for s in stats]))
    head = max(len(r[0]) for r in rows)
    widths = [max(len(r[1][i]) for r in rows) for i in range(len(stats))]
    lines = [f"{name:<{head}}  " + "  ".join(f"{v:>{w}}" for v, w in zip(values, widths)) for name, values in rows]
    lines.insert(2, "-" * len(lines[0]))
    return "\n".join(lines)


def csv_rows(stats: Sequence[PlayerStats]) -> tuple[list[str], list[dict[str, Any]]]:
    """The header and one flat row per player and game (every foul kind and pocket as a column)."""
    fouls = sorted({k for s in stats for k in s.fouls})
    pockets = sorted({k for s in stats for k in s.pots_by_pocket})
    rows = []
    for s in stats:
        d = s.to_dict()
        row = {k: d[k] for k in ("player", "game", "matches", "frames", "shots", "shots_per_frame", "pots_attempted", "pots_made",
                                 "pot_success", "safeties", "fouls_total", "breaks", "highest_break", "banked_breaks",
                                 "highest_banked_break", "black_pin_disasters", "black_pin_lost", "mean_cue_speed_mm_s")}
        for label, v in d["pot_success_by_distance_mm"].items():
            row[f"attempted_{label}mm"], row[f"made_{label}mm"] = v["attempted"], v["made"]
        for label, v in d["pot_success_by_cut_deg"].items():
            row[f"attempted_cut_{label}deg"], row[f"made_cut_{label}deg"] = v["attempted"], v["made"]
        row.update({f"foul_{k}": s.fouls.get(k, 0) for k in fouls})
        row.update({f"pots_{k}": s.pots_by_pocket.get(k, 0) for k in pockets})
        rows.append(row)
    header = list(rows[0]) if rows else ["player", "game"]
    return header, rows


def write_csv(stats: Sequence[PlayerStats], fh: TextIO) -> None:
    header, rows = csv_rows(stats)
    w = csv.DictWriter(fh, fieldnames=header)
    w.writeheader()
    w.writerows(rows)


def write_json(stats: Sequence[PlayerStats], fh: TextIO) -> None:
    json.dump([s.to_dict() for s in stats], fh, indent=1)
    fh.write("\n")


def write_shots_csv(facts: Iterable[ShotFacts], fh: TextIO) -> None:
    """One row per shot with its facts (docs/store.md defines them)."""
    names = [f.name for f in dataclasses.fields(ShotFacts)]
    w = csv.writer(fh)
    w.writerow(names)
    for f in facts:
        row = []
        for n in names:
            v = getattr(f, n)
            if n == "pots":
                v = " ".join(f"{b}@{p}" for b, p in v)
            elif n == "fouls":
                v = " ".join(v)
            elif n == "cue_rest_xy_mm":
                v = "" if v is None else f"{v[0]:.1f} {v[1]:.1f}"
            elif isinstance(v, float):
                v = f"{v:.3f}"
            elif v is None:
                v = ""
            row.append(v)
        w.writerow(row)


def text(stats: Sequence[PlayerStats], fmt: str) -> str:
    buf = io.StringIO()
    {"csv": write_csv, "json": write_json}[fmt](stats, buf)
    return buf.getvalue()
