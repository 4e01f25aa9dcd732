"""The event-log parser under random logs: every well-formed log (any kind of event, any times in order,
any finite numbers, any ids) is read back as written (to the log's precision: a micrometre, a
microsecond), and a damaged one (a line cut, a field dropped
or given any JSON value, lines swapped, junk) is either still a log or refused with an EventLogError
naming its line: never another exception."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz._profile import fuzz
from tests.test_events import EXAMPLES
from tracking.events import EventLogError, LogHeader, dumps_events, parse_events

ids = st.from_regex(r"[A-Za-z0-9_]{1,8}", fullmatch=True)
mm = st.floats(-5000, 5000, allow_nan=False)
xy = st.tuples(mm, mm)
GAMES = ("ficha", "brasileira", "bar-billiards")


@st.composite
def events(draw, t_s: float):
    """One event of any kind, its fields drawn at random within the contract."""
    e = draw(st.sampled_from(EXAMPLES))
    fields = {f.name for f in dataclasses.fields(e)}
    change = {"t_s": t_s}
    if "confidence" in fields:
        change["confidence"] = draw(st.floats(0, 1))
    if "xy_mm" in fields:
        change["xy_mm"] = draw(st.none() | xy)
    for name in ("ball", "a", "pocket", "cushion", "player", "pin"):
        if name in fields and draw(st.booleans()):
            change[name] = draw(ids)
    if "b" in fields:
        change["b"] = draw(ids.filter(lambda b: b != change.get("a", e.a)))
    if "positions" in fields:
        change["positions"] = draw(st.dictionaries(ids, xy, max_size=8))
    if "until_s" in fields:
        change["until_s"] = t_s + draw(st.floats(0, 60))
    return dataclasses.replace(e, **change)


@st.composite
def logs(draw):
    times = sorted(draw(st.lists(st.floats(0, 1e5), min_size=1, max_size=30)))
    header = draw(st.none() | st.builds(LogHeader, game=st.sampled_from(GAMES), players=st.lists(ids, min_size=1, max_size=4).map(tuple)))
    return header, [draw(events(round(t, 6))) for t in times]


def close(a, b) -> bool:
    """Equal, numbers to the log's precision (six decimals)."""
    if isinstance(a, float):
        return abs(a - b) <= 5e-7
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(map(close, a, b))
    if isinstance(a, Mapping):
        return a.keys() == b.keys() and all(close(a[k], b[k]) for k in a)
    return a == b


@fuzz("logs")
@given(logs())
def test_a_well_formed_log_is_read_back_as_written(log):
    header, written = log
    back_header, back = parse_events(dumps_events(written, header).splitlines(), "fuzz.jsonl")
    assert back_header == header and len(back) == len(written)
    for e, b in zip(written, back):
        assert type(b) is type(e) and all(close(getattr(e, f.name), getattr(b, f.name)) for f in dataclasses.fields(e)), (e, b)
    text = dumps_events(back, back_header)
    assert parse_events(text.splitlines()) == (back_header, back)  # once read, written and read again: the same log


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                    max_leaves=8)


@fuzz("damaged logs")
@given(logs(), st.data())
def test_a_damaged_log_is_read_or_refused_with_its_line(log, data):
    header, written = log
    lines = dumps_events(written, header).splitlines()
    n = data.draw(st.integers(0, len(lines) - 1), label="line")
    how = data.draw(st.sampled_from(["cut", "drop", "value", "swap", "junk"]), label="damage")
    record = json.loads(lines[n])
    if how == "cut":
        lines[n] = lines[n][: data.draw(st.integers(0, len(lines[n]) - 1))]
    elif how == "drop":
        record.pop(data.draw(st.sampled_from(sorted(record))))
        lines[n] = json.dumps(record)
    elif how == "value":
        record[data.draw(st.sampled_from(sorted(record)))] = data.draw(JSON)
        lines[n] = json.dumps(record)
    elif how == "swap" and len(lines) > 1:
        m = data.draw(st.integers(0, len(lines) - 1))
        lines[n], lines[m] = lines[m], lines[n]
    else:
        lines.insert(n, data.draw(st.text(max_size=40)))
    try:
        parse_events(lines, "fuzz.jsonl")
    except EventLogError as e:
        assert "fuzz.jsonl, line " in str(e) and "\n" not in str(e), str(e)
