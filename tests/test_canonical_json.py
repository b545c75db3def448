"""RFC 8785 (JSON Canonicalization Scheme) through thinkseal._core.canonical_json:
key order by UTF-16 code units, ECMAScript number formatting, minimal escaping."""

from __future__ import annotations

import json
import math
import struct

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from thinkseal import ValidationError, _core


def cj(value, root: str = "$") -> str:
    out = _core.canonical_json(value, root)
    assert isinstance(out, bytes)
    return out.decode("utf-8")


def es_number(x: float) -> str:
    """ECMAScript Number::toString(x) (radix 10), the form RFC 8785 adopts.

    Python's repr gives the shortest digits that round-trip, choosing the
    closest (ties to even) as ECMA-262 requires; only the layout differs.
    """
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    mantissa, _, exponent = repr(abs(x)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    n = (len(whole.lstrip("0")) if whole.strip("0") else -(len(fraction) - len(fraction.lstrip("0")))) + int(
        exponent or 0
    )
    digits = digits.rstrip("0")
    k = len(digits)
    if k <= n <= 21:
        text = digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        text = "0." + "0" * -n + digits
    else:
        e = n - 1
        text = digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + ("+" if e >= 0 else "-") + str(abs(e))
    return sign + text


def from_hex(bits: str) -> float:
    return struct.unpack(">d", bytes.fromhex(bits))[0]


# -- numbers ----------------------------------------------------------------------------------

# RFC 8785 Appendix B: IEEE 754 bit patterns and their canonical text.
APPENDIX_B = [
    ("0000000000000000", "0"),
    ("8000000000000000", "0"),
    ("0000000000000001", "5e-324"),
    ("8000000000000001", "-5e-324"),
    ("7fefffffffffffff", "1.7976931348623157e+308"),
    ("ffefffffffffffff", "-1.7976931348623157e+308"),
    ("4340000000000000", "9007199254740992"),
    ("c340000000000000", "-9007199254740992"),
    ("4430000000000000", "295147905179352830000"),
    ("44b52d02c7e14af5", "9.999999999999997e+22"),
    ("44b52d02c7e14af6", "1e+23"),
    ("44b52d02c7e14af7", "1.0000000000000001e+23"),
    ("444b1ae4d6e2ef4e", "999999999999999700000"),
    ("444b1ae4d6e2ef4f", "999999999999999900000"),
    ("444b1ae4d6e2ef50", "1e+21"),
    ("3eb0c6f7a0b5ed8c", "9.999999999999997e-7"),
    ("3eb0c6f7a0b5ed8d", "0.000001"),
    ("41b3de4355555553", "333333333.3333332"),
    ("41b3de4355555554", "333333333.33333325"),
    ("41b3de4355555555", "333333333.3333333"),
    ("41b3de4355555556", "333333333.3333334"),
    ("41b3de4355555557", "333333333.33333343"),
    ("becbf647612f3696", "-0.0000033333333333333333"),
    ("43143ff3c1cb0959", "1424953923781206.2"),
]


@pytest.mark.parametrize(("bits", "expected"), APPENDIX_B)
def test_rfc8785_appendix_b_numbers(bits, expected):
    assert cj(from_hex(bits)) == expected


@pytest.mark.parametrize("bits", ["7fffffffffffffff", "7ff0000000000000", "fff0000000000000", "7ff8000000000000"])
def test_rfc8785_appendix_b_non_finite_is_an_error(bits):
    with pytest.raises(ValidationError) as info:
        cj(from_hex(bits))
    assert info.value.path == "$"


def test_oracle_agrees_with_appendix_b():
    for bits, expected in APPENDIX_B:
        assert es_number(from_hex(bits)) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.0, "0"),
        (-0.0, "0"),
        (1.0, "1"),
        (-1.0, "-1"),
        (1.5, "1.5"),
        (100.0, "100"),
        (0.1, "0.1"),
        (0.1 + 0.2, "0.30000000000000004"),
        (1e20, "100000000000000000000"),
        (1e21, "1e+21"),
        (1.5e21, "1.5e+21"),
        (1e-6, "0.000001"),
        (1.5e-6, "0.0000015"),
        (1e-7, "1e-7"),
        (1.25e-7, "1.25e-7"),
        (123e-20, "1.23e-18"),
        (4.5, "4.5"),
        (2e-3, "0.002"),
        (1e30, "1e+30"),
        (1e-27, "1e-27"),
        (333333333.33333329, "333333333.3333333"),
        (2.0**53, "9007199254740992"),
        (-(2.0**63), "-9223372036854776000"),
    ],
)
def test_ecmascript_number_formatting(value, expected):
    assert cj(value) == expected


@given(st.floats(allow_nan=False, allow_infinity=False))
@example(from_hex("43143ff3c1cb0959"))
@example(1113178120592002.2)
@example(111659285584252.12)
@example(5e-324)
@example(2.2250738585072014e-308)
def test_every_finite_float_formats_as_ecmascript(x):
    assert cj(x) == es_number(x)


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_number_text_round_trips_to_the_same_double(x):
    assert float(cj(x)) == x or (x == 0 and float(cj(x)) == 0)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0, "0"),
        (-0, "0"),
        (7, "7"),
        (-42, "-42"),
        (2**53, "9007199254740992"),
        (2**53 + 1, "9007199254740993"),
        (-(2**63), "-9223372036854775808"),
        (2**64, "18446744073709551616"),
        (10**30 + 1, "1" + "0" * 29 + "1"),
        # From 1e21 on, an int that is exactly a double's shortest decimal is written
        # as that double, so 10**30 and 1e30 (a jsonb round trip apart) agree.
        (10**30, "1e+30"),
        (-(10**21), "-1e+21"),
    ],
)
def test_integers_are_written_exactly(value, expected):
    assert cj(value) == expected


