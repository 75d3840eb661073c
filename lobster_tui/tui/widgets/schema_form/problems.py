"""Where each validation error belongs: the field its path points to, in the core's words.

The core validator reports every error of every ``oneOf``/``anyOf`` branch; a reviewer cares only
about the variant they picked, so each union is judged again with its picked variant alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from lobster_tui.core.jsvalues import UNDEFINED
from lobster_tui.core.schema import CompiledSchema, SchemaCompileError, SchemaError, compile_schema

from .fields import FieldWidget
from .fields.array import ArrayField
from .fields.keyvalue import KeyValueField
from .fields.object import ObjectField
from .fields.raw_json import RawJsonField
from .fields.union import UnionField

_REQUIRED = re.compile(r"^must have required property '(.*)'$", re.DOTALL)


def _tokens(pointer: str) -> list[str]:
    """The unescaped steps of a JSON Pointer (``/a~1b/0`` -> ``["a/b", "0"]``)."""
    if not pointer:
        return []
    return [token.replace("~1", "/").replace("~0", "~") for token in pointer.split("/")[1:]]


def _pointer(tokens: list[str]) -> str:
    return "".join("/" + token.replace("~", "~0").replace("/", "~1") for token in tokens)


@dataclass(frozen=True)
class Problem:
    """One validation error, placed at the field it concerns."""

    field: FieldWidget
    message: str
    """What the field shows (the core's message, after the rest of the path when it went deeper)."""
    sentence: str
    """``<path>: <message>``, as :meth:`SchemaForm.validate` returns it."""


class Problems:
    """Finds the problems of an answer and the field each one concerns."""

    def __init__(self, schema: Any, compiled: CompiledSchema | None, compile_problem: str | None, root: FieldWidget) -> None:
        self.schema = schema
        self.compiled = compiled
        self.compile_problem = compile_problem
        self.root = root
        self._variant_schemas: dict[int, CompiledSchema | None] = {}

    def field_at(self, path: str) -> FieldWidget | None:
        """The field for a JSON Pointer, or None when no field shows it."""
        field: FieldWidget | None = self.root
        for token in _tokens(path):
            if field is None:
                return None
            field = field.child_at(token)
        return field

    def fields(self) -> Iterator[tuple[str, FieldWidget]]:
        """Every field that shows part of the answer, with its JSON Pointer."""
        stack: list[tuple[str, FieldWidget]] = [("", self.root)]
        while stack:
            path, field = stack.pop()
            yield path, field
            children = []
            for child in field.child_fields():
                token = _token_of(field, child)
                children.append((path if token is None else path + _pointer([token]), child))
            stack.extend(reversed(children))

    def assess(self, value: Any, json_problem: str | None = None) -> list[Problem]:
        """Every reason to refuse ``value``, each placed at its field, most important first."""
        problems: list[Problem] = []
        if json_problem is not None:
            problems.append(Problem(self.root, json_problem, f"/: {json_problem}"))
        for path, field in self.fields():
            if isinstance(field, RawJsonField) and field.problem is not None:
                problems.append(Problem(field, field.problem, f"{path or '/'}: {field.problem}"))
        if self.compile_problem is not None:
            problems.append(Problem(self.root, self.compile_problem, f"/: {self.compile_problem}"))
        if self.compiled is None:
            return problems
        errors = self.compiled.all_errors(value)
        placed = self._place(errors, self.root, "")
        if errors and not placed:
            # Nothing could be placed (the errors all sat under a union that validates alone):
            # the answer is still refused, in the core's words.
            first = self.compiled.first_error(value) or errors[0]
            placed = [self._problem_at(self.root, first, [])]
        return problems + placed

    def _place(self, errors: list[SchemaError], top: FieldWidget, top_path: str) -> list[Problem]:
        """Put each error at the deepest field its path reaches; unions judge their own variant."""
        placed: list[Problem] = []
        deferred: dict[int, tuple[UnionField, str, list[SchemaError]]] = {}
        depth0 = len(_tokens(top_path))
        for error in errors:
            tokens = _tokens(error.instance_path)[depth0:]
            match = _REQUIRED.match(error.message) if error.keyword == "required" else None
            if match:
                tokens.append(match.group(1))
            field, path, depth = top, top_path, 0
            while True:
                if isinstance(field, UnionField):
                    deferred.setdefault(id(field), (field, path, []))[2].append(error)
                    break
                if depth == len(tokens):
                    placed.append(self._problem_at(field, error, []))
                    break
                child = field.child_at(tokens[depth])
                if child is None:
                    placed.append(self._problem_at(field, error, tokens[depth:]))
                    break
                field, path, depth = child, path + _pointer([tokens[depth]]), depth + 1
        for union, path, own in deferred.values():
            placed.extend(self._place_in_union(union, path, own))
        return placed

    def _place_in_union(self, union: UnionField, path: str, errors: list[SchemaError]) -> list[Problem]:
        # The core reports every branch's errors; only the picked variant's concern the reviewer.
        variant, picked = union.variant, union.picked
        compiled = self._variant_schema(union, picked) if picked is not None else None
        if variant is None or compiled is None:
            return [self._problem_at(union, e, _tokens(e.instance_path)[len(_tokens(path)) :]) for e in errors]
        value = union.value
        own = compiled.all_errors(None if value is UNDEFINED else value)
        if own:
            moved = [SchemaError(path + e.instance_path, e.message, e.keyword) for e in own]
            return self._place(moved, variant, path)
        # The variant is fine alone, so the union itself fails (it matches two, say).
        return [self._problem_at(union, e, []) for e in errors if e.instance_path == path] or [
            self._problem_at(union, errors[-1], [])
        ]

    def _variant_schema(self, union: UnionField, index: int) -> CompiledSchema | None:
        spec = union.spec.variants[index]
        key = id(spec)
        if key not in self._variant_schemas:
            schema = dict(spec.schema)
            if isinstance(self.schema, dict):
                # The variant's own $refs point into the root's definitions: carry them along.
                for keyword in ("$schema", "$defs", "definitions"):
                    if keyword in self.schema:
                        schema.setdefault(keyword, self.schema[keyword])
            try:
                self._variant_schemas[key] = compile_schema(schema, warn=lambda _line: None)
            except SchemaCompileError:
                self._variant_schemas[key] = None
        return self._variant_schemas[key]

    @staticmethod
    def _problem_at(field: FieldWidget, error: SchemaError, rest: list[str]) -> Problem:
        message = f"{_pointer(rest)}: {error.message}" if rest and error.keyword != "required" else error.message
        return Problem(field, message, f"{error.instance_path or '/'}: {error.message}")


def _token_of(parent: FieldWidget, child: FieldWidget) -> str | None:
    """The pointer step from a container to a child; None when the child sits at the same path
    (a union's variant, an object's extra-keys rows)."""
    if isinstance(parent, ArrayField):
        return str(parent.child_fields().index(child))
    if isinstance(parent, (KeyValueField, ObjectField)):
        return parent.key_of(child)
    return None
