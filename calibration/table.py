"""Table profiles: the measured geometry of one physical table, in millimetres.

The table coordinate frame (used everywhere in cueref, written here once)
------------------------------------------------------------------------
Seen from above with the *head* end on the left (the end a player breaks from: the baulk end of a
snooker table, the D end of a bar-billiards table, the end where the cue ball's group is *not*
racked in Sinuca de Ficha is irrelevant since that table is symmetric):

* the origin is the corner of the **playing surface** (the cloth inside the cushion noses) at the
  head end, top of the picture;
* ``x`` runs along the table's **length**, from the head cushion (x = 0) to the foot cushion
  (x = length_mm);
* ``y`` runs across the table's **width**, from the top side cushion (y = 0) to the bottom side
  cushion (y = width_mm);
* units are millimetres; heights (``h_mm``) are measured up from the cloth.

This is the layout of an image with the head end on the left, so ``(x, y)`` on the table reads like
``(col, row)`` in a picture. A player standing at the head end and looking down the table has the
top cushion (y = 0) on the left hand and the bottom cushion (y = width) on the right hand.

Ids (compared with ``==`` only, never substring):
* six-pocket tables: pockets ``TL TM TR BL BM BR`` (top/bottom, left/middle/right);
  cushions ``L`` (head), ``R`` (foot), ``T1`` ``T2`` (top, left and right of the middle pocket),
  ``B1`` ``B2``;
* bar billiards: cushions ``L R T B``, plus ``scoreboard`` for the edge of the folded scoreboard
  (endgame only); holes and pins carry the ids their profile gives them.

A profile is a YAML file (see ``calibration/profiles/``) validated on load by pydantic models (one
per kind of table, told apart by ``kind``): every error names the file, the field and what is
wrong with it, on one line. Built-in profiles are found by name (``ficha``,
``brasileira``, ``brasileira-semi``, ``bar-billiards``); any other six-pocket table can be given as
a file or as a spec string such as ``"2540x1270,ball=52.5,corner=85,middle=95,groups=red+yellow"``
(see :func:`profile_from_spec`).

This module imports neither OpenCV nor any other layer: the rules engines read it.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Annotated, Any, Literal, Mapping, Union

import yaml
from pydantic import AfterValidator, BaseModel, BeforeValidator, Field, PlainValidator, Strict, TypeAdapter, ValidationError, ValidationInfo

from calibration.validation import STRICT, PointMm, Text, one_line, problem, shorten

__all__ = [
    "ProfileError",
    "Pocket",
    "Cushion",
    "Hole",
    "Pin",
    "BallSpec",
    "TableProfile",
    "builtin_profiles",
    "load_profile",
    "profile_from_spec",
    "resolve_profile",
]

PROFILE_DIR = Path(__file__).with_name("profiles")

XY = tuple[float, float]


class ProfileError(ValueError):
    """A table profile is missing, malformed or geometrically impossible. The message says where."""


@dataclass(frozen=True, slots=True)
class Pocket:
    """A pocket of a six-pocket table.

    ``xy_mm`` is the centre of the pocket's drop (a ball whose centre passes inside
    ``radius_mm`` of it at low enough speed falls); ``jaws_mm`` are the two jaw points (the ends of the
    cushion noses on either side of the opening); ``mouth_mm`` is the distance between them.
    """

    id: str
    kind: str  # "corner" | "middle"
    xy_mm: XY
    radius_mm: float
    mouth_mm: float
    jaws_mm: tuple[XY, XY]


@dataclass(frozen=True, slots=True)
class Cushion:
    """One straight cushion nose between two points (``a_mm`` to ``b_mm``); ``normal`` points onto
    the playing surface."""

    id: str
    a_mm: XY
    b_mm: XY
    normal: XY


@dataclass(frozen=True, slots=True)
class Hole:
    """A hole in the bed of a bar-billiards table, worth ``value`` points (a red scores double)."""

    id: str
    xy_mm: XY
    radius_mm: float
    value: int


@dataclass(frozen=True, slots=True)
class Pin:
    """A pin standing on ``xy_mm`` in front of the hole ``guards``.

    ``penalty`` is what knocking it down costs (bar billiards 2h, 3a a, 3b a): ``"entire_score"``
    for the pin guarding the 200 hole, ``"break"`` for the others. It follows the guarded hole, not
    the pin's colour (league note to rule 6).
    """

    id: str
    colour: str
    xy_mm: XY
    radius_mm: float
    height_mm: float
    guards: str
    penalty: str  # "entire_score" | "break"


@dataclass(frozen=True, slots=True)
class BallSpec:
    """One ball of the set: its id, colour name and RGB, its group and its value."""

    id: str
    colour: str
    rgb: tuple[int, int, int]
    group: str  # "cue" | a group name ("red", "yellow" in ficha) | "object"
    value: int = 0


@dataclass(frozen=True, slots=True, eq=False)
class TableProfile:
    """The measured geometry of one table. All lengths in millimetres, in the table frame above."""

    name: str
    kind: str  # "six_pocket" | "bar_billiards"
    length_mm: float
    width_mm: float
    ball_diameter_mm: float
    cushion_nose_height_mm: float
    balls: tuple[BallSpec, ...]
    pockets: tuple[Pocket, ...] = ()
    cushions: tuple[Cushion, ...] = ()
    holes: tuple[Hole, ...] = ()
    pins: tuple[Pin, ...] = ()
    spots: Mapping[str, XY] = field(default_factory=dict)
    baulk_x_mm: float | None = None
    d_centre_mm: XY | None = None
    d_radius_mm: float | None = None
    d_direction: int = -1  # -1: the D bulges towards the head cushion (snooker); +1: towards the foot (bar billiards)
    scoreboard_x_mm: float | None = None
    cloth_rgb: tuple[int, int, int] = (30, 110, 60)
    rail_width_mm: float = 90.0
    source: str = "<built-in>"

    def __post_init__(self) -> None:
        object.__setattr__(self, "spots", MappingProxyType(dict(self.spots)))

    # ---- look-ups -------------------------------------------------------------------------
    @property
    def ball_radius_mm(self) -> float:
        return self.ball_diameter_mm / 2.0

    @property
    def ball_ids(self) -> tuple[str, ...]:
        return tuple(b.id for b in self.balls)

    def ball(self, ball_id: str) -> BallSpec:
        for b in self.balls:
            if b.id == ball_id:
                return b
        raise KeyError(f"table profile {self.name!r} has no ball {ball_id!r}; it has {', '.join(self.ball_ids)}")

    def group(self, name: str) -> tuple[str, ...]:
        """Ids of the balls of one group, in profile order."""
        return tuple(b.id for b in self.balls if b.group == name)

    @property
    def groups(self) -> tuple[str, ...]:
        """Group names other than the cue ball's, in profile order."""
        seen: list[str] = []
        for b in self.balls:
            if b.group != "cue" and b.group not in seen:
                seen.append(b.group)
        return tuple(seen)

    @property
    def cue_ball(self) -> str | None:
        cues = self.group("cue")
        return cues[0] if cues else None

    def pocket(self, pocket_id: str) -> Pocket:
        for p in self.pockets:
            if p.id == pocket_id:
                return p
        raise KeyError(f"table profile {self.name!r} has no pocket {pocket_id!r}")

    def hole(self, hole_id: str) -> Hole:
        for h in self.holes:
            if h.id == hole_id:
                return h
        raise KeyError(f"table profile {self.name!r} has no hole {hole_id!r}")

    def pin(self, pin_id: str) -> Pin:
        for p in self.pins:
            if p.id == pin_id:
                return p
        raise KeyError(f"table profile {self.name!r} has no pin {pin_id!r}")

    @property
    def corners_mm(self) -> tuple[XY, XY, XY, XY]:
        """Playing-surface corners in the order TL, TR, BR, BL (clockwise on the picture)."""
        L, W = self.length_mm, self.width_mm
        return ((0.0, 0.0), (L, 0.0), (L, W), (0.0, W))

    def contains(self, xy_mm: XY, margin_mm: float = 0.0) -> bool:
        """Whether a point lies on the playing surface (shrunk by ``margin_mm``)."""
        x, y = xy_mm
        return margin_mm <= x <= self.length_mm - margin_mm and margin_mm <= y <= self.width_mm - margin_mm

    def in_d(self, xy_mm: XY, tolerance_mm: float = 0.0) -> bool:
        """Whether a ball centre lies inside the D (bar billiards 2c b: placement in the D)."""
        if self.d_centre_mm is None or self.d_radius_mm is None or self.baulk_x_mm is None:
            return False
        dx, dy = xy_mm[0] - self.d_centre_mm[0], xy_mm[1] - self.d_centre_mm[1]
        behind_line = self.d_direction * (xy_mm[0] - self.baulk_x_mm) >= -tolerance_mm
        return behind_line and math.hypot(dx, dy) <= self.d_radius_mm + tolerance_mm

    def with_overrides(self, **changes: Any) -> "TableProfile":
        return replace(self, **changes)


