"""The public API an answer screen uses: value, set_value, validate, dirty, Changed, reset."""

from __future__ import annotations

from textual.widgets import Label, Static

from lobster_tui.core.jsvalues import UNDEFINED
from lobster_tui.tui.widgets.schema_form import SchemaForm
from tests.tui.forms.corpus import ASK_SCHEMA, DEPLOY_PARAMS, RELEASE, SMOKE
from tests.tui.forms.host import SIZE, FormHost, field, settle, tab_to, type_text


def _text(widget: Label | Static) -> str:
    return str(widget.render())


async def test_value_set_value_dirty_reset_and_changed() -> None:
    app = FormHost(RELEASE["responseSchema"], RELEASE["defaults"])
    async with app.run_test(size=SIZE) as pilot:
        form = app.form
        assert form.value == RELEASE["defaults"] and not form.dirty
        await settle(pilot)
        assert form.summary == "✓ Valid"

        answer = {"decision": "revise", "audience": {"channels": ["blog"]}, "notes": "see PR"}
        form.set_value(answer)
        await pilot.pause()
        assert form.value == answer and form.dirty
        assert app.changes[-1].value == answer and app.changes[-1].error is None
        assert field(app, "/notes").value == "see PR"

        form.set_value({"decision": "nope", "audience": {"channels": []}})
        assert form.validate() == "/decision: must be equal to one of the allowed values"
        await pilot.pause()
        assert app.changes[-1].error == "/decision: must be equal to one of the allowed values"

        form.reset()
        assert form.value == RELEASE["defaults"] and not form.dirty
        assert form.validate() is None


async def test_changed_messages_replace_each_other() -> None:
    form = SchemaForm(ASK_SCHEMA)
    first = SchemaForm.Changed(form, {}, None)
    second = SchemaForm.Changed(form, {"decision": "approve"}, None)
    other = SchemaForm.Changed(SchemaForm(ASK_SCHEMA), {}, None)
    assert second.can_replace(first)
    assert not other.can_replace(first)
    assert first.control is form


async def test_labels_markers_help_and_hints() -> None:
    app = FormHost(DEPLOY_PARAMS)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        service = field(app, "/service")
        assert _text(service.query_one(".field--label", Label)) == "Service *"
        assert _text(field(app, "/ref").query_one(".field--help", Static)) == "pattern: ^[A-Za-z0-9._/-]+$"
        assert _text(field(app, "/replicas").query_one(".field--help", Static)) == ">= 1 · <= 20"
        # The root's title heads the form, without a required marker.
        assert _text(field(app, "").query_one(".field--label", Label)) == "Deploy parameters"
        # Defaults from the schema prefill the form.
        assert app.form.value == {"dry_run": True, "ref": "main"}

        await app.replace_form(SMOKE["responseSchema"])
        await pilot.pause()
        assert _text(field(app, "/latency_p95_ms").query_one(".field--help", Static)) == ">= 0"
        # A property without a title is labelled with its name.
        assert _text(field(app, "/failures").query_one(".field--label", Label)) == "failures"

        await app.replace_form(ASK_SCHEMA)
        await pilot.pause()
        assert _text(field(app, "/feedback").query_one(".field--help", Static)) == "Feedback for redraft"


async def test_values_the_widgets_cannot_show_survive_untouched() -> None:
    schema = {"type": "object", "properties": {"count": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}}}}
    strange = {"count": "many", "tags": "x", "extra": [1, {"a": None}]}
    app = FormHost(schema, strange)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.form.value == strange
        help_line = _text(field(app, "/count").query_one(".field--help", Static))
        assert help_line == 'holds "many", which this form cannot show: edit it in the JSON tab'
        # Extra keys of an open object appear as key-value rows and keep their values.
        assert field(app, "/extra").value == [1, {"a": None}]
        await tab_to(pilot, "/count")
        await type_text(pilot, "3")
        assert app.form.value == {"count": 3, "tags": "x", "extra": [1, {"a": None}]}


async def test_a_schema_that_does_not_compile_refuses_every_answer() -> None:
    app = FormHost({"type": "object", "properties": {"a": {"type": "strin"}}})
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        problem = app.form.validate()
        assert problem is not None and problem.startswith("/: response schema is invalid: ")


async def test_defaults_absent_vs_null() -> None:
    schema = {"type": ["object", "null"], "properties": {"a": {"type": "string"}}}
    app = FormHost(schema, None)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.form.value is None
        await app.replace_form(schema, UNDEFINED)
        await pilot.pause()
        assert app.form.value == {}
