"""Table profiles: the built-ins load and say what the rulebooks say; bad files are refused with the
field named."""

import math
import textwrap

import pytest

from calibration.table import ProfileError, builtin_profiles, load_profile, profile_from_spec, resolve_profile


def test_every_builtin_profile_loads():
    assert set(builtin_profiles()) >= {"ficha", "brasileira", "brasileira-semi", "bar-billiards"}
    for name in builtin_profiles():
        assert resolve_profile(name).name == name


def test_ficha_is_the_rulebook_table():
    p = resolve_profile("ficha")
    assert (p.length_mm, p.width_mm, p.ball_diameter_mm) == (1420, 810, 52)  # ficha 1, 2.2
    assert p.cue_ball == "cue"
    assert p.groups == ("red", "yellow")
    assert p.group("red") == ("r1", "r2", "r3", "r4") and p.group("yellow") == ("y1", "y2", "y3", "y4")
    assert [k.id for k in p.pockets] == ["TL", "TM", "TR", "BL", "BM", "BR"]
    assert p.spots["centre"] == (710, 405)


def test_pocket_jaws_are_mouth_apart_and_cushions_end_at_jaws():
    p = resolve_profile("ficha")
    for pk in p.pockets:
        assert math.dist(*pk.jaws_mm) == pytest.approx(pk.mouth_mm)
    jaws = {xy for pk in p.pockets for xy in pk.jaws_mm}
    for c in p.cushions:
        assert c.a_mm in jaws and c.b_mm in jaws


@pytest.mark.parametrize("name, length, width", [("brasileira", 2840, 1420), ("brasileira-semi", 2540, 1270)])
def test_brasileira_spots_scale_with_the_table(name, length, width):
    p = resolve_profile(name)
    assert (p.length_mm, p.width_mm, p.ball_diameter_mm) == (length, width, 52.5)
    assert p.d_radius_mm == pytest.approx(260 * length / 2840, abs=0.1)
    pink, red = p.spots["pink"], p.spots["red"]
    assert red[0] == pink[0] and red[1] == pytest.approx((pink[1] + width) / 2)  # seed rule 2
    assert p.spots["blue"] == (length / 2, width / 2)
    assert [p.ball(b).value for b in ("red", "yellow", "green", "brown", "blue", "pink", "black")] == [1, 2, 3, 4, 5, 6, 7]


def test_bar_billiards_pins_cost_what_their_hole_says():
    p = resolve_profile("bar-billiards")
    assert sorted(h.value for h in p.holes) == [10, 20, 30, 40, 50, 50, 60, 100, 200]
    assert p.pin("black").guards == "h200" and p.pin("black").penalty == "entire_score"
    assert all(p.pin(x).penalty == "break" for x in ("red", "white1", "white2"))
    assert p.in_d((p.baulk_x_mm + 50, p.width_mm / 2)) and not p.in_d((p.baulk_x_mm - 5, p.width_mm / 2))


def write(tmp_path, text):
    f = tmp_path / "t.yaml"
    f.write_text(textwrap.dedent(text))
    return f


GOOD = """
    name: mine
    kind: six_pocket
    length_mm: 1800
    width_mm: 900
    ball_diameter_mm: 50
    groups: [orange, blue]
"""


def test_a_user_profile_file(tmp_path):
    p = load_profile(write(tmp_path, GOOD))
    assert p.ball_ids == ("cue", "o1", "o2", "o3", "o4", "b1", "b2", "b3", "b4")
    assert p.ball("o1").rgb != p.ball("b1").rgb


