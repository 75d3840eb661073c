"""The ``/`` filter box above the inbox list."""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import Input


class FilterInput(Input):
    """Filters the inbox as you type; ``enter`` keeps the filter, ``escape`` clears it.

    | Key | Action |
    | :- | :- |
    | `enter` | Keep the filter and go back to the list. |
    | `escape` | Clear the filter and go back to the list. |
    """

    HELP_NAME = "filter"

    BINDINGS: list[BindingType] = [
        Binding("escape", "clear_and_leave", "Clear filter", id="filter.clear"),
    ]

    @dataclass
    class Left(Message):
        """The reviewer is done filtering; ``cleared`` when the filter was dropped."""

        filter_input: FilterInput
        cleared: bool

        @property
        def control(self) -> FilterInput:
            """The input that sent the message."""
            return self.filter_input

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(placeholder="filter: kind, workflow, step, prompt or id", id=id, classes=classes)

    def action_clear_and_leave(self) -> None:
        """Drop the filter."""
        self.value = ""
        self.post_message(self.Left(self, cleared=True))

    async def action_submit(self) -> None:
        """Keep the filter and return to the list."""
        await super().action_submit()
        self.post_message(self.Left(self, cleared=False))
