"""Data-shaping commands: ``where``, ``pick``, ``head``, ``map``, ``sort``, ``dedupe``, ``groupBy``.

Spec §5.4-§5.12. These commands run on JSON values with JavaScript semantics (loose ``==``,
``Number()`` coercion, member access where a string has a ``length``), because the reference runtime
does and pipelines must filter the same items under both. The JS helpers used by ``template`` and
``table`` live here too.

Items may contain :data:`UNDEFINED` (``map --unwrap`` of a missing member yields it, as in the
reference); objects built here may hold ``UNDEFINED`` values, which JSON output omits.
"""

from __future__ import annotations

import functools
import math
import operator
import re
from collections.abc import Callable
from typing import Any

from ...errors import LobsterRuntimeError
from ...jsvalues import UNDEFINED, dumps_compact, js_string, js_to_number, js_truthy
from ...records import record
from ..base import CommandContext, CommandResult, command, positionals
from ..parser import JS_WHITESPACE, is_array_index, js_key_order, js_trim

_POSITIONALS_SCHEMA: dict[str, Any] = {"type": "array", "items": {"type": "string"}}
# JavaScript regex classes: `\s` is the trim set; `.` (without the s flag) stops at line terminators.
JS_SPACE_CLASS = "[" + re.escape(JS_WHITESPACE) + "]"
_JS_DOT = "[^\n\r\u2028\u2029]"
_RADIX_LITERAL = re.compile(r"0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+")
_PLACEHOLDER = re.compile(r"\{\{" + JS_SPACE_CLASS + r"*([^}]+?)" + JS_SPACE_CLASS + r"*\}\}")


# -- JavaScript value helpers -------------------------------------------------------------------


def is_nullish(value: Any) -> bool:
    """``value == null`` in JavaScript: ``null`` or ``undefined``."""
    return value is None or value is UNDEFINED


