"""How schemas become field specs: no Textual here, just the rules."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from lobster_tui.core.jsvalues import UNDEFINED
from lobster_tui.tui.widgets.schema_form.normalise import (
    MAX_REF_REPEATS,
    FieldSpec,
    fits,
    json_equal,
    normalise,
    prefill,
    variant_for,
)
from tests.tui.forms.corpus import NOTIFY, RELEASE, TREE

REPO = Path(__file__).resolve().parents[3]
NORMALISE = REPO / "lobster_tui" / "tui" / "widgets" / "schema_form" / "normalise.py"


def _depth(spec: FieldSpec, path: list[str]) -> FieldSpec:
    for step in path:
        if step == "[]":
            assert spec.items is not None
            spec = spec.items
        else:
            spec = spec.properties[step]
    return spec


def test_normalise_imports_no_textual() -> None:
    # Load the module by its path, so the package's __init__ (which builds widgets) stays out of it.
    code = (
        "import importlib.util, sys; "
        f"spec = importlib.util.spec_from_file_location('normalise', {str(NORMALISE)!r}); "
        "module = importlib.util.module_from_spec(spec); sys.modules['normalise'] = module; "
        "spec.loader.exec_module(module); "
        "module.normalise({'type': 'object', 'properties': {'a': {'type': 'string'}}}); "
        "print(any(m == 'textual' or m.startswith('textual.') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO).stdout
    assert out.strip() == "False"


@pytest.mark.parametrize(
    ("schema", "kind"),
    [
        ({"type": "string"}, "string"),
        ({"type": "integer"}, "integer"),
        ({"type": "number"}, "number"),
        ({"type": ["integer", "number"]}, "number"),
        ({"type": "boolean"}, "boolean"),
        ({"enum": ["a", "b"]}, "choice"),
        ({"const": 3}, "const"),
        ({"type": "null"}, "const"),
        ({"type": "object", "properties": {"a": {}}}, "object"),
        ({"properties": {"a": {"type": "string"}}}, "object"),
        ({"type": "array", "items": {"type": "string"}}, "array"),
        ({"type": "array", "items": {"enum": ["x", "y"]}}, "checklist"),
        ({"type": ["string", "integer"]}, "union"),
        ({"anyOf": [{"type": "string"}, {"type": "object"}]}, "union"),
        ({"minLength": 2}, "string"),
        ({"minimum": 0}, "number"),
        ({}, "raw"),
        (True, "raw"),
        ({"not": {"type": "string"}}, "raw"),
        ({"type": "object", "if": {"required": ["a"]}, "then": {"required": ["b"]}}, "raw"),
        ({"type": "array", "items": [{"type": "string"}, {"type": "number"}]}, "raw"),
        ({"type": "array", "prefixItems": [{"type": "string"}]}, "raw"),
        ({"$ref": "https://example.com/other.json"}, "raw"),
        ({"minLength": 1, "minimum": 1}, "raw"),
    ],
)
def test_kinds(schema: object, kind: str) -> None:
    assert normalise(schema).kind == kind


def test_nullable_forms() -> None:
    assert normalise({"type": ["string", "null"]}).nullable
    assert normalise({"anyOf": [{"type": "integer"}, {"type": "null"}]}).kind == "integer"
    assert normalise({"oneOf": [{"type": "null"}, {"$ref": "#/$defs/a"}], "$defs": {"a": {"type": "boolean"}}}).nullable
    assert normalise({"type": "string", "nullable": True}).nullable
    # null as an enum option is an option, not a toggle
    spec = normalise({"enum": ["a", None], "type": ["string", "null"]})
    assert spec.kind == "choice" and not spec.nullable and spec.options == ("a", None)


def test_refs_resolve_through_defs_and_definitions() -> None:
    spec = normalise(
        {
            "definitions": {"id": {"type": "integer", "title": "Id"}},
            "$defs": {"name": {"type": "string"}},
            "properties": {"id": {"$ref": "#/definitions/id"}, "name": {"$ref": "#/$defs/name", "title": "Name"}},
        }
    )
    assert spec.properties["id"].kind == "integer" and spec.properties["id"].title == "Id"
    # A $ref's siblings annotate it
    assert spec.properties["name"].kind == "string" and spec.properties["name"].title == "Name"


def test_recursion_falls_back_to_json_after_a_few_levels() -> None:
    spec = normalise(TREE)
    path: list[str] = []
    for _ in range(MAX_REF_REPEATS - 1):
        path += ["children", "[]"]
    assert _depth(spec, path).kind == "object"
    deepest = _depth(spec, [*path, "children", "[]"])
    assert deepest.kind == "raw" and "itself" in deepest.reason


def test_allof_merges_and_conflicts_fall_back() -> None:
    spec = normalise(
        {"allOf": [{"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}, {"properties": {"b": {}}}]}
    )
    assert spec.kind == "object" and list(spec.properties) == ["a", "b"] and spec.required == {"a"}
    assert normalise({"allOf": [{"type": "string"}, {"type": "integer"}]}).kind == "raw"
    assert normalise({"allOf": [{"pattern": "a"}, {"pattern": "b"}], "type": "string"}).kind == "raw"
    assert normalise({"allOf": [{"minimum": 1}, {"minimum": 3}], "type": "integer"}).schema["minimum"] == 3


def test_discriminated_union() -> None:
    spec = normalise(NOTIFY).properties["channel"]
    assert spec.kind == "union" and spec.discriminator == "kind"
    assert spec.labels == ("Email", "Slack", "Webhook")
    assert variant_for(spec, {"kind": "slack", "channel": "#x"}) == 1
    assert variant_for(spec, {"kind": "sms"}) is None


def test_titled_constants_are_a_choice() -> None:
    spec = normalise({"oneOf": [{"const": 1, "title": "One"}, {"const": 2, "title": "Two"}]})
    assert spec.kind == "choice" and spec.options == (1, 2) and spec.labels == ("One", "Two")


def test_maps_and_extra_keys() -> None:
    free = normalise({"type": "object"})
    assert free.extra is not None and free.extra.kind == "raw" and free.extra_always
    typed = normalise({"type": "object", "additionalProperties": {"type": "integer"}})
    assert typed.extra is not None and typed.extra.kind == "integer"
    closed = normalise({"type": "object", "properties": {"a": {}}, "additionalProperties": False})
    assert closed.extra is None
    pattern = normalise({"type": "object", "properties": {"a": {}}, "patternProperties": {"^x": {}}})
    assert pattern.extra is not None and pattern.extra.kind == "raw" and pattern.extra_always
    # A required name without a property schema still gets a field.
    assert "z" in normalise({"type": "object", "required": ["z"]}).properties


def test_prefill_prefers_defaults_then_schema_defaults() -> None:
    spec = normalise(RELEASE["responseSchema"])
    assert prefill(spec, RELEASE["defaults"]) == RELEASE["defaults"]
    spec = normalise(
        {"type": "object", "default": {"a": 1}, "properties": {"a": {"type": "integer"}, "b": {"type": "string", "default": "x"}}}
    )
    assert prefill(spec) == {"a": 1, "b": "x"}
    assert prefill(spec, {"a": 2}) == {"a": 2, "b": "x"}
    assert prefill(normalise({"type": "string"})) is UNDEFINED
    assert prefill(normalise({"type": "string", "default": "d"}), "given") == "given"


def test_fits() -> None:
    release = normalise(RELEASE["responseSchema"])
    assert fits(release, RELEASE["defaults"])
    assert not fits(release, {"decision": "maybe"})
    assert fits(normalise({"type": "integer"}), 3.0)
    assert not fits(normalise({"type": "integer"}), True)
    assert not fits(normalise({"type": "array", "items": {"enum": ["a", "b"]}}), ["a", "a"])


def test_json_equal_is_strict_about_booleans() -> None:
    assert json_equal({"a": [1, 2.0]}, {"a": [1.0, 2]})
    assert not json_equal(True, 1)
    assert not json_equal([None], [0])
