"""Fixtures and hooks of the fault suite (helpers live in :mod:`tests.fault.faultlib`)."""

from __future__ import annotations

import hashlib
import json
import os
import random
from collections.abc import Iterator
from typing import Any

import pytest

from tests.fault.faultlib import BASE_SEED, TALLY


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not TALLY or not os.path.exists(TALLY):
        return
    totals: dict[str, int] = {}
    with open(TALLY, encoding="utf-8") as handle:
        for line in handle:
            entry = json.loads(line)
            totals[entry["name"]] = totals.get(entry["name"], 0) + entry["count"]
    terminalreporter.section("fault tally")
    for name in sorted(totals):
        terminalreporter.write_line(f"{name}: {totals[name]}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: Any) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    seed = getattr(item, "_fault_seed", None)
    if report.failed and seed is not None:
        report.sections.append(
            ("fault seed", f"seed {seed}; rerun: LOBSTER_FAULT_SEED={BASE_SEED} pytest '{item.nodeid}'")
        )


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> random.Random:
    """A Random seeded from the base seed and the test's id; the seed is shown on failure."""
    digest = hashlib.sha256(f"{BASE_SEED}:{request.node.nodeid}".encode()).digest()
    seed = int.from_bytes(digest[:4], "big")
    request.node._fault_seed = seed  # type: ignore[attr-defined]
    print(f"fault seed {seed} (LOBSTER_FAULT_SEED={BASE_SEED})")
    return random.Random(seed)