@pytest.mark.parametrize(
    "change, message",
    [
        ("length_mm: -3", "field 'length_mm' must be positive"),
        ("width_mm: 2000", "width_mm (2000) is larger than length_mm"),
        ("ball_diameter_mm: banana", "field 'ball_diameter_mm' must be a number"),
        ("corner_mouth_mm: 40", "must be wider than the ball"),
        ("colour_of_cloth: green", "unknown field(s) 'colour_of_cloth'"),
        ("kind: snooker", "field 'kind' must be 'six_pocket' or 'bar_billiards'"),
        ("groups: [red, '#12']", "field 'groups[1]' must be a colour name"),
        ("length_mm: .nan", "field 'length_mm' must be a finite number, got nan"),
        ("width_mm: .inf", "field 'width_mm' must be a finite number, got inf"),
        ("length_mm: 1" + "0" * 400, "field 'length_mm' must be a number, got 1000"),
        ("length_mm: '1800'", "field 'length_mm' must be a number, got '1800'"),
        ("spots: {centre: [900, .nan]}", "field 'spots.centre' must be [x_mm, y_mm] (two finite numbers), got [900, nan]"),
        ("groups: [{name: teal}]", "field 'groups[0].name' must be a colour name"),
        ("groups: red", "field 'groups' must be a list, got 'red'"),
        ("balls_per_group: 0", "field 'balls_per_group' must be at least 1, got 0"),
        ("kind: [six_pocket]", "field 'kind' must be 'six_pocket' or 'bar_billiards', got ['six_pocket']"),
        ("name: " + "[" * 60 + "]" * 60, "field 'name' must be a string"),
        ("name: " + "[" * 5000 + "]" * 5000, "not a readable YAML profile: a value is nested too deeply"),
    ],
)
def test_bad_profile_files_name_the_field(tmp_path, change, message):
    key = change.split(":")[0]
    lines = [ln for ln in GOOD.splitlines() if not ln.strip().startswith(key + ":")]
    f = write(tmp_path, "\n".join(lines) + "\n    " + change + "\n")
    with pytest.raises(ProfileError) as err:
        load_profile(f)
    assert message in str(err.value) and str(f) in str(err.value)
    assert "\n" not in str(err.value)  # one line


def test_missing_and_unreadable_files(tmp_path):
    with pytest.raises(ProfileError, match="does not exist"):
        load_profile(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [unclosed\n")
    with pytest.raises(ProfileError, match="not a readable YAML profile"):
        load_profile(bad)
    with pytest.raises(ProfileError, match="field 'name' is missing"):
        load_profile(write(tmp_path, "kind: six_pocket\nlength_mm: 10\n"))


def test_bar_billiards_geometry_is_checked(tmp_path):
    text = resolve_profile("bar-billiards").source
    src = open(text).read().replace("{id: h20, xy_mm: [1800, 300]", "{id: h20, xy_mm: [1800, 170]")
    with pytest.raises(ProfileError, match="holes 'h10' and 'h20' overlap"):
        load_profile(write(tmp_path, src))
    src = open(text).read().replace("guards: h100}", "guards: h999}")
    with pytest.raises(ProfileError, match="names hole 'h999'"):
        load_profile(write(tmp_path, src))


def test_profile_from_a_command_line_spec():
    p = profile_from_spec("2540x1270,ball=52.5,corner=85,middle=95,groups=blue+black")
    assert (p.length_mm, p.width_mm, p.ball_diameter_mm) == (2540, 1270, 52.5)
    assert p.pocket("TL").mouth_mm == 85 and p.pocket("TM").mouth_mm == 95
    assert p.group("blue")[0] == "blu1" and p.group("black")[0] == "bla1"
    for bad, msg in [("2540", "is not of the form"), ("2540x1270,ball=x", "ball must be a number"), ("10x5,size=3", "unknown key 'size'")]:
        with pytest.raises(ProfileError, match=msg):
            profile_from_spec(bad)
    with pytest.raises(ProfileError, match="unknown table profile"):
        resolve_profile("snooker-12ft")


def test_a_profile_that_is_not_a_mapping(tmp_path):
    with pytest.raises(ProfileError, match="the file must be a mapping of fields, got list"):
        load_profile(write(tmp_path, "- 1\n- 2\n"))


def test_a_profile_file_is_parsed_once_and_read_anew_when_it_changes(tmp_path):
    path = tmp_path / "mine.yaml"
    text = builtin_profiles()["ficha"].read_text(encoding="utf-8")
    path.write_text(text, encoding="utf-8")
    first = load_profile(path)
    assert load_profile(path) is first  # immutable: the same text gives the same profile
    path.write_text(text.replace("length_mm: 1420", "length_mm: 1400"), encoding="utf-8")  # same moment, other text
    assert load_profile(path).length_mm == 1400
    path.write_text("name: [", encoding="utf-8")
    with pytest.raises(ProfileError, match="not a readable YAML profile"):
        load_profile(path)
