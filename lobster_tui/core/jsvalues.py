"""JavaScript value semantics that leak into Lobster's observable behaviour (spec §1).

The reference runtime is JavaScript, so its JSON output, string coercion and truthiness are
JavaScript's. Everything that prints or compares values goes through these helpers so that both
runtimes produce the same bytes (R-GEN-1..7).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any


class _Undefined:
    """JavaScript ``undefined``: distinct from ``None`` (``null``); omitted from JSON objects."""

    _instance: _Undefined | None = None

    def __new__(cls) -> _Undefined:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "undefined"

    def __bool__(self) -> bool:
        return False


UNDEFINED: Any = _Undefined()

_MAX_SAFE_INT = 2**53


def js_number_str(x: int | float) -> str:
    """Format a number the way JavaScript's ``String(x)`` / ``JSON.stringify`` does (R-GEN-2)."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        if -_MAX_SAFE_INT < x < _MAX_SAFE_INT:
            return str(x)
        x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "0"
    if x.is_integer() and abs(x) < _MAX_SAFE_INT:
        return str(int(x))
    sign = "-" if x < 0 else ""
    # repr gives the shortest round-tripping digits, as JS does; only the layout differs.
    mantissa, _, exp_text = repr(abs(x)).partition("e")
    int_part, _, frac_part = mantissa.partition(".")
    digits = (int_part + frac_part).lstrip("0")
    point = len(int_part) + (int(exp_text) if exp_text else 0)
    if int_part == "0":
        # 0.000123 -> digits "123", decimal point moves left past the leading zeros of frac
        stripped = frac_part.lstrip("0")
        point = -(len(frac_part) - len(stripped)) + (int(exp_text) if exp_text else 0)
        digits = stripped
    digits = digits.rstrip("0") or "0"
    k = len(digits)
    n = point
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    exponent = n - 1
    exp_sign = "+" if exponent >= 0 else "-"
    body = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{sign}{body}e{exp_sign}{abs(exponent)}"


def js_string(value: Any) -> str:
    """JavaScript ``String(value)`` (R-GEN-6)."""
    if value is UNDEFINED:
        return "undefined"
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return js_number_str(value)
    if isinstance(value, list):
        return ",".join("" if v is None or v is UNDEFINED else js_string(v) for v in value)
    return "[object Object]"


def js_truthy(value: Any) -> bool:
    """JavaScript truthiness (R-GEN-7): ``"false"``, ``[]`` and ``{}`` are truthy."""
    if value is None or value is UNDEFINED or value is False:
        return False
    if value is True:
        return True
    if isinstance(value, (int, float)):
        return not (value == 0 or (isinstance(value, float) and math.isnan(value)))
    if isinstance(value, str):
        return value != ""
    return True


def js_to_number(value: Any) -> float | int:
    """JavaScript ``Number(value)`` for JSON values; returns ``math.nan`` where JS gives NaN."""
    if value is None:
        return 0
    if value is UNDEFINED:
        return math.nan
    if value is True:
        return 1
    if value is False:
        return 0
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str):
        return _string_to_number(value)
    if isinstance(value, list):
        return _string_to_number(js_string(value))
    return math.nan


# JavaScript's WhiteSpace and LineTerminator set, as String.prototype.trim() and Number() use it.
JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_RADIX_LITERAL = re.compile(r"0([xX][0-9a-fA-F]+|[oO][0-7]+|[bB][01]+)")
_ARRAY_INDEX = re.compile(r"0|[1-9][0-9]*")
_MAX_ARRAY_INDEX = 2**32 - 2
_INDEX_KEY_IN_TEXT = re.compile(r'"(?:0|[1-9][0-9]*)"\s*:')


def _string_to_number(text: str) -> float | int:
    s = text.strip(JS_WHITESPACE)
    if s == "":
        return 0
    if _RADIX_LITERAL.fullmatch(s):
        return int(s[2:], {"x": 16, "o": 8, "b": 2}[s[1].lower()])
    if s in ("Infinity", "+Infinity"):
        return math.inf
    if s == "-Infinity":
        return -math.inf
    # Python accepts things JS does not ("inf", "nan", "1_0"); reject them first.
    if any(c not in "0123456789+-.eE" for c in s):
        return math.nan
    try:
        number = float(s)
    except ValueError:
        return math.nan
    return int(number) if number.is_integer() and abs(number) < _MAX_SAFE_INT else number


def is_plain_object(value: Any) -> bool:
    """True for a JSON object (dict); JS plain-object tests exclude arrays and null."""
    return isinstance(value, dict)