# ---- loading and validation ------------------------------------------------------------------

_HEX = re.compile(r"^#?([0-9a-fA-F]{6})$")

# Named colours a user can use in profiles and spec strings (RGB).
NAMED_COLOURS: dict[str, tuple[int, int, int]] = {
    "white": (240, 238, 228),
    "red": (200, 25, 30),
    "yellow": (245, 200, 20),
    "green": (20, 130, 60),
    "brown": (110, 60, 30),
    "blue": (25, 70, 190),
    "pink": (240, 120, 160),
    "black": (15, 15, 18),
    "orange": (245, 120, 20),
    "purple": (100, 40, 140),
    "maroon": (110, 20, 30),
}

BRASILEIRA_VALUES = {"red": 1, "yellow": 2, "green": 3, "brown": 4, "blue": 5, "pink": 6, "black": 7}


def _named_rgb(value: str) -> tuple[int, int, int] | None:
    """The RGB of a colour name or ``#rrggbb``, or None."""
    if value.lower() in NAMED_COLOURS:
        return NAMED_COLOURS[value.lower()]
    m = _HEX.match(value)
    if m:
        h = m.group(1)
        return (int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16))
    return None


_COLOUR_FORMS = f"a colour name ({', '.join(NAMED_COLOURS)}), '#rrggbb' or [r, g, b]"


