"""TUI speed: first paint, the inbox at 1,000 and 10,000 checkpoints, watch latency, log streaming."""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from harness import REPO, Measurement, median_time

PROBE = Path(__file__).with_name("tui_probe.py")
WORKFLOW = "name: bench\nsteps:\n  - id: gate\n    approval: {prompt: Ship it?, items: [1, 2]}\n"


def make_checkpoints(state: Path, count: int, workflow: Path) -> None:
    """``count`` pending checkpoints, half pipeline and half workflow, each with its approval index."""
    state.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        key_uuid = uuid.uuid4()
        if i % 2:
            key = f"pipeline_resume_{key_uuid}"
            body = {
                "pipeline": [
                    {"name": "exec", "args": {"_": [], "json": True, "shell": "echo [1]"}, "raw": "exec --json --shell 'echo [1]'"},
                    {"name": "approve", "args": {"_": [], "prompt": f"Apply change {i}?"}, "raw": f"approve --prompt 'Apply change {i}?'"},
                ],
                "resumeAtIndex": 2,
                "items": [{"id": i, "title": f"item {i}"}],
                "haltType": "approval_request",
                "prompt": f"Apply change {i}?",
                "supersededResumeStateKeys": [],
                "createdAt": f"2026-11-30T00:{i // 60 % 60:02d}:{i % 60:02d}.000Z",
            }
        else:
            key = f"workflow_resume_{key_uuid}"
            body = {
                "filePath": str(workflow),
                "resumeAtIndex": 1,
                "steps": {"gate": {"id": "gate"}},
                "args": {},
                "approvalStepId": "gate",
                "approvalIdentity": {},
                "supersededResumeStateKeys": [],
                "createdAt": f"2026-11-30T01:{i // 60 % 60:02d}:{i % 60:02d}.000Z",
            }
        (state / f"{key}.json").write_text(json.dumps(body, indent=2) + "\n")
        (state / f"approval_{i:08x}.json").write_text(json.dumps({"stateKey": key, "createdAt": body["createdAt"]}) + "\n")


def _probe(mode: str, state: Path, expected: int = 0) -> tuple[float, int]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    started = time.perf_counter()
    result = subprocess.run([sys.executable, str(PROBE), mode, str(state), str(expected)],
                            capture_output=True, text=True, env=env, check=True)
    elapsed = time.perf_counter() - started
    rss = int(result.stdout.strip().rsplit("maxrss_kib=", 1)[1])
    return elapsed, rss


def _median_probe(mode: str, state: Path, expected: int, repeats: int) -> tuple[float, int]:
    _probe(mode, state, expected)
    runs = [_probe(mode, state, expected) for _ in range(repeats)]
    return statistics.median(r[0] for r in runs), max(r[1] for r in runs)


def _read_and_parse(state: Path) -> None:
    for entry in os.scandir(state):
        with open(entry.path, "rb") as handle:
            json.loads(handle.read())


def _watch_latency(samples: int) -> float:
    """Median seconds from a checkpoint file being written to its row being listed."""
    from lobster_tui.tui.app import create_app

    async def measure() -> list[float]:
        with tempfile.TemporaryDirectory() as tmp:
            state = Path(tmp) / "state"
            state.mkdir()
            workflow = Path(tmp) / "wf.lobster"
            workflow.write_text(WORKFLOW)
            app = create_app(state, watch=True)
            latencies = []
            async with app.run_test(size=(120, 36)) as pilot:
                await pilot.pause(0.3)
                listing = app.inbox.checkpoint_list
                for i in range(samples):
                    before = len(listing.entries)
                    make_checkpoints(state / "incoming", 1, workflow)
                    [written] = [p for p in (state / "incoming").iterdir() if p.name.startswith(("pipeline", "workflow"))]
                    started = time.perf_counter()
                    os.replace(written, state / written.name)
                    while len(listing.entries) <= before:
                        await asyncio.sleep(0.002)
                    latencies.append(time.perf_counter() - started)
                    for extra in (state / "incoming").iterdir():
                        extra.unlink()
            return latencies

    return statistics.median(asyncio.run(measure()))


def _cursor_move(state: Path, count: int, presses: int = 20) -> float:
    """Median seconds from ``j`` pressed to the next row's preview drawn, in an inbox of ``count``.

    The app runs headless in this process; each press waits until the highlighted row changed
    and a frame showing its preview was drawn (the same ``App._display`` hook as the streaming row).
    """
    from lobster_tui.tui.app import create_app

    async def measure() -> list[float]:
        app = create_app(state, watch=False)
        samples: list[float] = []
        async with app.run_test(size=(120, 36)) as pilot:
            listing = app.inbox.checkpoint_list
            while len(listing.entries) < count:
                await asyncio.sleep(0.002)
            await pilot.pause(0.3)
            await pilot.pause()
            drawn: list[float] = []
            display = app._display
            before = listing.cursor_row

            def display_and_stamp(screen: Any, renderable: Any) -> None:
                display(screen, renderable)
                # Only a frame with the cursor moved and the preview showing that row counts.
                moved = listing.cursor_row != before and app.inbox.preview.entry is listing.highlighted
                if renderable is not None and moved:
                    drawn.append(time.perf_counter())

            app._display = display_and_stamp  # type: ignore[method-assign]
            for _ in range(presses):
                before = listing.cursor_row
                drawn.clear()
                started = time.perf_counter()
                await pilot.press("j")
                while not drawn:
                    await asyncio.sleep(0.001)
                samples.append(drawn[0] - started)
                await pilot.pause()
            del app._display
        return samples

    return statistics.median(asyncio.run(measure()))


