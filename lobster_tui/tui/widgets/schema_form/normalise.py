"""Turning a JSON Schema into the tree of field specifications a form is built from.

This module imports no Textual, so it is cheap to test and to reason about. It answers one
question per schema node: *which widget shows this part, and with which options?* It resolves
local ``$ref`` (``#/$defs/...``, ``#/definitions/...``, any JSON Pointer into the root), merges
``allOf`` and ``$ref`` siblings, reads ``type: [T, "null"]`` (and a ``null`` branch of
``anyOf``/``oneOf``) as a nullable ``T``, splits other type lists into a union, and decides
which parts a form cannot render: those become ``raw`` nodes, edited as JSON.

Validation is never done here: the core's ``schema`` module judges every answer against the
original schema. A spec only has to *render* the schema faithfully; constraints the form cannot
express as widgets (``not``, ``uniqueItems``, ``dependencies``...) are still checked, and their
errors still show beside the right field.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import unquote

from lobster_tui.core.jsvalues import UNDEFINED, dumps_compact

__all__ = [
    "CHECKLIST_LIMIT",
    "MAX_DEPTH",
    "MAX_REF_REPEATS",
    "RADIO_LIMIT",
    "FieldSpec",
    "Kind",
    "fits",
    "json_equal",
    "normalise",
    "prefill",
    "value_label",
    "variant_for",
]

Kind = Literal[
    "string", "number", "integer", "boolean", "choice", "const", "object", "array", "checklist", "union", "raw"
]

MAX_DEPTH = 8
"""Nesting levels (properties, items, variants) rendered as widgets; deeper parts are JSON."""

MAX_REF_REPEATS = 3
"""How often one ``$ref`` may enter itself along a path before the rest is shown as JSON."""

RADIO_LIMIT = 4
"""Choices with at most this many options are radio buttons; more make a drop-down."""

CHECKLIST_LIMIT = 12
"""Arrays of an enum with at most this many options are a checklist instead of rows."""

MULTILINE_LENGTH = 200
"""Strings allowed to be longer than this get a multi-line editor."""

_MULTILINE_FORMATS = frozenset({"markdown", "textarea", "multiline", "text", "html"})

# Keywords that say which JSON type a typeless schema means (Ajv applies them to that type only).
_TYPE_HINTS: dict[str, frozenset[str]] = {
    "object": frozenset(
        {
            "properties",
            "required",
            "additionalProperties",
            "patternProperties",
            "minProperties",
            "maxProperties",
            "propertyNames",
            "dependencies",
            "dependentRequired",
            "dependentSchemas",
        }
    ),
    "array": frozenset({"items", "prefixItems", "additionalItems", "minItems", "maxItems", "uniqueItems", "contains"}),
    "string": frozenset({"minLength", "maxLength", "pattern", "format", "contentMediaType", "contentEncoding"}),
    "number": frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}),
}

_LOWER_BOUNDS = frozenset({"minLength", "minItems", "minProperties", "minimum", "exclusiveMinimum"})
_UPPER_BOUNDS = frozenset({"maxLength", "maxItems", "maxProperties", "maximum", "exclusiveMaximum"})
# Later schemas in a merge override these: they describe, they do not constrain.
_ANNOTATIONS = frozenset(
    {"title", "description", "default", "examples", "$comment", "readOnly", "writeOnly", "deprecated", "x-multiline"}
)
# Scaffolding that a merge keeps from the first schema that has it.
_SCAFFOLDING = frozenset({"$schema", "$id", "id", "$defs", "definitions", "$anchor"})


@dataclass(eq=False)
class FieldSpec:
    """How one schema node is rendered.

    ``schema`` holds the node's own keywords after ``$ref``/``allOf`` were merged in; the child
    specs (``properties``, ``items``, ``variants``, ``extra``) are already normalised.
    """

    kind: Kind
    schema: dict[str, Any]
    nullable: bool = False
    properties: dict[str, FieldSpec] = field(default_factory=dict)
    required: frozenset[str] = frozenset()
    extra: FieldSpec | None = None
    """Value spec for keys beyond ``properties`` (``additionalProperties``, ``patternProperties``)."""
    extra_always: bool = False
    """Show the key-value editor even when there are no extra keys yet."""
    items: FieldSpec | None = None
    variants: tuple[FieldSpec, ...] = ()
    labels: tuple[str, ...] = ()
    """Option labels (choice, checklist) or variant labels (union)."""
    options: tuple[Any, ...] = ()
    """Allowed values (choice, checklist); the one value of a const."""
    discriminator: str | None = None
    """The property whose ``const`` tells a union's object variants apart."""
    reason: str = ""
    """For ``raw`` nodes: why this part is JSON rather than widgets."""

    @property
    def title(self) -> str | None:
        """The schema's ``title``, when it is a non-empty string."""
        title = self.schema.get("title")
        return title if isinstance(title, str) and title.strip() else None

    @property
    def description(self) -> str | None:
        """The schema's ``description``, when it is a non-empty string."""
        text = self.schema.get("description")
        return text if isinstance(text, str) and text.strip() else None

    @property
    def default(self) -> Any:
        """The schema's ``default``, or UNDEFINED."""
        return self.schema.get("default", UNDEFINED)

    @property
    def format(self) -> str | None:
        """The string ``format`` (``date``, ``email``...), when there is one."""
        value = self.schema.get("format")
        return value if isinstance(value, str) else None

    @property
    def multiline(self) -> bool:
        """Whether a string deserves a multi-line editor."""
        if self.schema.get("x-multiline") is True:
            return True
        if isinstance(self.schema.get("contentMediaType"), str) or self.format in _MULTILINE_FORMATS:
            return True
        limit = self.schema.get("maxLength")
        return _is_number(limit) and limit > MULTILINE_LENGTH

    def number(self, keyword: str) -> int | float | None:
        """A numeric keyword (``minimum``, ``maxItems``...), or None when absent or not a number."""
        value = self.schema.get(keyword)
        return value if _is_number(value) else None


