"""An object: its properties as a group of fields, in the schema's order."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult

from lobster_tui.core.jsvalues import UNDEFINED

from ..normalise import FieldSpec
from .base import FieldWidget
from .factory import build_field
from .keyvalue import KeyValueField


class ObjectField(FieldWidget):
    """An ``object`` with ``properties``: a titled group, one field per property.

    Required properties are marked ``*`` and always part of the answer; an optional one is
    left out while it is blank. Keys beyond ``properties`` (an ``additionalProperties`` schema,
    ``patternProperties``, or extra keys that arrived with the value) are key-value rows below.
    Tab order is the schema's property order.
    """

    DEFAULT_CSS = """
    ObjectField > .field--body {
        border-left: outer $primary-muted;
        padding-left: 1;
    }
    ObjectField.-root > .field--body {
        border-left: none;
        padding-left: 0;
    }
    ObjectField > .field--body > FieldWidget { margin-bottom: 1; }
    ObjectField > .field--body > FieldWidget.-last { margin-bottom: 0; }
    """

    group = True

    def __init__(self, spec: FieldSpec, *, label: str | None = None, required: bool = False, value: Any = UNDEFINED) -> None:
        super().__init__(spec, label=label, required=required, value=value)
        given = self.initial if isinstance(self.initial, dict) else {}
        self._children: dict[str, FieldWidget] = {
            name: build_field(
                child,
                label=child.title or name,
                required=name in spec.required,
                value=given.get(name, UNDEFINED),
            )
            for name, child in spec.properties.items()
        }
        self.pinned: frozenset[str] = frozenset()
        """Properties always part of the answer though optional (a union sets its discriminator)."""
        extras = {key: item for key, item in given.items() if key not in spec.properties}
        self._extras: KeyValueField | None = None
        if spec.extra is not None and (spec.extra_always or extras):
            self._extras = self._make_extras(extras)
        self._mark_last()

    def _make_extras(self, extras: dict[str, Any]) -> KeyValueField:
        return KeyValueField(
            self.spec,
            label="Other keys",
            value=extras if extras else UNDEFINED,
            reserved=frozenset(self.spec.properties),
        )

    def _mark_last(self) -> None:
        fields = self.child_fields()
        for field in fields:
            field.remove_class("-last")
        if fields:
            fields[-1].add_class("-last")

    def compose_editor(self) -> ComposeResult:
        yield from self._children.values()
        if self._extras is not None:
            yield self._extras

    def child_at(self, token: str) -> FieldWidget | None:
        if token in self._children:
            return self._children[token]
        return self._extras.child_at(token) if self._extras is not None else None

    def child_fields(self) -> list[FieldWidget]:
        fields = list(self._children.values())
        return fields + [self._extras] if self._extras is not None else fields

    def key_of(self, child: FieldWidget) -> str | None:
        """The property name of a child field; None for the extra-keys rows (they sit at this path)."""
        return next((name for name, field in self._children.items() if field is child), None)

    def read(self) -> Any:
        out: dict[str, Any] = {}
        for name, child in self._children.items():
            if name in self.spec.required or name in self.pinned or child.present:
                item = child.value
                if item is not UNDEFINED:
                    out[name] = item
        if self._extras is not None:
            extras = self._extras.value
            if isinstance(extras, dict):
                for key, item in extras.items():
                    out.setdefault(key, item)
        return out

    def read_pristine(self) -> bool:
        return all(field.pristine for field in self.child_fields())

    def read_blank(self) -> bool:
        return all(field.blank for field in self.child_fields())

    def load(self, value: Any) -> None:
        given = value if isinstance(value, dict) else {}
        for name, child in self._children.items():
            child.set_value(given.get(name, UNDEFINED))
        extras = {key: item for key, item in given.items() if key not in self.spec.properties}
        if self._extras is not None:
            self._extras.set_value(extras if extras else UNDEFINED)
        elif extras and self.spec.extra is not None:
            self._extras = self._make_extras(extras)
            self._body.mount(self._extras)
            self._mark_last()
