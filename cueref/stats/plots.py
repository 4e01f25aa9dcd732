"""The statistics as pictures (matplotlib, drawn with the Agg canvas chosen here, never pyplot's global
state): pot success by distance and cut angle, fouls by kind, and heat maps of where the cue ball
was left and where the pots went, drawn on the table to scale.

Each function takes the :class:`~cueref.stats.summary.PlayerStats` of one game and returns PNG bytes.
"""

from __future__ import annotations

import io
from typing import Sequence

import numpy as np

from calibration.table import TableProfile
from cueref.stats.summary import CUT_BINS_DEG, DISTANCE_BINS_MM, PlayerStats, bin_label

__all__ = ["pot_success_png", "fouls_png", "cue_heatmap_png", "pockets_png", "all_plots"]

CLOTH = "#2f7d4a"
RAIL = "#5b3a1e"
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")


def _figure(w_in: float, h_in: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(w_in, h_in), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def pot_success_png(stats: Sequence[PlayerStats]) -> bytes:
    """Pot success (made / attempted) per distance bin and per cut-angle bin, one bar per player."""
    fig = _figure(9, 3.2)
    for ax, edges, key, unit in ((fig.add_subplot(1, 2, 1), DISTANCE_BINS_MM, "by_distance", "distance to pocket, mm"),
                                 (fig.add_subplot(1, 2, 2), CUT_BINS_DEG, "by_cut", "cut angle, degrees")):
        n = len(edges) - 1
        width = 0.8 / max(len(stats), 1)
        for k, s in enumerate(stats):
            bins = np.array(getattr(s, key), dtype=float)
            rate = np.divide(bins[:, 1], bins[:, 0], out=np.full(n, np.nan), where=bins[:, 0] > 0)
            x = np.arange(n) + (k - (len(stats) - 1) / 2) * width
            ax.bar(x, np.nan_to_num(rate) * 100, width, color=COLOURS[k % len(COLOURS)], label=s.player)
            for xi, (a, m) in zip(x, bins.astype(int)):
                if a:
                    ax.text(xi, 100 * m / a + 2, f"{m}/{a}", ha="center", fontsize=7)
        ax.set_xticks(range(n), [bin_label(edges, i) for i in range(n)], fontsize=8)
        ax.set_ylim(0, 115)
        ax.set_xlabel(unit)
        ax.set_ylabel("pots made, %")
    fig.axes[0].legend(fontsize=8, loc="lower left")
    fig.suptitle(f"{stats[0].game}: pot success", fontsize=10)
    return _png(fig)


def fouls_png(stats: Sequence[PlayerStats]) -> bytes:
    """Fouls by kind, one bar per player."""
    kinds = sorted({k for s in stats for k in s.fouls}) or ["(none)"]
    fig = _figure(6, 0.6 + 0.35 * len(kinds) * max(1, len(stats) / 2))
    ax = fig.add_subplot()
    height = 0.8 / max(len(stats), 1)
    for k, s in enumerate(stats):
        y = np.arange(len(kinds)) + (k - (len(stats) - 1) / 2) * height
        ax.barh(y, [s.fouls.get(kind, 0) for kind in kinds], height, color=COLOURS[k % len(COLOURS)], label=s.player)
    ax.set_yticks(range(len(kinds)), kinds, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("fouls")
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.legend(fontsize=8)
    ax.set_title(f"{stats[0].game}: fouls by kind", fontsize=10)
    return _png(fig)


def _table(ax, profile: TableProfile) -> None:
    from matplotlib.patches import Circle, Rectangle

    rail = profile.rail_width_mm * 0.6
    ax.add_patch(Rectangle((-rail, -rail), profile.length_mm + 2 * rail, profile.width_mm + 2 * rail, color=RAIL, zorder=0))
    ax.add_patch(Rectangle((0, 0), profile.length_mm, profile.width_mm, color=CLOTH, zorder=0))
    for p in profile.pockets:
        ax.add_patch(Circle(p.xy_mm, p.radius_mm, color="black", zorder=1))
    for h in profile.holes:
        ax.add_patch(Circle(h.xy_mm, h.radius_mm, color="black", zorder=1))
    ax.set_xlim(-rail, profile.length_mm + rail)
    ax.set_ylim(profile.width_mm + rail, -rail)  # y runs down the picture, as in the table frame
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([])


def _per_player_axes(stats: Sequence[PlayerStats], profile: TableProfile):
    cols = min(len(stats), 2) or 1
    rows = (len(stats) + cols - 1) // cols or 1
    aspect = profile.width_mm / profile.length_mm
    fig = _figure(4.5 * cols, 4.5 * aspect * rows + 0.6)
    return fig, [fig.add_subplot(rows, cols, i + 1) for i in range(len(stats))]


def cue_heatmap_png(stats: Sequence[PlayerStats], profile: TableProfile) -> bytes:
    """Where each player left the cue ball (the struck ball at rest), a 2-D histogram on the table."""
    fig, axes = _per_player_axes(stats, profile)
    cell = profile.ball_diameter_mm * 2
    bins = (np.arange(0, profile.length_mm + cell, cell), np.arange(0, profile.width_mm + cell, cell))
    counts = [np.histogram2d(*np.asarray(s.cue_rest_xy_mm).reshape(-1, 2).T, bins=bins) for s in stats]
    top = max([c[0].max() for c in counts] + [1])
    for ax, s, (h, xe, ye) in zip(axes, stats, counts):
        _table(ax, profile)
        if s.cue_rest_xy_mm:
            mesh = ax.pcolormesh(xe, ye, np.ma.masked_equal(h, 0).T, cmap="YlOrRd", vmin=0, vmax=top, alpha=0.9, zorder=2)
            fig.colorbar(mesh, ax=ax, shrink=0.7, label="shots")
        ax.set_title(f"{s.player}: cue ball at rest ({len(s.cue_rest_xy_mm)} shots)", fontsize=9)
    fig.suptitle(f"{stats[0].game}: cue-ball positions", fontsize=10)
    return _png(fig)


def pockets_png(stats: Sequence[PlayerStats], profile: TableProfile) -> bytes:
    """Pots by pocket or hole: a disc on each, its area proportional to the number of balls potted."""
    fig, axes = _per_player_axes(stats, profile)
    places = {p.id: p.xy_mm for p in profile.pockets} | {h.id: h.xy_mm for h in profile.holes}
    top = max([max(s.pots_by_pocket.values(), default=0) for s in stats] + [1])
    for ax, s in zip(axes, stats):
        _table(ax, profile)
        for pid, xy in places.items():
            n = s.pots_by_pocket.get(pid, 0)
            if n:
                ax.scatter([xy[0]], [xy[1]], s=900 * n / top, color="#ffcc00", alpha=0.8, zorder=3, edgecolors="white")
                ax.annotate(str(n), xy, ha="center", va="center", fontsize=8, zorder=4)
        n = sum(s.pots_by_pocket.values())
        ax.set_title(f"{s.player}: {n} ball{'' if n == 1 else 's'} potted", fontsize=9)
    fig.suptitle(f"{stats[0].game}: pots by {'pocket' if profile.pockets else 'hole'}", fontsize=10)
    return _png(fig)


def all_plots(stats: Sequence[PlayerStats], profile: TableProfile) -> dict[str, bytes]:
    """Every plot of one game's figures, by name."""
    return {
        "pot-success": pot_success_png(stats),
        "fouls": fouls_png(stats),
        "cue-heatmap": cue_heatmap_png(stats, profile),
        "pockets": pockets_png(stats, profile),
    }
