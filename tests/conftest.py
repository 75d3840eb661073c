"""Fixtures shared by every test folder: temp state directories and the real CLI."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"


@dataclass
class CliResult:
    """What one ``lobster`` invocation did."""

    code: int
    stdout: str
    stderr: str

    @property
    def json(self) -> Any:
        return json.loads(self.stdout)


def _clean_env(state_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LOBSTER_", "OPENCLAW_", "CLAWD_"))}
    env["LOBSTER_STATE_DIR"] = str(state_dir)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


@pytest.fixture(autouse=True, scope="session")
def _private_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Keep the workflow parse cache out of the user's ~/.cache, for this process and children."""
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    """A fresh, not yet created, state directory."""
    return tmp_path / "state"


LobsterCli = Callable[..., CliResult]


@pytest.fixture
def lobster(state_dir: Path, tmp_path: Path) -> LobsterCli:
    """Run the real ``lobster`` CLI in a subprocess against ``state_dir``."""

    def run(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
            stdin: str | None = None, timeout: float = 60) -> CliResult:
        full_env = _clean_env(state_dir)
        full_env.update(env or {})
        proc = subprocess.run(
            [sys.executable, "-m", "lobster_tui.cli", *args],
            input=stdin if stdin is not None else "",
            capture_output=True,
            text=True,
            env=full_env,
            cwd=str(cwd or tmp_path),
            timeout=timeout,
        )
        return CliResult(proc.returncode, proc.stdout, proc.stderr)

    return run


def decode_token(token: str) -> dict[str, Any]:
    """The JSON payload of a resume token."""
    return json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))


def files_in(state_dir: Path) -> list[str]:
    """Checkpoint files in the state directory; the run logs and the audit journal are left out."""
    if not state_dir.exists():
        return []
    return sorted(p.name for p in state_dir.iterdir() if p.name not in ("runs", "audit"))
