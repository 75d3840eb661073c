"""Form tests settle quickly: a short debounce, so waiting for live errors costs little."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from lobster_tui.tui.widgets.schema_form import SchemaForm


@pytest.fixture(autouse=True)
def quick_debounce() -> Iterator[None]:
    """Errors and JSON-tab edits settle after 50 ms instead of 300 ms."""
    original = SchemaForm.DEBOUNCE
    SchemaForm.DEBOUNCE = 0.05
    yield
    SchemaForm.DEBOUNCE = original
