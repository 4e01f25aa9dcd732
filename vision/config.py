"""Every threshold of the detector, with its unit and why one would change it."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DetectorConfig"]


@dataclass(frozen=True, slots=True)
class DetectorConfig:
    """Settings of :class:`vision.Detector`. The defaults work on the rendered corpora and the real
    clips alike; none is tuned to one table."""

    # ---- the low-resolution search picture --------------------------------------------------
    search_radius_px: float = 4.0
    """A ball's radius (px) in the subsampled picture where candidates are searched. Smaller: faster,
    but touching balls merge and thin cues vanish; larger: slower."""

    # ---- the cloth background ----------------------------------------------------------------
    chroma_tolerance: float = 0.12
    """How far (relative to the cloth's own brightness) a pixel's colour may stray from the cloth's
    before it is foreground. Raise for worn, patchy cloth; lower to see a ball close to the cloth's
    colour (a green ball on green cloth)."""
    noise_factor: float = 4.0
    """The chroma tolerance is at least this many times the cloth's measured noise (low light makes
    the picture noisy; a fixed tolerance would see balls everywhere)."""
    shadow_darkest: float = 0.30
    """Darkest a shadow makes the cloth (fraction of its lit brightness); darker is foreground (a black
    ball). Lower it under a single strong lamp whose shadows are deep."""
    brighter_than_cloth: float = 1.15
    """Brighter than this (times the cloth) is foreground, whatever the hue (white balls, highlights)."""
    cloth_rate: float = 0.05
    """Per frame, how far the background moves towards a pixel that looks like cloth (slow light
    changes). Higher follows faster lamps but also absorbs slowly rolling shadows."""
    absorb_after_s: float = 8.0
    """Something that is not a ball and has not moved for this long (chalk, a patch uncovered after an
    arm lay on the table at the start) becomes background. A ball never does."""
    max_foreground: float = 0.45
    """Share of the table that may be foreground before the frame is declared unreadable (the camera
    moved, a body hides the table)."""

    # ---- candidates ------------------------------------------------------------------------------
    min_cover: float = 0.45
    """A candidate needs this share of a ball-sized box around it to be foreground."""

    # ---- outline fit -----------------------------------------------------------------------------
    n_rays: int = 32
    """Rays per ball for the edge fit: more is steadier and slower."""
    min_edge_contrast: float = 12.0
    """Grey levels (Euclidean, BGR) that a colour step must have to count as a ball's edge. Raise for
    noisy cameras."""
    edge_contrast_of_light: float = 0.3
    """Where the cloth is dimly lit the edge's step may be smaller: the step needed is the smaller of
    ``min_edge_contrast`` and this share of the cloth's brightness there (grey levels, Euclidean). A
    black ball on dark green cloth in a dim room differs from the cloth by about half the cloth's
    brightness (seen on rendered low-light clips: cloth about 29 grey levels, the ball's edge about
    14): a fixed 12 loses most of its outline. With the defaults, cloth brighter than 40 grey levels
    keeps the fixed 12."""
    min_edge_contrast_dim: float = 6.0
    """Grey levels: the least step that counts as an edge however dim the cloth (about 2.5 times a
    video's noise of 2 grey levels per channel, which a step across two noisy readings shows). Raise
    for noisy cameras in dim rooms."""
    max_continued: float = 0.2
    """Share of two rings round an outline (1.6 and 2.1 radii out, other balls left out) that may be
    in the outline's own colour: a ball stands among cloth, shadows and things of other colours; a
    fingertip among its finger and the next ones (measured on rendered clips: at most 0.125 round
    balls, 0.29-0.9 round fingertips taken for balls). Lower rejects a ball beside a thing of its own colour."""
    min_visible: float = 0.40
    """Share of a ball's outline that must be found (consistent edges with cloth beyond) to report it
    as seen. Below, the ball is too hidden to place: it is reported occluded if it was known there."""
    min_visible_by_pocket: float = 0.60
    """The same share within two ball radii of a pocket's mouth (with no gap longer than a third of the
    outline): a pocket's dark drop, part covered by its jaws, shows a round dark arc there that a
    partial outline fits; a ball at the mouth shows most of its outline, against cloth or the drop."""
    radius_tolerance: float = 0.15
    """A found outline's radius may differ from the predicted one by this fraction (the outline of
    something else rarely fits). The prediction itself is corrected by the ratio measured on clearly
    seen balls (a table's ball size or a calibration's focal length a little off)."""
    max_edge_rms: float = 0.06
    """RMS distance (in ball radii, plus 0.4 px) of the edges from the fitted circle: a ball's outline is
    a clean circle, two fingertips side by side are not."""
    standing_shift: float = 0.5
    """A ball that stood still and whose outline cannot be fitted now (a dark ball beside its own
    shadow, at a look over the whole table) still stands where it was if a round ball-sized blob is
    centred within this many radii of its place: that blob is the ball, not a thing hiding it. Larger
    holds a ball that has started to roll at its old place for a frame longer."""
    chroma_balls: int = 40
    """Balls seen whole whose colour and brightness edges are compared before the video's chroma
    shift (a 4:2:0 codec's colour planes placed off its brightness, up to half a pixel) is taken as
    measured and corrected; until then none is assumed. More: a steadier measure, later."""
    rest_gate: float = 0.08
    """A ball's new outline fit within this many radii of where it stood unchanged is that ball still at
    rest (its place is then the mean of its fits). Each fit errs by 0.1-0.4 px; larger lets a ball
    nudged by less than this keep its old mean for a while."""
    rest_hold: float = 0.3
    """A fit of part of a ball's outline (less than 0.8 of it seen: an arm or a cue over the rest, a dark
    ball's edge lost in its shadow) within this many radii of where the ball stood unchanged leaves it
    there: such a fit can err by a fifth of a radius, and a ball really moved is fitted whole soon after."""
    rest_fits: int = 8
    """At most this many fits are averaged for a ball at rest: more is steadier, but a ball crept on
    by a touch is followed more slowly."""
    airborne_mm: float = 15.0
    """A ball whose outline says it is this much above the cloth (mm) is reported airborne, if that is
    also four times the height that ``radius_noise_px`` of outline radius means there."""
    radius_noise_px: float = 0.12
    """How well an outline's radius is measured (px, one standard deviation): measured at 0.05-0.1 px
    on rendered balls. Larger: fewer false jumps, low jumps missed on small pictures of big tables."""

    # ---- colour classes ----------------------------------------------------------------------------
    min_class_prob: float = 0.90
    """Below this probability for its best class a ball's label is "" (uncertain) rather than a guess."""
    colour_memory: int = 300
    """How many clearly seen balls a colour class remembers; older ones fade, so the classes follow the
    room's light. Larger: steadier classes, slower to follow a change of lamp."""

    # ---- pockets --------------------------------------------------------------------------------------
    in_pocket_mm: float = 0.5
    """A ball whose centre lies this many radii beyond the cushion line, inside a pocket's drop, is in
    the pocket (a net pocket shows it), not on the table."""