# --- JSON helpers --------------------------------------------------------------------------------


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or isinstance(value, float) and math.isfinite(value) and value.is_integer()


def json_equal(a: Any, b: Any) -> bool:
    """Equality of JSON values: ``1 == 1.0`` but ``true != 1``; key order does not matter."""
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return a is b
    if _is_number(a) and _is_number(b):
        return bool(a == b)
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return False


def value_label(value: Any) -> str:
    """How an option is labelled: strings as they are, anything else as compact JSON."""
    if isinstance(value, str):
        return value if value.strip() else dumps_compact(value)
    return dumps_compact(value)


# --- merging and references ----------------------------------------------------------------------


class _Unrenderable(Exception):
    """This part of the schema is shown as JSON; the message says why."""


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """Both schemas at once (for ``allOf``, ``$ref`` siblings, a union's shared keywords)."""
    out = dict(base)
    for key, value in extra.items():
        if key not in out or key in _ANNOTATIONS:
            out[key] = value
            continue
        old = out[key]
        if key in _SCAFFOLDING or json_equal(old, value):
            continue
        if key == "properties" and isinstance(old, dict) and isinstance(value, dict):
            merged = dict(old)
            for name, sub in value.items():
                merged[name] = {"allOf": [old[name], sub]} if name in old else sub
            out[key] = merged
        elif key == "required" and isinstance(old, list) and isinstance(value, list):
            out[key] = old + [name for name in value if name not in old]
        elif key == "type":
            out[key] = _intersect_types(old, value)
        elif key in _LOWER_BOUNDS and _is_number(old) and _is_number(value):
            out[key] = max(old, value)
        elif key in _UPPER_BOUNDS and _is_number(old) and _is_number(value):
            out[key] = min(old, value)
        elif key == "allOf" and isinstance(old, list) and isinstance(value, list):
            out[key] = old + value
        elif key == "enum" and isinstance(old, list) and isinstance(value, list):
            out[key] = [item for item in old if any(json_equal(item, other) for other in value)]
        else:
            raise _Unrenderable(f"'{key}' differs between combined schemas")
    return out


def _intersect_types(a: Any, b: Any) -> list[str]:
    left = [a] if isinstance(a, str) else list(a) if isinstance(a, list) else []
    right = [b] if isinstance(b, str) else list(b) if isinstance(b, list) else []
    out = [t for t in left if t in right]
    # "integer" is a kind of "number", so their intersection is "integer".
    if "integer" in left and "number" in right or "number" in left and "integer" in right:
        out.append("integer")
    if not out:
        raise _Unrenderable("combined schemas allow no common type")
    return list(dict.fromkeys(out))


@dataclass(frozen=True)
class _Walk:
    """Where the normaliser is: the root (for references), the references entered, the depth."""

    root: Any
    refs: tuple[str, ...] = ()
    depth: int = 0

    def deeper(self) -> _Walk:
        return _Walk(self.root, self.refs, self.depth + 1)

    def entering(self, ref: str) -> _Walk:
        return _Walk(self.root, (*self.refs, ref), self.depth)


