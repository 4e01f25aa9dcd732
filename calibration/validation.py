"""Declared validation for every file cueref reads, with one-line messages.

Table profiles, CAL.json, the event log and match scripts each declare their fields once as pydantic
v2 models: types, ranges, finiteness (``allow_inf_nan=False``: NaN and infinities are refused) and
unknown fields refused. This module holds what they share: the base configuration, the common field
types and :func:`one_line`, which turns pydantic's multi-line :class:`~pydantic.ValidationError`
into one readable line naming the field (``field 'balls[2].colour' must be a string, got 7``); each
reader wraps that line in its own error type with the file and line.

It lives in the lowest layer so that every layer can use it, and imports neither NumPy nor OpenCV
(the rules engines import the event log, which imports this).
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Mapping

from pydantic import AfterValidator, ConfigDict, Strict, StringConstraints, ValidationError, WrapValidator
from pydantic_core import PydanticCustomError

__all__ = [
    "STRICT",
    "Number",
    "Text",
    "JsonData",
    "pair",
    "PointMm",
    "problem",
    "named_problem",
    "path_text",
    "shorten",
    "one_line",
]

# Every model: unknown fields refused, every number finite.
STRICT = ConfigDict(extra="forbid", allow_inf_nan=False)

# A number as a file writes it: an int or a float (never true/false, never the string "1.5").
Number = Annotated[float, Strict()]
# A name or an id: a non-empty string.
Text = Annotated[str, Strict(), StringConstraints(min_length=1)]

_NAMED = "cueref_named"  # a problem whose message already names what is wrong (no "field ..." prefix)
_PLAIN = "cueref"  # a problem whose message says what is wrong with the field it is found at


def problem(what: str) -> PydanticCustomError:
    """Raise this from a validator: ``what`` says what is wrong (``"must be a colour name"``); the
    message gains the field's name where it is read."""
    return PydanticCustomError(_PLAIN, what)  # no context: pydantic leaves the text as it is


def named_problem(message: str) -> PydanticCustomError:
    """Raise this from a validator whose message names the field itself (``"t_s must not be negative"``)."""
    return PydanticCustomError(_NAMED, message)


def _all_finite(value: Any, where: str = "") -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        raise problem(f"must hold finite numbers only: {where} is {value!r}" if where else f"must be a finite number, got {value!r}")
    if isinstance(value, Mapping):
        for k, v in value.items():
            _all_finite(v, f"{where}.{k}" if where else str(k))
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _all_finite(v, f"{where}[{i}]")
    return value


# Free-form data (rules options, a calibration's residuals): any JSON value whose numbers are finite.
JsonData = Annotated[Any, AfterValidator(_all_finite)]


def pair(form: str) -> Any:
    """The type of two finite numbers written as a list (``pair("[x_mm, y_mm]")``): a value that is
    not one is refused as a whole (``must be [x_mm, y_mm] (two finite numbers), got [nan, 405]``)."""

    def whole(value: Any, handler: Any) -> tuple[float, float]:
        try:
            return handler(value)
        except ValidationError:
            raise problem(f"must be {form} (two finite numbers), got {shorten(value)}") from None

    return Annotated[tuple[Number, Number], WrapValidator(whole)]


# A point on the table: two finite millimetres.
PointMm = pair("[x_mm, y_mm]")


def path_text(loc: tuple[Any, ...]) -> str:
    """``('balls', 2, 'colour')`` -> ``balls[2].colour``; a key that is not printable text as it
    would be written in Python (``pins['\\n']``: a message stays on one line)."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not str(part).isprintable():
            out += f"[{_key_text(part)}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _key_text(key: Any) -> str:
    """A mapping's key as a message names it: as it is, or as Python writes it if not printable."""
    text = str(key)
    return text if text.isprintable() else repr(text)


