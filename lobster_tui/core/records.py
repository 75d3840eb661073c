"""Plain record classes for the run path, without importing :mod:`dataclasses`.

``import dataclasses`` pulls in ``inspect`` (and with it ``ast``, ``dis``, ``tokenize``): 20-30 ms
of the ~120 ms a one-step ``lobster run`` may take to stay under 0.3x of the official runtime, and
``@dataclass`` compiles several methods per class on top. :func:`record` covers the part of
dataclasses the core uses: fields from the class annotations, defaults, :func:`field` with
``default_factory``, a keyword-or-positional ``__init__``, field-wise ``__eq__`` and ``__repr__``,
``frozen`` (no assignment after ``__init__``, hashable) and ``slots``. :func:`replace` is
``dataclasses.replace``. Type checkers read it as a dataclass through ``dataclass_transform``.

Not supported (nothing in the core needs them): ``__post_init__``, ``InitVar``, ``ClassVar`` fields,
ordering, inheritance between records.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform, overload

_T = TypeVar("_T")


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class _Field:
    __slots__ = ("default", "default_factory")

    def __init__(self, default: Any, default_factory: Callable[[], Any] | None) -> None:
        self.default = default
        self.default_factory = default_factory


def field(*, default: Any = MISSING, default_factory: Callable[[], Any] | None = None) -> Any:
    """A field's default: a value, or a factory called for every new record."""
    return _Field(default, default_factory)


class FrozenInstanceError(AttributeError):
    """Assignment to a field of a frozen record."""


def _init(self: Any, *args: Any, **kwargs: Any) -> None:
    spec: tuple[tuple[str, Any, Callable[[], Any] | None], ...] = type(self).__record_spec__
    if len(args) > len(spec):
        raise TypeError(f"{type(self).__name__}() takes {len(spec)} positional arguments but {len(args)} were given")
    put = object.__setattr__
    for index, (name, default, factory) in enumerate(spec):
        if index < len(args):
            if name in kwargs:
                raise TypeError(f"{type(self).__name__}() got multiple values for argument {name!r}")
            value = args[index]
        elif name in kwargs:
            value = kwargs.pop(name)
        elif factory is not None:
            value = factory()
        elif default is not MISSING:
            value = default
        else:
            raise TypeError(f"{type(self).__name__}() missing required argument: {name!r}")
        put(self, name, value)
    if kwargs:
        raise TypeError(f"{type(self).__name__}() got an unexpected keyword argument {next(iter(kwargs))!r}")


def _values(self: Any) -> tuple[Any, ...]:
    return tuple(getattr(self, name) for name in type(self).__record_fields__)


def _eq(self: Any, other: object) -> bool:
    if other.__class__ is not self.__class__:
        return NotImplemented
    return _values(self) == _values(other)


def _repr(self: Any) -> str:
    body = ", ".join(f"{name}={getattr(self, name)!r}" for name in type(self).__record_fields__)
    return f"{type(self).__qualname__}({body})"


def _hash(self: Any) -> int:
    return hash(_values(self))


def _frozen_setattr(self: Any, name: str, value: Any) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: Any, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


@overload
def record(cls: type[_T], /) -> type[_T]: ...
@overload
def record(*, frozen: bool = False, slots: bool = False) -> Callable[[type[_T]], type[_T]]: ...


@dataclass_transform(field_specifiers=(field,))
def record(cls: Any = None, /, *, frozen: bool = False, slots: bool = False) -> Any:
    """Make ``cls`` a record class (see the module docstring); usable as ``@record`` or ``@record(...)``."""

    def wrap(cls: type[_T]) -> type[_T]:
        spec: list[tuple[str, Any, Callable[[], Any] | None]] = []
        drop: list[str] = []
        for name in cls.__dict__.get("__annotations__", {}):  # noqa: RUF063 (inspect is what we avoid)
            value = cls.__dict__.get(name, MISSING)
            if isinstance(value, _Field):
                spec.append((name, value.default, value.default_factory))
            else:
                spec.append((name, value, None))
            if value is not MISSING and (slots or isinstance(value, _Field)):
                drop.append(name)  # a field() marker is no default; a slot cannot share a class attribute's name
        seen_default = False
        for name, default, factory in spec:
            if default is MISSING and factory is None:
                if seen_default:
                    raise TypeError(f"non-default argument {name!r} follows default argument")
            else:
                seen_default = True
        fields = tuple(name for name, _, _ in spec)
        methods: dict[str, Any] = {
            "__record_spec__": tuple(spec),
            "__record_fields__": fields,
            "__match_args__": fields,
            "__init__": _init,
            "__eq__": _eq,
            "__hash__": _hash if frozen else None,
        }
        if "__repr__" not in cls.__dict__:
            methods["__repr__"] = _repr
        if frozen:
            methods["__setattr__"] = _frozen_setattr
            methods["__delattr__"] = _frozen_delattr
        if slots:
            # Slots need a new class, as with dataclasses.
            namespace = {key: value for key, value in cls.__dict__.items() if key not in drop}
            namespace.pop("__dict__", None)
            namespace.pop("__weakref__", None)
            namespace.update(methods, __slots__=fields, __qualname__=cls.__qualname__)
            return type(cls)(cls.__name__, cls.__bases__, namespace)  # type: ignore[return-value]
        for name in drop:
            delattr(cls, name)
        for name, value in methods.items():
            setattr(cls, name, value)
        return cls

    return wrap if cls is None else wrap(cls)


def replace(obj: _T, /, **changes: Any) -> _T:
    """A copy of the record ``obj`` with ``changes`` applied, like ``dataclasses.replace``."""
    values = {name: getattr(obj, name) for name in type(obj).__record_fields__}  # type: ignore[attr-defined]
    values.update(changes)
    return type(obj)(**values)