def test_integer_subclasses_write_their_value():
    class Loud(int):
        def __str__(self) -> str:
            return "loud"

        def __repr__(self) -> str:
            return "loud"

    assert cj(Loud(5)) == "5"
    assert cj(Loud(10**25 + 3)) == "1" + "0" * 24 + "3"
    assert cj(Loud(10**25)) == "1e+25"


def test_booleans_and_null_are_literals():
    assert cj(True) == "true"
    assert cj(False) == "false"
    assert cj(None) == "null"
    assert cj([True, 1, 1.0, False, 0]) == "[true,1,1,false,0]"


# -- strings ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("", '""'),
        ("plain", '"plain"'),
        ('"', '"\\""'),
        ("\\", '"\\\\"'),
        ("/", '"/"'),
        ("\b\t\n\f\r", '"\\b\\t\\n\\f\\r"'),
        ("\x00", '"\\u0000"'),
        ("\x01\x0b\x0e\x1f", '"\\u0001\\u000b\\u000e\\u001f"'),
        ("\x7f", '"\x7f"'),
        ("\u0080", '"\u0080"'),
        ("\u2028\u2029", '"\u2028\u2029"'),
        ("\u20ac", '"\u20ac"'),
        ("\U0001f600", '"\U0001f600"'),
        ("\ufeff", '"\ufeff"'),
        ("'<>&", '"\'<>&"'),
    ],
)
def test_minimal_string_escaping(value, expected):
    assert cj(value) == expected


def test_control_escapes_use_lowercase_hex():
    assert cj("\x1a") == '"\\u001a"'
    assert cj("\x0f") == '"\\u000f"'


def test_output_is_utf8():
    assert _core.canonical_json("\u00e9\U0001f600") == b'"\xc3\xa9\xf0\x9f\x98\x80"'


@given(st.text())
def test_strings_round_trip_through_json(s):
    text = cj(s)
    assert json.loads(text) == s
    assert all(ord(c) >= 0x20 for c in text)  # every control character is escaped


# -- objects and arrays ----------------------------------------------------------------------------


def test_rfc8785_key_sorting_example():
    # RFC 8785 section 3.2.3.
    value = {
        "\u20ac": "Euro Sign",
        "\r": "Carriage Return",
        "\ufb33": "Hebrew Letter Dalet With Dagesh",
        "1": "One",
        "\U0001f600": "Emoji: Grinning Face",
        "\u0080": "Control",
        "\u00f6": "Latin Small Letter O With Diaeresis",
    }
    expected = (
        '{"\\r":"Carriage Return","1":"One","\u0080":"Control",'
        '"\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign",'
        '"\U0001f600":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}'
    )
    assert cj(value) == expected


def test_keys_sort_by_utf16_not_code_points():
    # U+E000 < U+1F600 as code points, but 0xE000 > 0xD83D as UTF-16 code units.
    assert cj({"\ue000": 1, "\U0001f600": 2}) == '{"\U0001f600":2,"\ue000":1}'
    assert cj({"\uffff": 1, "\U00010000": 2}) == '{"\U00010000":2,"\uffff":1}'


def test_keys_sort_by_code_units_not_locale():
    assert cj({"b": 1, "B": 2, "a": 3, "A": 4, "_": 5}) == '{"A":4,"B":2,"_":5,"a":3,"b":1}'
    assert cj({"ab": 1, "a": 2, "": 3}) == '{"":3,"a":2,"ab":1}'


def utf16_key(s: str) -> bytes:
    return s.encode("utf-16-be")


@given(st.dictionaries(st.text(max_size=4), st.integers(0, 9), max_size=8))
def test_key_order_property(d):
    out = json.loads(cj(d), object_pairs_hook=lambda pairs: [k for k, _ in pairs])
    assert out == sorted(d, key=utf16_key)


def test_rfc8785_section_3_2_2_example():
    source = (
        '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],'
        ' "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",'
        ' "literals": [null, true, false]}'
    )
    expected = (
        '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],'
        '"string":"\u20ac$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}'
    )
    assert cj(json.loads(source)) == expected


def test_nesting_and_no_whitespace():
    assert cj({"b": [1, {"d": None, "c": []}], "a": {}}) == '{"a":{},"b":[1,{"c":[],"d":null}]}'
    assert cj([]) == "[]"
    assert cj({}) == "{}"


def test_tuples_are_arrays():
    assert cj((1, (2, "x"))) == cj([1, [2, "x"]]) == '[1,[2,"x"]]'


def test_key_order_of_input_is_irrelevant():
    a = {"x": 1, "y": {"p": 1, "q": 2}}
    b = {"y": {"q": 2, "p": 1}, "x": 1}
    assert cj(a) == cj(b)


# -- errors name the path ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "path"),
    [
        (float("nan"), "$"),
        ({"a": float("inf")}, "$.a"),
        ({"a": [1, {"b": -math.inf}]}, "$.a[1].b"),
        ({"a b": [float("nan")]}, '$["a b"][0]'),
        ({"x": {1: 2}}, "$.x"),
        ({"x": {None: 2}}, "$.x"),
        ([{"k": {1, 2}}], "$[0].k"),
        ({"k": b"bytes"}, "$.k"),
        ({"k": object()}, "$.k"),
        ({"k": "\ud800"}, "$.k"),
    ],
)
def test_errors_name_the_path(value, path):
    with pytest.raises(ValidationError) as info:
        cj(value)
    assert info.value.path == path
    assert path in str(info.value)


def test_root_names_the_path():
    with pytest.raises(ValidationError) as info:
        cj({"a": [float("nan")]}, "ToolCall.arguments")
    assert info.value.path == "ToolCall.arguments.a[0]"
