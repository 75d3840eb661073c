"""One out of N: radio buttons for a few options, a drop-down for more.

Both :class:`~.choice.ChoiceField` (an ``enum``) and :class:`~.union.UnionField` (a ``oneOf``)
pick one of a list of labels; this holds the control that does it, so the two fields share how
the "(not set)" button works, when buttons sit on one line, and how an event maps to an index.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.content import Content
from textual.widgets import RadioButton, RadioSet, Select

from ..normalise import RADIO_LIMIT

NOT_SET = "(not set)"
"""The first radio button of an optional field, and the drop-down's prompt: no pick."""


class OptionPicker:
    """The radio set (``len(labels) <= RADIO_LIMIT``) or drop-down picking an index of ``labels``.

    An optional pick gets a first "(not set)" button, so indexes of buttons are offset by one;
    callers only ever see option indexes (or None for no pick).
    """

    def __init__(self, labels: Sequence[str], *, required: bool, picked: int | None, inline_width: int) -> None:
        self._offset = 0 if required else 1
        self._buttons: list[RadioButton] = []
        self.widget: RadioSet | Select[int]
        if len(labels) <= RADIO_LIMIT:
            captions = ([NOT_SET] if self._offset else []) + list(labels)
            pressed = self._button_for(picked)
            self._buttons = [RadioButton(Content(text), i == pressed, compact=True) for i, text in enumerate(captions)]
            # Each button costs its label plus the radio mark and a gap.
            inline = sum(len(text) + 6 for text in captions) <= inline_width
            self.widget = RadioSet(*self._buttons, compact=True, classes="-inline" if inline else "")
        else:
            self.widget = Select(
                [(Text(text), i) for i, text in enumerate(labels)],
                prompt=NOT_SET if not required else "Pick one",
                value=picked if picked is not None else Select.NULL,
                compact=True,
            )

    def _button_for(self, index: int | None) -> int | None:
        """The radio button showing option ``index`` (the "(not set)" one for None, if any)."""
        if index is not None:
            return self._offset + index
        return 0 if self._offset else None

    def show(self, index: int | None) -> None:
        """Show option ``index`` as picked (None: nothing), without it counting as a person's pick."""
        if isinstance(self.widget, RadioSet):
            target = self._button_for(index)
            if target is not None:
                self._buttons[target].value = True
            else:
                for button in self._buttons:
                    button.value = False
        elif index is None:
            self.widget.clear()
        else:
            self.widget.value = index

    def sent(self, event: RadioSet.Changed | Select.Changed) -> bool:
        """Whether this picker's control sent ``event`` (a nested field's control may have)."""
        source = event.radio_set if isinstance(event, RadioSet.Changed) else event.select
        return source is self.widget

    def index_in(self, event: RadioSet.Changed | Select.Changed) -> int | None:
        """The option ``event`` picked, or None for "(not set)" and a cleared drop-down."""
        if isinstance(event, RadioSet.Changed):
            index = self._buttons.index(event.pressed) - self._offset if event.pressed in self._buttons else -1
            return index if index >= 0 else None
        return event.value if isinstance(event.value, int) else None
