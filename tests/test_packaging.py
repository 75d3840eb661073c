"""The wheel ships every package, the styles and the examples (pyproject lists packages by hand)."""

from __future__ import annotations

import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_every_package_is_listed_in_pyproject() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    found = {
        ".".join(init.parent.relative_to(REPO).parts)
        for init in (REPO / "lobster_tui").rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    assert found - listed == set()
    assert config["package-dir"] == {"lobster_tui.tcss": "tcss", "lobster_tui.examples": "examples"}
    assert list((REPO / "tcss").glob("*.tcss")) and list((REPO / "examples").glob("*.lobster"))