def _resolve(ref: str, root: Any) -> Any:
    base, _, fragment = ref.partition("#")
    root_id = root.get("$id") if isinstance(root, dict) else None
    if base and not (isinstance(root_id, str) and root_id.split("#")[0] == base):
        raise _Unrenderable(f"$ref {ref} points outside this schema")
    if fragment and not fragment.startswith("/"):
        raise _Unrenderable(f"$ref {ref} uses an anchor")
    node = root
    for token in fragment.split("/")[1:] if fragment else ():
        token = unquote(token).replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            raise _Unrenderable(f"$ref {ref} does not resolve")
    return node


def _as_schema(value: Any) -> dict[str, Any]:
    if value is True:
        return {}
    if value is False:
        raise _Unrenderable("no value is allowed here")
    if not isinstance(value, dict):
        raise _Unrenderable("not a schema")
    return value


def _flatten(schema: Any, walk: _Walk) -> tuple[dict[str, Any], _Walk]:
    """Resolve ``$ref`` and ``allOf`` until neither is left at this node."""
    current = _as_schema(schema)
    while True:
        ref = current.get("$ref")
        if isinstance(ref, str):
            if walk.refs.count(ref) >= MAX_REF_REPEATS:
                raise _Unrenderable("the schema refers to itself too deeply")
            target = _as_schema(_resolve(ref, walk.root))
            walk = walk.entering(ref)
            siblings = {k: v for k, v in current.items() if k != "$ref"}
            current = _merge(target, siblings)
            continue
        parts = current.get("allOf")
        if isinstance(parts, list):
            merged = {k: v for k, v in current.items() if k != "allOf"}
            for part in parts:
                flat, walk = _flatten(part, walk)
                merged = _merge(merged, flat)
            current = merged
            continue
        return current, walk


# --- the walk ------------------------------------------------------------------------------------


def normalise(schema: Any) -> FieldSpec:
    """The field tree for a response schema (any JSON value; unusable parts become ``raw``)."""
    return _node(schema, _Walk(schema))


def _raw(schema: Any, reason: str) -> FieldSpec:
    keywords = schema if isinstance(schema, dict) else {}
    return FieldSpec("raw", {k: keywords[k] for k in ("title", "description", "default") if k in keywords}, reason=reason)


def _node(schema: Any, walk: _Walk) -> FieldSpec:
    if walk.depth > MAX_DEPTH:
        return _raw(schema, "nested too deeply for a form")
    try:
        flat, walk = _flatten(schema, walk)
        return _typed(flat, walk)
    except _Unrenderable as reason:
        return _raw(schema, str(reason))


def _const_of(schema: dict[str, Any]) -> Any:
    if "const" in schema:
        return schema["const"]
    enum = schema.get("enum")
    if isinstance(enum, list) and len(enum) == 1:
        return enum[0]
    return UNDEFINED


def _is_null_branch(schema: dict[str, Any]) -> bool:
    return schema.get("type") == "null" or schema.get("type") == ["null"] or ("const" in schema and schema["const"] is None)


def _typed(schema: dict[str, Any], walk: _Walk) -> FieldSpec:  # noqa: C901 - one dispatch reads best
    if "if" in schema:
        raise _Unrenderable("if/then/else depends on the value")
    if "oneOf" in schema and "anyOf" in schema:
        raise _Unrenderable("both anyOf and oneOf")
    for keyword in ("oneOf", "anyOf"):
        if isinstance(schema.get(keyword), list):
            return _union(schema, keyword, walk)

    raw_types = schema.get("type")
    types: list[str]
    if isinstance(raw_types, str):
        types = [raw_types]
    elif isinstance(raw_types, list):
        types = [t for t in raw_types if isinstance(t, str)]
    else:
        types = _inferred_types(schema)
    nullable = "null" in types or schema.get("nullable") is True
    types = [t for t in types if t != "null"]

    if "const" in schema:
        return FieldSpec("const", schema, nullable=nullable and schema["const"] is not None, options=(schema["const"],))
    if isinstance(schema.get("enum"), list):
        return _choice(schema, schema["enum"], types, nullable)
    if not types:
        if nullable:
            return FieldSpec("const", schema, options=(None,))
        if "not" in schema:
            raise _Unrenderable("'not' without a type")
        raise _Unrenderable("any JSON value")
    if set(types) == {"integer", "number"}:
        types = ["number"]
    if len(types) > 1:
        base = {k: v for k, v in schema.items() if k != "type"}
        variants = tuple(_node({**base, "type": t}, walk.deeper()) for t in types)
        return FieldSpec("union", schema, nullable=nullable, variants=variants, labels=_unique(list(types)))
    kind = types[0]
    if kind in ("string", "number", "integer", "boolean"):
        return FieldSpec(kind, schema, nullable=nullable)  # type: ignore[arg-type]
    if kind == "object":
        return _object(schema, walk, nullable)
    if kind == "array":
        return _array(schema, walk, nullable)
    raise _Unrenderable(f"unknown type {kind}")


