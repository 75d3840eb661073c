"""Fixtures for the TUI tests: real state directories made by the real runner, and the app."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from lobster_tui.tui.app import LobsterApp, create_app
from tests.tui.helpers import BASE_ENV, FIXTURES, Lobster, MakeApp, frozen_clock


@pytest.fixture
def lobster(tmp_path: Path) -> Lobster:
    """A fresh state directory and a place for workflow files."""
    work = tmp_path / "work"
    work.mkdir()
    return Lobster(tmp_path / "state", work)


@pytest.fixture
def official_state(tmp_path: Path) -> Path:
    """The official runtime's state directory, with workflow paths pointing into ``tmp_path``."""
    workflows = tmp_path / "official_workflows"
    shutil.copytree(FIXTURES / "official_workflows", workflows)
    state = tmp_path / "official_state"
    shutil.copytree(FIXTURES / "official_state", state)
    for path in state.glob("workflow_resume_*.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        data["filePath"] = str(workflows / Path(data["filePath"]).name)
        path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return state


@pytest.fixture
def make_app(tmp_path: Path) -> MakeApp:
    """The app factory with test edges: no watcher, a frozen clock, a clean environment."""

    def make(state_dir: Path, **overrides: Any) -> LobsterApp:
        options: dict[str, Any] = {
            "watch": False,
            "clock": frozen_clock,
            "env": dict(BASE_ENV),
            "cwd": str(tmp_path),
        }
        options.update(overrides)
        return create_app(state_dir, **options)

    return make
