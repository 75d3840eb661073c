"""Property tests: forms build for generated schemas, and valid answers round-trip through them.

Schemas come from a strategy of the shapes people write (objects, arrays, enums, unions with a
discriminator, nullable fields, maps, ``$ref``), plus a few parts only JSON can edit; instances
come from ``hypothesis-jsonschema``. One host app runs in a background thread for the whole
module (see ``AppThread``), so an example costs a form, not an app.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema
from textual.widgets import TextArea

from lobster_tui.core.jsvalues import UNDEFINED
from lobster_tui.core.schema import SchemaCompileError, compile_schema
from lobster_tui.tui.widgets.schema_form.fields.base import widgets_only
from lobster_tui.tui.widgets.schema_form.fields.raw_json import json_text
from lobster_tui.tui.widgets.schema_form.normalise import fits, json_equal, normalise
from tests.tui.forms.host import AppThread
from tests.tui.forms.jsonschema_compat import install as install_jsonschema_compat

install_jsonschema_compat()

SETTINGS = settings(
    max_examples=10,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)

# --- schemas of the shapes people write ----------------------------------------------------------

NAMES = st.sampled_from(["name", "count", "kind", "tags", "note", "x-id", "a b", "ok", "when", "level"])

@st.composite
def _string(draw: st.DrawFn) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    if draw(st.booleans()):
        schema["maxLength"] = draw(st.sampled_from([8, 40, 500]))
    if draw(st.booleans()):
        schema["minLength"] = draw(st.integers(0, 3))
    if draw(st.booleans()):
        schema["format"] = draw(st.sampled_from(["date", "email", "uri", "date-time"]))
    return schema


@st.composite
def _number(draw: st.DrawFn) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": draw(st.sampled_from(["integer", "number"]))}
    if draw(st.booleans()):
        schema["minimum"] = draw(st.integers(-5, 5))
    if draw(st.booleans()):
        schema["maximum"] = schema.get("minimum", 0) + draw(st.integers(0, 100))
    return schema


ENUMS = st.one_of(
    st.lists(st.sampled_from(["low", "high", "mid", "", "two words", "x"]), min_size=1, max_size=6, unique=True),
    st.lists(st.integers(-3, 20), min_size=1, max_size=7, unique=True),
).map(lambda values: {"enum": values})

LEAVES = st.one_of(
    _string(),
    _number(),
    st.just({"type": "boolean"}),
    ENUMS,
    st.sampled_from([{"const": "v1"}, {"const": 3}]),
    st.sampled_from([{"type": ["string", "null"]}, {"type": ["integer", "null"]}, {"type": ["boolean", "null"]}]),
    st.sampled_from([{}, {"type": "array", "items": [{"type": "string"}]}, {"not": {"type": "null"}}]),
)


def _extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    objects = st.builds(
        lambda props, required, additional: {
            "type": "object",
            "properties": props,
            "required": [n for n in props if n in required],
            **({} if additional is None else {"additionalProperties": additional}),
        },
        st.dictionaries(NAMES, children, min_size=1, max_size=4),
        st.sets(NAMES),
        st.one_of(st.none(), st.just(False), children),
    )
    arrays = st.builds(
        lambda items, low, extra: {"type": "array", "items": items, "minItems": low, "maxItems": low + extra},
        children,
        st.integers(0, 1),
        st.integers(1, 3),
    )
    tagged = st.lists(
        st.dictionaries(st.sampled_from(["n", "v", "label"]), children, max_size=2), min_size=2, max_size=3
    ).map(
        lambda variants: {
            "oneOf": [
                {
                    "type": "object",
                    "properties": {"kind": {"const": f"k{i}"}, **props},
                    "required": ["kind"],
                    "additionalProperties": False,
                }
                for i, props in enumerate(variants)
            ]
        }
    )
    nullable = children.map(lambda child: {"anyOf": [child, {"type": "null"}]})
    referenced = children.map(lambda child: {"$ref": "#/$defs/part", "$defs": {"part": child}})
    return st.one_of(objects, arrays, tagged, nullable, referenced)


def _hoist_defs(schema: Any) -> Any:
    """Move every ``$defs`` to the root (refs are root-relative), renaming so they do not clash."""
    defs: dict[str, Any] = {}

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(item) for item in node]
        if not isinstance(node, dict):
            return node
        node = {key: walk(value) for key, value in node.items()}
        if "$defs" in node:
            name = f"part{len(defs)}"
            defs[name] = node.pop("$defs")["part"]
            node["$ref"] = f"#/$defs/{name}"
        return node

    root = walk(schema)
    return {**root, "$defs": defs} if defs else root


SCHEMAS = st.recursive(LEAVES, _extend, max_leaves=6).map(_hoist_defs)

# Anything at all: keywords with the wrong shapes, unknown types, dangling references.
WILD = st.recursive(
    st.one_of(st.booleans(), st.integers(), st.text(max_size=4), st.none()),
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(
            st.sampled_from(
                ["type", "properties", "items", "enum", "const", "anyOf", "oneOf", "allOf", "$ref", "required",
                 "additionalProperties", "default", "title", "nullable", "if", "not", "minLength", "format"]
            ),
            children,
            max_size=4,
        ),
    ),
    max_leaves=10,
)


# --- the app ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def host() -> Iterator[AppThread]:
    thread = AppThread()
    try:
        yield thread
    finally:
        thread.close()


async def _build(host: AppThread, schema: Any) -> tuple[Any, str | None]:
    form = await host.app.replace_form(schema)
    await host.pilot.pause()
    return form.value, form.validate()


async def _through_json_tab(host: AppThread, schema: Any, text: str) -> tuple[Any, Any, str | None]:
    app, pilot = host.app, host.pilot
    form = await app.replace_form(schema)
    await pilot.press("f2")
    form.query_one(".schema-form--json", TextArea).load_text(text)  # as a paste would
    await pilot.press("f2")
    value = form.value
    root = form.field_at("")
    assert root is not None
    with widgets_only():
        shown = root.value  # what the widgets show, ignoring the kept value
    if shown is UNDEFINED:
        shown = f"undefined from {root!r} null={root.is_null} loaded={root.loaded!r} pristine={root.pristine}"
    return value, shown, form.validate()


_LINE_BREAKS = ("\r", "\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e")


def _safe_numbers(value: Any) -> bool:
    """JSON text is written as JavaScript writes it, which rounds integers beyond 2**53."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        # (and prints a whole double such as 6.5e16 as digits, which Python then reads as an int)
        return abs(value) <= 2**53 or isinstance(value, float) and not value.is_integer()
    if isinstance(value, dict):
        return all(_safe_numbers(v) for v in value.values())
    if isinstance(value, list):
        return all(_safe_numbers(v) for v in value)
    return True