def _streaming(lines: int) -> tuple[float, float, float, int]:
    """A step printing ``lines`` lines: alone, and streamed through the app's log panel.

    Alone: ``sh`` runs the step with its output captured (median of 3).

    Through the panel (median of 3 fresh apps): the app runs headless with the inbox's log panel
    shown and a feed open, and is left to settle first (the panel's first layout, start-up
    timers), so that only the run is on the clock. The clock starts as ``run_workflow`` starts in
    a thread (as a decision's worker runs it) and stops at the first frame drawn after
    ``finish()`` wrote the outcome line with that line on screen: the moment a reader sees the run
    end. Frames are caught by wrapping ``App._display``, which the screen calls with each
    compositor update; a headless app computes the update (each dirty widget renders its lines)
    and skips only writing it to a terminal. Waiting with ``pilot.pause()`` instead would add its
    own idle detection (at least 20 ms of sleep), more than the step itself takes.

    Also returned: when ``run_workflow`` returned inside the app (the run's own cost with the
    panel's feed attached, before anything is drawn), so the report can tell the two apart.
    """
    from lobster_tui.core.runner import RunContext, run_workflow
    from lobster_tui.core.state import StateStore
    from lobster_tui.tui.app import create_app

    with tempfile.TemporaryDirectory() as tmp:
        workflow = Path(tmp) / "loud.lobster"
        workflow.write_text(f"steps:\n  - id: loud\n    run: seq {lines} >&2; echo done\n")
        alone = median_time(lambda: subprocess.run(["/bin/sh", "-lc", f"seq {lines} >&2; echo done"],
                                                   capture_output=True, check=True), 3)

        async def through_panel() -> tuple[float, float]:
            app = create_app(Path(tmp) / "state", watch=False)
            async with app.run_test(size=(120, 36)) as pilot:
                app.inbox.show_log()
                panel = app.inbox.log_panel
                feed = panel.new_feed("bench")
                # Settled: the panel's first layout and the app's start-up are not the run's cost.
                await pilot.pause(0.3)
                await pilot.pause()
                outcome_line = "⏹ the bench step finished"
                end_seen: asyncio.Future[float] = asyncio.get_running_loop().create_future()
                finished = False
                display = app._display

                def display_and_watch(screen: Any, renderable: Any) -> None:
                    display(screen, renderable)
                    if finished and renderable is not None and not end_seen.done():
                        drawn = time.perf_counter()
                        height = panel.scrollable_content_region.height
                        shown = ["".join(segment.text for segment in panel.render_line(y)) for y in range(height)]
                        if any(outcome_line in row for row in shown):
                            end_seen.set_result(drawn)

                app._display = display_and_watch  # type: ignore[method-assign]
                rc = RunContext(state=StateStore(Path(tmp) / "state"), mode="tool", subscribers=[feed],
                                timeout_ms=None, max_stdout_bytes=None)
                started = time.perf_counter()
                outcome = await asyncio.to_thread(run_workflow, str(workflow), rc)
                ran = time.perf_counter()
                assert outcome.status == "ok", outcome.error_message
                panel.finish(feed, "ok", outcome_line[2:])
                finished = True
                seen = await asyncio.wait_for(end_seen, 10)
                del app._display
                return seen - started, ran - started

        samples = [asyncio.run(through_panel()) for _ in range(3)]
        panel = statistics.median(sample[0] for sample in samples)
        run_only = statistics.median(sample[1] for sample in samples)
        import resource

        return panel, run_only, alone, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def run(repeats: int) -> list[Measurement]:
    rows: list[Measurement] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        workflow = root / "bench.lobster"
        workflow.write_text(WORKFLOW)
        empty = root / "empty"
        empty.mkdir()
        paint, paint_rss = _median_probe("paint", empty, 0, repeats)
        rows.append(Measurement("lobster-tui launch to first paint", paint, None, "limit", None,
                                extra={"peak RSS MiB": paint_rss / 1024}))
        empty_launch, _ = _median_probe("inbox", empty, 0, repeats)
        for count in (1000, 10000):
            state = root / f"s{count}"
            make_checkpoints(state, count, workflow)
            full, rss = _median_probe("inbox", state, count, max(3, repeats // 2))
            loop = median_time(lambda: _read_and_parse(state), repeats)
            spread = full - empty_launch
            # Launches vary by tens of ms between runs: a difference smaller than that says
            # "no cost we can see", which the note says instead of a bare 0.
            note = (f"the full launch differed from the empty one by {spread * 1000:+.0f} ms, within the "
                    "launch-to-launch noise" if spread < 0.05 else "")
            rows.append(Measurement(
                f"inbox with {count:,} checkpoints (launch to full list, less empty launch)",
                max(full - empty_launch, 0.0), loop, "read+parse loop", 2.0 if count == 10000 else None,
                extra={"launch to full list": full, "empty launch": empty_launch, "peak RSS MiB": rss / 1024},
                note=note,
            ))
            if count == 10000:
                rows.append(Measurement("inbox cursor move (j to the next preview drawn, 10,000 rows, median of 20)",
                                        _cursor_move(state, count), None, "limit", None))
    rows.append(Measurement("watch latency (file written to row listed, median of 50)", _watch_latency(50), None,
                            "limit", 0.3))
    panel, run_only, alone, rss = _streaming(200_000)
    rows.append(Measurement(
        "200,000-line step through the log panel", panel, alone, "step alone", 1.5,
        extra={"run in the app, before its end is drawn": run_only, "peak RSS MiB (benchmark process)": rss / 1024},
        note=(f"the run itself took {run_only * 1000:.0f} ms in the app ({run_only / alone:.2f}x the step alone); "
              f"the other {(panel - run_only) * 1000:.0f} ms are the outcome's drain and the one frame that shows "
              "it, which waits for Textual's next refresh tick (up to 1/60 s)"),
    ))
    return rows
