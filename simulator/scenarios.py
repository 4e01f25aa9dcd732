"""Staged scenes: short scripts that make one foul (or one hard case) happen, with the decision a
referee must give. Each is a :class:`~simulator.script.Script`; ``tests/simulator/test_scenarios.py``
plays each one and checks the rules engine agrees with its ``expect``. The expectations are written
by hand from the rulebook (the rule numbers are in each ``note``), not taken from the engine: they are
independent checks of the engines, unlike the expectations of the automatic player's frames
(:mod:`simulator.player`), which the engine itself wrote and which are regression goldens.

Sinuca de Ficha ("Sinuca de Ficha. Regra Oficiosa"; player A owns the reds, B the yellows; A shoots first):

* ``ficha_miss``: 5.2, the cue ball touches no ball; the removal (a yellow lifted by hand) follows.
* ``ficha_wrong_ball_first``: 5.2, an opponent ball first.
* ``ficha_suicide``: 4.2.2 / 5.1, the cue ball follows the red into the corner: B wins.
* ``ficha_opponent_ball_last``: 4.2.3, the red knocks a yellow in: the turn ends, no penalty.
* ``ficha_off_table``: 5.3, a jumped cue ball flies over the cushion; it comes back to the centre by
  hand (5.3.1) and the removal follows.
* ``ficha_jump``: 5.4, the cue ball jumps a yellow to reach a red.
* ``ficha_frozen_ball_moved``: 4.5, the cue ball frozen to a red is played into it.
* ``ficha_double_hit``: 5.7, the cue touches the cue ball twice (following through into it after it met a red
  close in front).
* ``ficha_ball_touched``: 5.6, after A's shot B, aiming, moves a red by hand: the turn passes back to
  A, who removes a red (the penalty) and plays on (the call comes with A's next shot, before it).
* ``ficha_both_last_balls``: 4.2.3.2, a frame joined mid-way (a ``start`` block: one red and one
  yellow left); A's red first, the red drops, then B's yellow: B wins.
* ``ficha_both_last_balls_own_last``: 4.2.3.1, the same start; the yellow drops first, A's red
  last: A wins.

Sinuca Brasileira ("Sinuca Brasileira (Brazilian Snooker)"; A opens):

* ``brasileira_opening_reset``: 12, the opening shot pots the red: the table is reset (the red and
  the cue ball put back by hand) and A opens again, this time legally.
* ``brasileira_wrong_pocket``: 4, B nominates the red in TR and pots it in BR.
* ``brasileira_penalty_missed``: 8, 11, B nominates the blue (not the ball on: a penalty shot) in TL
  and does not pot it.

Bar billiards (the 4-pin bar billiards how-to-play guide and rules; each starts with the red placed on the break spot and a white
played from the centre of the D):

* ``bar_white_pin_down``: 3b a, the break-off knocks a white pin over.
* ``bar_black_pin_down``: 3a a, the break-off knocks the black pin over (the entire score).
* ``bar_baulk``: 3b f, the red comes back to rest in baulk.
* ``bar_miss``: 3b d, after a scoring break-off the red, played from the D, touches no ball.
* ``bar_endgame``: 2i, a frame joined mid-way (a ``start`` block): the bar has dropped, one white left
  and B leads 2450 to 2300 (a gap of 150: the endgame); A plays it from the centre of the D off the
  top cushion into the 200 and wins 2500 to 2450 (2i g).

Hard cases: ``hard_near_miss`` (the cue ball passes 2 mm from a yellow on its way
to a red), ``hard_two_pots`` (a split sends two reds into the foot corners within 50 ms),
``hard_kiss_cluster`` (a red driven into a cluster of four touching balls).
"""

from __future__ import annotations

import math
from typing import Any, Callable

from calibration.table import resolve_profile
from simulator.script import Script, parse_script

__all__ = ["SCENARIOS", "scenario", "scenario_names"]

_F = resolve_profile("ficha")
_R = _F.ball_radius_mm
_L, _W = _F.length_mm, _F.width_mm