def is_number(value: Any) -> bool:
    """``typeof value === "number"`` (booleans are not numbers)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def js_number(value: Any) -> int | float:
    """JavaScript ``Number(value)``; ``math.nan`` where JS gives ``NaN``."""
    if isinstance(value, str):
        text = js_trim(value)
        # jsvalues' parser leans on int()/float(), which also accept "1_0" and "0x 1"; JS does not.
        if "_" in text or any(char in JS_WHITESPACE for char in text):
            return math.nan
        if text[:2].lower() in ("0x", "0o", "0b") and not _RADIX_LITERAL.fullmatch(text):
            return math.nan
        return js_to_number(text)
    if isinstance(value, list):
        return js_number(js_string(value))
    return js_to_number(value)


def is_nan(number: int | float) -> bool:
    """True for a float NaN."""
    return isinstance(number, float) and math.isnan(number)


def utf16_len(text: str) -> int:
    """JavaScript ``text.length`` (UTF-16 code units, R-GEN-10)."""
    return len(text) if text.isascii() else len(utf16_units(text)) // 2


def utf16_units(text: str) -> bytes:
    """The UTF-16 code units of ``text`` as big-endian bytes; bytewise order = JS string order."""
    return text.encode("utf-16-be", "surrogatepass")


def utf16_slice(text: str, end: int) -> str:
    """JavaScript ``text.slice(0, end)`` (negative ``end`` counts from the end)."""
    if text.isascii():
        return text[:end]
    units = utf16_units(text)
    count = len(units) // 2
    stop = max(count + end, 0) if end < 0 else min(end, count)
    return units[: stop * 2].decode("utf-16-be", "surrogatepass")


def member(value: Any, key: str) -> Any:
    """JavaScript ``value[key]`` for JSON values (own members only; ``length`` of arrays/strings)."""
    if isinstance(value, dict):
        return value.get(key, UNDEFINED)
    if isinstance(value, list):
        if key == "length":
            return len(value)
        if is_array_index(key) and int(key) < len(value):
            return value[int(key)]
        return UNDEFINED
    if isinstance(value, str):
        if key == "length":
            return utf16_len(value)
        if is_array_index(key) and int(key) < utf16_len(value):
            index = int(key)
            return utf16_units(value)[index * 2 : index * 2 + 2].decode("utf-16-be", "surrogatepass")
    return UNDEFINED


def get_path(item: Any, path: str) -> Any:
    """Dot-path lookup of sort/dedupe/groupBy/map/template: empty segments are skipped, member
    access continues through strings (``name.length``) and stops with ``undefined`` at nullish."""
    value = item
    for segment in path.split("."):
        if not segment:
            continue
        if is_nullish(value):
            return UNDEFINED
        value = member(value, segment)
    return value


def compact_text(value: Any) -> str:
    """How ``map`` and ``template`` print a value: nullish → ``""``, strings raw, else compact JSON."""
    if is_nullish(value):
        return ""
    if isinstance(value, str):
        return value
    return dumps_compact(value)


def render_placeholders(text: str, replace: Callable[[str], str]) -> str:
    """Replace each ``{{ expr }}`` of ``text`` with ``replace(expr)`` (expr cannot contain ``}``)."""
    return _PLACEHOLDER.sub(lambda match: replace(match.group(1)), text)


def lookup_expression(item: Any, path: str) -> Any:
    """A placeholder path: ``.``/``this`` is the item itself, anything else a dot path."""
    path = js_trim(path)
    if path in (".", "this"):
        return item
    return get_path(item, path)


def string_flag(args: dict[str, Any], name: str) -> str | None:
    """A flag's value when it is a non-empty string; a bare ``--flag`` (``True``) or ``--flag=``
    counts as absent, as in the reference for --key/--wrap/--unwrap/--text/--file."""
    value = args.get(name)
    return value if isinstance(value, str) and value else None


def single_or_list(items: list[Any]) -> Any:
    """The value ``state.set``/``diff.last`` store: the one item, else the array of items."""
    return items[0] if len(items) == 1 else list(items)


# -- where ----------------------------------------------------------------------------------------

_WHERE_EXPRESSION = re.compile(
    rf"([a-zA-Z0-9_.]+){JS_SPACE_CLASS}*(==|=|!=|<=|>=|<|>){JS_SPACE_CLASS}*({_JS_DOT}+)"
)
_WHERE_LITERALS: dict[str, Any] = {"true": True, "false": False, "null": None}


def _where_literal(text: str) -> Any:
    """R-CMD-WHERE-2: true/false/null, else a JS number literal, else the raw string."""
    if text in _WHERE_LITERALS:
        return _WHERE_LITERALS[text]
    if js_trim(text):
        number = js_number(text)
        if not is_nan(number):
            return number
    return text


def _where_left(item: Any, path: str) -> Any:
    """R-CMD-WHERE-3: every segment counts (no skipping) and only objects/arrays have members."""
    value = item
    for segment in path.split("."):
        if not isinstance(value, (dict, list)):
            return UNDEFINED
        value = member(value, segment)
    return value


def _js_type(value: Any) -> str:
    if value is UNDEFINED:
        return "undefined"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if is_number(value):
        return "number"
    if isinstance(value, str):
        return "string"
    return "object"


def _to_primitive(value: Any) -> Any:
    """ToPrimitive for JSON values: arrays become their String form, objects "[object Object]"."""
    return js_string(value) if isinstance(value, (dict, list)) else value


def loose_equals(left: Any, right: Any) -> bool:
    """JavaScript ``left == right`` (IsLooselyEqual) for JSON values."""
    left_type, right_type = _js_type(left), _js_type(right)
    if left_type == right_type:
        return left is right if left_type == "object" else bool(left == right)
    nullish = ("undefined", "null")
    if left_type in nullish or right_type in nullish:
        return left_type in nullish and right_type in nullish
    if left_type == "boolean":
        return loose_equals(js_number(left), right)
    if right_type == "boolean":
        return loose_equals(left, js_number(right))
    if left_type == "object":
        return loose_equals(_to_primitive(left), right)
    if right_type == "object":
        return loose_equals(left, _to_primitive(right))
    # One number, one string: the string converts.
    return bool(js_number(left) == js_number(right))


_RELATIONS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def _relational(left: Any, right: Any, op: str) -> bool:
    """JavaScript ``<``/``<=``/``>``/``>=``: strings compare by code units, else as numbers; NaN is false."""
    left, right = _to_primitive(left), _to_primitive(right)
    if isinstance(left, str) and isinstance(right, str):
        a: Any = utf16_units(left)
        b: Any = utf16_units(right)
    else:
        a, b = js_number(left), js_number(right)
        if is_nan(a) or is_nan(b):
            return False
    return bool(_RELATIONS[op](a, b))


def _where_matches(value: Any, op: str, literal: Any) -> bool:
    if op in ("==", "="):
        return loose_equals(value, literal)
    if op == "!=":
        return not loose_equals(value, literal)
    return _relational(value, literal, op)


@command(
    "where",
    description="Filter items by a simple comparison (JavaScript loose semantics)",
    args_schema={
        "type": "object",
        "properties": {
            "_": {**_POSITIONALS_SCHEMA, "description": "One expression: field==value, n>=3, a.b!=null"},
        },
        "required": ["_"],
    },
    examples=["where status==open", "where 'minutes >= 30'"],
)
def where_command(items: list[Any], args: dict[str, Any], ctx: CommandContext) -> CommandResult:
    """Keep the items whose dot-path value compares true against the literal (R-CMD-WHERE-1..4)."""
    given = positionals(args)
    if not given:
        raise LobsterRuntimeError("where requires an expression (e.g. field=value)")
    expression = given[0]
    match = _WHERE_EXPRESSION.fullmatch(expression)
    if match is None:
        raise LobsterRuntimeError(f"Invalid where expression: {expression}")
    path, op, right = match.groups()
    literal = _where_literal(right)
    return CommandResult(output=[item for item in items if _where_matches(_where_left(item, path), op, literal)])


# -- pick / head ------------------------------------------------------------------------------------


@command(
    "pick",
    description="Keep only the listed fields of each object",
    args_schema={
        "type": "object",
        "properties": {"_": {**_POSITIONALS_SCHEMA, "description": "Comma-separated field list"}},
        "required": ["_"],
    },
    examples=["pick id,title,url"],
)
def pick_command(items: list[Any], args: dict[str, Any], ctx: CommandContext) -> CommandResult:
    """Project objects onto plain-key fields; non-objects pass through (R-CMD-PICK-1)."""
    given = positionals(args)
    if not given:
        raise LobsterRuntimeError("pick requires a comma-separated field list")
    fields = [field for field in (js_trim(part) for part in given[0].split(",")) if field]
    output = [
        js_key_order({field: member(item, field) for field in fields}) if isinstance(item, (dict, list)) else item
        for item in items
    ]
    return CommandResult(output=output)


@command(
    "head",
    description="Take the first N items (default 10)",
    args_schema={
        "type": "object",
        "properties": {"n": {"type": "number", "description": "How many items to keep", "default": 10}},
    },
    examples=["head --n 5"],
)
def head_command(items: list[Any], args: dict[str, Any], ctx: CommandContext) -> CommandResult:
    """Emit items while their index is below ``Number(--n)`` (R-CMD-HEAD-1)."""
    limit = js_number(args.get("n", 10))  # a bare --n is Number(true) = 1
    if is_nan(limit) or math.isinf(limit) or limit < 0:
        raise LobsterRuntimeError("head --n must be a non-negative number")
    return CommandResult(output=[item for index, item in enumerate(items) if index < limit])


# -- map ------------------------------------------------------------------------------------------


def _assignments(args: dict[str, Any]) -> list[tuple[str, str]]:
    """``key=value`` positionals; tokens without ``=`` and empty keys are ignored."""
    pairs = []
    for token in positionals(args):
        key, has_equals, value = token.partition("=")
        key = js_trim(key)
        if has_equals and key:
            pairs.append((key, value))
    return pairs


def _map_item(item: Any, wrap: str | None, assignments: list[tuple[str, str]]) -> Any:
    current = {wrap: item} if wrap else item
    if not assignments:
        return current
    source = item
    if not isinstance(current, dict):
        current = {"value": current}
    elif current is item:
        # The reference assigns into the item itself, so later {{…}} already see earlier fields.
        current = dict(item)
        source = current
    for key, template in assignments:
        current[key] = render_placeholders(template, lambda path: compact_text(lookup_expression(source, path)))
    return js_key_order(current)


@command(
    "map",
    description="Transform items: wrap, unwrap, or add fields rendered from {{path}} templates",
    args_schema={
        "type": "object",
        "properties": {
            "wrap": {"type": "string", "description": "Wrap each item as {wrap: item}"},
            "unwrap": {"type": "string", "description": "Output item[unwrap]"},
            "_": {**_POSITIONALS_SCHEMA, "description": "Assignments key=value; value supports {{path}}"},
        },
    },
    examples=["map --unwrap data", "map --wrap pr", "map url=https://x.test/{{id}}"],
)
def map_command(items: list[Any], args: dict[str, Any], ctx: CommandContext) -> CommandResult:
    """Wrap, unwrap, or assign rendered string fields (R-CMD-MAP-1)."""
    wrap, unwrap = string_flag(args, "wrap"), string_flag(args, "unwrap")
    if wrap and unwrap:
        raise LobsterRuntimeError("map cannot use both --wrap and --unwrap")
    if unwrap:
        return CommandResult(
            output=[member(item, unwrap) if isinstance(item, (dict, list)) else UNDEFINED for item in items]
        )
    assignments = _assignments(args)
    return CommandResult(output=[_map_item(item, wrap, assignments) for item in items])


# -- sort / dedupe / groupBy --------------------------------------------------------------------


@record(frozen=True)
class _SortKey:
    """A sort key with its String() code units computed once rather than per comparison."""

    value: Any
    units: bytes | None  # None for nullish keys

    @classmethod
    def of(cls, value: Any) -> _SortKey:
        return cls(value, None if is_nullish(value) else utf16_units(js_string(value)))


def _compare_keys(left: _SortKey, right: _SortKey) -> int:
    """R-CMD-SORT-1 comparator: nullish last, numbers numerically, else String() by code units."""
    if left.units is None or right.units is None:
        return int(left.units is None) - int(right.units is None)
    if is_number(left.value) and is_number(right.value):
        a: Any = left.value
        b: Any = right.value
    else:
        a, b = left.units, right.units
    return int(a > b) - int(a < b)


@command(
    "sort",
    description="Sort items (stable) by a dot-path key or by their string form",
    args_schema={
        "type": "object",
        "properties": {
            "key": {"type": "string", "description": "Dot-path key (e.g. updatedAt, pr.number)"},
            "desc": {"type": "boolean", "description": "Sort descending (nullish keys then come first)"},
        },
    },
    examples=["sort --key updatedAt --desc"],
)
def sort_command(items: list[Any], args: dict[str, Any], ctx: CommandContext) -> CommandResult:
    """Stable sort with the reference's comparator; ``--desc`` negates it (R-CMD-SORT-1)."""
    key = string_flag(args, "key")
    sign = -1 if js_truthy(args.get("desc", UNDEFINED)) else 1
    keyed = [(_SortKey.of(get_path(item, key) if key else item), item) for item in items]
    # list.sort is a stable TimSort, like the reference's Array.prototype.sort.
    keyed.sort(key=functools.cmp_to_key(lambda a, b: sign * _compare_keys(a[0], b[0])))
    return CommandResult(output=[item for _, item in keyed])