def _inferred_types(schema: dict[str, Any]) -> list[str]:
    found = [name for name, hints in _TYPE_HINTS.items() if hints & schema.keys()]
    if len(found) > 1:
        raise _Unrenderable("keywords of several types without 'type'")
    return found


def _choice(schema: dict[str, Any], enum: list[Any], types: list[str], nullable: bool) -> FieldSpec:
    options = [value for value in enum if not types or any(_has_type(t, value) for t in types) or value is None and nullable]
    if not options:
        options = list(enum)
    names = schema.get("x-enumNames", schema.get("enumNames"))
    if isinstance(names, list) and len(names) == len(enum) and all(isinstance(n, str) for n in names):
        by_value = [names[next(i for i, v in enumerate(enum) if json_equal(v, o))] for o in options]
        labels = _unique(by_value)
    else:
        labels = _unique([value_label(v) for v in options])
    has_null = any(v is None for v in options)
    return FieldSpec("choice", schema, nullable=nullable and not has_null, options=tuple(options), labels=labels)


def _has_type(name: str, value: Any) -> bool:
    checks = {
        "string": lambda v: isinstance(v, str),
        "number": _is_number,
        "integer": _is_integer,
        "boolean": lambda v: isinstance(v, bool),
        "null": lambda v: v is None,
        "object": lambda v: isinstance(v, dict),
        "array": lambda v: isinstance(v, list),
    }
    check = checks.get(name)
    return check(value) if check else False


def _unique(labels: list[str]) -> tuple[str, ...]:
    """Labels with repeats told apart (``a``, ``a (2)``), so every option can be picked by name."""
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        out.append(label if seen[label] == 1 else f"{label} ({seen[label]})")
    return tuple(out)


def _union(schema: dict[str, Any], keyword: str, walk: _Walk) -> FieldSpec:
    base = {k: v for k, v in schema.items() if k != keyword}
    branches = [_flatten(branch, walk) for branch in schema[keyword]]
    nullable = any(_is_null_branch(b) for b, _ in branches)
    walks = [w for b, w in branches if not _is_null_branch(b)]
    rest = [b for b, _ in branches if not _is_null_branch(b)]
    if not rest:
        return FieldSpec("const", base, options=(None,))
    # A list of titled constants is the usual way to write an enum with labels.
    if all(_const_of(b) is not UNDEFINED for b in rest) and not {"properties", "items"} & base.keys():
        values = [_const_of(b) for b in rest]
        labels = [b.get("title") if isinstance(b.get("title"), str) else value_label(v) for b, v in zip(rest, values, strict=True)]
        return FieldSpec("choice", base, nullable=nullable, options=tuple(values), labels=_unique(labels))
    if len(rest) == 1:
        spec = _typed(_merge(base, rest[0]), walks[0])
        spec.nullable = spec.nullable or nullable
        return spec
    variants = tuple(_node(_merge(base, b), w.deeper()) for b, w in zip(rest, walks, strict=True))
    discriminator = _discriminator(variants)
    labels = []
    for index, variant in enumerate(variants):
        if variant.title:
            labels.append(variant.title)
        elif discriminator is not None:
            labels.append(value_label(variant.properties[discriminator].options[0]))
        elif variant.kind in ("raw", "union"):
            labels.append(f"option {index + 1}")
        else:
            labels.append(variant.kind)
    return FieldSpec(
        "union", base, nullable=nullable, variants=variants, labels=_unique(labels), discriminator=discriminator
    )


def _discriminator(variants: tuple[FieldSpec, ...]) -> str | None:
    if not all(v.kind == "object" for v in variants):
        return None
    for name in variants[0].properties:
        consts = [v.properties.get(name) for v in variants]
        if all(c is not None and c.kind == "const" for c in consts):
            values = [c.options[0] for c in consts if c is not None]
            if all(not json_equal(a, b) for i, a in enumerate(values) for b in values[i + 1 :]):
                return name
    return None