# a spread layout: every ball well away from pockets and from each other
_BASE = {
    "cue": (710.0, 405.0),
    "r1": (330.0, 230.0), "r2": (260.0, 600.0), "r3": (480.0, 690.0), "r4": (160.0, 330.0),
    "y1": (1000.0, 250.0), "y2": (1180.0, 640.0), "y3": (1260.0, 160.0), "y4": (930.0, 560.0),
}


def _ficha(positions: dict[str, tuple[float, float]], steps: list[dict[str, Any]], title: str) -> Script:
    pos = dict(_BASE)
    pos.update(positions)
    return parse_script({
        "game": "ficha", "profile": "ficha", "players": ["A", "B"], "title": title, "seed": 1,
        "frames": [{"setup": {"positions": {k: list(v) for k, v in pos.items()}}, "steps": steps}],
    }, f"scenario {title!r}")


def _ficha_start(positions: dict[str, tuple[float, float]], steps: list[dict[str, Any]], title: str,
                 player: str = "A") -> Script:
    """A ficha frame joined mid-way: only ``positions`` on the table (the other balls potted)."""
    return parse_script({
        "game": "ficha", "profile": "ficha", "players": ["A", "B"], "title": title, "seed": 1,
        "start": {"positions": {k: list(v) for k, v in positions.items()}, "player": player},
        "frames": [{"steps": steps}],
    }, f"scenario {title!r}")


def _game(game: str, steps: list[dict[str, Any]], title: str) -> Script:
    return parse_script({"game": game, "players": ["A", "B"], "title": title, "seed": 1, "frames": [{"steps": steps}]},
                        f"scenario {title!r}")


def _towards(a: tuple[float, float], b: tuple[float, float]) -> float:
    return math.degrees(math.atan2(b[1] - a[1], b[0] - a[0]))


def ficha_miss() -> Script:
    return _ficha({}, [
        {"shot": {"ball": "cue", "direction_deg": -60.0, "speed_mm_s": 500.0},
         "expect": {"fouls": ["miss"], "next_player": "B", "frame_over": False, "note": "5.2: no ball hit; a yellow comes off"}},
        {"remove": {"ball": "y4"}},
    ], "ficha 5.2 miss")


def ficha_wrong_ball_first() -> Script:
    return _ficha({}, [
        {"shot": {"ball": "cue", "direction_deg": _towards(_BASE["cue"], _BASE["y1"]), "speed_mm_s": 1200.0},
         "expect": {"fouls": ["wrong_ball_first"], "next_player": "B", "note": "5.2: an opponent ball first"}},
        {"remove": {"ball": "y4"}},
    ], "ficha 5.2 opponent ball first")


def ficha_suicide() -> Script:
    cue, red = (300.0, 300.0), (180.0, 180.0)
    return _ficha({"cue": cue, "r1": red}, [
        {"shot": {"ball": "cue", "direction_deg": -135.0, "speed_mm_s": 1800.0, "top": 0.5},
         "expect": {"fouls": ["suicide"], "frame_over": True, "winner": "B", "note": "4.2.2, 5.1: the cue ball follows the red in"}},
    ], "ficha 4.2.2 suicide")


def ficha_opponent_ball_last() -> Script:
    return _ficha({"cue": (710.0, 420.0), "r1": (710.0, 170.0), "y1": (710.0, 58.0), "r2": (260.0, 600.0)}, [
        {"shot": {"ball": "cue", "direction_deg": -90.0, "speed_mm_s": 1500.0, "top": -0.2},
         "expect": {"fouls": [], "next_player": "B", "note": "4.2.3: an opponent ball potted last ends the turn"}},
    ], "ficha 4.2.3 opponent ball last")


def ficha_off_table() -> Script:
    return _ficha({"cue": (1300.0, 405.0)}, [
        {"shot": {"ball": "cue", "direction_deg": 0.0, "speed_mm_s": 3000.0, "elevation_deg": 60.0},
         "expect": {"fouls": ["miss", "off_table", "jump"], "next_player": "B",
                    "note": "5.2, 5.3, 5.4: the jumped cue ball left the table without touching a ball"}},
        {"place": {"ball": "cue", "xy_mm": [710.0, 405.0]}},
        {"remove": {"ball": "y4"}},
    ], "ficha 5.3 ball off the table")


