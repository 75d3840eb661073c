"""JavaScript value semantics: number formatting, String(), truthiness, JSON layout (spec §1)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lobster_tui.core.jsvalues import (
    UNDEFINED,
    dumps_compact,
    dumps_pretty,
    js_number_str,
    js_string,
    js_to_number,
    js_truthy,
    stable_stringify,
)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.0, "1"), (0.1, "0.1"), (1e21, "1e+21"), (1e-7, "1e-7"), (1.5e-7, "1.5e-7"), (0.000001, "0.000001"),
        (1e16, "10000000000000000"), (1e20, "100000000000000000000"), (2.5e25, "2.5e+25"), (-1e-7, "-1e-7"),
        (123456789012345678901, "123456789012345680000"), (2**53 + 2, "9007199254740994"), (-0.0, "0"),
        (5e-324, "5e-324"), (1.7976931348623157e308, "1.7976931348623157e+308"),
    ],
)
def test_numbers_print_like_javascript(value: float, text: str) -> None:
    assert js_number_str(value) == text


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_number_text_round_trips(value: float) -> None:
    assert float(js_number_str(value)) == value


def test_string_coercion() -> None:
    assert js_string([1, None, [2, 3]]) == "1,,2,3"
    assert js_string({"a": 1}) == "[object Object]"
    assert [js_string(v) for v in (True, None, UNDEFINED, 2.0)] == ["true", "null", "undefined", "2"]


def test_truthiness_and_number_conversion() -> None:
    assert [js_truthy(v) for v in ("false", "0", [], {}, "", 0, None, UNDEFINED)] == [True] * 4 + [False] * 4
    assert js_to_number(" 0x1f ") == 31 and js_to_number("") == 0 and js_to_number(None) == 0
    assert math.isnan(js_to_number("1_0")) and math.isnan(js_to_number("inf"))


def test_json_layout() -> None:
    assert dumps_pretty({"a": [], "b": {}, "c": [1.0, "é"], "u": UNDEFINED}) == '{\n  "a": [],\n  "b": {},\n  "c": [\n    1,\n    "é"\n  ]\n}'
    assert dumps_compact([UNDEFINED, math.nan, 1e-7]) == "[null,null,1e-7]"
    assert stable_stringify({"b": 1, "a": {"d": 1, "c": 2}}) == '{"a":{"c":2,"d":1},"b":1}'