def _object(schema: dict[str, Any], walk: _Walk, nullable: bool) -> FieldSpec:
    props = schema.get("properties")
    props = props if isinstance(props, dict) else {}
    required = [name for name in schema.get("required", []) if isinstance(name, str)] if isinstance(
        schema.get("required"), list
    ) else []
    additional = schema.get("additionalProperties", True)
    children = {name: _node(sub, walk.deeper()) for name, sub in props.items()}
    for name in required:
        # A required name without a property schema still needs somewhere to be typed.
        if name not in children:
            children[name] = _node(additional if isinstance(additional, dict) else True, walk.deeper())
    extra: FieldSpec | None
    if isinstance(schema.get("patternProperties"), dict) and schema["patternProperties"]:
        extra, always = _raw({}, "keys matched by patternProperties"), True
    elif additional is False:
        extra, always = None, False
    elif additional is True or additional == {}:
        extra, always = _raw({}, "any JSON value"), not children
    else:
        extra, always = _node(additional, walk.deeper()), True
    return FieldSpec(
        "object",
        schema,
        nullable=nullable,
        properties=children,
        required=frozenset(required),
        extra=extra,
        extra_always=always,
    )


def _array(schema: dict[str, Any], walk: _Walk, nullable: bool) -> FieldSpec:
    items = schema.get("items", True)
    if isinstance(items, list) or "prefixItems" in schema:
        raise _Unrenderable("tuple arrays (a schema per position)")
    item = _node(items, walk.deeper())
    if item.kind == "choice" and not item.nullable and len(item.options) <= CHECKLIST_LIMIT:
        return FieldSpec("checklist", schema, nullable=nullable, items=item, options=item.options, labels=item.labels)
    return FieldSpec("array", schema, nullable=nullable, items=item)


# --- values against specs ------------------------------------------------------------------------


def fits(spec: FieldSpec, value: Any) -> bool:  # noqa: C901 - a table of kinds
    """Whether the widgets for ``spec`` can show ``value`` exactly (all the way down)."""
    if value is None and spec.nullable:
        return True
    kind = spec.kind
    if kind == "raw":
        return value is not UNDEFINED
    if kind == "string":
        return isinstance(value, str)
    if kind == "number":
        return _is_number(value)
    if kind == "integer":
        return _is_integer(value)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind in ("const", "choice"):
        return any(json_equal(value, option) for option in spec.options)
    if kind == "checklist":
        # Ticks cannot say "twice": a repeated value does not fit.
        return (
            isinstance(value, list)
            and all(any(json_equal(v, o) for o in spec.options) for v in value)
            and all(not json_equal(a, b) for i, a in enumerate(value) for b in value[i + 1 :])
        )
    if kind == "array":
        return isinstance(value, list) and spec.items is not None and all(fits(spec.items, v) for v in value)
    if kind == "union":
        return variant_for(spec, value) is not None
    if kind == "object":
        if not isinstance(value, dict):
            return False
        for key, item in value.items():
            child = spec.properties.get(key, spec.extra)
            if child is None or not fits(child, item):
                return False
        return True
    return False


def variant_for(spec: FieldSpec, value: Any) -> int | None:
    """The union variant that shows ``value`` best, or None when none can."""
    best: tuple[int, int] | None = None
    for index, variant in enumerate(spec.variants):
        if not fits(variant, value):
            continue
        score = 0
        if isinstance(value, dict) and variant.kind == "object":
            score = sum(1 for key in value if key in variant.properties) - sum(
                1 for key in variant.required if key not in value
            )
        if best is None or score > best[0]:
            best = (score, index)
    return None if best is None else best[1]


def prefill(spec: FieldSpec, given: Any = UNDEFINED) -> Any:
    """The first value of a field: ``given`` (the request's defaults), then the schema's ``default``.

    Objects are filled property by property, so a property's own ``default`` applies wherever
    the request's defaults leave that property out.
    """
    base = given if given is not UNDEFINED else spec.default
    if spec.kind != "object" or not (base is UNDEFINED or isinstance(base, dict)):
        return base
    out = dict(base) if isinstance(base, dict) else {}
    for name, child in spec.properties.items():
        value = prefill(child, out.get(name, UNDEFINED))
        if value is not UNDEFINED:
            out[name] = value
    return out if out or base is not UNDEFINED else UNDEFINED
