"""arena.match.jsontext: orjson where the arena reads and writes much JSON, with the standard
library's ``json`` as the reference: the same values read, the same text written (but for the
digits of a float), and every text orjson refuses left to ``json``."""

from __future__ import annotations

import json
import math

import pytest

from arena.match.jsontext import ascii_dumps, loads

TEXTS = [
    '{"seed": 18446744073709551615, "low": -9223372036854775808, "x": [1, 2.5, -0.0, null, true]}',
    '{"a": 1, "a": 2}',  # the last of a repeated key, both ways
    '"\\u00e9\\ud83d\\ude00 \\u2028"',
    " [1] ",
    "1E2",
    "0.1e-5",
    # What orjson refuses and json reads: left to json.
    "NaN",
    "[Infinity, -Infinity]",
    "1e400",
    '"\\ud800 a lone surrogate"',
]


@pytest.mark.parametrize("text", TEXTS)
def test_loads_reads_what_json_reads(text: str):
    got, want = loads(text), json.loads(text)
    assert repr(got) == repr(want)  # repr: nan == nan is false, and -0.0 == 0.0 is true
    assert type(got) is type(want)


@pytest.mark.parametrize("text", ["[1] x", "\ufeff{}", "{", "", "[" * 5000 + "]" * 5000])
def test_what_neither_reads_raises_what_json_raises(text: str):
    with pytest.raises((ValueError, RecursionError)) as ours:
        loads(text)
    with pytest.raises((ValueError, RecursionError)) as theirs:
        json.loads(text)
    assert type(ours.value) is type(theirs.value)


def test_the_one_difference_an_integer_beyond_64_bits():
    assert json.loads(str(2**70)) == 2**70
    assert loads(str(2**70)) == float(2**70)  # why the store's reader of records refuses either one


DATA = [
    {"name": "é\x7f\U0001f600 <b>&amp;</b> \u2028\u2029", "list": [1, None, True, False, "x"]},
    "\ud800 a lone surrogate <",  # orjson refuses it: json writes it
    {1: "a key that is not a string", None: 2},  # orjson refuses it: json writes it
    [2**70, -(2**70)],  # beyond 64 bits: json writes it
    "g1 & g2",
    "\x00\x01\x1b[31m",
    {"nested": {"deep": [[["\u00e9"]]]}},
    # Runs of characters beyond ASCII, between ASCII and at either end: each escaped in place.
    "\u00e9\u20ac\U0001f600x\x7f\x7f\u00b7 \U0010ffff\u00e9",
]


@pytest.mark.parametrize("data", DATA)
def test_ascii_dumps_writes_the_text_json_writes(data: object):
    want = json.dumps(data, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    for char in "<>&":
        want = want.replace(char, f"\\u{ord(char):04x}")
    assert ascii_dumps(data, escaped="<>&") == want
    assert ascii_dumps(data) == json.dumps(data, ensure_ascii=True, separators=(",", ":"))


def test_floats_keep_their_values():
    floats = [1e-05, 1e16, 0.1, 1e22, 5e-324, 123456789.123, -0.0, 2.5]
    text = ascii_dumps(floats)
    back = json.loads(text)
    assert [repr(x) for x in back] == [repr(x) for x in floats]
    assert text.isascii()


def test_a_float_that_is_not_finite_is_the_callers_to_keep_out():
    assert ascii_dumps([math.inf]) == "[null]"  # orjson's way; json would raise
    with pytest.raises(ValueError):  # where json writes the rest, it raises as before
        ascii_dumps(["\ud800", math.nan])
