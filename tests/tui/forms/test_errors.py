"""Errors in the core validator's words, beside the field their path points to, gone once fixed."""

from __future__ import annotations

from lobster_tui.tui.widgets.schema_form.fields.raw_json import RawJsonField
from tests.tui.forms.corpus import ASK_SCHEMA, CASES, DEPLOY_PARAMS, NOTIFY, RELEASE
from tests.tui.forms.host import SIZE, FormHost, field, settle, tab_to, type_text

TUPLE = next(case.schema for case in CASES if case.name == "tuple-array-as-json")


async def test_error_appears_beside_the_field_as_you_type_and_clears_when_fixed() -> None:
    app = FormHost(RELEASE["responseSchema"], RELEASE["defaults"])
    async with app.run_test(size=SIZE) as pilot:
        await tab_to(pilot, "/edits")
        await pilot.press("enter")
        await type_text(pilot, "Intro")
        await pilot.press("tab")
        await type_text(pilot, "ab")
        await settle(pilot)
        change = field(app, "/edits/0/change")
        assert change.errors_shown == "must NOT have fewer than 3 characters"
        assert field(app, "/edits/0/section").errors_shown == ""
        assert app.form.summary == "✗ 1 problem: /edits/0/change: must NOT have fewer than 3 characters"
        assert app.changes[-1].error == "/edits/0/change: must NOT have fewer than 3 characters"

        await type_text(pilot, "c")
        await settle(pilot)
        assert change.errors_shown == ""
        assert app.form.summary == "✓ Valid"
        assert app.changes[-1].error is None

        # Unticking the only channel breaks minItems on the array itself.
        await tab_to(pilot, "/audience/channels")
        await pilot.press("down", "space")
        await settle(pilot)
        assert field(app, "/audience/channels").errors_shown == "must NOT have fewer than 1 items"
        assert app.form.validate() == "/audience/channels: must NOT have fewer than 1 items"


async def test_untouched_fields_stay_quiet_until_validate() -> None:
    app = FormHost(ASK_SCHEMA)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        decision = field(app, "/decision")
        # The summary counts the problem; the field has not been touched, so it says nothing yet.
        assert app.form.summary == "✗ 1 problem: /: must have required property 'decision'"
        assert decision.errors_shown == ""
        assert app.form.validate() == "/: must have required property 'decision'"
        assert decision.errors_shown == "must have required property 'decision'"

        await tab_to(pilot, "/decision")
        await pilot.press("enter")
        await settle(pilot)
        assert decision.errors_shown == ""
        assert app.form.validate() is None


async def test_union_errors_concern_the_picked_variant_only() -> None:
    app = FormHost(NOTIFY)
    async with app.run_test(size=SIZE) as pilot:
        await tab_to(pilot, "/channel")
        await pilot.press("right", "enter", "tab")
        await type_text(pilot, "deploys")
        message = 'must match pattern "^#"'
        assert app.form.validate() == f"/channel/channel: {message}"
        assert field(app, "/channel/channel").errors_shown == message
        # The other variants' complaints (wrong constant, missing address) are not shown anywhere.
        shown = [f.errors_shown for f in app.form.query("FieldWidget") if f.errors_shown]  # type: ignore[attr-defined]
        assert shown == [message]

        await pilot.press("home")
        await type_text(pilot, "#")
        await settle(pilot)
        assert app.form.validate() is None
        assert app.form.value == {"channel": {"kind": "slack", "channel": "#deploys"}}


async def test_numbers_roots_and_raw_parts() -> None:
    app = FormHost(DEPLOY_PARAMS)
    async with app.run_test(size=SIZE) as pilot:
        await tab_to(pilot, "/replicas")
        await type_text(pilot, "30")
        await settle(pilot)
        assert field(app, "/replicas").errors_shown == "must be <= 20"

        # A root that is not an object: its error sits at the root field.
        await app.replace_form({"type": "string", "minLength": 3})
        await tab_to(pilot, "")
        await type_text(pilot, "ab")
        assert app.form.validate() == "/: must NOT have fewer than 3 characters"
        assert field(app, "").errors_shown == "must NOT have fewer than 3 characters"

        # A part edited as JSON that does not parse: refused, with the parser's reason.
        await app.replace_form(TUPLE)
        await tab_to(pilot, "/point")
        await type_text(pilot, "[1,")
        problem = app.form.validate()
        assert problem is not None and problem.startswith("/point: Not valid JSON: ")
        raw = field(app, "/point")
        assert isinstance(raw, RawJsonField) and raw.problem is not None
        await type_text(pilot, " 2]")
        await settle(pilot)
        assert app.form.validate() is None
        assert app.form.value == {"point": [1, 2]}