def _colour(value: Any) -> tuple[int, int, int]:
    rgb = _named_rgb(value) if isinstance(value, str) else None
    if isinstance(value, (list, tuple)) and len(value) == 3 and all(
        isinstance(c, int) and not isinstance(c, bool) and 0 <= c <= 255 for c in value
    ):
        rgb = (int(value[0]), int(value[1]), int(value[2]))
    if rgb is None:
        raise problem(f"must be {_COLOUR_FORMS}; got {shorten(value)}")
    return rgb


Colour = Annotated[tuple[int, int, int], PlainValidator(_colour)]
Mm = Annotated[float, Strict(), Field(gt=0)]  # a length: positive millimetres
Count = Annotated[int, Strict()]


def _known_colour(name: str, info: ValidationInfo) -> str:
    """A colour's name stands for its RGB, unless the entry gives ``rgb`` (validated first)."""
    if info.data.get("rgb") is None and _named_rgb(name) is None:
        raise problem(f"must be {_COLOUR_FORMS} (or give 'rgb'); got {shorten(name)}")
    return name


def _group_by_name(value: Any) -> Any:
    """A group written as a colour name: ``red`` is ``{name: red}``."""
    if isinstance(value, str):
        if _named_rgb(value) is None:
            raise problem(f"must be {_COLOUR_FORMS}; got {shorten(value)}")
        return {"name": value}
    return value


class _File(BaseModel):
    model_config = STRICT


class _BallFile(_File):
    rgb: Colour | None = None  # declared before ``colour``: with an rgb, a colour may have any name
    id: Text
    colour: Annotated[Text, AfterValidator(_known_colour)]
    group: Text
    value: Annotated[Count, Field(ge=0)] = 0


class _GroupFile(_File):
    rgb: Colour | None = None
    name: Annotated[Text, AfterValidator(_known_colour)]


class _HoleFile(_File):
    id: Text
    xy_mm: PointMm
    diameter_mm: Mm
    value: Annotated[Count, Field(gt=0)]


class _PinFile(_File):
    id: Text
    colour: Text
    xy_mm: PointMm
    base_diameter_mm: Mm
    height_mm: Mm
    guards: Text


