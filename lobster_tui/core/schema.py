"""Response schemas: compile once, validate answers the way the reference's Ajv does (spec R-GEN-12..14).

The reference validates every answer with Ajv 8 (draft-07, ``strict: false``, ``allErrors: false``)
and reports only Ajv's *first* error. Which error comes first is a product of how Ajv generates
code: keywords run in vocabulary order, grouped by the data type they apply to, and composite
keywords (``anyOf``, ``oneOf``, ``contains``, ...) collect their branches' errors before their own.
``jsonschema`` orders its errors differently, so this module walks the schema itself, in Ajv's
order, with Ajv's messages. Numbers in messages are formatted as JavaScript prints them.

Our deliberate deviation (spec "Our choices" 3): a schema whose ``$schema`` names draft
2019-09 or 2020-12 is validated with that draft (the reference fails to compile it); draft-04/-06
URIs are accepted too. Keywords the walker does not implement (``unevaluated*``,
``$dynamicRef``, ``$recursiveRef``) make ``jsonschema`` the judge of validity for that schema; it is
imported only then, so the CLI does not pay for it on ordinary draft-07 schemas.

Patterns are JavaScript regular expressions with the ``u`` flag; they are translated to Python
``re`` syntax (``$`` is end of input, ``.`` excludes all line terminators, ``\\d``/``\\w``/``\\b`` are
ASCII, ``\\s`` is JavaScript's whitespace set) and JavaScript's syntax errors are reported as
compile errors. Unicode property escapes (``\\p{...}``) are not supported.
"""

from __future__ import annotations

import json
import math
import os
import re
import threading
from collections.abc import Callable
from functools import cache
from typing import Any
from urllib.parse import quote, unquote, urldefrag, urljoin

from .jsvalues import UNDEFINED, js_number_str, js_string, stable_stringify
from .records import field, record

__all__ = [
    "DRAFT_04",
    "DRAFT_06",
    "DRAFT_07",
    "DRAFT_2019_09",
    "DRAFT_2020_12",
    "CompiledSchema",
    "SchemaCompileError",
    "SchemaError",
    "compile_schema",
    "validation_failure",
]


class SchemaCompileError(ValueError):
    """The schema cannot be compiled; ``message`` is worded as Ajv words it."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@record(frozen=True, slots=True)
class SchemaError:
    """One validation error: where (a JSON Pointer, ``""`` for the root) and Ajv's message."""

    instance_path: str
    message: str
    keyword: str


# --- dialects ------------------------------------------------------------------------------------

DRAFT_04 = "draft-04"
DRAFT_06 = "draft-06"
DRAFT_07 = "draft-07"
DRAFT_2019_09 = "draft2019-09"
DRAFT_2020_12 = "draft2020-12"

_DIALECT_BY_URI = {
    "json-schema.org/draft-04/schema": DRAFT_04,
    "json-schema.org/draft-06/schema": DRAFT_06,
    "json-schema.org/draft-07/schema": DRAFT_07,
    "json-schema.org/draft/2019-09/schema": DRAFT_2019_09,
    "json-schema.org/draft/2020-12/schema": DRAFT_2020_12,
}

# Keywords whose semantics the walker leaves to jsonschema (they need annotation tracking or
# dynamic scopes); the walker still orders the errors of everything else.
_DELEGATED = frozenset({"unevaluatedProperties", "unevaluatedItems", "$dynamicRef", "$recursiveRef"})

_NUMBER_KEYWORDS = ("maximum", "minimum", "exclusiveMaximum", "exclusiveMinimum", "multipleOf", "format")
_STRING_KEYWORDS = ("maxLength", "minLength", "pattern", "format")
_OBJECT_KEYWORDS = (
    "maxProperties",
    "minProperties",
    "required",
    "propertyNames",
    "additionalProperties",
    "dependencies",
    "properties",
    "patternProperties",
)


class _Vocabulary:
    """Ajv's rule table for one dialect: keyword order per data-type group."""

    __slots__ = ("exclusive_flags", "groups", "id_keyword", "next_keywords", "prefix_items", "rules", "untyped")

    def __init__(
        self,
        untyped: tuple[str, ...],
        groups: tuple[tuple[str, tuple[str, ...]], ...],
        id_keyword: str = "$id",
        exclusive_flags: bool = False,  # draft-04: exclusiveMaximum/Minimum are booleans
        next_keywords: bool = False,  # 2019-09+: minContains/maxContains, dependentRequired/Schemas
        prefix_items: bool = False,  # 2020-12: prefixItems + items-as-rest
    ) -> None:
        self.untyped = untyped
        self.groups = groups
        self.id_keyword = id_keyword
        self.exclusive_flags = exclusive_flags
        self.next_keywords = next_keywords
        self.prefix_items = prefix_items
        # Ajv's RULES.all: a schema object using none of these is "always valid" and skipped.
        keys = set(untyped) | {k for _, kws in groups for k in kws}
        keys |= {"type", "nullable", "then", "else", "$comment", "id"}
        if next_keywords:
            keys |= {"$dynamicAnchor", "$recursiveAnchor"}
        self.rules: frozenset[str] = frozenset(keys)


def _vocabulary(dialect: str) -> _Vocabulary:
    untyped = ("$ref", "const", "enum", "not", "anyOf", "oneOf", "allOf", "if")
    array = ("maxItems", "minItems", "additionalItems", "items", "contains", "uniqueItems")
    obj = _OBJECT_KEYWORDS
    if dialect == DRAFT_04:
        drop = {"const", "if", "contains", "propertyNames"}
        untyped = tuple(k for k in untyped if k not in drop)
        array = tuple(k for k in array if k not in drop)
        obj = tuple(k for k in obj if k not in drop)
        return _Vocabulary(untyped, _groups(array, obj), id_keyword="id", exclusive_flags=True)
    if dialect == DRAFT_06:
        return _Vocabulary(tuple(k for k in untyped if k != "if"), _groups(array, obj))
    if dialect == DRAFT_07:
        return _Vocabulary(untyped, _groups(array, obj))
    limits = ("maxContains", "minContains", "unevaluatedItems")
    obj = (*obj, "dependentRequired", "dependentSchemas", "unevaluatedProperties")
    if dialect == DRAFT_2019_09:
        return _Vocabulary(("$recursiveRef", *untyped), _groups((*array, *limits), obj), next_keywords=True)
    array = ("maxItems", "minItems", "prefixItems", "items", "contains", "uniqueItems", *limits)
    return _Vocabulary(("$dynamicRef", *untyped), _groups(array, obj), next_keywords=True, prefix_items=True)


