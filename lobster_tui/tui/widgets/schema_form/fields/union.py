"""``oneOf``/``anyOf`` (and type lists): pick a variant, then fill in its fields."""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.widgets import RadioSet, Select

from lobster_tui.core.jsvalues import UNDEFINED

from ..normalise import FieldSpec, prefill, variant_for
from .base import FieldWidget
from .factory import build_field
from .object import ObjectField
from .picker import OptionPicker

_INLINE_WIDTH = 70


class UnionField(FieldWidget):
    """A value that takes one of several shapes.

    A selector (radio buttons for up to four variants, else a drop-down) picks the variant; the
    variant's own fields appear below it. Every variant keeps what was typed into it, so
    switching back and forth loses nothing. When the variants are objects told apart by a
    ``const`` property (a discriminator such as ``"kind": {"const": "email"}``), that property
    is set by the pick. A prefilled value picks the variant it fits best.

    | Key | Action |
    | :- | :- |
    | `left`/`right` | (radio buttons) Move between variants; `enter`/`space` picks. |
    | `enter` | (drop-down) Open the list of variants. |
    """

    DEFAULT_CSS = """
    UnionField {
        & > .field--body > RadioSet { width: auto; }
        & > .field--body > RadioSet.-inline { layout: horizontal; }
        & > .field--body > RadioSet.-inline > RadioButton { width: auto; margin-right: 2; }
        & > .field--body > Select { width: 1fr; max-width: 60; }
        & > .field--body > .union--variant { margin-top: 1; }
    }
    """

    group = True

    def __init__(self, spec: FieldSpec, *, label: str | None = None, required: bool = False, value: Any = UNDEFINED) -> None:
        super().__init__(spec, label=label, required=required, value=value)
        pick = self._pick_for(self.initial)
        self._picked: int | None = pick
        self._shown: int | None = pick
        self._user_picked = False
        """Whether a person chose the variant (an automatic pick with blank fields counts as blank)."""
        self._variants: list[FieldWidget] = []
        for index, variant in enumerate(spec.variants):
            start = self.initial if index == pick and self.initial is not UNDEFINED else prefill(variant)
            field = build_field(variant, required=True, value=start)
            if spec.discriminator is not None and isinstance(field, ObjectField):
                # Picking the variant is what sets its discriminator, required or not.
                field.pinned = frozenset({spec.discriminator})
            field.add_class("union--variant")
            field.display = index == pick
            self._variants.append(field)
        self._picker = OptionPicker(spec.labels, required=required, picked=pick, inline_width=_INLINE_WIDTH)

    def _pick_for(self, value: Any) -> int | None:
        if value is not UNDEFINED:
            found = variant_for(self.spec, value)
            if found is not None:
                return found
        # A required union starts on its first variant, so its fields are there to fill in.
        return 0 if self.required else None

    @property
    def picked(self) -> int | None:
        """The index of the picked variant, or None."""
        return self._picked

    @property
    def variant(self) -> FieldWidget | None:
        """The picked variant's field."""
        return None if self._picked is None else self._variants[self._picked]

    def compose_editor(self) -> ComposeResult:
        yield self._picker.widget
        yield from self._variants

    def read(self) -> Any:
        variant = self.variant
        return UNDEFINED if variant is None else variant.value

    def read_pristine(self) -> bool:
        variant = self.variant
        return self._picked == self._shown and (variant is None or variant.pristine)

    def read_blank(self) -> bool:
        variant = self.variant
        return variant is None or not self._user_picked and variant.blank

    def load(self, value: Any) -> None:
        pick = self._pick_for(value)
        self._shown = pick
        self._user_picked = False
        if pick is not None:
            self._variants[pick].set_value(value if value is not UNDEFINED else prefill(self.spec.variants[pick]))
        self._show(pick)
        self._picker.show(pick)

    def _show(self, pick: int | None) -> None:
        self._picked = pick
        for index, field in enumerate(self._variants):
            field.display = index == pick

    def child_at(self, token: str) -> FieldWidget | None:
        variant = self.variant
        return None if variant is None else variant.child_at(token)

    def child_fields(self) -> list[FieldWidget]:
        variant = self.variant
        return [] if variant is None else [variant]

    def _picked_by_person(self, pick: int | None) -> None:
        if pick == self._picked:
            return
        self._show(pick)
        self._user_picked = pick is not None
        self.edited()

    @on(RadioSet.Changed)
    @on(Select.Changed)
    def _pick_changed(self, event: RadioSet.Changed | Select.Changed) -> None:
        # A variant's own enum sends these too: only this union's picker picks the variant.
        if self._picker.sent(event):
            event.stop()
            self._picked_by_person(self._picker.index_in(event))
