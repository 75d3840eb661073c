"""Helpers for the TUI tests: real state directories made by the real runner, waiting, clocks."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from lobster_tui.core.runner import Outcome, RunContext, run_pipeline, run_workflow
from lobster_tui.core.state import StateStore
from lobster_tui.tui.app import LobsterApp

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
FIXTURES = Path(__file__).resolve().parent / "fixtures"

# One minute after the official fixtures were made: ages read "30m" in every snapshot.
FROZEN_NOW = datetime(2026, 11, 30, 5, 34, 47, tzinfo=timezone.utc)

RECORDS_PIPELINE = (
    "exec --json --shell \"echo '[{\\\"a\\\":1},{\\\"a\\\":2}]'\" | approve --preview-from-stdin --prompt 'Apply?'"
)


def frozen_clock() -> datetime:
    """The clock of snapshot tests."""
    return FROZEN_NOW


BASE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/nonexistent"}


class Lobster:
    """Makes checkpoints in one temp state directory with the real runner."""

    def __init__(self, root: Path, workdir: Path) -> None:
        self.root = root
        self.state = StateStore(root)
        self.workdir = workdir

    def context(self, env: dict[str, str] | None = None) -> RunContext:
        """A runner context on this state directory (no host limits, like the CLI's tool mode)."""
        return RunContext(
            state=self.state,
            env={**BASE_ENV, **(env or {})},
            cwd=str(self.workdir),
            mode="tool",
            timeout_ms=None,
            max_stdout_bytes=None,
        )

    def workflow(self, name: str, env: dict[str, str] | None = None, text: str | None = None) -> Outcome:
        """Run ``examples/<name>.lobster`` (or ``text`` saved under that name) to its first halt."""
        target = self.workdir / f"{name}.lobster"
        if text is not None:
            target.write_text(text, encoding="utf-8")
        else:
            shutil.copyfile(EXAMPLES / f"{name}.lobster", target)
        outcome = run_workflow(str(target), self.context(env))
        assert outcome.status in ("needs_approval", "needs_input"), outcome.envelope()
        return outcome

    def pipeline(self, text: str = RECORDS_PIPELINE) -> Outcome:
        """Run a pipeline to its halt."""
        outcome = run_pipeline(text, self.context())
        assert outcome.status in ("needs_approval", "needs_input"), outcome.envelope()
        return outcome

    def files(self) -> list[str]:
        """Names in the state directory (run logs and locks left out)."""
        if not self.root.exists():
            return []
        return sorted(p.name for p in self.root.iterdir() if p.suffix == ".json")

    def resume_files(self) -> list[str]:
        """Pending resume-state files."""
        return [name for name in self.files() if "_resume_" in name]


MakeApp = Callable[..., LobsterApp]


async def wait_until(
    predicate: Callable[[], bool], pilot: Any, *, timeout: float = 5.0, message: str = ""
) -> None:
    """Poll ``predicate`` between pilot pauses until it holds (never a fixed sleep)."""
    import time

    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting: {message or predicate}")
        await pilot.pause(0.01)


async def settle(app: LobsterApp, pilot: Any) -> None:
    """Wait for every worker (scans, decisions) and the messages they posted."""
    await app.workers.wait_for_complete()
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()

