"""``records.record``: the part of dataclasses the core uses, without importing dataclasses."""

from __future__ import annotations

import pytest

from lobster_tui.core.records import FrozenInstanceError, field, record, replace


@record
class _Plain:
    name: str
    items: list[int] = field(default_factory=list)
    label: str = "x"


@record(frozen=True, slots=True)
class _Frozen:
    kind: str
    value: int = 0


def test_fields_defaults_and_factories() -> None:
    first, second = _Plain("a"), _Plain(name="a")
    assert (first.name, first.items, first.label) == ("a", [], "x")
    assert first.items is not second.items  # a fresh list per record
    assert first == second and first != _Plain("a", label="y")
    assert repr(_Plain("a", [1])) == "_Plain(name='a', items=[1], label='x')"
    assert _Plain.__hash__ is None  # mutable records are unhashable, as with dataclasses
    assert "items" not in _Plain.__dict__  # the field() marker is not left as a class attribute


def test_argument_errors_match_a_normal_signature() -> None:
    with pytest.raises(TypeError, match="missing required argument: 'name'"):
        _Plain()
    with pytest.raises(TypeError, match="multiple values for argument 'name'"):
        _Plain("a", name="b")
    with pytest.raises(TypeError, match="unexpected keyword argument 'nope'"):
        _Plain("a", nope=1)
    with pytest.raises(TypeError, match="positional arguments"):
        _Plain("a", [], "b", "c")


def test_frozen_slots_records_are_hashable_and_immutable() -> None:
    item = _Frozen("k")
    assert item == _Frozen("k", 0) and hash(item) == hash(_Frozen("k", 0))
    assert _Frozen.__slots__ == ("kind", "value")
    assert not hasattr(item, "__dict__")
    with pytest.raises(FrozenInstanceError):
        item.value = 1  # type: ignore[misc]
    match item:
        case _Frozen(kind, value):
            assert (kind, value) == ("k", 0)


def test_replace_copies_with_changes() -> None:
    original = _Plain("a", [1])
    changed = replace(original, label="z")
    assert changed == _Plain("a", [1], "z") and original.label == "x"


def test_a_required_field_after_a_default_is_refused() -> None:
    with pytest.raises(TypeError, match="non-default argument 'late'"):

        @record
        class _Bad:
            early: int = 0
            late: int
