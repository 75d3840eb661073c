"""``when`` / ``condition`` expressions (spec §7.6).

The language is small and deliberately strict (S-13): step references must name a step that has a
result, ``||`` and ``&&`` evaluate both sides, ``==`` never coerces (objects and arrays compare
structurally, everything else with JavaScript's SameValue), and ``<``-style comparisons only hold
between numbers or numeric strings.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any, Literal

from ..errors import LobsterRuntimeError
from ..jsvalues import UNDEFINED, js_to_number, js_truthy
from ..records import record
from .loader import JS_WHITESPACE, js_trim
from .templates import STEP_REF_PATTERN, lookup_ref

TokenKind = Literal[
    "(", ")", "&&", "||", "==", "!=", "<=", ">=", "<", ">", "!", "ref", "string", "number", "literal", "ident"
]

# Longest operators first, so ``<=`` is not read as ``<`` followed by ``=``.
_OPERATORS = ("&&", "||", "==", "!=", "<=", ">=", "(", ")", "<", ">", "!")
_COMPARISONS = frozenset({"==", "!=", "<", "<=", ">", ">="})
_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_LITERALS: dict[str, Any] = {"true": True, "false": False, "null": None}


@record(frozen=True, slots=True)
class _Token:
    kind: TokenKind
    value: Any = None


class _Unsupported(Exception):
    """The expression is outside the grammar; reported with the whole expression."""


def _tokenize(expression: str) -> list[_Token]:
    tokens: list[_Token] = []
    index = 0
    while index < len(expression):
        char = expression[index]
        if char in JS_WHITESPACE:
            index += 1
            continue
        operator = next((op for op in _OPERATORS if expression.startswith(op, index)), None)
        if operator is not None:
            tokens.append(_Token(operator))
            index += len(operator)
            continue
        if char == "$":
            match = STEP_REF_PATTERN.match(expression, index)
            if match is None:
                raise _Unsupported
            tokens.append(_Token("ref", (match.group(1), match.group(2))))
            index = match.end()
            continue
        if char in "\"'":
            text, index = _read_string(expression, index)
            tokens.append(_Token("string", text))
            continue
        match = _NUMBER.match(expression, index)
        if match is not None:
            # JavaScript numbers are doubles: ``-0`` is negative zero, huge literals round.
            tokens.append(_Token("number", float(match.group(0))))
            index = match.end()
            continue
        match = _IDENT.match(expression, index)
        if match is None:
            raise _Unsupported
        word = match.group(0)
        tokens.append(_Token("literal", _LITERALS[word]) if word in _LITERALS else _Token("ident", word))
        index = match.end()
    return tokens


def _read_string(expression: str, start: int) -> tuple[str, int]:
    """A quoted string starting at ``start``; a backslash takes the next character literally."""
    quote = expression[start]
    chars: list[str] = []
    index = start + 1
    while index < len(expression):
        char = expression[index]
        if char == "\\":
            if index + 1 >= len(expression):
                break
            chars.append(expression[index + 1])
            index += 2
        elif char == quote:
            return "".join(chars), index + 1
        else:
            chars.append(char)
            index += 1
    raise _Unsupported


class _Parser:
    """Recursive descent over the token list; evaluates while parsing, as the grammar is tiny."""

    def __init__(self, tokens: list[_Token], results: Mapping[str, Any]) -> None:
        self.tokens = tokens
        self.index = 0
        self.results = results

    def accept(self, kind: str) -> bool:
        if self.index < len(self.tokens) and self.tokens[self.index].kind == kind:
            self.index += 1
            return True
        return False

    def parse(self) -> Any:
        value = self.parse_or()
        if self.index != len(self.tokens):
            raise _Unsupported
        return value

    def parse_or(self) -> Any:
        left = self.parse_and()
        while self.accept("||"):
            # Both sides are always evaluated: an unknown ref on the right still fails (S-13).
            right = self.parse_and()
            left = js_truthy(left) or js_truthy(right)
        return left

    def parse_and(self) -> Any:
        left = self.parse_comparison()
        while self.accept("&&"):
            right = self.parse_comparison()
            left = js_truthy(left) and js_truthy(right)
        return left

    def parse_comparison(self) -> Any:
        left = self.parse_unary(allow_ident=False)
        if self.index >= len(self.tokens) or self.tokens[self.index].kind not in _COMPARISONS:
            return left
        operator = self.tokens[self.index].kind
        self.index += 1
        right = self.parse_unary(allow_ident=True)
        if operator == "==":
            return _equal(left, right)
        if operator == "!=":
            return not _equal(left, right)
        return _numeric_compare(operator, left, right)

    def parse_unary(self, allow_ident: bool) -> Any:
        if self.accept("!"):
            return not js_truthy(self.parse_unary(allow_ident))
        return self.parse_primary(allow_ident)

    def parse_primary(self, allow_ident: bool) -> Any:
        if self.index >= len(self.tokens):
            raise _Unsupported
        token = self.tokens[self.index]
        self.index += 1
        if token.kind == "(":
            value = self.parse_or()
            if not self.accept(")"):
                raise _Unsupported
            return value
        if token.kind == "ref":
            step_id, path = token.value
            if step_id not in self.results:
                raise LobsterRuntimeError(f"Unknown step reference: {step_id}.{path}")
            return lookup_ref(self.results, step_id, path)
        if token.kind in ("string", "number", "literal") or (token.kind == "ident" and allow_ident):
            return token.value
        raise _Unsupported


def _same_number(left: int | float, right: int | float) -> bool:
    """SameValue for two JavaScript numbers, which are all doubles."""
    a, b = _as_double(left), _as_double(right)
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if a == 0 and b == 0:
        return math.copysign(1, a) == math.copysign(1, b)
    return a == b


def _as_double(value: int | float) -> float:
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _same_value(left: Any, right: Any) -> bool:
    """``Object.is`` for JSON values (plus ``undefined``); never coerces (``"2"`` is not ``2``)."""
    if _is_number(left) and _is_number(right):
        return _same_number(left, right)
    if isinstance(left, bool) or isinstance(right, bool) or left is None or right is None:
        return left is right
    if isinstance(left, str) and isinstance(right, str):
        return left == right
    return left is right


def _deep_equal(left: Any, right: Any) -> bool:
    """Structural equality: key order is irrelevant, leaves compare with SameValue."""
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(_deep_equal(left[key], right[key]) for key in left)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(_deep_equal(a, b) for a, b in zip(left, right, strict=True))
    if isinstance(left, (dict, list)) or isinstance(right, (dict, list)):
        return False
    return _same_value(left, right)


def _equal(left: Any, right: Any) -> bool:
    if isinstance(left, (dict, list)) or isinstance(right, (dict, list)):
        return _deep_equal(left, right)
    return _same_value(left, right)


def _strict_number(value: Any) -> float | None:
    """The number a value stands for when it is strictly numeric, else ``None``.

    Numbers (not NaN) and strings with visible content whose ``Number()`` is not NaN qualify;
    booleans, null and missing values never do.
    """
    if _is_number(value):
        number = _as_double(value)
    elif isinstance(value, str) and js_trim(value):
        number = _as_double(js_to_number(value))
    else:
        return None
    return None if math.isnan(number) else number


def _numeric_compare(operator: str, left: Any, right: Any) -> bool:
    a, b = _strict_number(left), _strict_number(right)
    if a is None or b is None:
        return False
    if operator == "<":
        return a < b
    if operator == "<=":
        return a <= b
    if operator == ">":
        return a > b
    return a >= b


def evaluate_condition(step: Mapping[str, Any], results: Mapping[str, Any]) -> bool:
    """Whether a step runs, from its ``when`` (if not null) or else ``condition`` (R-WF-40..42).

    Absent/null → true; a boolean is itself; a string is trimmed, ``true``/``false`` are literal and
    anything else is an expression. Raises :class:`LobsterRuntimeError` with
    ``Unsupported condition: <expr>``, ``Unsupported condition type`` or
    ``Unknown step reference: <id>.<path>``.
    """
    condition = step.get("when")
    if condition is None or condition is UNDEFINED:
        condition = step.get("condition")
    if condition is None or condition is UNDEFINED:
        return True
    if isinstance(condition, bool):
        return condition
    if not isinstance(condition, str):
        raise LobsterRuntimeError("Unsupported condition type")
    expression = js_trim(condition)
    if expression in ("true", "false"):
        return expression == "true"
    try:
        tokens = _tokenize(expression)
        if not tokens:
            raise _Unsupported
        return js_truthy(_Parser(tokens, results).parse())
    except (_Unsupported, RecursionError):
        # Absurd nesting overflows the stack in both runtimes; here it is just unsupported.
        raise LobsterRuntimeError(f"Unsupported condition: {expression}") from None


def referenced_step_ids(expression: str) -> list[str]:
    """Ids of every ``$id.path`` text in an expression (quoted text included), first-seen order.

    This is a textual scan, as the graph needs it (R-WF-151); it does not validate the expression.
    """
    return list(dict.fromkeys(match.group(1) for match in STEP_REF_PATTERN.finditer(expression)))