def _identity(value: Any) -> Any:
    """Compact JSON (insertion order) of a key; every ``undefined`` shares one identity."""
    return UNDEFINED if value is UNDEFINED else dumps_compact(value)


@command(
    "dedupe",
    description="Drop duplicate items, keeping the first of each (stable)",
    args_schema={
        "type": "object",
        "properties": {"key": {"type": "string", "description": "Dot-path key for identity (default: whole item)"}},
    },
    examples=["dedupe --key id"],
)
def dedupe_command(items: list[Any], args: dict[str, Any], ctx: CommandContext) -> CommandResult:
    """Keep the first item per compact-JSON identity of the item or its key (R-CMD-DEDUPE-1)."""
    key = string_flag(args, "key")
    seen: set[Any] = set()
    output = []
    for item in items:
        identity = _identity(get_path(item, key) if key else item)
        if identity not in seen:
            seen.add(identity)
            output.append(item)
    return CommandResult(output=output)


@command(
    "groupBy",
    description="Group items by a dot-path key (groups in order of first appearance)",
    args_schema={
        "type": "object",
        "properties": {"key": {"type": "string", "description": "Dot-path key to group by"}},
        "required": ["key"],
    },
    examples=["groupBy --key author.login"],
)
def group_by_command(items: list[Any], args: dict[str, Any], ctx: CommandContext) -> CommandResult:
    """Emit ``{key, items, count}`` per distinct key; ``key`` is undefined for missing keys (R-CMD-GROUPBY-1)."""
    raw_key = args.get("key")
    path = "" if raw_key is None else js_trim(js_string(raw_key))  # a bare --key means the path "true"
    if not path:
        raise LobsterRuntimeError("groupBy requires --key")
    groups: dict[Any, dict[str, Any]] = {}
    for item in items:
        value = get_path(item, path)
        group = groups.setdefault(_identity(value), {"key": value, "items": [], "count": 0})
        group["items"].append(item)
        group["count"] += 1
    return CommandResult(output=list(groups.values()))


COMMANDS = [where_command, pick_command, head_command, map_command, sort_command, dedupe_command, group_by_command]
