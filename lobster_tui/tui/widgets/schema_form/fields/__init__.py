"""One field widget per kind of schema node; :func:`build_field` picks the right one."""

from __future__ import annotations

from .base import FieldWidget
from .factory import build_field

__all__ = ["FieldWidget", "build_field"]
