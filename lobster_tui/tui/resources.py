"""Files that ship beside the code: the stylesheets and the example workflows.

``tcss/`` and ``examples/`` sit at the top of the repository, and pyproject maps them into the
packages ``lobster_tui.tcss`` and ``lobster_tui.examples``. An installed wheel therefore finds them
through :mod:`importlib.resources`; a checkout (or an editable install made before that mapping
existed) falls back to the repository's own folders.
"""

from __future__ import annotations

import importlib.resources
from pathlib import Path

_REPO = Path(__file__).resolve().parent.parent.parent


def _package_dir(package: str, fallback: Path) -> Path:
    """A package's folder on disk, or ``fallback`` (the checkout's folder) when it is not installed."""
    # A data folder without __init__.py (examples/) is a namespace package, which
    # importlib.resources cannot always resolve; the wheel puts it beside this package's code.
    installed = Path(__file__).resolve().parent.parent / package.rsplit(".", 1)[-1]
    try:
        found: Path | None = Path(str(importlib.resources.files(package)))
    except (ModuleNotFoundError, TypeError):
        found = None
    # Wheels are installed unpacked, so these are real folders; a zip import cannot be handed to
    # Textual's stylesheet loader, so the checkout's folder is used then.
    for candidate in (found, installed):
        if candidate is not None and candidate.is_dir():
            return candidate
    return fallback


def tcss_dir() -> Path:
    """The folder holding ``app.tcss``."""
    return _package_dir("lobster_tui.tcss", _REPO / "tcss")


def stylesheet() -> Path:
    """The app's stylesheet."""
    return tcss_dir() / "app.tcss"


def examples_dir() -> Path:
    """The folder holding the example workflows used by ``--demo``."""
    return _package_dir("lobster_tui.examples", _REPO / "examples")
