"""The JSON tab and the form stay in step, both ways."""

from __future__ import annotations

from textual.widgets import TabbedContent, TextArea

from lobster_tui.core.jsvalues import dumps_pretty
from lobster_tui.tui.widgets.schema_form.fields.base import widgets_only
from lobster_tui.tui.widgets.schema_form.fields.choice import ChoiceField
from tests.tui.forms.corpus import RELEASE
from tests.tui.forms.host import SIZE, FormHost, field, settle, tab_to, type_text

NEW = {
    "decision": "drop",
    "audience": {"channels": ["social", "blog"], "embargo_until": "2027-01-01"},
    "edits": [{"section": "Title", "change": "Shorter"}],
    "notes": "n",
}


def _json_text(app: FormHost) -> str:
    return app.form.query_one(".schema-form--json", TextArea).text


async def test_json_edits_reach_the_form_and_form_edits_reach_the_json() -> None:
    app = FormHost(RELEASE["responseSchema"], RELEASE["defaults"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        assert app.form.query_one(TabbedContent).active.endswith("json")
        assert _json_text(app) == dumps_pretty(RELEASE["defaults"])

        # Select all, type a new answer, go back to the form.
        await pilot.press("f7")
        await type_text(pilot, '{"decision": "drop", "audience": {"channels": ["social", "blog"], '
                        '"embargo_until": "2027-01-01"}, "edits": [{"section": "Title", "change": "Shorter"}], "notes": "n"}')
        await pilot.press("f2")
        await pilot.pause()
        assert app.form.value == NEW
        decision = field(app, "/decision")
        assert isinstance(decision, ChoiceField) and decision.picked == 2
        assert field(app, "/edits/0/change").value == "Shorter"
        assert field(app, "/audience/embargo_until").value == "2027-01-01"
        # What the widgets show is the JSON, not only a kept copy of it.
        with widgets_only():
            assert app.form.value == NEW

        # A form edit shows up in the JSON tab.
        await tab_to(pilot, "/notes")
        await pilot.press("end")
        await type_text(pilot, "m")
        await pilot.press("f2")
        assert _json_text(app) == dumps_pretty({**NEW, "notes": "nm"})
        assert app.form.dirty


async def test_json_typed_while_staying_on_the_tab_lands_after_the_debounce() -> None:
    app = FormHost(RELEASE["responseSchema"], RELEASE["defaults"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2", "f7")
        await type_text(pilot, '{"decision": "revise", "audience": {"channels": ["blog"]}}')
        await settle(pilot)
        assert app.changes[-1].value == {"decision": "revise", "audience": {"channels": ["blog"]}}
        assert app.changes[-1].error is None
        assert field(app, "/audience/channels").value == ["blog"]


async def test_invalid_json_is_refused_and_the_form_keeps_its_last_good_answer() -> None:
    app = FormHost(RELEASE["responseSchema"], RELEASE["defaults"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2", "f7")
        await type_text(pilot, '{"decision": ')
        problem = app.form.validate()
        assert problem is not None and problem.startswith("/: Not valid JSON: ")
        assert app.form.value == RELEASE["defaults"]
        await type_text(pilot, '"drop", "audience": {"channels": ["blog"]}}')
        assert app.form.validate() is None
        assert app.form.value == {"decision": "drop", "audience": {"channels": ["blog"]}}
