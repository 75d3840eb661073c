"""A tiny host app for one ``SchemaForm``, and keyboard helpers that drive it the way a person would."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widget import Widget

from lobster_tui.core.jsvalues import UNDEFINED
from lobster_tui.tui.widgets.schema_form import SchemaForm
from lobster_tui.tui.widgets.schema_form.fields import FieldWidget

SIZE = (100, 40)
T = TypeVar("T")


class FormHost(App[None]):
    """One form filling the screen; remembers every ``SchemaForm.Changed`` it saw."""

    CSS = "Screen { layout: vertical; }"

    def __init__(self, schema: Any = None, defaults: Any = UNDEFINED) -> None:
        super().__init__()
        self.schema = schema
        self.defaults = defaults
        self.changes: list[SchemaForm.Changed] = []

    def compose(self) -> ComposeResult:
        if self.schema is not None:
            yield SchemaForm(self.schema, defaults=self.defaults, id="form")

    @property
    def form(self) -> SchemaForm:
        """The form on screen."""
        return self.query_one(SchemaForm)

    async def replace_form(self, schema: Any, defaults: Any = UNDEFINED) -> SchemaForm:
        """Swap in a form for another schema (property tests reuse one app)."""
        for old in self.query(SchemaForm):
            await old.remove()
        form = SchemaForm(schema, defaults=defaults, id="form")
        await self.screen.mount(form)
        return form

    def on_schema_form_changed(self, message: SchemaForm.Changed) -> None:
        self.changes.append(message)


def _inside(widget: Widget | None, ancestor: Widget) -> bool:
    node: Any = widget
    while node is not None:
        if node is ancestor:
            return True
        node = node.parent
    return False


async def tab_to(pilot: Pilot[None], path: str, *, limit: int = 80) -> Widget:
    """Press ``tab`` until the cursor is inside the field at ``path``; fail if it never gets there."""
    app = pilot.app
    assert isinstance(app, FormHost)
    for _ in range(limit):
        field = app.form.field_at(path)
        assert field is not None, f"no field at {path!r}"
        if _inside(app.focused, field):
            assert app.focused is not None
            return app.focused
        await pilot.press("tab")
    raise AssertionError(f"tab never reached the field at {path!r} (focus: {app.focused!r})")


async def type_text(pilot: Pilot[None], text: str) -> None:
    """Type ``text`` one key at a time."""
    keys = ["enter" if c == "\n" else c for c in text]
    await pilot.press(*keys)


def field(app: FormHost, path: str) -> FieldWidget:
    """The field at ``path`` (it must exist)."""
    found = app.form.field_at(path)
    assert found is not None, f"no field at {path!r}"
    return found


class AppThread:
    """One ``FormHost`` running in its own event loop thread.

    Hypothesis drives synchronous tests; this lets each example reuse a running app (starting an
    app per example would be far too slow) by sending coroutines to the app's loop.
    """

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="form-host", daemon=True)
        self._thread.start()
        self.app = FormHost()
        self._context = self.app.run_test(size=SIZE)
        self.pilot: Pilot[None] = self.run(self._context.__aenter__())

    def run(self, coroutine: Coroutine[Any, Any, T], timeout: float = 60) -> T:
        """Run ``coroutine`` on the app's loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def close(self) -> None:
        """Stop the app and the loop."""
        try:
            self.run(self._context.__aexit__(None, None, None))
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(10)
            self.loop.close()
