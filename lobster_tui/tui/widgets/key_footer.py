"""The footer of every screen: Textual's, rebuilt only when the keys it shows change."""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer


class KeyFooter(Footer):
    """Textual's :class:`~textual.widgets.Footer`, rebuilt only when the keys it shows change.

    The stock footer recomposes (mounting a widget per key) on every ``refresh_bindings``; a
    start-up or a cursor move refreshes bindings several times (focus, the highlighted row, the
    screen), mostly with nothing to change, and each rebuild costs a few dozen milliseconds on a
    small machine. Here requests made before the next refresh collapse into one, and that one
    is skipped when the keys, labels and enabled states are what the footer already shows.
    """

    def __init__(self, *, compact: bool = True, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(compact=compact, id=id, classes=classes)
        self._rebuild_pending = False
        self._shown: tuple[object, ...] | None = None

    def bindings_changed(self, screen: Screen) -> None:
        # As Footer.bindings_changed (textual 8.2), with the rebuild coalesced.
        self._bindings_ready = True
        if not screen.app.app_focus or self._rebuild_pending:
            return
        if self.is_attached and screen is self.screen:
            self._rebuild_pending = True
            self.call_after_refresh(self._rebuild)

    async def _rebuild(self) -> None:
        self._rebuild_pending = False
        if not self.is_attached:  # its screen closed before the refresh came
            return
        shown = self._keys_to_show()
        if shown != self._shown:
            self._shown = shown
            await self.recompose()

    def _keys_to_show(self) -> tuple[object, ...]:
        """Everything :meth:`Footer.compose` draws from the bindings (what a rebuild would change)."""
        get_key_display = self.app.get_key_display
        palette = self.app.COMMAND_PALETTE_BINDING
        return tuple(
            (key, binding.key, get_key_display(binding), binding.description, binding.action, enabled, tooltip,
             binding.group.description if binding.group else None)
            for key, (_node, binding, enabled, tooltip) in self.screen.active_bindings.items()
            if binding.show or key == palette
        )