def _groups(array: tuple[str, ...], obj: tuple[str, ...]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    return (("number", _NUMBER_KEYWORDS), ("string", _STRING_KEYWORDS), ("array", array), ("object", obj))


_VOCABULARIES = {d: _vocabulary(d) for d in (DRAFT_04, DRAFT_06, DRAFT_07, DRAFT_2019_09, DRAFT_2020_12)}


# --- JSON value helpers --------------------------------------------------------------------------

_JSON_TYPES = frozenset({"string", "number", "integer", "boolean", "null", "object", "array"})


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _has_type(name: str, value: Any) -> bool:
    if name == "string":
        return isinstance(value, str)
    if name == "number":
        return _is_number(value)
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool) or isinstance(value, float) and value.is_integer()
    if name == "boolean":
        return isinstance(value, bool)
    if name == "null":
        return value is None
    if name == "object":
        return isinstance(value, dict)
    return isinstance(value, (list, tuple))


def _has_any_type(names: tuple[str, ...], value: Any) -> bool:
    return any(_has_type(name, value) for name in names)


def _js_equal(a: Any, b: Any) -> bool:
    """fast-deep-equal as Ajv uses it: ``1 == 1.0`` but ``true != 1``; object key order ignored."""
    if a is None or b is None or isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    if _is_number(a) and _is_number(b):
        return bool(a == b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_js_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_js_equal(x, y) for x, y in zip(a, b, strict=True))
    return False


def _is_array_index(key: str) -> bool:
    return key.isascii() and key.isdigit() and (key == "0" or key[0] != "0") and int(key) < 2**32 - 1


def _js_keys(obj: dict[str, Any]) -> list[str]:
    """Object keys in JavaScript's enumeration order: array-index keys ascending, then insertion order."""
    keys = list(obj)
    indices = [k for k in keys if _is_array_index(k)]
    if not indices:
        return keys
    return sorted(indices, key=int) + [k for k in keys if not _is_array_index(k)]


def _pointer(key: str) -> str:
    return "/" + key.replace("~", "~0").replace("/", "~1")


def _fragment(key: str) -> str:
    """A schema-path segment as Ajv prints it (``encodeURIComponent`` of the escaped pointer)."""
    return "/" + quote(key.replace("~", "~0").replace("/", "~1"), safe="-_.!~*'()")


def _to_double(value: int | float) -> float:
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _js_parse_int_equals(value: float) -> bool:
    """``value === parseInt(String(value))``, Ajv's multipleOf test (so 1e300 is not integral)."""
    match = re.match(r"-?\d+", js_number_str(value))
    # parseInt yields a double, so compare doubles: exact int == float would differ past 2**53.
    return match is not None and float(int(match.group())) == value