class _TableFile(_File):
    name: Text
    length_mm: Mm
    width_mm: Mm
    ball_diameter_mm: Annotated[float, Strict(), Field(ge=20, le=80)] = 52.0  # a real ball
    cushion_nose_height_mm: Mm | None = None  # default: 0.7 of the ball's diameter
    rail_width_mm: Mm = 90.0
    cloth: Colour = (30, 110, 60)
    spots: dict[Text, PointMm] | None = None


class _SixPocketFile(_TableFile):
    kind: Literal["six_pocket"]
    corner_mouth_mm: Mm | None = None  # default: 1.8 balls
    middle_mouth_mm: Mm | None = None  # default: 2 balls
    groups: list[Annotated[_GroupFile, BeforeValidator(_group_by_name)]] | None = None
    balls_per_group: Annotated[Count, Field(ge=1, le=15)] = 4
    balls: list[_BallFile] | None = None
    baulk_x_mm: Mm | None = None
    d_radius_mm: Mm | None = None


class _BarBilliardsFile(_TableFile):
    kind: Literal["bar_billiards"]
    holes: list[_HoleFile] = []
    pins: list[_PinFile] = []
    balls: list[_BallFile] = []
    baulk_x_mm: Mm
    d_radius_mm: Mm
    scoreboard_x_mm: Mm


# A profile file: the fields of a six-pocket or of a bar-billiards table, told apart by ``kind``.
_PROFILE_FILE = TypeAdapter(Annotated[Union[_SixPocketFile, _BarBilliardsFile], Field(discriminator="kind")])


def six_pocket_geometry(
    length_mm: float, width_mm: float, corner_mouth_mm: float, middle_mouth_mm: float, ball_diameter_mm: float
) -> tuple[tuple[Pocket, ...], tuple[Cushion, ...]]:
    """Pockets and cushion segments of a six-pocket table from its size and pocket openings.

    Corner jaws sit ``mouth/sqrt(2)`` along each rail from the corner; the drop centre of a corner
    pocket lies on the diagonal, ``0.25 * mouth`` outside the corner; middle pockets are centred on
    the side cushion's midpoint, their drop centre ``0.3 * mouth`` behind the cushion line.
    """
    L, W = length_mm, width_mm
    d = corner_mouth_mm / math.sqrt(2.0)
    half_m = middle_mouth_mm / 2.0
    r_corner = corner_mouth_mm * 0.5
    r_middle = middle_mouth_mm * 0.5
    off_c = corner_mouth_mm * 0.25 / math.sqrt(2.0)
    off_m = middle_mouth_mm * 0.3
    pockets = (
        Pocket("TL", "corner", (-off_c, -off_c), r_corner, corner_mouth_mm, ((d, 0.0), (0.0, d))),
        Pocket("TM", "middle", (L / 2, -off_m), r_middle, middle_mouth_mm, ((L / 2 - half_m, 0.0), (L / 2 + half_m, 0.0))),
        Pocket("TR", "corner", (L + off_c, -off_c), r_corner, corner_mouth_mm, ((L - d, 0.0), (L, d))),
        Pocket("BL", "corner", (-off_c, W + off_c), r_corner, corner_mouth_mm, ((0.0, W - d), (d, W))),
        Pocket("BM", "middle", (L / 2, W + off_m), r_middle, middle_mouth_mm, ((L / 2 - half_m, W), (L / 2 + half_m, W))),
        Pocket("BR", "corner", (L + off_c, W + off_c), r_corner, corner_mouth_mm, ((L, W - d), (L - d, W))),
    )
    cushions = (
        Cushion("L", (0.0, d), (0.0, W - d), (1.0, 0.0)),
        Cushion("R", (L, d), (L, W - d), (-1.0, 0.0)),
        Cushion("T1", (d, 0.0), (L / 2 - half_m, 0.0), (0.0, 1.0)),
        Cushion("T2", (L / 2 + half_m, 0.0), (L - d, 0.0), (0.0, 1.0)),
        Cushion("B1", (d, W), (L / 2 - half_m, W), (0.0, -1.0)),
        Cushion("B2", (L / 2 + half_m, W), (L - d, W), (0.0, -1.0)),
    )
    if corner_mouth_mm <= ball_diameter_mm or middle_mouth_mm <= ball_diameter_mm:
        raise ProfileError(
            f"pocket openings ({corner_mouth_mm:g} mm corner, {middle_mouth_mm:g} mm middle) must be wider than "
            f"the ball ({ball_diameter_mm:g} mm), or no ball could ever be potted"
        )
    if 2 * d + middle_mouth_mm >= L or 2 * d >= W:
        raise ProfileError(f"pocket openings do not fit on a {L:g} x {W:g} mm table")
    return pockets, cushions