def ficha_jump() -> Script:
    cue, yellow, red = (560.0, 405.0), (760.0, 405.0), (1000.0, 405.0)
    return _ficha({"cue": cue, "y4": yellow, "r1": red, "y1": (1000.0, 200.0)}, [
        {"shot": {"ball": "cue", "direction_deg": 0.0, "speed_mm_s": 3200.0, "elevation_deg": 45.0},
         "expect": {"fouls": ["jump"], "next_player": "B", "note": "5.4: the cue ball jumps a yellow"}},
        {"remove": {"ball": "y2"}},
    ], "ficha 5.4 jump")


def ficha_frozen_ball_moved() -> Script:
    cue = (710.0, 405.0)
    red = (710.0 + 2 * _R + 0.3, 405.0)
    return _ficha({"cue": cue, "r1": red}, [
        {"shot": {"ball": "cue", "direction_deg": 0.0, "speed_mm_s": 600.0},
         "expect": {"fouls": ["frozen_ball_moved"], "next_player": "B", "note": "4.5: the frozen red moved"}},
        {"remove": {"ball": "y4"}},
    ], "ficha 4.5 frozen ball moved")


def ficha_double_hit() -> Script:
    # the cue ball 12 mm behind r1 and struck full at it: it stops dead on the red and the cue, following
    # through, pushes it on (r1 runs to the bottom cushion between the pockets)
    a = math.radians(250.0)
    r1 = _BASE["r1"]
    cue = (r1[0] - (2 * _R + 12.0) * math.cos(a), r1[1] - (2 * _R + 12.0) * math.sin(a))
    return _ficha({"cue": cue}, [
        {"shot": {"ball": "cue", "direction_deg": 250.0, "speed_mm_s": 900.0, "double_hit": True},
         "expect": {"fouls": ["double_hit"], "next_player": "B", "note": "5.7: the cue touched the cue ball twice"}},
        {"remove": {"ball": "y4"}},
    ], "ficha 5.7 double hit")


def ficha_ball_touched() -> Script:
    return _ficha({}, [
        {"shot": {"ball": "cue", "direction_deg": _towards(_BASE["cue"], _BASE["r1"]), "speed_mm_s": 700.0},
         "expect": {"fouls": [], "next_player": "B", "note": "a red first, no pot: B to play"}},
        {"touch": {"ball": "r3", "velocity_mm_s": [90.0, 0.0]},
         "expect": {"fouls": ["ball_touched"], "next_player": "A", "note": "5.6: B moves a red by hand while aiming"}},
        {"remove": {"ball": "r4"}},
        {"shot": {"ball": "cue", "at": "r2", "speed_mm_s": 900.0},
         "expect": {"fouls": [], "note": "A plays on after the removal"}},
    ], "ficha 5.6 ball touched by hand")


def ficha_both_last_balls() -> Script:
    cue, red, yellow = (900.0, 420.0), (1250.0, 650.0), (760.0, 50.0)
    return _ficha_start({"cue": cue, "r1": red, "y1": yellow}, [
        {"shot": {"ball": "cue", "direction_deg": _towards(cue, red) + 1.0, "speed_mm_s": 3000.0, "top": 0.3},
         "expect": {"fouls": [], "frame_over": True, "winner": "B",
                    "note": "4.2.3.2: both last balls drop, A's red first and B's yellow last: B wins"}},
    ], "ficha 4.2.3.2 both last balls, the opponent's last")


def ficha_both_last_balls_own_last() -> Script:
    cue, red, yellow = (900.0, 420.0), (1200.0, 200.0), (1370.0, 60.0)
    return _ficha_start({"cue": cue, "r1": red, "y1": yellow}, [
        {"shot": {"ball": "cue", "direction_deg": _towards(cue, red), "speed_mm_s": 1500.0},
         "expect": {"fouls": [], "frame_over": True, "winner": "A",
                    "note": "4.2.3.1: both last balls drop, B's yellow first and A's red last: A wins"}},
    ], "ficha 4.2.3.1 both last balls, the shooter's last")


