"""Waiting for another process or thread in core tests: poll a condition, never sleep a fixed time."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_until(predicate: Callable[[], bool], timeout: float = 15.0, message: str = "condition") -> None:
    """Poll ``predicate`` until it holds; fail after ``timeout`` seconds (a generous bound, not a speed check)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"{message}: not met in time")
        time.sleep(0.01)
