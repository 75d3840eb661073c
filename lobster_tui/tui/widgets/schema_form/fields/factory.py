"""Which field widget shows which kind of schema node."""

from __future__ import annotations

from typing import Any

from lobster_tui.core.jsvalues import UNDEFINED

from ..normalise import FieldSpec
from .base import FieldWidget


def build_field(spec: FieldSpec, *, label: str | None = None, required: bool = False, value: Any = UNDEFINED) -> FieldWidget:
    """A new field widget for ``spec``, showing ``value`` (UNDEFINED for blank)."""
    # Imported here: containers build their children through this function, so a module-level
    # import would be circular.
    from .array import ArrayField
    from .boolean import BooleanField
    from .checklist import ChecklistField
    from .choice import ChoiceField
    from .keyvalue import KeyValueField
    from .number import NumberField
    from .object import ObjectField
    from .raw_json import RawJsonField
    from .string import StringField
    from .union import UnionField

    kinds: dict[str, type[FieldWidget]] = {
        "string": StringField,
        "number": NumberField,
        "integer": NumberField,
        "boolean": BooleanField,
        "choice": ChoiceField,
        "const": ChoiceField,
        "checklist": ChecklistField,
        "array": ArrayField,
        "union": UnionField,
        "raw": RawJsonField,
    }
    if spec.kind == "object":
        # An object with no properties of its own is a map: key-value rows.
        if not spec.properties and spec.extra is not None:
            return KeyValueField(spec, label=label, required=required, value=value)
        return ObjectField(spec, label=label, required=required, value=value)
    return kinds[spec.kind](spec, label=label, required=required, value=value)