def hard_near_miss() -> Script:
    cue, red = (400.0, 405.0), (1000.0, 405.0)
    yellow = (700.0, 405.0 + 2 * _R + 2.0)  # 2 mm from the cue ball's path
    return _ficha({"cue": cue, "r1": red, "y4": yellow, "y1": (1000.0, 150.0)}, [
        {"shot": {"ball": "cue", "direction_deg": 0.0, "speed_mm_s": 1200.0, "top": 0.4},
         "expect": {"fouls": [], "next_player": "B", "note": "the cue ball passes 2 mm from y4: a legal red first"}},
    ], "hard case: a 2 mm near miss")


def hard_two_pots() -> Script:
    return _ficha({"cue": (300.0, 405.0), "r1": (820.0, 405.0 - _R - 0.5), "r2": (820.0, 405.0 + _R + 0.5),
                   "y4": (930.0, 700.0), "y1": (1000.0, 120.0), "y2": (600.0, 700.0), "y3": (600.0, 110.0)}, [
        {"shot": {"ball": "cue", "direction_deg": 0.0, "speed_mm_s": 3000.0},
         "expect": {"fouls": [], "next_player": "A", "note": "two reds drop within 50 ms (4.2: the last to drop counts)"}},
    ], "hard case: two pots within 50 ms")


def hard_kiss_cluster() -> Script:
    cx, cy = 900.0, 420.0
    s3 = math.sqrt(3.0) * _R
    return _ficha({"cue": (400.0, 415.0), "r1": (cx, cy), "y4": (cx + 2 * _R, cy), "r2": (cx + _R, cy - s3),
                   "y1": (cx + _R, cy + s3)}, [
        {"shot": {"ball": "cue", "direction_deg": 0.0, "speed_mm_s": 2500.0, "top": 0.2},
         "expect": {"fouls": [], "note": "a red first into a cluster of four touching balls"}},
    ], "hard case: a kiss cluster")


_OPENING = {"shot": {"ball": "cue", "at": "red", "offset_deg": -1.5, "speed_mm_s": 1800.0},
            "expect": {"fouls": [], "next_player": "B", "note": "12: the opening shot touches the red"}}


def brasileira_opening_reset() -> Script:
    return _game("brasileira", [
        {"aim": {"ball": "red", "pocket": "BR"},
         "expect": {"fouls": [], "next_player": "A", "frame_over": False, "note": "12: the red potted on the opening: reset"}},
        {"place": {"ball": "red", "xy_mm": [2130.0, 1065.0]}},
        {"place": {"ball": "cue", "xy_mm": [450.0, 800.0]}},
        {**_OPENING, "expect": {**_OPENING["expect"], "note": "12: A opens again"}},
    ], "brasileira 12 opening reset")


def brasileira_wrong_pocket() -> Script:
    return _game("brasileira", [
        _OPENING,
        {"input": {"kind": "nomination", "ball": "red", "pocket": "TR"}},
        {"aim": {"ball": "red", "pocket": "BR"},
         "expect": {"fouls": ["wrong_pocket"], "next_player": "A", "note": "4: the red nominated in TR went in BR"}},
    ], "brasileira 4 wrong pocket")


def brasileira_penalty_missed() -> Script:
    return _game("brasileira", [
        _OPENING,
        {"input": {"kind": "nomination", "ball": "blue", "pocket": "TL"}},
        {"shot": {"ball": "cue", "at": "blue", "speed_mm_s": 1200.0},
         "expect": {"fouls": ["penalty_missed"], "next_player": "A", "note": "8, 11: a penalty shot at the blue, not potted"}},
    ], "brasileira 8 penalty shot missed")