def _normalise(value: Any, in_array: bool = False) -> tuple[Any, bool]:
    """Return a JSON-ready copy and whether some number needs JS-specific formatting."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value, False
    if value is UNDEFINED:
        return None, False
    if isinstance(value, int):
        return value, not (-_MAX_SAFE_INT < value < _MAX_SAFE_INT)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return None, False
        if value.is_integer() and abs(value) < 1e16:
            return int(value), False
        return value, True
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        special = False
        for key, item in value.items():
            if item is UNDEFINED:
                continue
            norm, flag = _normalise(item)
            out[str(key)] = norm
            special = special or flag
        return out, special
    if isinstance(value, (list, tuple)):
        items = []
        special = False
        for item in value:
            norm, flag = _normalise(item, True)
            items.append(norm)
            special = special or flag
        return items, special
    raise TypeError(f"value of type {type(value).__name__} is not JSON-serialisable")


def _encode_custom(value: Any, indent: int | None, level: int) -> str:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (int, float)):
        return js_number_str(value)
    pad = "" if indent is None else "\n" + " " * (indent * (level + 1))
    end = "" if indent is None else "\n" + " " * (indent * level)
    colon = ":" if indent is None else ": "
    if isinstance(value, dict):
        if not value:
            return "{}"
        members = [
            pad + json.dumps(k, ensure_ascii=False) + colon + _encode_custom(v, indent, level + 1)
            for k, v in value.items()
        ]
        return "{" + ",".join(members) + end + "}"
    if not value:
        return "[]"
    return "[" + ",".join(pad + _encode_custom(v, indent, level + 1) for v in value) + end + "]"


def dumps_pretty(value: Any) -> str:
    """``JSON.stringify(value, null, 2)`` (R-GEN-1), without the trailing newline."""
    norm, special = _normalise(value)
    if not special:
        return json.dumps(norm, indent=2, ensure_ascii=False)
    return _encode_custom(norm, 2, 0)


def dumps_compact(value: Any) -> str:
    """``JSON.stringify(value)`` (R-GEN-3)."""
    norm, special = _normalise(value)
    if not special:
        return json.dumps(norm, separators=(",", ":"), ensure_ascii=False)
    return _encode_custom(norm, None, 0)


def _sorted_keys(value: Any) -> Any:
    if isinstance(value, dict):
        # JS sorts by UTF-16 code units; for BMP keys this is Python's code point order.
        return {k: _sorted_keys(value[k]) for k in sorted(value, key=_utf16_key) if value[k] is not UNDEFINED}
    if isinstance(value, (list, tuple)):
        return [_sorted_keys(v) for v in value]
    return value


def _utf16_key(text: str) -> bytes:
    return text.encode("utf-16-be", "surrogatepass")


def stable_stringify(value: Any) -> str:
    """Compact JSON with object keys sorted recursively (R-GEN-5)."""
    return dumps_compact(_sorted_keys(value))


def js_trim(text: str) -> str:
    """JavaScript ``text.trim()``."""
    return text.strip(JS_WHITESPACE)


def is_array_index(key: str) -> bool:
    """True for keys a JavaScript object enumerates first, in numeric order (``"0"``, ``"42"``)."""
    return bool(_ARRAY_INDEX.fullmatch(key)) and int(key) <= _MAX_ARRAY_INDEX


def js_key_order(pairs: Any) -> dict[str, Any]:
    """A dict with JavaScript's own-key order: array-index keys ascending, then the rest in order."""
    items = list(pairs.items() if isinstance(pairs, dict) else pairs)
    index_keys = sorted((key for key, _ in items if is_array_index(key)), key=int)
    if not index_keys:
        return dict(items)
    ordered: dict[str, Any] = dict.fromkeys(index_keys)
    ordered.update(items)
    return ordered


def _reject_constant(constant: str) -> Any:
    raise ValueError(f"Unexpected token {constant[0]} in JSON")


def loads(text: str) -> Any:
    """Parse JSON text as JavaScript's ``JSON.parse`` would.

    NaN/Infinity literals are rejected, and objects enumerate number-like keys first, as JavaScript
    objects do (``{"k":1,"2":1}`` re-serialises as ``{"2":1,"k":1}``). The key-order hook costs a
    Python call per object, so it only runs when the text has a number-like key at all.
    """
    if _INDEX_KEY_IN_TEXT.search(text):
        return json.loads(text, parse_constant=_reject_constant, object_pairs_hook=js_key_order)
    return json.loads(text, parse_constant=_reject_constant)


def js_typeof(value: Any) -> str:
    """JavaScript ``typeof`` for JSON values (``null`` is ``"object"``)."""
    if value is UNDEFINED:
        return "undefined"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "object"
