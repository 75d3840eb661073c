"""Widgets of ``lobster-tui``; one widget per module, its messages nested in it."""

from __future__ import annotations