def four_cushions(length_mm: float, width_mm: float) -> tuple[Cushion, ...]:
    L, W = length_mm, width_mm
    return (
        Cushion("L", (0.0, 0.0), (0.0, W), (1.0, 0.0)),
        Cushion("R", (L, 0.0), (L, W), (-1.0, 0.0)),
        Cushion("T", (0.0, 0.0), (L, 0.0), (0.0, 1.0)),
        Cushion("B", (0.0, W), (L, W), (0.0, -1.0)),
    )


def _short_ids(colours: list[str]) -> list[str]:
    """Shortest distinct lowercase prefixes of colour names (red, yellow -> r, y; blue, black -> blu, bla)."""
    names = [c.lower() for c in colours]
    for n in range(1, max(map(len, names), default=1) + 1):
        prefixes = [c[:n] for c in names]
        if len(set(prefixes)) == len(prefixes):
            return prefixes
    return names


def ficha_balls(groups: list[tuple[str, tuple[int, int, int]]], per_group: int = 4, cue_rgb=NAMED_COLOURS["white"]) -> tuple[BallSpec, ...]:
    """Cue ball ``cue`` plus ``per_group`` balls of each group; ids are the colour's short prefix and
    a number (``r1``..``r4``, ``y1``..``y4``)."""
    prefixes = _short_ids([name for name, _ in groups])
    balls = [BallSpec("cue", "white", tuple(cue_rgb), "cue", 0)]
    for (name, rgb), prefix in zip(groups, prefixes):
        balls += [BallSpec(f"{prefix}{i}", name, rgb, name, 1) for i in range(1, per_group + 1)]
    return tuple(balls)


def _balls(items: list[_BallFile]) -> tuple[BallSpec, ...]:
    return tuple(BallSpec(b.id, b.colour, b.rgb or _named_rgb(b.colour), b.group, b.value) for b in items)  # type: ignore[arg-type]