def shorten(value: Any, limit: int = 60) -> str:
    """``repr(value)``, cut to ``limit`` characters (a message quotes what it refuses, not all of it)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _either(choices: str) -> str:
    """``"'a', 'b', 'c'"`` -> ``"'a', 'b' or 'c'"``."""
    head, _, last = choices.rpartition(", ")
    return f"{head} or {last}" if head else last


_WHAT = {
    "float_type": "must be a number",
    "float_parsing": "must be a number",
    "int_type": "must be a whole number",
    "int_parsing": "must be a whole number",
    "int_from_float": "must be a whole number",
    "finite_number": "must be a finite number",
    "string_type": "must be a string",
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
    "list_type": "must be a list",
    "tuple_type": "must be a list",
    "dict_type": "must be a mapping",
    "mapping_type": "must be a mapping",
    "model_type": "must be a mapping of fields",
    "model_attributes_type": "must be a mapping of fields",
    "dataclass_type": "must be a mapping of fields",
    "dataclass_args_type": "must be a mapping of fields",
}


def _what(err: Mapping[str, Any]) -> str:
    """What is wrong, in cueref's words (``must be positive, got -3``)."""
    kind, ctx, got = err["type"], err.get("ctx") or {}, shorten(err.get("input"))
    if kind == _PLAIN:
        return err["msg"]
    if kind == "greater_than":
        what = "must be positive" if ctx["gt"] == 0 else f"must be more than {ctx['gt']:g}"
    elif kind == "greater_than_equal":
        what = "must be zero or more" if ctx["ge"] == 0 else f"must be at least {ctx['ge']:g}"
    elif kind == "less_than":
        what = f"must be less than {ctx['lt']:g}"
    elif kind == "less_than_equal":
        what = f"must be at most {ctx['le']:g}"
    elif kind == "string_too_short":
        what = "must be a non-empty string"
    elif kind == "literal_error":
        what = f"must be {_either(ctx['expected'])}"
    elif kind == "too_short":
        what = f"must have at least {ctx['min_length']} item(s)"
    elif kind == "too_long":
        what = f"must have at most {ctx['max_length']} item(s)"
    else:
        what = _WHAT.get(kind) or err["msg"][:1].lower() + err["msg"][1:]
    return f"{what}, got {got}"


def one_line(
    error: ValidationError,
    *,
    skip: int = 0,
    field: str = "field '{path}' {what}",
    missing: str = "field '{path}' is missing",
    unknown: str = "unknown field(s) {paths}",
    general: str = "{at}{what}",
) -> str:
    """The first problem of a validation error as one line.

    Unknown fields come first (every unknown field of the same mapping, named together), then the
    first other problem. ``skip`` drops leading parts of the location (a discriminated union's tag).
    The templates word the message: ``{path}`` is the field (``balls[2].colour``), ``{at}`` the same
    followed by ``": "`` (empty at the top), ``{what}`` what is wrong; for unknown fields ``{path}``
    is the mapping holding them, ``{names}`` their names and ``{paths}`` their quoted full paths;
    ``general`` words a problem of a whole record (a validator's ValueError, a wrong type at the top).
    A message that names its field itself (:func:`named_problem`) is used as it is.
    """
    errors = error.errors(include_url=False)
    extra = [e for e in errors if e["type"] in ("extra_forbidden", "unexpected_keyword_argument")]
    if extra:
        parent = tuple(extra[0]["loc"][skip:-1])
        keys = [_key_text(e["loc"][-1]) for e in extra if tuple(e["loc"][skip:-1]) == parent]
        return unknown.format(
            path=path_text(parent), at=_at(parent), names=", ".join(keys),
            paths=", ".join(repr(path_text(parent + (k,))) for k in keys),
        )
    err = errors[0]
    loc = tuple(err["loc"][skip:])
    if err["type"] == _NAMED:
        return err["msg"]
    if err["type"] in ("union_tag_invalid", "union_tag_not_found"):  # the field naming the kind of record
        ctx = err["ctx"]
        loc += (ctx["discriminator"].strip("'"),)
        if err["type"] == "union_tag_not_found":
            return missing.format(path=path_text(loc), at=_at(loc))
        given = err["input"].get(loc[-1]) if isinstance(err["input"], Mapping) else ctx["tag"]
        return field.format(path=path_text(loc), at=_at(loc), what=f"must be {_either(ctx['expected_tags'])}, got {shorten(given)}")
    if loc[-1:] == ("[key]",):  # a mapping's key, not its value, is wrong
        return field.format(path=path_text(loc[:-2]), at=_at(loc[:-2]), what=f"has a key {loc[-2]!r} that {_what(err)}")
    if err["type"] == "missing":
        return missing.format(path=path_text(loc), at=_at(loc))
    if err["type"] == "value_error":  # a ValueError raised by a validator: its message, at its place
        return general.format(what=str((err.get("ctx") or {}).get("error", err["msg"])), path=path_text(loc), at=_at(loc))
    if not loc:
        return general.format(what=_what(err), path="", at="")
    return field.format(path=path_text(loc), at=_at(loc), what=_what(err))


def _at(loc: tuple[Any, ...]) -> str:
    return f"{path_text(loc)}: " if loc else ""
