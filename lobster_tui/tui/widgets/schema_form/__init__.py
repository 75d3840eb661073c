"""Answer forms generated from JSON Schema (issue 6).

``SchemaForm(schema, defaults=...)`` renders a response schema as fields (strings, numbers,
booleans, enums, nested objects, arrays, unions, maps) with a raw JSON tab kept in step, and
validates with the core's ``schema`` module. See ``form.py`` for the widget and
``normalise.py`` for how a schema becomes fields.
"""

from __future__ import annotations

from .form import SchemaForm

__all__ = ["SchemaForm"]