def _json_copy(value: Any) -> Any:
    """A private deep copy with JSON's shapes (string keys, lists), so later edits by the caller are harmless."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise SchemaCompileError("schema must be JSON-serializable")
        return value
    if isinstance(value, dict):
        # Non-string keys (YAML allows them) become the strings JavaScript would use.
        return {js_string(k): _json_copy(v) for k, v in value.items() if v is not UNDEFINED}
    if isinstance(value, (list, tuple)):
        return [_json_copy(v) for v in value]
    raise SchemaCompileError("schema must be JSON-serializable")


_REF_KEYWORDS = frozenset({"$ref", "$recursiveRef", "$recursiveAnchor", "$dynamicRef", "$dynamicAnchor"})


def _has_ref(value: Any) -> bool:
    """Ajv's ``hasRef``: schemas without any reference are inlined at each use, others compiled once."""
    if isinstance(value, dict):
        return any(k in _REF_KEYWORDS or _has_ref(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_ref(v) for v in value)
    return False


def _mentions(value: Any, keywords: frozenset[str]) -> bool:
    if isinstance(value, dict):
        return any(k in keywords or _mentions(v, keywords) for k, v in value.items())
    if isinstance(value, list):
        return any(_mentions(v, keywords) for v in value)
    return False


# --- JavaScript regular expressions --------------------------------------------------------------

_JS_SPACE = "\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
_SYNTAX_CHARS = frozenset("^$\\.*+?()[]{}|/")
_DIGITS = frozenset("0123456789")
_BACKREFERENCE = re.compile(r"[0-9]+")
_QUANTIFIER = re.compile(r"\{[0-9]+(,[0-9]*)?\}")
_UNICODE_ESCAPE = re.compile(
    r"u(?:([Dd][89ABab][0-9A-Fa-f]{2})\\u([Dd][C-Fc-f][0-9A-Fa-f]{2})|([0-9A-Fa-f]{4})|\{([0-9A-Fa-f]+)\})"
)
_PYTHON_ERRORS = {
    "missing ), unterminated subpattern": "Unterminated group",
    "unbalanced parenthesis": "Unmatched ')'",
    "nothing to repeat": "Nothing to repeat",
    "multiple repeat": "Nothing to repeat",
}


class _RegexSyntaxError(Exception):
    pass


def _compile_pattern(pattern: str) -> re.Pattern[str]:
    """Compile a JavaScript ``u``-flag regular expression, or fail as ``new RegExp`` would."""
    try:
        return re.compile(_translate_regex(pattern), re.ASCII)
    except _RegexSyntaxError as exc:
        reason = str(exc)
    except re.error as exc:
        reason = _PYTHON_ERRORS.get(exc.msg, exc.msg[:1].upper() + exc.msg[1:])
    raise SchemaCompileError(f"Invalid regular expression: /{pattern}/u: {reason}")


def _translate_regex(pattern: str) -> str:
    """Rewrite a JavaScript pattern for ``re`` (compiled with ``re.ASCII``), rejecting what V8 rejects."""
    out: list[str] = []
    i, n = 0, len(pattern)
    depth = 0
    can_repeat = False  # is there an atom a quantifier may apply to?
    while i < n:
        c = pattern[i]
        if c == "\\":
            assertion = pattern.startswith(("\\b", "\\B"), i)
            text, i = _translate_escape(pattern, i + 1, in_class=False)
            out.append(text)
            can_repeat = not assertion
            continue
        if c == "[":
            text, i = _translate_class(pattern, i + 1)
            out.append(text)
            can_repeat = True
            continue
        if c == "(":
            if pattern.startswith("(?", i):
                head = next((h for h in ("(?:", "(?=", "(?!", "(?<=", "(?<!") if pattern.startswith(h, i)), None)
                if head is None:
                    name = re.match(r"\(\?<([A-Za-z_$][\w$]*)>", pattern[i:])
                    if name is None:
                        raise _RegexSyntaxError("Invalid group")
                    head, python_head = name.group(), f"(?P<{name.group(1)}>"
                else:
                    python_head = head
                out.append(python_head)
                i += len(head)
            else:
                out.append("(")
                i += 1
            depth += 1
            can_repeat = False
            continue
        if c == ")":
            if depth == 0:
                raise _RegexSyntaxError("Unmatched ')'")
            depth -= 1
            out.append(")")
            i += 1
            can_repeat = True
            continue
        if c in "*+?{":
            if c == "{":
                match = _QUANTIFIER.match(pattern, i)
                if match is None:
                    raise _RegexSyntaxError("Incomplete quantifier" if can_repeat else "Lone quantifier brackets")
                token = match.group()
            else:
                token = c
            if not can_repeat:
                raise _RegexSyntaxError("Nothing to repeat")
            i += len(token)
            if i < n and pattern[i] == "?":
                token += "?"
                i += 1
            out.append(token)
            can_repeat = False
            continue
        if c in "}]":
            raise _RegexSyntaxError("Lone quantifier brackets")
        if c == ".":
            out.append("[^\\n\\r\\u2028\\u2029]")
        elif c == "$":
            out.append("\\Z")
        else:
            out.append(re.escape(c) if c not in "^|" else c)
        can_repeat = c not in "^$|"
        i += 1
    if depth:
        raise _RegexSyntaxError("Unterminated group")
    return "".join(out)


def _translate_class(pattern: str, i: int) -> tuple[str, int]:
    """Translate the class whose body starts at ``i``; returns the Python text and the next index."""
    negated = pattern.startswith("^", i)
    if negated:
        i += 1
    parts: list[str] = []
    while i < len(pattern) and pattern[i] != "]":
        c = pattern[i]
        if c == "\\":
            text, i = _translate_escape(pattern, i + 1, in_class=True)
            parts.append(text)
            continue
        parts.append("\\" + c if c in "[&~|" else c)  # literal in JavaScript, set operators to Python
        i += 1
    if i >= len(pattern):
        raise _RegexSyntaxError("Unterminated character class")
    if not parts:  # JavaScript's [] matches nothing and [^] anything; Python has no such classes
        return ("[\\s\\S]" if negated else "(?!)"), i + 1
    return "[" + ("^" if negated else "") + "".join(parts) + "]", i + 1


def _translate_escape(pattern: str, i: int, *, in_class: bool) -> tuple[str, int]:
    """Translate the escape whose letter is at ``i``; returns the Python text and the next index."""
    if i >= len(pattern):
        raise _RegexSyntaxError("\\ at end of pattern")
    c = pattern[i]
    if c == "s":
        return (_JS_SPACE if in_class else f"[{_JS_SPACE}]"), i + 1
    if c == "S" and not in_class:
        return f"[^{_JS_SPACE}]", i + 1
    if c in "dDwWSfnrtv" or c in _SYNTAX_CHARS or (c == "-" and in_class):
        return "\\" + c, i + 1
    if c in "bB":
        if in_class:
            if c == "B":
                raise _RegexSyntaxError("Invalid class escape")
            return "\\x08", i + 1
        return "\\" + c, i + 1
    if c == "0":
        if pattern[i + 1 : i + 2] in _DIGITS:
            raise _RegexSyntaxError("Invalid decimal escape")
        return "\\x00", i + 1
    if c in _DIGITS:
        if in_class:
            raise _RegexSyntaxError("Invalid class escape")
        digits = _BACKREFERENCE.match(pattern, i)
        assert digits is not None
        return "\\" + digits.group(), digits.end()
    if c == "x":
        match = re.match(r"x[0-9A-Fa-f]{2}", pattern[i:])
        if match is None:
            raise _RegexSyntaxError("Invalid escape")
        return "\\" + match.group(), i + 3
    if c == "u":
        match = _UNICODE_ESCAPE.match(pattern, i)
        if match is None or (match.group(4) is not None and int(match.group(4), 16) > 0x10FFFF):
            raise _RegexSyntaxError("Invalid Unicode escape")
        high, low, single, braced = match.groups()
        if high is not None:  # with the u flag an escaped surrogate pair is one code point
            code = 0x10000 + ((int(high, 16) - 0xD800) << 10) + (int(low, 16) - 0xDC00)
        else:
            code = int(single or braced, 16)
        return f"\\U{code:08x}", match.end()
    if c == "c" and i + 1 < len(pattern) and pattern[i + 1].isascii() and pattern[i + 1].isalpha():
        return f"\\x{ord(pattern[i + 1]) % 32:02x}", i + 2
    if c == "k" and not in_class:
        match = re.match(r"k<([A-Za-z_$][\w$]*)>", pattern[i:])
        if match is None:
            raise _RegexSyntaxError("Invalid named reference")
        return f"(?P={match.group(1)})", i + len(match.group())
    if c in "pP":
        raise _RegexSyntaxError("Unicode property escapes are not supported")
    raise _RegexSyntaxError("Invalid escape")


# --- compiled form -------------------------------------------------------------------------------


class _Run:
    """The error list of one validation, with Ajv's rules for when errors accumulate."""

    __slots__ = ("all_errors", "composite", "errors")

    def __init__(self, all_errors: bool, composite: bool = False) -> None:
        self.all_errors = all_errors
        self.composite = composite
        self.errors: list[SchemaError] = []

    def fail(self, path: str, message: str, keyword: str, *, append: bool = False) -> bool:
        """Record an error and return False (the keyword failed).

        Outside composite keywords and without allErrors, Ajv returns the plain error on its own,
        dropping what composite sub-validations collected; composite keywords append theirs.
        """
        error = SchemaError(path, message, keyword)
        if self.all_errors or self.composite or append:
            self.errors.append(error)
        else:
            self.errors[:] = [error]
        return False

    def reset(self, count: int) -> None:
        del self.errors[count:]


_Check = Callable[[Any, str, _Run], bool]


@record(slots=True)
class _Node:
    """One compiled schema object: its type test and its keyword checks in Ajv's order."""

    constant: bool | None = None
    types: tuple[str, ...] = ()
    type_message: str = ""
    types_first: bool = False
    deferred_type: str | None = None
    groups: list[tuple[str | None, list[_Check]]] = field(default_factory=list)


_ALWAYS = _Node(constant=True)
_NEVER = _Node(constant=False)


def _validate(node: _Node, data: Any, path: str, run: _Run) -> bool:
    if node.constant is not None:
        return node.constant or run.fail(path, "boolean schema is false", "false schema")
    start = len(run.errors)
    if node.types_first and not _has_any_type(node.types, data):
        run.fail(path, node.type_message, "type")
        if not run.all_errors:
            return False
    for group_type, checks in node.groups:
        if group_type is None or _has_type(group_type, data):
            for check in checks:
                if not check(data, path, run) and not run.all_errors:
                    return False
        elif group_type == node.deferred_type:
            # A single declared type whose own keywords are present is checked where that group runs.
            run.fail(path, node.type_message, "type")
            if not run.all_errors:
                return False
    return len(run.errors) == start


def _validate_composite(node: _Node, data: Any, path: str, run: _Run) -> bool:
    saved, run.composite = run.composite, True
    valid = _validate(node, data, path, run)
    run.composite = saved
    return valid


def _quietly_valid(node: _Node, data: Any) -> bool:
    """Validity without errors, as for ``not`` and ``if``."""
    return _validate(node, data, "", _Run(all_errors=False, composite=True))


def _call(node: _Node, data: Any, path: str, run: _Run) -> bool:
    """A schema Ajv compiled as a separate function reports like a root; its errors are appended."""
    inner = _Run(run.all_errors)
    valid = _validate(node, data, path, inner)
    run.errors.extend(inner.errors)
    return valid


class _Resources:
    """The schema resources (``$id``) and anchors of one document, for resolving ``$ref``."""

    def __init__(self, root: Any, vocab: _Vocabulary) -> None:
        self.id_keyword = vocab.id_keyword
        self.base_of: dict[int, str] = {}
        self.targets: dict[str, Any] = {}
        base = ""
        if isinstance(root, dict) and isinstance(root.get(self.id_keyword), str):
            base = urldefrag(root[self.id_keyword])[0]
        self.targets[base] = root
        self._index(root, base)

    def _index(self, value: Any, base: str) -> None:
        if isinstance(value, list):
            for item in value:
                self._index(item, base)
            return
        if not isinstance(value, dict):
            return
        own_id = value.get(self.id_keyword)
        if isinstance(own_id, str):
            uri, anchor = urldefrag(_join(base, own_id))
            if anchor:
                self.targets[f"{uri}#{anchor}"] = value
            else:
                base = uri
                self.targets[uri] = value
        for anchor_keyword in ("$anchor", "$dynamicAnchor"):
            if isinstance(value.get(anchor_keyword), str):
                self.targets[f"{base}#{value[anchor_keyword]}"] = value
        self.base_of[id(value)] = base
        # Every nested object is indexed, as Ajv's traversal (allKeys) does: a keyword name such as
        # "enum" may equally be a property name whose value is a schema.
        for item in value.values():
            self._index(item, base)

    def resolve(self, ref: str, base: str) -> Any:
        uri, fragment = urldefrag(_join(base, ref))
        missing = SchemaCompileError(f"can't resolve reference {ref} from id {base or '#'}")
        if fragment and not fragment.startswith("/"):
            if f"{uri}#{fragment}" not in self.targets:
                raise missing
            return self.targets[f"{uri}#{fragment}"]
        if uri not in self.targets:
            raise missing
        target = self.targets[uri]
        for raw in fragment.split("/")[1:]:
            segment = unquote(raw).replace("~1", "/").replace("~0", "~")
            if isinstance(target, dict) and segment in target:
                target = target[segment]
            elif isinstance(target, list) and segment.isdigit() and int(segment) < len(target):
                target = target[int(segment)]
            else:
                raise missing
        return target


def _join(base: str, ref: str) -> str:
    # urljoin drops the base for schemes it does not know (urn:), so fragments are appended by hand.
    if ref.startswith("#"):
        return urldefrag(base)[0] + ref
    return urljoin(base, ref) if base else ref


def _schema_types(schema: dict[str, Any]) -> list[str]:
    raw = schema.get("type")
    types = list(raw) if isinstance(raw, list) else ([raw] if raw else [])
    if not all(isinstance(t, str) and t in _JSON_TYPES for t in types):
        raise SchemaCompileError("type must be JSONType or JSONType[]: " + ",".join(js_string(t) for t in types))
    if "null" in types:
        if schema.get("nullable") is False:
            raise SchemaCompileError("type: null contradicts nullable: false")
    elif "nullable" in schema:
        if not types:
            raise SchemaCompileError('"nullable" cannot be used without "type"')
        if schema["nullable"] is True:
            types.append("null")
    return types


class _Builder:
    """Compiles a schema document into ``_Node`` trees, the way Ajv generates its code."""

    def __init__(self, root: Any, dialect: str, warnings: list[str] | None) -> None:
        self.vocab = _VOCABULARIES[dialect]
        self.resources = _Resources(root, self.vocab)
        self.warnings = warnings
        # Schemas compiled once as functions (the root and referenced schemas that contain refs).
        self.shared: dict[int, _Node] = {}
        self.root = self.shared_node(root)

    def shared_node(self, schema: Any) -> _Node:
        """The node of a schema Ajv compiles once, as its own function with schema path ``#``."""
        if not isinstance(schema, dict):
            return self.node(schema, "#")
        if id(schema) not in self.shared:
            node = _Node()
            self.shared[id(schema)] = node
            self._fill(node, schema, "#")
        return self.shared[id(schema)]

    def always_valid(self, schema: Any) -> bool:
        """Ajv's ``alwaysValidSchema``: ``true`` or an object without any rule keyword."""
        return schema is True or (isinstance(schema, dict) and not any(k in self.vocab.rules for k in schema))

    def node(self, schema: Any, path: str) -> _Node:
        """A fresh node for a subschema at schema path ``path`` (used in warnings)."""
        if schema is True:
            return _ALWAYS
        if schema is False:
            return _NEVER
        if not isinstance(schema, dict):
            raise SchemaCompileError("schema must be object or boolean")
        node = _Node()
        self._fill(node, schema, path)
        return node

    def _fill(self, node: _Node, schema: dict[str, Any], path: str) -> None:
        vocab = self.vocab
        if "id" in schema and vocab.id_keyword != "id":
            raise SchemaCompileError('NOT SUPPORTED: keyword "id", use "$id" for schema ID')
        types = _schema_types(schema)
        node.types = tuple(types)
        node.type_message = "must be " + js_string(schema.get("type"))
        present = [(None, [k for k in vocab.untyped if k in schema])]
        present += [(gtype, [k for k in kws if k in schema]) for gtype, kws in vocab.groups]
        if len(types) == 1 and any(gtype == types[0] and kws for gtype, kws in present):
            node.deferred_type = types[0]
        node.types_first = bool(types) and node.deferred_type is None
        for gtype, keywords in present:
            if not keywords:
                continue
            checks: list[_Check] = []
            for keyword in keywords:
                if keyword == "format":
                    # Ajv knows no formats without ajv-formats: every format is ignored, with a warning.
                    if gtype == "number" and self.warnings is not None:
                        name = js_string(schema[keyword])
                        self.warnings.append(f'unknown format "{name}" ignored in schema at path "{path}"')
                    continue
                builder = _KEYWORD_BUILDERS.get(keyword)
                check = builder(self, schema[keyword], schema, path) if builder else None
                if check is not None:
                    checks.append(check)
            node.groups.append((gtype, checks))


# --- keyword builders ----------------------------------------------------------------------------
# Each returns a check ``(data, path, run) -> bool`` or None when the keyword compiles to nothing.


def _kw_ref(b: _Builder, ref: Any, schema: dict[str, Any], path: str) -> _Check:
    target = b.resources.resolve(ref, b.resources.base_of[id(schema)])
    if _has_ref(target):
        shared = b.shared_node(target)
        return lambda data, at, run: _call(shared, data, at, run)
    # Ajv inlines reference-free targets at every use, reporting them under the $ref text.
    inlined = b.node(target, ref)
    return lambda data, at, run: _validate(inlined, data, at, run)


def _kw_const(b: _Builder, value: Any, schema: dict[str, Any], path: str) -> _Check:
    return lambda data, at, run: _js_equal(data, value) or run.fail(at, "must be equal to constant", "const")


def _kw_enum(b: _Builder, values: list[Any], schema: dict[str, Any], path: str) -> _Check:
    message = "must be equal to one of the allowed values"
    return lambda data, at, run: any(_js_equal(data, v) for v in values) or run.fail(at, message, "enum")


def _kw_not(b: _Builder, sub: Any, schema: dict[str, Any], path: str) -> _Check:
    node = b.node(sub, path + "/not")
    return lambda data, at, run: not _quietly_valid(node, data) or run.fail(at, "must NOT be valid", "not")


def _kw_any_of(b: _Builder, branches: list[Any], schema: dict[str, Any], path: str) -> _Check | None:
    if any(b.always_valid(branch) for branch in branches):
        return None
    nodes = [b.node(branch, f"{path}/anyOf/{i}") for i, branch in enumerate(branches)]

    def check(data: Any, at: str, run: _Run) -> bool:
        start = len(run.errors)
        for node in nodes:
            if _validate_composite(node, data, at, run):
                run.reset(start)
                return True
        return run.fail(at, "must match a schema in anyOf", "anyOf", append=True)

    return check


def _kw_one_of(b: _Builder, branches: list[Any], schema: dict[str, Any], path: str) -> _Check:
    nodes = [None if b.always_valid(s) else b.node(s, f"{path}/oneOf/{i}") for i, s in enumerate(branches)]

    def check(data: Any, at: str, run: _Run) -> bool:
        start = len(run.errors)
        valid = False
        for node in nodes:
            if node is None or _validate_composite(node, data, at, run):
                if valid:  # a second passing branch: Ajv stops evaluating the rest
                    valid = False
                    break
                valid = True
        if valid:
            run.reset(start)
            return True
        return run.fail(at, "must match exactly one schema in oneOf", "oneOf", append=True)

    return check


def _kw_all_of(b: _Builder, branches: list[Any], schema: dict[str, Any], path: str) -> _Check:
    nodes = [b.node(s, f"{path}/allOf/{i}") for i, s in enumerate(branches) if not b.always_valid(s)]

    def check(data: Any, at: str, run: _Run) -> bool:
        valid = True
        for node in nodes:
            if not _validate(node, data, at, run):
                valid = False
                if not run.all_errors:
                    break
        return valid

    return check


def _kw_if(b: _Builder, condition: Any, schema: dict[str, Any], path: str) -> _Check | None:
    then = schema.get("then", True)
    otherwise = schema.get("else", True)
    if b.always_valid(then) and b.always_valid(otherwise):
        return None
    if_node = b.node(condition, path + "/if")
    then_node = None if b.always_valid(then) else b.node(then, path + "/then")
    else_node = None if b.always_valid(otherwise) else b.node(otherwise, path + "/else")

    def check(data: Any, at: str, run: _Run) -> bool:
        clause, node = ("then", then_node) if _quietly_valid(if_node, data) else ("else", else_node)
        if node is None or _validate(node, data, at, run):
            return True
        if not (run.all_errors or run.composite):
            return False  # Ajv has already returned the clause's own error
        return run.fail(at, f'must match "{clause}" schema', "if", append=True)

    return check


def _limit(keyword: str, test: Callable[[Any], bool], message: str) -> _Check:
    return lambda data, at, run: test(data) or run.fail(at, message, keyword)


def _kw_maximum(b: _Builder, limit: Any, schema: dict[str, Any], path: str) -> _Check:
    if b.vocab.exclusive_flags and schema.get("exclusiveMaximum") is True:
        return _limit("maximum", lambda d: d < limit, f"must be < {js_number_str(limit)}")
    return _limit("maximum", lambda d: d <= limit, f"must be <= {js_number_str(limit)}")


def _kw_minimum(b: _Builder, limit: Any, schema: dict[str, Any], path: str) -> _Check:
    if b.vocab.exclusive_flags and schema.get("exclusiveMinimum") is True:
        return _limit("minimum", lambda d: d > limit, f"must be > {js_number_str(limit)}")
    return _limit("minimum", lambda d: d >= limit, f"must be >= {js_number_str(limit)}")


def _kw_exclusive_maximum(b: _Builder, limit: Any, schema: dict[str, Any], path: str) -> _Check | None:
    if isinstance(limit, bool):
        return None
    return _limit("exclusiveMaximum", lambda d: d < limit, f"must be < {js_number_str(limit)}")


def _kw_exclusive_minimum(b: _Builder, limit: Any, schema: dict[str, Any], path: str) -> _Check | None:
    if isinstance(limit, bool):
        return None
    return _limit("exclusiveMinimum", lambda d: d > limit, f"must be > {js_number_str(limit)}")


def _kw_multiple_of(b: _Builder, divisor: Any, schema: dict[str, Any], path: str) -> _Check:
    def test(data: Any) -> bool:
        return _js_parse_int_equals(_to_double(data) / _to_double(divisor))

    return _limit("multipleOf", test, f"must be multiple of {js_number_str(divisor)}")


def _kw_max_length(b: _Builder, limit: Any, schema: dict[str, Any], path: str) -> _Check:
    return _limit("maxLength", lambda d: len(d) <= limit, f"must NOT have more than {js_number_str(limit)} characters")


def _kw_min_length(b: _Builder, limit: Any, schema: dict[str, Any], path: str) -> _Check:
    return _limit("minLength", lambda d: len(d) >= limit, f"must NOT have fewer than {js_number_str(limit)} characters")


def _kw_pattern(b: _Builder, pattern: str, schema: dict[str, Any], path: str) -> _Check:
    regex = _compile_pattern(pattern)
    return _limit("pattern", lambda d: regex.search(d) is not None, f'must match pattern "{pattern}"')


def _kw_max_items(b: _Builder, limit: Any, schema: dict[str, Any], path: str) -> _Check:
    return _limit("maxItems", lambda d: len(d) <= limit, f"must NOT have more than {js_number_str(limit)} items")


def _kw_min_items(b: _Builder, limit: Any, schema: dict[str, Any], path: str) -> _Check:
    return _limit("minItems", lambda d: len(d) >= limit, f"must NOT have fewer than {js_number_str(limit)} items")


def _rest_items(b: _Builder, keyword: str, sub: Any, count: int, path: str) -> _Check | None:
    """Items after the first ``count``: ``false`` caps the length, a schema applies to each."""
    if b.always_valid(sub):
        return None
    if sub is False:
        message = f"must NOT have more than {count} items"
        return lambda data, at, run: len(data) <= count or run.fail(at, message, keyword)
    return _each_item(b.node(sub, f"{path}/{keyword}"), count)


def _each_item(node: _Node, start: int) -> _Check:
    def check(data: Any, at: str, run: _Run) -> bool:
        valid = True
        for i in range(start, len(data)):
            if not _validate(node, data[i], f"{at}/{i}", run):
                valid = False
                if not run.all_errors:
                    break
        return valid

    return check


def _tuple_items(b: _Builder, keyword: str, subs: list[Any], path: str) -> _Check:
    nodes = [(i, b.node(s, f"{path}/{keyword}/{i}")) for i, s in enumerate(subs) if not b.always_valid(s)]

    def check(data: Any, at: str, run: _Run) -> bool:
        valid = True
        for i, node in nodes:
            if i < len(data) and not _validate(node, data[i], f"{at}/{i}", run):
                valid = False
                if not run.all_errors:
                    break
        return valid

    return check


def _kw_additional_items(b: _Builder, sub: Any, schema: dict[str, Any], path: str) -> _Check | None:
    items = schema.get("items")
    if not isinstance(items, list):
        return None  # ignored unless items is a tuple
    return _rest_items(b, "additionalItems", sub, len(items), path)


def _kw_prefix_items(b: _Builder, subs: list[Any], schema: dict[str, Any], path: str) -> _Check:
    return _tuple_items(b, "prefixItems", subs, path)


def _kw_items(b: _Builder, items: Any, schema: dict[str, Any], path: str) -> _Check | None:
    if b.vocab.prefix_items:
        prefix = schema.get("prefixItems")
        return _rest_items(b, "items", items, len(prefix) if isinstance(prefix, list) else 0, path)
    if isinstance(items, list):
        return _tuple_items(b, "items", items, path)
    if b.always_valid(items):
        return None
    return _each_item(b.node(items, path + "/items"), 0)


def _kw_contains(b: _Builder, sub: Any, schema: dict[str, Any], path: str) -> _Check | None:
    low: int = 1
    high: int | None = None
    if b.vocab.next_keywords:
        low = schema.get("minContains", 1)
        high = schema.get("maxContains")
    if high is None and low == 0:
        return None
    if high is None:
        message = f"must contain at least {js_number_str(low)} valid item(s)"
    else:
        message = f"must contain at least {js_number_str(low)} and no more than {js_number_str(high)} valid item(s)"
    if high is not None and low > high:
        return lambda data, at, run: run.fail(at, message, "contains")
    if b.always_valid(sub):
        return lambda data, at, run: (low <= len(data) and (high is None or len(data) <= high)) or run.fail(
            at, message, "contains"
        )
    node = b.node(sub, path + "/contains")

    def check(data: Any, at: str, run: _Run) -> bool:
        start = len(run.errors)
        count = 0
        valid = low == 0
        for i, item in enumerate(data):
            if _validate_composite(node, item, f"{at}/{i}", run):
                count += 1
                if high is not None and count > high:
                    valid = False
                    break
                if count >= low:
                    valid = True
                    if high is None:
                        break
        if valid:
            run.reset(start)
            return True
        return run.fail(at, message, "contains")

    return check


def _kw_unique_items(b: _Builder, unique: Any, schema: dict[str, Any], path: str) -> _Check | None:
    if unique is not True:
        return None
    items = schema.get("items")
    item_types = tuple(_schema_types(items)) if isinstance(items, dict) else ()

    def fail(run: _Run, at: str, j: int, i: int) -> bool:
        return run.fail(at, f"must NOT have duplicate items (items ## {j} and {i} are identical)", "uniqueItems")

    if item_types and not {"object", "array"} & set(item_types):
        # Ajv hashes scalar items of the declared type, scanning from the end; others are skipped.
        def hashed(data: Any, at: str, run: _Run) -> bool:
            seen: dict[str, int] = {}
            for i in range(len(data) - 1, -1, -1):
                item = data[i]
                if not _has_any_type(item_types, item):
                    continue
                key = js_string(item) + ("_" if isinstance(item, str) and len(item_types) > 1 else "")
                if key in seen:
                    return fail(run, at, seen[key], i)
                seen[key] = i
            return True

        return hashed

    def pairwise(data: Any, at: str, run: _Run) -> bool:
        for i in range(len(data) - 1, 0, -1):
            for j in range(i - 1, -1, -1):
                if _js_equal(data[i], data[j]):
                    return fail(run, at, j, i)
        return True

    return pairwise


def _kw_max_properties(b: _Builder, limit: Any, schema: dict[str, Any], path: str) -> _Check:
    message = f"must NOT have more than {js_number_str(limit)} properties"
    return _limit("maxProperties", lambda d: len(d) <= limit, message)


def _kw_min_properties(b: _Builder, limit: Any, schema: dict[str, Any], path: str) -> _Check:
    message = f"must NOT have fewer than {js_number_str(limit)} properties"
    return _limit("minProperties", lambda d: len(d) >= limit, message)


def _kw_required(b: _Builder, names: list[str], schema: dict[str, Any], path: str) -> _Check | None:
    if not names:
        return None

    def check(data: Any, at: str, run: _Run) -> bool:
        valid = True
        for name in names:
            if name not in data:
                valid = run.fail(at, f"must have required property '{name}'", "required")
                if not run.all_errors:
                    break
        return valid

    return check


def _kw_property_names(b: _Builder, sub: Any, schema: dict[str, Any], path: str) -> _Check | None:
    if b.always_valid(sub):
        return None
    node = b.node(sub, path + "/propertyNames")

    def check(data: Any, at: str, run: _Run) -> bool:
        valid = True
        for key in _js_keys(data):
            if not _validate_composite(node, key, at, run):
                valid = run.fail(at, "property name must be valid", "propertyNames", append=True)
                if not run.all_errors:
                    break
        return valid

    return check


def _kw_additional_properties(b: _Builder, sub: Any, schema: dict[str, Any], path: str) -> _Check | None:
    if b.always_valid(sub):
        return None
    declared = schema.get("properties")
    names = frozenset(declared) if isinstance(declared, dict) else frozenset()
    patterns = schema.get("patternProperties")
    regexes = [_compile_pattern(p) for p in _js_keys(patterns)] if isinstance(patterns, dict) else []
    node = None if sub is False else b.node(sub, path + "/additionalProperties")

    def check(data: Any, at: str, run: _Run) -> bool:
        valid = True
        for key in _js_keys(data):
            if key in names or any(r.search(key) for r in regexes):
                continue
            if node is None:
                valid = run.fail(at, "must NOT have additional properties", "additionalProperties")
            elif not _validate(node, data[key], at + _pointer(key), run):
                valid = False
            if not valid and not run.all_errors:
                break
        return valid

    return check


def _required_when(keyword: str, deps: dict[str, Any]) -> list[_Check]:
    """Property dependencies (``{"a": ["b"]}``), one check per property in JavaScript key order."""
    return [_needs(keyword, prop, deps[prop]) for prop in _js_keys(deps) if isinstance(deps[prop], list) and deps[prop]]


def _needs(keyword: str, prop: str, needed: list[str]) -> _Check:
    noun = "property" if len(needed) == 1 else "properties"
    message = f"must have {noun} {', '.join(needed)} when property {prop} is present"

    def check(data: Any, at: str, run: _Run) -> bool:
        valid = True
        if prop in data:
            for name in needed:
                if name not in data:
                    valid = run.fail(at, message, keyword)
                    if not run.all_errors:
                        break
        return valid

    return check


def _schema_when(b: _Builder, keyword: str, deps: dict[str, Any], path: str) -> list[_Check]:
    """Schema dependencies (``{"a": {...}}``): the schema applies to the object when ``a`` is present."""
    return [
        _applies_when(prop, b.node(deps[prop], f"{path}/{keyword}{_fragment(prop)}"))
        for prop in _js_keys(deps)
        if not isinstance(deps[prop], list) and not b.always_valid(deps[prop])
    ]


def _applies_when(prop: str, node: _Node) -> _Check:
    return lambda data, at, run: prop not in data or _validate(node, data, at, run)


def _sequence(checks: list[_Check]) -> _Check | None:
    if not checks:
        return None

    def check(data: Any, at: str, run: _Run) -> bool:
        valid = True
        for item in checks:
            if not item(data, at, run):
                valid = False
                if not run.all_errors:
                    break
        return valid

    return check


def _kw_dependencies(b: _Builder, deps: dict[str, Any], schema: dict[str, Any], path: str) -> _Check | None:
    # Ajv checks every property dependency before any schema dependency.
    return _sequence(_required_when("dependencies", deps) + _schema_when(b, "dependencies", deps, path))


def _kw_dependent_required(b: _Builder, deps: dict[str, Any], schema: dict[str, Any], path: str) -> _Check | None:
    return _sequence(_required_when("dependentRequired", deps))


def _kw_dependent_schemas(b: _Builder, deps: dict[str, Any], schema: dict[str, Any], path: str) -> _Check | None:
    return _sequence(_schema_when(b, "dependentSchemas", deps, path))


def _kw_properties(b: _Builder, props: dict[str, Any], schema: dict[str, Any], path: str) -> _Check | None:
    nodes = [
        (name, _pointer(name), b.node(props[name], f"{path}/properties{_fragment(name)}"))
        for name in _js_keys(props)
        if not b.always_valid(props[name])
    ]

    def check(data: Any, at: str, run: _Run) -> bool:
        valid = True
        for name, pointer, node in nodes:
            if name in data and not _validate(node, data[name], at + pointer, run):
                valid = False
                if not run.all_errors:
                    break
        return valid

    return check if nodes else None


def _kw_pattern_properties(b: _Builder, patterns: dict[str, Any], schema: dict[str, Any], path: str) -> _Check | None:
    compiled = [(_compile_pattern(p), patterns[p], p) for p in _js_keys(patterns)]
    nodes = [
        (regex, b.node(sub, f"{path}/patternProperties{_fragment(p)}"))
        for regex, sub, p in compiled
        if not b.always_valid(sub)
    ]

    def check(data: Any, at: str, run: _Run) -> bool:
        valid = True
        for regex, node in nodes:
            for key in _js_keys(data):
                if regex.search(key) and not _validate(node, data[key], at + _pointer(key), run):
                    valid = False
                    if not run.all_errors:
                        return False
        return valid

    return check if nodes else None


_KeywordBuilder = Callable[[_Builder, Any, dict[str, Any], str], "_Check | None"]

_KEYWORD_BUILDERS: dict[str, _KeywordBuilder] = {
    "$ref": _kw_ref,
    # Without dynamic scopes these resolve like $ref; jsonschema judges validity (see _DELEGATED).
    "$recursiveRef": _kw_ref,
    "$dynamicRef": _kw_ref,
    "const": _kw_const,
    "enum": _kw_enum,
    "not": _kw_not,
    "anyOf": _kw_any_of,
    "oneOf": _kw_one_of,
    "allOf": _kw_all_of,
    "if": _kw_if,
    "maximum": _kw_maximum,
    "minimum": _kw_minimum,
    "exclusiveMaximum": _kw_exclusive_maximum,
    "exclusiveMinimum": _kw_exclusive_minimum,
    "multipleOf": _kw_multiple_of,
    "maxLength": _kw_max_length,
    "minLength": _kw_min_length,
    "pattern": _kw_pattern,
    "maxItems": _kw_max_items,
    "minItems": _kw_min_items,
    "additionalItems": _kw_additional_items,
    "prefixItems": _kw_prefix_items,
    "items": _kw_items,
    "contains": _kw_contains,
    "uniqueItems": _kw_unique_items,
    "maxProperties": _kw_max_properties,
    "minProperties": _kw_min_properties,
    "required": _kw_required,
    "propertyNames": _kw_property_names,
    "additionalProperties": _kw_additional_properties,
    "dependencies": _kw_dependencies,
    "dependentRequired": _kw_dependent_required,
    "dependentSchemas": _kw_dependent_schemas,
    "properties": _kw_properties,
    "patternProperties": _kw_pattern_properties,
}


# --- meta-schemas --------------------------------------------------------------------------------

_METASCHEMA_FILES = {
    DRAFT_04: ("draft4", "http://json-schema.org/draft-04/schema#"),
    DRAFT_06: ("draft6", "http://json-schema.org/draft-06/schema#"),
    DRAFT_07: ("draft7", "http://json-schema.org/draft-07/schema#"),
}


def _load_metaschema(folder: str, uri: str) -> Any:
    # Reading the file directly costs ~1 ms; importing jsonschema_specifications loads every
    # bundled document (~0.1 s), so that public route is only the fallback.
    import importlib.util

    spec = importlib.util.find_spec("jsonschema_specifications")
    for location in (spec.submodule_search_locations or []) if spec else []:
        path = os.path.join(location, "schemas", folder, "metaschema.json")
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as handle:
                return json.load(handle)
    from jsonschema_specifications import REGISTRY

    return REGISTRY.contents(uri)


@cache
def _metaschema_node(dialect: str) -> _Node:
    folder, uri = _METASCHEMA_FILES[dialect]
    meta = _load_metaschema(folder, uri)
    if dialect == DRAFT_07:
        # Ajv ships the earlier draft-07 meta-schema revision, which still forbids empty or repeated enums.
        meta["properties"]["enum"] = {"type": "array", "items": True, "minItems": 1, "uniqueItems": True}
    return _Builder(meta, dialect, None).root


def _meta_validation_error(schema: Any, dialect: str) -> str | None:
    """Ajv's ``errorsText`` for the schema against its dialect's meta-schema, or None when it conforms."""
    if dialect in _METASCHEMA_FILES:
        run = _Run(all_errors=False)
        if _validate(_metaschema_node(dialect), schema, "", run):
            return None
        return ", ".join(f"data{e.instance_path} {e.message}" for e in run.errors)
    # The 2019-09/2020-12 meta-schemas are built from vocabularies joined by $dynamicRef, which the
    # walker resolves only statically, so jsonschema checks them.
    from jsonschema.exceptions import best_match

    validator_class = _jsonschema_class(dialect)
    error = best_match(validator_class(validator_class.META_SCHEMA).iter_errors(schema))
    if error is None:
        return None
    converted = _from_jsonschema_error(error)
    return f"data{converted.instance_path} {converted.message}"


def _jsonschema_class(dialect: str) -> Any:
    from jsonschema import Draft201909Validator, Draft202012Validator

    return Draft201909Validator if dialect == DRAFT_2019_09 else Draft202012Validator


def _from_jsonschema_error(error: Any) -> SchemaError:
    """Word a jsonschema error as Ajv would, for the keywords the walker leaves to jsonschema."""
    path = "".join(_pointer(str(part)) for part in error.absolute_path)
    keyword, value, instance = error.validator, error.validator_value, error.instance
    messages: dict[str, Callable[[], str]] = {
        "type": lambda: f"must be {js_string(value)}",
        "enum": lambda: "must be equal to one of the allowed values",
        "const": lambda: "must be equal to constant",
        "required": lambda: f"must have required property '{next((n for n in value if n not in instance), '')}'",
        "minimum": lambda: f"must be >= {js_number_str(value)}",
        "maximum": lambda: f"must be <= {js_number_str(value)}",
        "exclusiveMinimum": lambda: f"must be > {js_number_str(value)}",
        "exclusiveMaximum": lambda: f"must be < {js_number_str(value)}",
        "minLength": lambda: f"must NOT have fewer than {js_number_str(value)} characters",
        "maxLength": lambda: f"must NOT have more than {js_number_str(value)} characters",
        "minItems": lambda: f"must NOT have fewer than {js_number_str(value)} items",
        "maxItems": lambda: f"must NOT have more than {js_number_str(value)} items",
        "pattern": lambda: f'must match pattern "{value}"',
        "additionalProperties": lambda: "must NOT have additional properties",
        "unevaluatedProperties": lambda: "must NOT have unevaluated properties",
        "anyOf": lambda: "must match a schema in anyOf",
        "oneOf": lambda: "must match exactly one schema in oneOf",
        "not": lambda: "must NOT be valid",
    }
    build = messages.get(keyword)
    return SchemaError(path, build() if build else error.message, keyword)


# --- public API ----------------------------------------------------------------------------------


class CompiledSchema:
    """A compiled response schema. Build it with :func:`compile_schema`, which memoises it.

    Attributes:
        schema: the schema as first compiled (a private copy; equal schemas share it).
        dialect: ``draft-07`` unless ``$schema`` named another draft.
        warnings: the ``unknown format ...`` lines produced when it was compiled.
    """

    __slots__ = ("_delegate", "_root", "dialect", "schema", "warnings")

    def __init__(self, schema: Any, dialect: str, root: _Node, delegate: Any, warnings: tuple[str, ...]) -> None:
        self.schema = schema
        self.dialect = dialect
        self.warnings = warnings
        self._root = root
        self._delegate = delegate

    def is_valid(self, instance: Any) -> bool:
        """Whether ``instance`` satisfies the schema."""
        if self._delegate is not None:
            return bool(self._delegate.is_valid(instance))
        return _validate(self._root, instance, "", _Run(all_errors=False))

    def first_error(self, instance: Any) -> SchemaError | None:
        """The error Ajv (``allErrors: false``) reports first, or None when ``instance`` is valid."""
        if self._delegate is not None and self._delegate.is_valid(instance):
            return None
        run = _Run(all_errors=False)
        if not _validate(self._root, instance, "", run):
            return run.errors[0]
        if self._delegate is None:
            return None
        from jsonschema.exceptions import best_match

        return _from_jsonschema_error(best_match(self._delegate.iter_errors(instance)))

    def all_errors(self, instance: Any) -> list[SchemaError]:
        """Every error, as Ajv with ``allErrors: true`` lists them (used by ``llm.invoke``)."""
        if self._delegate is not None and self._delegate.is_valid(instance):
            return []
        run = _Run(all_errors=True)
        if _validate(self._root, instance, "", run) and self._delegate is not None:
            return [_from_jsonschema_error(e) for e in self._delegate.iter_errors(instance)]
        return run.errors


_CACHE: dict[str, CompiledSchema] = {}
_CACHE_LOCK = threading.Lock()


def _dialect_of(schema: Any) -> str:
    if not isinstance(schema, dict):
        return DRAFT_07
    uri = schema.get("$schema")
    if uri is None:
        return DRAFT_07
    if not isinstance(uri, str):
        raise SchemaCompileError("$schema must be a string")
    key = re.sub(r"^https?://", "", uri).removesuffix("#")
    if key not in _DIALECT_BY_URI:
        raise SchemaCompileError(f'no schema with key or ref "{uri}"')
    return _DIALECT_BY_URI[key]


def _compile(schema: Any, warnings: list[str]) -> CompiledSchema:
    if not isinstance(schema, (dict, list, bool)):
        raise SchemaCompileError("schema must be object or boolean")
    if isinstance(schema, dict) and "$id" in schema and not isinstance(schema["$id"], str):
        raise SchemaCompileError("schema $id must be string")
    dialect = _dialect_of(schema)
    problem = _meta_validation_error(schema, dialect)
    if problem is not None:
        raise SchemaCompileError(f"schema is invalid: {problem}")
    root = _Builder(schema, dialect, warnings).root
    delegate = None
    if dialect in (DRAFT_2019_09, DRAFT_2020_12) and _mentions(schema, _DELEGATED):
        delegate = _jsonschema_class(dialect)(schema)
    return CompiledSchema(schema, dialect, root, delegate, tuple(warnings))


def compile_schema(schema: Any, *, warn: Callable[[str], None] | None = None) -> CompiledSchema:
    """Compile a response schema, or raise :class:`SchemaCompileError` with Ajv's wording.

    Compiled schemas are memoised by ``stable_stringify(schema)`` (R-GEN-14): structurally equal
    schemas share one validator, and only a real compilation reports ``unknown format ...`` lines
    to ``warn`` (the reference prints them to stderr once per process, when Ajv compiles).
    """
    copy = _json_copy(schema)
    key = stable_stringify(copy)
    with _CACHE_LOCK:
        compiled = _CACHE.get(key)
        if compiled is not None:
            return compiled
        warnings: list[str] = []
        try:
            compiled = _compile(copy, warnings)
        finally:
            if warn is not None:
                for line in warnings:
                    warn(line)
        _CACHE[key] = compiled
        return compiled


def validation_failure(label: str, compiled: CompiledSchema, instance: Any) -> str | None:
    """The R-GEN-13 sentence for ``instance``'s first error, or None when it is valid."""
    error = compiled.first_error(instance)
    if error is None:
        return None
    return f"{label} response failed schema validation at {error.instance_path or '/'}: {error.message}"
