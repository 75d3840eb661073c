"""Helpers for the TUI tests: real state directories made by the real runner, waiting, clocks."""

from __future__ import annotations

import atexit
import json
import shutil
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from textual.worker import WorkerCancelled

from lobster_tui.core.runner import Outcome, RunContext, run_pipeline, run_workflow
from lobster_tui.core.state import StateStore, now_iso
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
        """Run ``examples/<name>.lobster`` (or ``text`` saved under that name) to its first halt.

        An example run without extra env is made once per test session by the real runner and
        copied here (its sleeps would otherwise cost every test); the copy's workflow path is
        rewritten to this test's own copy of the workflow file.
        """
        target = self.workdir / f"{name}.lobster"
        if text is None and env is None:
            return _copy_template(name, self)
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


_TEMPLATES: dict[str, tuple[Path, Outcome]] = {}


def _template(name: str) -> tuple[Path, Outcome]:
    """A state directory where ``examples/<name>.lobster`` halted once, made by the real runner."""
    if name not in _TEMPLATES:
        base = Path(tempfile.mkdtemp(prefix=f"lobster-tui-template-{name}-"))
        atexit.register(shutil.rmtree, base, True)
        work = base / "work"
        work.mkdir()
        maker = Lobster(base / "state", work)
        shutil.copyfile(EXAMPLES / f"{name}.lobster", work / f"{name}.lobster")
        outcome = run_workflow(str(work / f"{name}.lobster"), maker.context())
        assert outcome.status in ("needs_approval", "needs_input"), outcome.envelope()
        _TEMPLATES[name] = (base, outcome)
    return _TEMPLATES[name]


_last_stamp = [""]


def _fresh_stamp() -> str:
    """``now_iso()``, but never the same millisecond twice (ties would make order arbitrary)."""
    stamp = now_iso()
    while stamp <= _last_stamp[0]:
        time.sleep(0.001)
        stamp = now_iso()
    _last_stamp[0] = stamp
    return stamp


def _copy_template(name: str, lobster: Lobster) -> Outcome:
    base, outcome = _template(name)
    workflow = lobster.workdir / f"{name}.lobster"
    shutil.copyfile(base / "work" / f"{name}.lobster", workflow)
    lobster.root.mkdir(parents=True, exist_ok=True)
    for path in (base / "state").iterdir():
        if path.is_dir():
            shutil.copytree(path, lobster.root / path.name, dirs_exist_ok=True)
            continue
        text = path.read_text(encoding="utf-8")
        if path.name.startswith("workflow_resume_"):
            data = json.loads(text)
            data["filePath"] = str(workflow)
            # Stamped now, so checkpoints list in the order a test made them (newest first).
            data["createdAt"] = _fresh_stamp()
            text = json.dumps(data, indent=2) + "\n"
        (lobster.root / path.name).write_text(text, encoding="utf-8")
    return outcome


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


# Workers that follow a directory run until their screen closes; waiting for them never ends.
FOLLOWERS = ("watch", "history-watch")


async def settle(app: LobsterApp, pilot: Any, rounds: int = 3) -> None:
    """Wait for every worker that finishes (scans, decisions, reads) and the messages it posted.

    Unlike a bare ``wait_for_complete()``, a scan cancelled by a newer scan (exclusive workers)
    does not end the wait with ``WorkerCancelled``, and the directory watchers are not waited for.
    A worker that fails still fails the test. The inbox's first scan is always waited for.
    """
    # The inbox's first scan starts after the first frame: wait until its result is on screen.
    await wait_until(lambda: bool(app.inbox.sub_title), pilot, timeout=30, message="the inbox's first scan")
    for _ in range(rounds):
        busy = [w for w in app.workers if w.group not in FOLLOWERS and not w.is_finished]
        if busy:
            try:
                await app.workers.wait_for_complete(busy)
            except WorkerCancelled:
                pass  # superseded by a newer scan: that one is in the next round
        await pilot.pause()

