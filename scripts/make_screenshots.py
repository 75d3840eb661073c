#!/usr/bin/env python3
"""Generate SVG screenshots of lobster-tui's main screens from real runs, into screenshots/.

    python scripts/make_screenshots.py [--out screenshots] [--size 120x36]

The examples run with the real runner until they halt (the same state ``lobster-tui --demo``
opens on), then the app is driven with Textual's pilot and each screen is saved as an SVG.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from lobster_tui.tui.app import LobsterApp, create_app  # noqa: E402
from lobster_tui.tui.demo import make_demo_state  # noqa: E402

Step = Callable[[LobsterApp, Any], Awaitable[None]]


async def _settle(app: LobsterApp, pilot: Any) -> None:
    await app.workers.wait_for_complete()
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()


def _select(app: LobsterApp, workflow: str, step: str) -> None:
    for entry in app.inbox.checkpoint_list.entries:
        if getattr(entry, "workflow", None) == workflow and getattr(entry, "step", None) == step:
            app.inbox.checkpoint_list.select_key(entry.state_key)
            return
    raise SystemExit(f"no checkpoint {workflow} › {step} to screenshot")


async def shoot(out: Path, size: tuple[int, int]) -> list[Path]:
    """Run the demo state through the app and save one SVG per screen."""
    base = Path(tempfile.mkdtemp(prefix="lobster-screenshots-"))
    saved: list[Path] = []
    try:
        state = make_demo_state(base)
        app = create_app(state, watch=False, approver="alice", env={"PATH": "/usr/local/bin:/usr/bin:/bin"})
        async with app.run_test(size=size) as pilot:

            def save(name: str) -> None:
                app.save_screenshot(f"{name}.svg", path=str(out))
                saved.append(out / f"{name}.svg")

            await _settle(app, pilot)
            _select(app, "inbox-cleanup", "confirm")
            await _settle(app, pilot)
            save("inbox")

            await pilot.press("enter")
            await _settle(app, pilot)
            save("review")
            await pilot.press("escape")
            await pilot.pause()

            _select(app, "deploy", "staging_gate")
            await pilot.press("a")
            await pilot.pause()
            save("confirm")
            await pilot.press("y")
            await _settle(app, pilot)
            save("live-log")

            _select(app, "release-notes", "review")
            await pilot.press("enter")
            await _settle(app, pilot)
            save("answer")
            await pilot.press("escape")
            await pilot.pause()

            await pilot.press("question_mark")
            await pilot.pause()
            save("help")
            await pilot.press("escape")
            await pilot.pause()

            # The Runs screen (2) and one run: deploy, approved at its first gate above, now
            # waiting for the smoke-test report; its view reads both halves from the run log.
            await pilot.press("2")
            await _settle(app, pilot)
            runs = app.screen
            deploy = next(run for run in runs.run_list.runs if run.name == "deploy")  # type: ignore[attr-defined]
            runs.run_list.select_run(deploy.id)  # type: ignore[attr-defined]
            await pilot.pause()
            save("runs")
            await pilot.press("enter")
            for _ in range(200):  # read by a worker that keeps following (no waiting for workers)
                if app.screen.story.status == "needs_input":  # type: ignore[attr-defined]
                    break
                await pilot.pause(0.02)
            await pilot.pause()
            save("run-view")

            # Triage at scale: mark every row, one confirmation for all approvals (the input
            # request is left out, and says so), then the audit journal of what was decided.
            await pilot.press("1")
            await _settle(app, pilot)
            await pilot.press("asterisk", "A")
            await pilot.pause()
            save("bulk-confirm")
            await pilot.press("y")
            await _settle(app, pilot)
            await pilot.press("3")
            await _settle(app, pilot)
            save("history")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return saved


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(REPO / "screenshots"), help="folder for the SVGs")
    parser.add_argument("--size", default="120x36", help="terminal size, COLUMNSxROWS")
    args = parser.parse_args(argv)
    width, height = (int(part) for part in args.size.lower().split("x"))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for path in asyncio.run(shoot(out, (width, height))):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
