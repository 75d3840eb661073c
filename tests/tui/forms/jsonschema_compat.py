"""Let hypothesis-jsonschema 0.23 generate objects with the Hypothesis installed here.

Its object strategy drives a private Hypothesis helper as ``while elements.more(): ...``; current
Hypothesis only offers ``with many(...) as elements: for _ in elements: ...``. This adapter gives
the old spelling on top of the new one, for the form property tests only (the core's schema tests
keep to schemas without objects instead).
"""

from __future__ import annotations

import types
from typing import Any

from hypothesis.internal.conjecture import utils as conjecture_utils

_END = object()


class LegacyMany:
    """``many`` as hypothesis-jsonschema calls it: ``more()`` until False, ``reject()`` on duplicates."""

    def __init__(self, data: Any, min_size: int, max_size: float, average_size: float) -> None:
        self._many = conjecture_utils.many(data, min_size=min_size, max_size=max_size, average_size=average_size)
        self._many.__enter__()
        self._elements = iter(self._many)

    def more(self) -> bool:
        if next(self._elements, _END) is _END:
            self._many.__exit__(None, None, None)
            return False
        return True

    def reject(self, why: str | None = None) -> None:
        self._many.reject(why)


def install() -> None:
    """Point hypothesis-jsonschema at the adapter when its helper lacks ``more()``."""
    from hypothesis_jsonschema import _from_schema

    if hasattr(conjecture_utils.many, "more"):
        return
    shim = types.SimpleNamespace(**{name: getattr(conjecture_utils, name) for name in dir(conjecture_utils) if not name.startswith("__")})
    shim.many = LegacyMany
    _from_schema.cu = shim  # type: ignore[attr-defined]
