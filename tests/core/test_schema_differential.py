"""lobster_tui.core.schema against Ajv itself, where Node and the official runtime's Ajv are installed.

Each (schema, instance) pair goes through Ajv configured as the reference configures it
(``allErrors: false, strict: false, addUsedSchema: false``) and through ``compile_schema``; the
first error (instancePath, message), the compile error message and the ``unknown format``
warnings must agree. A second pass compares ``allErrors: true`` lists (``llm.invoke``).
Set LOBSTER_AJV_DIR to an ``ajv`` package directory, or install the official runtime as .ci/run does.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from lobster_tui.core import schema as schema_module
from lobster_tui.core.schema import SchemaCompileError, compile_schema

pytestmark = pytest.mark.official


def _ajv_dir() -> str | None:
    official_bin = os.environ.get("LOBSTER_OFFICIAL_BIN", "")
    candidates = [
        os.environ.get("LOBSTER_AJV_DIR", ""),
        str(Path(official_bin).resolve().parent.parent / "ajv") if official_bin else "",
        str(Path.home() / ".cache" / "lobster-tui" / "official" / "node_modules" / "ajv"),
        "/work/official-lobster/node_modules/ajv",
    ]
    for candidate in candidates:
        if candidate and (Path(candidate) / "package.json").is_file():
            return candidate
    return None


AJV = _ajv_dir()
if AJV is None or shutil.which("node") is None:
    pytest.skip("Node and Ajv (from the official Lobster runtime) are not installed", allow_module_level=True)

# Reads [schema, instance] lines; prints, per line, Ajv's verdict as the reference would reach it.
_PROBE = r"""
const [ajvDir, flavour, allErrors] = process.argv.slice(1);
const Ajv = require(flavour === "2020" ? ajvDir + "/dist/2020" : ajvDir).default;
let warnings = [];
const logger = {log() {}, warn(m) { warnings.push(String(m)); }, error() {}};
const ajv = new Ajv({allErrors: allErrors === "all", strict: false, addUsedSchema: false, logger});
const lines = require("fs").readFileSync(0, "utf8").split("\n").filter(Boolean);
for (const line of lines) {
  const [schema, instance] = JSON.parse(line);
  warnings = [];
  let out;
  try {
    const validate = ajv.compile(schema);
    out = validate(instance) ? {errors: []} : {errors: validate.errors.map((e) => [e.instancePath, e.message])};
  } catch (e) {
    out = {compileError: e.message};
  }
  out.warnings = warnings;
  console.log(JSON.stringify(out));
}
"""

DECISION = {
    "type": "object",
    "properties": {
        "decision": {"type": "string", "enum": ["approve", "reject"]},
        "n": {"type": "integer", "minimum": 3},
    },
    "required": ["decision"],
    "additionalProperties": False,
}

CORPUS: list[tuple[Any, Any]] = [
    (DECISION, {}),
    (DECISION, {"decision": "maybe"}),
    (DECISION, {"decision": "approve", "n": 1}),
    (DECISION, {"decision": "approve", "x": 1}),
    (DECISION, {"decision": 5}),
    (DECISION, [1]),
    (DECISION, {"decision": "approve", "n": 1.5}),
    (DECISION, {"decision": 5, "n": 1.5, "x": True}),
    (DECISION, {"decision": "reject"}),
    ({"type": "string", "enum": ["a"], "minLength": 2}, 1),
    ({"type": "string", "format": "email", "enum": ["a"]}, 1),
    ({"type": "string", "minLength": 1, "minimum": 3}, 1),
    ({"type": "integer", "minimum": 5, "enum": [1]}, 2.5),
    ({"type": "number", "minimum": 5, "enum": [1]}, "x"),
    ({"type": ["string", "number"]}, None),
    ({"required": ["a"], "dependencies": {"b": ["c"]}, "propertyNames": {"maxLength": 1}}, {"a": 1, "bb": 1}),
    ({"additionalProperties": False, "dependencies": {"b": ["c", "d"]}}, {"b": 1, "x": 1}),
    ({"properties": {"b": {"type": "string"}, "10": {"type": "string"}, "2": {"type": "string"}}}, {"b": 1, "2": 1, "10": 1}),
    ({"additionalProperties": False, "properties": {"a": {}}}, {"z": 1, "10": 1}),
    ({"patternProperties": {"^a": {"type": "string"}, "b$": {"type": "number"}}}, {"ab": True}),
    ({"items": [{"type": "string"}], "additionalItems": False}, [1, "x"]),
    ({"items": {"type": "number"}, "uniqueItems": True}, [1, 2, 1]),
    ({"items": {"type": "integer"}, "uniqueItems": True}, [1, 1.5, 1.5, 1]),
    ({"uniqueItems": True}, [1, True, "1", None, 1.0, [1], {"a": 1}, [1]]),
    ({"contains": {"type": "string"}, "uniqueItems": True}, [1, 1]),
    ({"anyOf": [{"contains": {"type": "string"}}]}, [1]),
    ({"oneOf": [{"type": "string"}, {}, {}]}, 1),
    ({"oneOf": [{"type": "number"}, {"minimum": 0}, {"maximum": 10}]}, 1),
    ({"oneOf": [{"type": "string"}, {"minimum": 5}]}, 1),
    ({"anyOf": [{"type": "string", "minLength": 2}, {"type": "number"}]}, "a"),
    ({"if": {"type": "number"}, "then": {"minimum": 5}, "else": {"type": "string"}}, 1),
    ({"if": {"type": "number"}, "then": False}, 1),
    ({"if": {"minimum": 5}, "else": {"multipleOf": 2}}, 3),
    ({"not": {"type": "number"}}, 1),
    ({"propertyNames": {"pattern": "^[a-z]+$"}}, {"Ab": 1}),
    ({"multipleOf": 0.01}, 1.13),
    ({"multipleOf": 1}, 1e300),
    ({"maximum": 1e21}, 1e22),
    ({"exclusiveMinimum": 0, "exclusiveMaximum": 1e-7}, 1),
    ({"const": {"a": [1]}}, {"a": [True]}),
    ({"enum": [1, "a", None, {"x": [1]}]}, {"x": [1.0]}),
    ({"type": "string", "nullable": True, "maxLength": 1}, None),
    ({"$ref": "#/definitions/d", "enum": ["a"], "definitions": {"d": {"type": "number"}}}, "a"),
    ({"$defs": {"d": {"type": "number"}}, "properties": {"x": {"$ref": "#/$defs/d"}}}, {"x": "s"}),
    ({"definitions": {"d": {"$id": "#foo", "type": "number"}}, "properties": {"x": {"$ref": "#foo"}}}, {"x": "s"}),
    (
        {"$id": "http://example.com/root.json", "definitions": {"d": {"$id": "item.json", "type": "number"}}, "items": {"$ref": "item.json"}},
        ["s"],
    ),
    (
        {"definitions": {"node": {"type": "object", "properties": {"next": {"$ref": "#/definitions/node"}}}}, "$ref": "#/definitions/node"},
        {"next": {"next": 5}},
    ),
    ({"properties": {"a": {"$ref": "#/definitions/d"}, "b": {"$ref": "#/definitions/d"}}, "definitions": {"d": {"format": "y"}}}, {}),
    (
        {
            "not": {"format": "a"},
            "if": {"format": "b"},
            "then": {"format": "c"},
            "contains": {"format": "d"},
            "propertyNames": {"format": "e"},
            "additionalProperties": {"format": "f"},
            "dependencies": {"x": {"format": "g"}},
            "patternProperties": {"^a": {"format": "h"}},
            "additionalItems": {"format": "i"},
            "items": [{"format": "j"}],
            "allOf": [{"format": "k"}],
            "oneOf": [{"format": "l"}],
        },
        1,
    ),
    ({"type": "string", "pattern": "a$"}, "a\n"),
    ({"type": "string", "pattern": "^\\s$"}, "\u00a0"),
    ({"type": "string", "pattern": "\\d"}, "\u0663"),
    ({"type": "string", "maxLength": 1}, "😀"),
    ({"type": "strang"}, 1),
    ({"properties": {"a": {"items": [1]}}}, 1),
    ({"required": ["a", "a"]}, 1),
    ({"enum": []}, 1),
    ({"dependencies": {"a": 5}}, 1),
    ([], 1),
    (5, 1),
    ({"$schema": 5}, 1),
    ({"$schema": "http://example.com/meta"}, 1),
    ({"properties": {"a": {"items": {"$ref": "#/definitions/zz"}}}}, {}),
    ({"pattern": "a{"}, "a"),
    ({"pattern": "\\-"}, "-"),
    ({"pattern": "(?i)a"}, "a"),
    ({"pattern": "a)"}, "a"),
    ({"nullable": True}, 1),
    ({"id": "x", "type": "string"}, 1),
    ({"anyOf": [{"title": "t"}, {"pattern": "("}]}, 1),
]

CORPUS_2020: list[tuple[Any, Any]] = [
    (schema, instance)
    for schema, instance in [
        ({"prefixItems": [{"type": "string"}], "items": False}, ["a", 1]),
        ({"prefixItems": [{"type": "string"}], "items": {"type": "number"}}, ["a", "b"]),
        ({"contains": {"type": "string"}, "minContains": 2, "maxContains": 3}, ["a", 1]),
        ({"contains": {"type": "string"}, "maxContains": 1}, ["a", "b"]),
        ({"dependentRequired": {"a": ["b"]}, "dependentSchemas": {"a": {"required": ["c"]}}}, {"a": 1}),
        ({"allOf": [{"properties": {"a": {"type": "string"}}}], "unevaluatedProperties": False}, {"a": "x", "b": 1}),
        ({"$defs": {"a": {"$anchor": "num", "type": "number"}}, "$ref": "#num"}, "x"),
        ({"type": "string", "minLength": "x"}, "a"),
        ({"items": [{"type": "string"}]}, ["a"]),
    ]
    for schema in [{"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}]
]


def _ajv(cases: list[tuple[Any, Any]], *, flavour: str = "draft7", all_errors: bool = False) -> list[dict[str, Any]]:
    stdin = "".join(json.dumps([schema, instance]) + "\n" for schema, instance in cases)
    result = subprocess.run(
        ["node", "-e", _PROBE, AJV, flavour, "all" if all_errors else "first"],
        input=stdin,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return [json.loads(line) for line in result.stdout.splitlines()]


def _ours(schema: Any, instance: Any, *, all_errors: bool = False) -> dict[str, Any]:
    schema_module._CACHE.clear()  # a fresh compilation each time, so warnings are produced again
    warnings: list[str] = []
    try:
        compiled = compile_schema(schema, warn=warnings.append)
    except SchemaCompileError as exc:
        return {"compileError": exc.message, "warnings": warnings}
    errors = compiled.all_errors(instance) if all_errors else [e for e in [compiled.first_error(instance)] if e]
    return {"errors": [[e.instance_path, e.message] for e in errors], "warnings": warnings}


def _theirs(verdict: dict[str, Any], *, all_errors: bool) -> dict[str, Any]:
    # Ajv warns twice per format (its format keyword sits in both the number and string groups);
    # we warn once. With allErrors: false only the first error is Ajv's report.
    warnings = verdict["warnings"][::2]
    if "compileError" in verdict:
        return {"compileError": verdict["compileError"], "warnings": warnings}
    errors = verdict["errors"] if all_errors else verdict["errors"][:1]
    return {"errors": errors, "warnings": warnings}


@pytest.mark.parametrize("all_errors", [False, True], ids=["first-error", "all-errors"])
def test_draft07_corpus_matches_ajv(all_errors: bool) -> None:
    verdicts = _ajv(CORPUS, all_errors=all_errors)
    mismatches = [
        (schema, instance, theirs, ours)
        for (schema, instance), verdict in zip(CORPUS, verdicts, strict=True)
        if (theirs := _theirs(verdict, all_errors=all_errors)) != (ours := _ours(schema, instance, all_errors=all_errors))
    ]
    assert mismatches == []


def test_2020_12_corpus_matches_ajv_2020() -> None:
    # The reference cannot compile these at all; our fix should read like Ajv's own 2020 class.
    verdicts = _ajv(CORPUS_2020, flavour="2020")
    mismatches = [
        (schema, instance, theirs, ours)
        for (schema, instance), verdict in zip(CORPUS_2020, verdicts, strict=True)
        if (theirs := _theirs(verdict, all_errors=False)) != (ours := _ours(schema, instance))
    ]
    assert mismatches == []


def test_reference_rejects_2020_schemas_that_we_accept() -> None:
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"}
    (verdict,) = _ajv([(schema, {})])
    assert verdict["compileError"] == 'no schema with key or ref "https://json-schema.org/draft/2020-12/schema"'
    assert compile_schema(schema).is_valid({})