def _plain_lines(value: Any) -> bool:
    """A text area keeps only ``\\n`` line breaks; other breaks are not shown exactly."""
    if isinstance(value, str):
        return not any(mark in value for mark in _LINE_BREAKS)
    if isinstance(value, dict):
        return all(_plain_lines(k) and _plain_lines(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_plain_lines(v) for v in value)
    return True


# --- the properties ------------------------------------------------------------------------------


@SETTINGS
@given(schema=st.one_of(SCHEMAS, WILD))
def test_forms_build_for_generated_schemas(host: AppThread, schema: Any) -> None:
    # Whatever the schema, the form has a value and an opinion on it.
    value, problem = host.run(_build(host, schema))
    try:
        compiled = compile_schema(schema)
    except SchemaCompileError:
        assert problem is not None
        return
    assert (problem is None) == compiled.is_valid(value)


@SETTINGS
@given(data=st.data(), schema=SCHEMAS)
def test_valid_answers_round_trip_through_the_json_tab(host: AppThread, data: st.DataObject, schema: Any) -> None:
    try:
        compiled = compile_schema(schema)
    except SchemaCompileError:
        assume(False)
    # hypothesis-jsonschema rewrites parts of the schema it is given: let it have a copy.
    instance = data.draw(from_schema(copy.deepcopy(schema)), label="instance")
    assume(compiled.is_valid(instance) and _safe_numbers(instance))
    value, shown, problem = host.run(_through_json_tab(host, schema, json_text(instance)))
    assert json_equal(value, instance)
    assert problem is None
    if fits(normalise(schema), instance) and _plain_lines(instance):
        assert json_equal(shown, instance), f"the widgets show {shown!r}"