def parse_profile(data: Any, source: str = "<profile>") -> TableProfile:
    """Build and validate a profile from the mapping read out of a profile file."""
    if not isinstance(data, Mapping):
        raise ProfileError(f"{source}: the file must be a mapping of fields, got {type(data).__name__}")
    try:
        f = _PROFILE_FILE.validate_python(data)
    except ValidationError as e:
        raise ProfileError(f"{source}: " + one_line(
            e, skip=1, unknown="unknown field(s) {paths} (check the spelling against calibration/profiles/ficha.yaml)",
        )) from None
    L, W, ball_d = f.length_mm, f.width_mm, f.ball_diameter_mm
    if W > L:
        raise ProfileError(f"{source}: width_mm ({W:g}) is larger than length_mm ({L:g}); length is the long side")
    common: dict[str, Any] = dict(
        name=f.name, kind=f.kind, length_mm=L, width_mm=W, ball_diameter_mm=ball_d,
        cushion_nose_height_mm=f.cushion_nose_height_mm or round(ball_d * 0.7, 1), cloth_rgb=f.cloth,
        rail_width_mm=f.rail_width_mm, source=source, spots=dict(f.spots or {}),
    )
    if isinstance(f, _SixPocketFile):
        try:
            pockets, cushions = six_pocket_geometry(
                L, W, f.corner_mouth_mm or round(ball_d * 1.8, 1), f.middle_mouth_mm or round(ball_d * 2.0, 1), ball_d)
        except ProfileError as e:
            raise ProfileError(f"{source}: {e}") from None
        if f.groups is not None and f.balls is not None:
            raise ProfileError(f"{source}: give either 'groups' (a cue ball plus groups of balls) or 'balls', not both")
        if f.groups is not None:
            balls = ficha_balls([(g.name, g.rgb or _named_rgb(g.name)) for g in f.groups], f.balls_per_group)  # type: ignore[misc]
        else:
            balls = _balls(f.balls or [])
        baulk, d_r = f.baulk_x_mm, f.d_radius_mm
        profile = TableProfile(
            **common, balls=balls, pockets=pockets, cushions=cushions,
            baulk_x_mm=baulk, d_radius_mm=d_r, d_centre_mm=(baulk, W / 2) if baulk is not None and d_r else None,
        )
    else:
        holes = tuple(Hole(h.id, h.xy_mm, h.diameter_mm / 2, h.value) for h in f.holes)
        values = {h.id: h.value for h in holes}
        top = max(values.values(), default=0)
        pins = []
        for i, q in enumerate(f.pins):
            if q.guards not in values:
                raise ProfileError(f"{source}: field 'pins[{i}].guards' names hole {q.guards!r}, which the profile does not have "
                                   f"({', '.join(sorted(values))})")
            penalty = "entire_score" if values[q.guards] == top else "break"
            pins.append(Pin(q.id, q.colour, q.xy_mm, q.base_diameter_mm / 2, q.height_mm, q.guards, penalty))
        profile = TableProfile(
            **common, balls=_balls(f.balls), cushions=four_cushions(L, W), holes=holes, pins=tuple(pins),
            baulk_x_mm=f.baulk_x_mm, d_radius_mm=f.d_radius_mm, d_centre_mm=(f.baulk_x_mm, W / 2), d_direction=1,
            scoreboard_x_mm=f.scoreboard_x_mm,
        )
    validate_profile(profile)
    return profile


def validate_profile(p: TableProfile) -> None:
    """Geometric sanity: unique ids, everything on the table, holes not overlapping, one cue ball."""
    src = p.source

    def dup(kind: str, ids: list[str]) -> None:
        seen = set()
        for i in ids:
            if i in seen:
                raise ProfileError(f"{src}: {kind} id {i!r} is used twice; ids must be unique")
            seen.add(i)

    dup("ball", [b.id for b in p.balls])
    dup("hole", [h.id for h in p.holes])
    dup("pin", [q.id for q in p.pins])
    if not p.balls:
        raise ProfileError(f"{src}: the profile has no balls")
    if p.kind == "six_pocket" and len(p.group("cue")) != 1:
        raise ProfileError(f"{src}: a six-pocket table needs exactly one ball in group 'cue', found {len(p.group('cue'))}")
    r = p.ball_radius_mm
    for name, xy in p.spots.items():
        if not p.contains(xy, r):
            raise ProfileError(f"{src}: spot {name!r} at {xy} is not on the {p.length_mm:g} x {p.width_mm:g} mm playing surface")
    for h in p.holes:
        if not p.contains(h.xy_mm, h.radius_mm):
            raise ProfileError(f"{src}: hole {h.id!r} at {h.xy_mm} does not lie inside the playing surface")
        if h.radius_mm * 2 <= p.ball_diameter_mm:
            raise ProfileError(f"{src}: hole {h.id!r} ({h.radius_mm * 2:g} mm) is not wider than a ball ({p.ball_diameter_mm:g} mm)")
    for i, a in enumerate(p.holes):
        for b in p.holes[i + 1:]:
            if math.dist(a.xy_mm, b.xy_mm) < a.radius_mm + b.radius_mm:
                raise ProfileError(f"{src}: holes {a.id!r} and {b.id!r} overlap")
    for q in p.pins:
        if not p.contains(q.xy_mm, q.radius_mm):
            raise ProfileError(f"{src}: pin {q.id!r} at {q.xy_mm} is not on the playing surface")
    if p.baulk_x_mm is not None and not 0 < p.baulk_x_mm < p.length_mm:
        raise ProfileError(f"{src}: baulk_x_mm {p.baulk_x_mm:g} must lie between 0 and the length {p.length_mm:g}")
    if p.d_radius_mm is not None and p.d_radius_mm * 2 >= p.width_mm:
        raise ProfileError(f"{src}: the D (radius {p.d_radius_mm:g} mm) is wider than the table")


