"""The command palette's commands: the very bindings active where ``ctrl+p`` was pressed.

Generating the commands from the bindings keeps the palette, the footer and the help screen in
step: a key that does not apply to the highlighted checkpoint is not offered here either.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

# App-level plumbing that would only confuse the palette.
_SKIP_ACTIONS = {"command_palette"}


@dataclass(frozen=True)
class PaletteCommand:
    """One command: its words, the key that does the same, and how to run it."""

    name: str
    key: str
    run: Callable[[], object]


class LobsterCommands(Provider):
    """Offers every described, enabled binding of the focused widget, its screen and the app."""

    async def startup(self) -> None:
        self._commands: list[PaletteCommand] = []
        seen: set[str] = set()
        for key, active in self.screen.active_bindings.items():
            binding = active.binding
            if not active.enabled or not binding.description or binding.action in _SKIP_ACTIONS:
                continue
            ident = binding.id or f"{type(active.node).__name__}.{binding.action}"
            if ident in seen:
                continue
            seen.add(ident)
            display = self.app.get_key_display(binding)
            self._commands.append(
                PaletteCommand(binding.description, display or key, partial(active.node.run_action, binding.action))
            )

    async def discover(self) -> Hits:
        for command in self._commands:
            yield DiscoveryHit(command.name, command.run, help=f"key: {command.key}")

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for command in self._commands:
            score = matcher.match(command.name)
            if score > 0:
                yield Hit(score, matcher.highlight(command.name), command.run, help=f"key: {command.key}")