def _break(offset_deg: float, speed_mm_s: float, expect: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"place": {"ball": "red", "xy_mm": [800.0, 450.0]}},
        {"shot": {"ball": "w1", "place_xy_mm": [450.0, 450.0], "at": "red", "offset_deg": offset_deg, "speed_mm_s": speed_mm_s},
         "expect": expect},
    ]


def bar_white_pin_down() -> Script:
    return _game("bar-billiards", _break(3.0, 2000.0, {"fouls": ["pin_down"], "next_player": "B", "note": "3b a: a white pin down"}),
                 "bar billiards 3b a white pin down")


def bar_black_pin_down() -> Script:
    return _game("bar-billiards", _break(1.0, 1600.0, {"fouls": ["black_pin"], "next_player": "B",
                                                       "note": "3a a: the black pin down costs the entire score"}),
                 "bar billiards 3a a black pin down")


def bar_baulk() -> Script:
    return _game("bar-billiards", _break(1.5, 2000.0, {"fouls": ["baulk"], "next_player": "B", "note": "3b f: the red at rest in baulk"}),
                 "bar billiards 3b f ball in baulk")


def bar_miss() -> Script:
    return _game("bar-billiards", _break(2.0, 2000.0, {"fouls": [], "next_player": "A", "note": "2b: a scoring break-off"}) + [
        {"shot": {"ball": "red", "place_xy_mm": [520.0, 400.0], "direction_deg": -70.0, "speed_mm_s": 500.0},
         "expect": {"fouls": ["miss"], "next_player": "B", "note": "3b d: the red touches no ball"}},
    ], "bar billiards 3b d miss")


def bar_endgame() -> Script:
    return parse_script({
        "game": "bar-billiards", "players": ["A", "B"], "title": "bar billiards 2i endgame off the cushion", "seed": 1,
        "start": {"positions": {"w1": [450.0, 450.0]}, "player": "A", "banked": {"A": 2300, "B": 2450}},
        "frames": [{"steps": [
            {"shot": {"ball": "w1", "direction_deg": -55.0, "speed_mm_s": 1300.0},
             "expect": {"fouls": [], "frame_over": True, "winner": "A",
                        "note": "2i g: the last ball off the top cushion into the 200: A wins 2500-2450"}},
        ]}],
    }, "scenario 'bar_endgame'")


SCENARIOS: dict[str, Callable[[], Script]] = {
    "ficha_miss": ficha_miss,
    "ficha_wrong_ball_first": ficha_wrong_ball_first,
    "ficha_suicide": ficha_suicide,
    "ficha_opponent_ball_last": ficha_opponent_ball_last,
    "ficha_off_table": ficha_off_table,
    "ficha_jump": ficha_jump,
    "ficha_frozen_ball_moved": ficha_frozen_ball_moved,
    "ficha_double_hit": ficha_double_hit,
    "ficha_ball_touched": ficha_ball_touched,
    "ficha_both_last_balls": ficha_both_last_balls,
    "ficha_both_last_balls_own_last": ficha_both_last_balls_own_last,
    "brasileira_opening_reset": brasileira_opening_reset,
    "brasileira_wrong_pocket": brasileira_wrong_pocket,
    "brasileira_penalty_missed": brasileira_penalty_missed,
    "bar_white_pin_down": bar_white_pin_down,
    "bar_black_pin_down": bar_black_pin_down,
    "bar_baulk": bar_baulk,
    "bar_miss": bar_miss,
    "bar_endgame": bar_endgame,
    "hard_near_miss": hard_near_miss,
    "hard_two_pots": hard_two_pots,
    "hard_kiss_cluster": hard_kiss_cluster,
}


def scenario_names(game: str | None = None) -> tuple[str, ...]:
    """Names of the staged scenes (of one game, if given)."""
    return tuple(n for n, f in SCENARIOS.items() if game is None or f().game == game)


def scenario(name: str) -> Script:
    """The script of a staged scene by name."""
    if name not in SCENARIOS:
        raise KeyError(f"unknown scenario {name!r}: {', '.join(SCENARIOS)}")
    return SCENARIOS[name]()