def load_profile(path: str | Path) -> TableProfile:
    """Read and validate a profile file (YAML). A profile is immutable, so the one made from a file's
    text is kept and given again for the same text: the rules engines, the simulator and the pipeline
    resolve the same few profiles over and over, and parsing YAML costs milliseconds."""
    path = Path(path)
    if not path.exists():
        raise ProfileError(f"table profile file {str(path)!r} does not exist")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise ProfileError(f"{path}: not a readable YAML profile: {e}") from None
    return _profile_from_text(text, str(path))


@functools.lru_cache(maxsize=64)
def _profile_from_text(text: str, source: str) -> TableProfile:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ProfileError(f"{source}: not a readable YAML profile: {e}") from None
    except RecursionError:
        raise ProfileError(f"{source}: not a readable YAML profile: a value is nested too deeply") from None
    return parse_profile(data, source)


def builtin_profiles() -> dict[str, Path]:
    """Names of the bundled profiles and their files."""
    return {p.stem: p for p in sorted(PROFILE_DIR.glob("*.yaml"))}


_SPEC = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*[xX]\s*(\d+(?:\.\d+)?)\s*((?:,[^,]+)*)$")


def profile_from_spec(spec: str) -> TableProfile:
    """A six-pocket profile from a command-line spec.

    ``"LENGTHxWIDTH[,ball=D][,corner=MOUTH][,middle=MOUTH][,groups=red+yellow][,per_group=4][,name=NAME]"``,
    all in millimetres: e.g. ``"2540x1270,ball=52.5,corner=85,middle=95"``. Without ``groups`` the
    ball set is a cue ball and two groups of four, red and yellow (Sinuca de Ficha).
    """
    m = _SPEC.match(spec)
    if not m:
        raise ProfileError(
            f"table spec {spec!r} is not of the form LENGTHxWIDTH[,ball=MM][,corner=MM][,middle=MM][,groups=red+yellow]"
            " (millimetres, e.g. 1420x810,ball=52)"
        )
    data: dict[str, Any] = {
        "name": f"custom-{m.group(1)}x{m.group(2)}",
        "kind": "six_pocket",
        "length_mm": float(m.group(1)),
        "width_mm": float(m.group(2)),
        "groups": ["red", "yellow"],
    }
    keys = {"ball": "ball_diameter_mm", "corner": "corner_mouth_mm", "middle": "middle_mouth_mm"}
    for part in filter(None, m.group(3).split(",")):
        if "=" not in part:
            raise ProfileError(f"table spec {spec!r}: {part!r} is not key=value")
        k, v = (s.strip() for s in part.split("=", 1))
        if k in keys:
            try:
                data[keys[k]] = float(v)
            except ValueError:
                raise ProfileError(f"table spec {spec!r}: {k} must be a number of millimetres, got {v!r}") from None
        elif k == "groups":
            data["groups"] = [g for g in v.split("+") if g]
        elif k == "per_group":
            if not v.isdigit():
                raise ProfileError(f"table spec {spec!r}: per_group must be a whole number, got {v!r}")
            data["balls_per_group"] = int(v)
        elif k == "name":
            data["name"] = v
        else:
            raise ProfileError(f"table spec {spec!r}: unknown key {k!r} (use ball, corner, middle, groups, per_group, name)")
    data.setdefault("ball_diameter_mm", 52.0)
    return parse_profile(data, f"table spec {spec!r}")


def resolve_profile(name_or_path: str) -> TableProfile:
    """A profile by built-in name, by file path, or by spec string (tried in that order)."""
    builtins = builtin_profiles()
    if name_or_path in builtins:
        return load_profile(builtins[name_or_path])
    p = Path(name_or_path)
    if p.suffix.lower() in (".yaml", ".yml", ".json") or p.exists():
        return load_profile(p)
    if _SPEC.match(name_or_path):
        return profile_from_spec(name_or_path)
    raise ProfileError(
        f"unknown table profile {name_or_path!r}: use a built-in name ({', '.join(builtins)}), a profile file "
        "(.yaml), or a six-pocket spec such as 1420x810,ball=52"
    )
