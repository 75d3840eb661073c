"""A tiny host app for one ``SchemaForm``, and keyboard helpers that drive it the way a person would."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from textual import events
from textual.app import App, ComposeResult
from textual.keys import _character_to_key
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
        # Tab underlines slide by animation; tests need not wait for it.
        self.animation_level = "none"
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
        # As when the app starts: the cursor goes to the first focusable widget (the tabs).
        first = next((w for w in self.screen.focus_chain if _inside(w, form)), None)
        if first is not None:
            self.set_focus(first)
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


async def tab_to(pilot: Pilot[None], path: str) -> Widget:
    """Press ``tab`` until the cursor is inside the field at ``path``; fail if it never gets there.

    The number of presses is read off the screen's focus chain and the tabs are sent together,
    then the test checks that the cursor really arrived.
    """
    app = pilot.app
    assert isinstance(app, FormHost)
    target = app.form.field_at(path)
    assert target is not None, f"no field at {path!r}"
    if _inside(app.focused, target):
        assert app.focused is not None
        return app.focused
    chain = app.screen.focus_chain
    start = chain.index(app.focused) if app.focused in chain else -1
    steps = next(
        (n for n in range(1, len(chain) + 1) if _inside(chain[(start + n) % len(chain)], target)),
        None,
    )
    assert steps is not None, f"tab can never reach the field at {path!r}"
    await _send(pilot, ["tab"] * steps)
    assert _inside(app.focused, target), f"{steps} tabs did not reach {path!r} (focus: {app.focused!r})"
    assert app.focused is not None
    return app.focused


async def _send(pilot: Pilot[None], keys: list[str]) -> None:
    """Send key events as ``pilot.press`` builds them, then wait once for the app to settle."""
    app = pilot.app
    for key in keys:
        char = key if len(key) == 1 else "\r" if key == "enter" else "\t" if key == "tab" else None
        name = key if len(key) > 1 or key.isalnum() else _character_to_key(key)
        event = events.Key(name, char)
        event.set_sender(app)
        app.post_message(event)
    # Idle means every queued message (and the ones they posted) has been handled.
    await pilot.pause()


async def type_text(pilot: Pilot[None], text: str) -> None:
    """Type ``text`` into the focused widget: one key event per character, as ``pilot.press`` sends them.

    ``pilot.press`` waits for the app to go idle after every key (40 ms or more each); the keys
    of one word go to one widget and change no focus, so they are sent together and waited for
    once. ``\n`` is ``enter`` (a new line in a text area).
    """
    focused = pilot.app.focused
    await _send(pilot, ["enter" if char == "\n" else char for char in text])
    assert pilot.app.focused is focused, "typing moved the cursor; use pilot.press for keys that do"


def field(app: FormHost, path: str) -> FieldWidget:
    """The field at ``path`` (it must exist)."""
    found = app.form.field_at(path)
    assert found is not None, f"no field at {path!r}"
    return found


class AppThread:
    """One ``FormHost`` running in its own event loop thread.

    Hypothesis drives synchronous tests; this lets each example reuse a running app (starting an
    app per example would be far too slow) by sending coroutines to the app's loop. The app runs
    inside one long-lived task, since ``run_test`` must be entered and left in the same task.
    """

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="form-host", daemon=True)
        self._thread.start()
        self.app = FormHost()
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._served = asyncio.run_coroutine_threadsafe(self._serve(), self.loop)
        if not self._ready.wait(60):
            raise RuntimeError("the host app did not start")

    async def _serve(self) -> None:
        self._stop = asyncio.Event()
        async with self.app.run_test(size=SIZE) as pilot:
            self.pilot: Pilot[None] = pilot
            self._ready.set()
            await self._stop.wait()

    def run(self, coroutine: Coroutine[Any, Any, T], timeout: float = 60) -> T:
        """Run ``coroutine`` on the app's loop, as the active app, and wait for its result."""

        async def as_the_app() -> T:
            # Tasks started from another thread do not inherit the app's context variables.
            with self.app._context():
                return await coroutine

        return asyncio.run_coroutine_threadsafe(as_the_app(), self.loop).result(timeout)

    def close(self) -> None:
        """Stop the app and the loop."""
        try:
            if self._stop is not None:
                self.loop.call_soon_threadsafe(self._stop.set)
            self._served.result(60)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(10)
            self.loop.close()


async def settle(pilot: Pilot[None]) -> None:
    """Wait out the form's debounce, so live errors and JSON-tab edits have landed."""
    await pilot.pause(SchemaForm.DEBOUNCE * 2 + 0.05)
    await pilot.pause()
