"""Arrays and maps: add, remove, move, and buttons that stop at the limits."""

from __future__ import annotations

from textual.widgets import Button, Input

from lobster_tui.tui.widgets.schema_form.fields.array import ArrayField
from lobster_tui.tui.widgets.schema_form.fields.keyvalue import KeyValueField
from tests.tui.forms.host import SIZE, FormHost, field, settle, tab_to, type_text

HOSTS = {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3, "title": "Hosts"}
STAGES = {
    "type": "array",
    "items": {"type": "object", "title": "Stage", "properties": {"name": {"type": "string"}}},
}


def _buttons(array: ArrayField) -> list[tuple[bool, bool, bool]]:
    """(up, down, remove) enabled per row."""
    rows = [row for row in array.query(".array--row")]
    return [
        tuple(not b.disabled for b in row.query(Button))  # type: ignore[misc]
        for row in rows
    ]


async def test_array_buttons_respect_the_limits_and_move_items() -> None:
    app = FormHost(HOSTS, ["a"])
    async with app.run_test(size=SIZE) as pilot:
        array = field(app, "")
        assert isinstance(array, ArrayField)
        add = array.query_one(".array--add", Button)
        # One item, minItems 1: nothing to move, nothing to remove.
        assert _buttons(array) == [(False, False, False)]
        assert not add.disabled

        await tab_to(pilot, "")
        await pilot.press("tab", "enter")  # past the first item's input to + Add
        await type_text(pilot, "b")
        assert app.focused is not None and isinstance(app.focused, Input)
        await pilot.press("tab", "tab", "tab", "enter")  # up, remove of row 2 (down is off), then + Add
        await type_text(pilot, "c")
        assert app.form.value == ["a", "b", "c"]
        # maxItems 3: no more adding; every row can be removed; ends cannot move outwards.
        assert add.disabled
        assert _buttons(array) == [(False, True, True), (True, True, True), (True, False, True)]

        # ctrl+up moves the item holding the cursor.
        await pilot.press("ctrl+up")
        assert app.form.value == ["a", "c", "b"]
        # The up button of the (now) second row moves it to the top.
        await pilot.press("tab", "enter")
        assert app.form.value == ["c", "a", "b"]
        # Its up button is now disabled, so the cursor went to its down button; the next is remove.
        assert app.focused is not None and app.focused.has_class("array--down")
        await pilot.press("tab", "enter")
        assert app.form.value == ["a", "b"]
        assert not add.disabled
        await settle(pilot)
        assert app.form.validate() is None


async def test_object_items_are_numbered_and_renumbered() -> None:
    app = FormHost(STAGES, [{"name": "build"}, {"name": "test"}])
    async with app.run_test(size=SIZE) as pilot:
        first, second = field(app, "/0"), field(app, "/1")
        assert (first.label, second.label) == ("Stage 1", "Stage 2")
        await tab_to(pilot, "/1/name")
        await pilot.press("ctrl+up")
        assert app.form.value == [{"name": "test"}, {"name": "build"}]
        assert (field(app, "/0").label, field(app, "/1").label) == ("Stage 1", "Stage 2")
        assert field(app, "/0") is second


async def test_map_rows_add_remove_and_duplicate_keys() -> None:
    schema = {"type": "object", "additionalProperties": {"type": "string"}, "maxProperties": 2}
    app = FormHost(schema, {"team": "core"})
    async with app.run_test(size=SIZE) as pilot:
        rows = field(app, "")
        assert isinstance(rows, KeyValueField)
        add = rows.query_one(".kv--add", Button)
        await tab_to(pilot, "")
        await pilot.press("tab", "tab", "tab", "enter")  # key, value, remove, + Add
        await type_text(pilot, "team")
        keys = list(rows.query(".kv--key").results(Input))
        assert keys[1].has_class("-duplicate")
        assert add.disabled  # maxProperties 2
        await pilot.press("backspace", "backspace", "backspace", "backspace")
        await type_text(pilot, "owner")
        await pilot.press("enter")
        await type_text(pilot, "ada")
        assert not keys[1].has_class("-duplicate")
        assert app.form.value == {"team": "core", "owner": "ada"}
        # Remove the first row: focus goes to the next row's key.
        await tab_to(pilot, "/team")
        await pilot.press("tab", "enter")
        assert app.form.value == {"owner": "ada"}
        assert app.focused is keys[1]
        assert not add.disabled
