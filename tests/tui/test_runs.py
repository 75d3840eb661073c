"""The Runs screens with real runs: start, watch, follow another process, stop, read back."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from textual.command import CommandList
from textual.widgets import Input, Static

from lobster_tui.core.run_log import RunLogWriter, list_runs, read_events
from lobster_tui.core.runner import RunContext, resume, run_workflow
from lobster_tui.tui.__main__ import _start_request, build_parser
from lobster_tui.tui.app import LobsterApp
from lobster_tui.tui.run_story import STDERR, STDOUT, CheckpointEntry
from lobster_tui.tui.screens.confirm import ConfirmScreen
from lobster_tui.tui.screens.inbox import InboxScreen
from lobster_tui.tui.screens.run_view import RunViewScreen
from lobster_tui.tui.screens.runs import RunsScreen
from lobster_tui.tui.screens.start_run import StartRunScreen
from tests.tui.helpers import EXAMPLES, REPO, Lobster, MakeApp, wait_until

GREET = """\
name: greet
description: Says hello a few times
args:
  who:
    default: world
  times:
    default: 2
steps:
  - id: hello
    run: for i in $(seq ${times}); do echo "hello ${who} $i"; done; echo "said it" >&2
"""


def log_text(app: LobsterApp) -> str:
    """The output lines (stdout, stderr) the open run view holds."""
    screen = app.screen
    assert isinstance(screen, RunViewScreen)
    return "\n".join(payload for kind, payload in screen.story.lines if kind in (STDOUT, STDERR))


async def wait_until_sync(predicate: Callable[[], bool], timeout: float = 15.0) -> None:
    """Poll ``predicate`` (before the app runs) until true."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.02)


def running(marker: str) -> bool:
    """True while a process whose command line holds ``marker`` exists."""
    return subprocess.run(["pgrep", "-f", marker], capture_output=True, check=False).returncode == 0


async def test_start_a_workflow_from_the_tui_fill_its_args_and_watch_it_finish(
    lobster: Lobster, make_app: MakeApp
) -> None:
    (lobster.workdir / "greet.lobster").write_text(GREET, encoding="utf-8")
    app = make_app(lobster.root, cwd=str(lobster.workdir))
    async with app.run_test(size=(120, 36)) as pilot:
        # "Run workflow" is in the command palette too.
        await pilot.press("ctrl+p", *"run wo")
        await wait_until(lambda: any("Run workflow" in str(option.prompt)
                                     for option in app.screen.query_one(CommandList).options), pilot,
                         message="palette offers Run workflow")
        await pilot.press("down", "enter")
        await wait_until(lambda: isinstance(app.screen, StartRunScreen), pilot, message="palette opened the dialog")
        await pilot.press("escape")
        assert isinstance(app.screen, InboxScreen)
        await pilot.press("n")
        await wait_until(lambda: isinstance(app.screen, StartRunScreen) and bool(app.screen.workflows), pilot,
                         message="workflow files listed")
        await pilot.press("enter")  # the highlighted (only) file: on to its args
        await wait_until(lambda: isinstance(app.focused, Input) and (app.focused.id or "").startswith("arg-"), pilot,
                         message="first arg focused")
        assert app.focused.value == "world"  # type: ignore[union-attr]
        # times is JSON (its default is a number): "x" is refused beside the field, nothing runs.
        await pilot.press("ctrl+a", "ctrl+k", *"bob", "tab", "ctrl+a", "ctrl+k", "x", "ctrl+s")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, StartRunScreen) and not app.live_runs.started
        errors = [str(widget.render()) for widget in dialog.query(".arg-error")]
        assert any(error.startswith("not JSON") for error in errors), errors
        await pilot.press("ctrl+a", "ctrl+k", "3")
        await pilot.press("ctrl+s")
        await wait_until(lambda: isinstance(app.screen, RunViewScreen), pilot, message="live view opened")
        view = app.screen
        assert isinstance(view, RunViewScreen)
        await wait_until(lambda: view.story.status == "ok", pilot, timeout=15, message="run finished")
        text = log_text(app)
        assert "hello bob 1" in text and "hello bob 3" in text and "said it" in text
        assert view.story.args == {"who": "bob", "times": 3}
        (step,) = view.story.steps
        assert (step.step_id, step.status, step.exit_code) == ("hello", "ok", 0)
        await pilot.pause()
        assert "hello bob 3" in "\n".join(view.log_view.visible_text())
        # Back to the Runs list, where the run is listed from its log.
        await pilot.press("escape")
        runs = app.screen
        assert isinstance(runs, RunsScreen)
        await wait_until(lambda: any(run.id == view.story.run_id and run.status == "ok" for run in runs.run_list.runs),
                         pilot, message="run listed")
        await pilot.press("1")
        assert isinstance(app.screen, InboxScreen)


async def test_a_run_started_by_another_process_appears_in_the_list_and_streams(
    lobster: Lobster, make_app: MakeApp, tmp_path: Path
) -> None:
    stop = tmp_path / "stop-now"
    workflow = lobster.workdir / "ticker.lobster"
    workflow.write_text(
        "name: ticker\nsteps:\n  - id: tick\n"
        f"    run: i=0; while [ ! -f '{stop}' ]; do i=$((i+1)); echo tick $i; sleep 0.05; done; echo done\n",
        encoding="utf-8",
    )
    app = make_app(lobster.root, watch=True, debounce_ms=20)
    env = {**os.environ, "LOBSTER_STATE_DIR": str(lobster.root), "PYTHONPATH": str(REPO)}
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("2")
        runs = app.screen
        assert isinstance(runs, RunsScreen)
        proc = subprocess.Popen([sys.executable, "-m", "lobster_tui.cli", "run", "--mode", "tool", str(workflow)],
                                env=env, cwd=str(lobster.workdir), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            await wait_until(lambda: any(run.name == "ticker" and run.status == "running" for run in runs.run_list.runs),
                             pilot, timeout=15, message="the other process's run listed as running")
            assert app.screen.check_action("stop", ())  # a `lobster run` of ours on this machine
            await pilot.press("enter")
            await wait_until(lambda: isinstance(app.screen, RunViewScreen), pilot)
            await wait_until(lambda: "tick 3" in log_text(app), pilot, timeout=10, message="lines stream in")
            seen = log_text(app).count("tick")
            await wait_until(lambda: log_text(app).count("tick") > seen + 2, pilot, timeout=10, message="more lines")
            view = app.screen
            assert isinstance(view, RunViewScreen)
            # Scrolled up, the view stops following and counts what arrives below. (Called, not
            # pressed: Pilot's press waits for an idle process, which a stream never is.)
            view.log_view.action_scroll_up()
            assert not view.log_view.following
            await wait_until(lambda: "new lines" in str(view.log_view.border_subtitle), pilot, timeout=10)
            view.log_view.action_follow_end()
            assert view.log_view.following and view.log_view.new_lines == 0
            stop.touch()
            await wait_until(lambda: view.story.status == "ok", pilot, timeout=15, message="run finished")
            assert "done" in log_text(app).splitlines()
            await pilot.press("escape")
            await wait_until(lambda: any(run.name == "ticker" and run.status == "ok" for run in runs.run_list.runs),
                             pilot, timeout=10, message="list shows it finished")
        finally:
            stop.touch()
            proc.wait(timeout=15)
            assert proc.stdout is not None and proc.stderr is not None
            proc.stdout.close()
            proc.stderr.close()


async def test_a_step_printing_100000_lines_stays_responsive_with_bounded_memory(
    lobster: Lobster, make_app: MakeApp
) -> None:
    workflow = lobster.workdir / "loud.lobster"
    workflow.write_text("name: loud\nsteps:\n  - id: loud\n    run: seq 100000; echo loud-done\n", encoding="utf-8")
    app = make_app(lobster.root)
    async with app.run_test(size=(120, 36)) as pilot:
        live = app.start_workflow_run(str(workflow))
        await wait_until(lambda: isinstance(app.screen, RunViewScreen), pilot)
        view = app.screen
        assert isinstance(view, RunViewScreen)
        await wait_until(lambda: live.drained, pilot, timeout=30, message="run streamed")
        await pilot.pause()
        story = live.story
        # Bounded: the story keeps its last max_lines lines, the feed holds nothing back.
        assert len(story.lines) <= story.max_lines
        assert live.feed.pending_lines == 0
        assert story.steps[0].lines == 100_001
        assert story.status == "ok"
        shown = "\n".join(view.log_view.visible_text())  # following: the newest lines
        assert "│ 100000" in shown and "│ loud-done" in shown
        # The UI still takes keys after the flood: g jumps to the oldest line kept. (How fast is
        # for benchmarks/, not for a unit test on a shared machine.)
        await pilot.press("g")
        await wait_until(lambda: view.log_view.scroll_y == 0 and not view.log_view.following, pilot, timeout=5)
        log = view.log_view
        assert log.visible_text()[0].startswith("… ")  # the marker for lines not kept
        # Search: "/", type, enter; n and N move between matches (wrapping round).
        await pilot.press("slash")
        await wait_until(lambda: isinstance(app.focused, Input), pilot)
        await pilot.press(*"9999", "enter")
        await wait_until(lambda: app.focused is log and bool(log.matches), pilot, timeout=20, message="search")
        assert not log.following
        # 99990..99999 and 9999 itself is no longer kept: 10 matches, the first from the top.
        assert len(log.matches) == 10 and log.current_match == log.matches[0]
        await pilot.press("n")
        assert log.current_match == log.matches[1]
        await pilot.press("N", "N")
        assert log.current_match == log.matches[-1]
        assert "/9999 10/10" in str(log.border_subtitle)
        assert any("99999" in line for line in log.visible_text())
        await pilot.press("w")
        assert log.wrap
        await pilot.press("escape")  # clears the search first
        assert not log.query and isinstance(app.screen, RunViewScreen)
        await pilot.press("G")
        await wait_until(lambda: log.following, pilot, timeout=5)
        await pilot.press("escape")  # then goes back
        assert isinstance(app.screen, RunsScreen)


async def test_lobster_tui_run_opens_the_live_view_and_s_stops_the_run_and_its_child(
    lobster: Lobster, make_app: MakeApp
) -> None:
    marker = f"lobster-tui-stop-{uuid.uuid4().hex[:12]}"
    workflow = lobster.workdir / "sleepy.lobster"
    workflow.write_text(
        "name: sleepy\nargs:\n  word:\n    default: dozing\nsteps:\n  - id: nap\n"
        f"    run: echo ${{word}}; {sys.executable} -c 'import time; time.sleep(60)' {marker}; echo never\n",
        encoding="utf-8",
    )
    # lobster-tui run FILE --args-json ...: straight into the run's live view.
    args = build_parser().parse_args(["run", str(workflow), "--args-json", '{"word": "napping"}'])
    start_file, start_args, problem = _start_request(args)
    assert problem is None and start_args == {"word": "napping"}
    assert _start_request(build_parser().parse_args(["run", "x.lobster", "--args-json", "{oops"]))[2] is not None
    app = make_app(lobster.root, start_file=start_file, start_args=start_args)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(lambda: isinstance(app.screen, RunViewScreen), pilot, message="opened on the run")
        (live,) = app.live_runs.started
        await wait_until(lambda: running(marker), pilot, timeout=15, message="child started")
        await wait_until(lambda: "napping" in log_text(app), pilot, timeout=10)
        assert app.screen.check_action("stop", ())
        await pilot.press("s")
        await wait_until(lambda: isinstance(app.screen, ConfirmScreen), pilot, message="asked first")
        confirm = app.screen
        assert isinstance(confirm, ConfirmScreen) and "ends as cancelled" in " ".join(confirm.lines)
        await pilot.press("y")
        await wait_until(lambda: live.drained, pilot, timeout=15, message="run ended")
        await wait_until(lambda: not running(marker), pilot, timeout=10, message="child gone")
        story = live.story
        # A stop someone asked for reads as cancelled; the envelope stays the spec's runtime_error.
        assert story.status == "cancelled" and story.error is not None and "stopped from lobster-tui" in story.error
        assert live.outcome.envelope()["error"] == {"type": "runtime_error", "message": "stopped from lobster-tui"}
        assert "never" not in log_text(app)
        assert "stopped from lobster-tui" in "\n".join(app.screen.log_view.visible_text())  # type: ignore[attr-defined]
        assert story.run_id is not None
        last = read_events(lobster.state, story.run_id)[-1]
        assert last["type"] == "run_finished" and last["status"] == "cancelled"
        assert "stopped from lobster-tui" in str(last["error"])
        assert not app.screen.check_action("stop", ())
        await pilot.press("escape")
        runs = app.screen
        assert isinstance(runs, RunsScreen)
        await wait_until(lambda: any(run.id == story.run_id and run.status == "cancelled" for run in runs.run_list.runs),
                         pilot, message="listed as cancelled")


async def test_s_on_a_cli_run_of_another_process_sends_it_sigterm_after_asking(
    lobster: Lobster, make_app: MakeApp
) -> None:
    marker = f"lobster-tui-remote-stop-{uuid.uuid4().hex[:12]}"
    workflow = lobster.workdir / "far.lobster"
    workflow.write_text(
        f"name: far\nsteps:\n  - id: nap\n    run: echo begun; {sys.executable} -c 'import time; time.sleep(60)' {marker}\n",
        encoding="utf-8",
    )
    env = {**os.environ, "LOBSTER_STATE_DIR": str(lobster.root), "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-m", "lobster_tui.cli", "run", "--mode", "tool", str(workflow)],
                            env=env, cwd=str(lobster.workdir), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    app = make_app(lobster.root)
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            await wait_until(lambda: running(marker), pilot, timeout=15, message="child started")
            await pilot.press("2")
            runs = app.screen
            assert isinstance(runs, RunsScreen)
            await wait_until(lambda: any(run.name == "far" and run.status == "running" for run in runs.run_list.runs),
                             pilot, timeout=15, message="listed as running")
            assert runs.check_action("stop", ())
            await pilot.press("s")
            await wait_until(lambda: isinstance(app.screen, ConfirmScreen), pilot, message="asked first")
            confirm = app.screen
            assert isinstance(confirm, ConfirmScreen) and f"pid {proc.pid}" in " ".join(confirm.lines)
            await pilot.press("y")
            await wait_until(lambda: proc.poll() is not None, pilot, timeout=15, message="the CLI ended")
            await wait_until(lambda: not running(marker), pilot, timeout=10, message="its child ended")
            runs.action_refresh()
            await wait_until(lambda: any(run.name == "far" and run.status == "cancelled" for run in runs.run_list.runs),
                             pilot, timeout=10, message="listed as cancelled")
            assert not runs.check_action("stop", ())
    finally:
        proc.kill()
        out, _err = proc.communicate(timeout=15)
    assert proc.returncode == 143
    assert json.loads(out)["error"] == {"type": "runtime_error", "message": "Received SIGTERM"}


async def test_a_run_whose_process_died_reads_interrupted_and_the_list_uses_the_apps_clock(
    lobster: Lobster, make_app: MakeApp
) -> None:
    workflow = lobster.workdir / "sleepy.lobster"
    workflow.write_text("name: sleepy\nsteps:\n  - id: nap\n    run: echo begun; sleep 30\n", encoding="utf-8")
    env = {**os.environ, "LOBSTER_STATE_DIR": str(lobster.root), "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-m", "lobster_tui.cli", "run", "--mode", "tool", str(workflow)],
                            env=env, cwd=str(lobster.workdir), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        await wait_until_sync(lambda: any(run.current_step == "nap" for run in list_runs(lobster.state)))
    finally:
        proc.kill()  # outright: no run_finished is ever written
        proc.wait(timeout=10)
    [killed] = list_runs(lobster.state)
    # A log without a process id (written before pids were logged), fresh by the real clock.
    old_style = lobster.state.root / "runs" / "0ldstyle0000.jsonl"
    old_style.write_text(
        '{"type":"run_started","runId":"0ldstyle0000","seq":1,"time":"2026-11-30T05:00:00.000Z","name":"legacy",'
        '"source":"workflow","target":"/w/legacy.lobster","args":{},"cwd":"/w","resumed":false}\n',
        encoding="utf-8",
    )
    two_days_on = datetime.now(timezone.utc) + timedelta(days=2)
    app = make_app(lobster.root, clock=lambda: two_days_on)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("2")
        runs = app.screen
        assert isinstance(runs, RunsScreen)
        # By the app's clock the pid-less log sat unwritten for two days: interrupted too.
        await wait_until(lambda: {run.id: run.status for run in runs.run_list.runs}
                         == {killed.id: "interrupted", "0ldstyle0000": "interrupted"}, pilot, message="both interrupted")
        assert runs.run_list.select_run(killed.id)
        await pilot.pause()
        detail = str(runs.query_one("#run-detail", Static).render())
        assert "interrupted: its process is gone" in detail
        assert "running" not in str(runs.sub_title)
        assert not runs.check_action("stop", ())
        # The run view judges the pid-less log by the same clock: interrupted, not running forever.
        assert runs.run_list.select_run("0ldstyle0000")
        await pilot.press("enter")
        view = app.screen
        assert isinstance(view, RunViewScreen)
        await wait_until(lambda: view.story.status == "interrupted", pilot, timeout=10, message="the view agrees")
        assert str(view.query_one("#run-summary", Static).render()).startswith("↯ interrupted  legacy")


async def test_a_run_halted_at_an_approval_and_resumed_reads_as_one_story(lobster: Lobster, make_app: MakeApp) -> None:
    workflow = lobster.workdir / "inbox-cleanup.lobster"
    shutil.copyfile(EXAMPLES / "inbox-cleanup.lobster", workflow)

    def logged(env: dict[str, str] | None = None) -> RunContext:
        context = lobster.context(env)
        context.subscribers.append(RunLogWriter(lobster.state))  # as the CLI does
        return context

    halted = run_workflow(str(workflow), logged())
    assert halted.status == "needs_approval", halted.envelope()
    token = halted.requires_approval["resumeToken"]  # type: ignore[index]
    done = resume(logged({"LOBSTER_APPROVAL_APPROVED_BY": "bob"}), token=token, approved=True)
    assert done.status == "ok", done.envelope()
    app = make_app(lobster.root)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("2")
        runs = app.screen
        assert isinstance(runs, RunsScreen)
        await wait_until(lambda: len(runs.run_list.runs) == 1, pilot)
        assert runs.run_list.runs[0].status == "ok"
        await pilot.press("enter")
        view = app.screen
        assert isinstance(view, RunViewScreen)
        await wait_until(lambda: view.story.status == "ok", pilot, timeout=10, message="story read")
        story = view.story
        assert [step.step_id for step in story.steps] == ["collect", "confirm", "archive"]
        (checkpoint,) = [entry for entry in story.timeline if isinstance(entry, CheckpointEntry)]
        assert (checkpoint.kind, checkpoint.decision, checkpoint.approver) == ("approval", "approve", "bob")
        await pilot.pause()
        text = log_text(app)
        # Both halves: before the gate, and after the decision.
        assert "Scanning personal for newsletters" in text and "archived m-1051" in text
        rows = [str(option.prompt) for option in view.timeline.options]
        assert any("approved by bob" in row for row in rows), rows
        # enter on a step in the timeline shows where it starts in the log.
        view.timeline.focus()
        view.timeline.highlighted = next(i for i, row in enumerate(rows) if "archive" in row)
        await pilot.press("enter")
        await pilot.pause()
        assert not view.log_view.following
        assert any(line.startswith("● archive") for line in view.log_view.visible_text())


async def test_the_run_view_reads_interrupted_when_the_runner_dies_while_watched_and_stops_following(
    lobster: Lobster, make_app: MakeApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The view looks every 2 s whether a silent run's runner is still there; sooner here.
    monkeypatch.setattr(RunViewScreen, "RUNNER_CHECK_INTERVAL", 0.05, raising=False)
    workflow = lobster.workdir / "sleepy.lobster"
    workflow.write_text("name: sleepy\nsteps:\n  - id: nap\n    run: echo begun; sleep 30\n", encoding="utf-8")
    env = {**os.environ, "LOBSTER_STATE_DIR": str(lobster.root), "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-m", "lobster_tui.cli", "run", "--mode", "tool", str(workflow)],
                            env=env, cwd=str(lobster.workdir), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        await wait_until_sync(lambda: any(run.current_step == "nap" for run in list_runs(lobster.state)))
        app = make_app(lobster.root)
        async with app.run_test(size=(120, 36)) as pilot:
            await pilot.press("2")
            runs = app.screen
            assert isinstance(runs, RunsScreen)
            await wait_until(lambda: [run.status for run in runs.run_list.runs] == ["running"], pilot, timeout=10)
            await pilot.press("enter")
            view = app.screen
            assert isinstance(view, RunViewScreen)
            await wait_until(lambda: "begun" in log_text(app), pilot, timeout=10, message="caught up")

            def following() -> bool:
                return any(worker.group == "run-follow" and not worker.is_finished for worker in app.workers)

            def summary() -> str:
                return str(view.query_one("#run-summary", Static).render())

            # Alive, it is running (however often the view looks) and the follow goes on.
            for _ in range(10):
                await pilot.pause(0.02)
            assert view.story.status == "running" and following()
            assert summary().startswith("● running")

            proc.kill()  # outright: no run_finished is ever written
            proc.wait(timeout=10)
            await wait_until(lambda: view.story.status == "interrupted", pilot, timeout=10, message="interrupted")
            await wait_until(lambda: not following(), pilot, timeout=10, message="the follow ended")
            await pilot.pause()
            first, second = summary().splitlines()
            assert first.startswith("↯ interrupted  sleepy") and "running" not in first
            assert second == f"its process (pid {proc.pid}) is gone (killed or crashed); the run never finished"
            [row] = [str(option.prompt) for option in view.timeline.options]
            assert row.startswith("↯ nap") and "interrupted" in row and "running" not in row
            assert any(line.startswith("↯ run interrupted") for line in view.log_view.visible_text())
            # The list says the same; opened again, the view reads the log and ends the same way.
            await pilot.press("escape")
            runs.action_refresh()
            await wait_until(lambda: [run.status for run in runs.run_list.runs] == ["interrupted"], pilot, timeout=10)
            await pilot.press("enter")
            again = app.screen
            assert isinstance(again, RunViewScreen) and again is not view
            await wait_until(lambda: again.story.status == "interrupted", pilot, timeout=10, message="reopened")
            assert "begun" in log_text(app)
    finally:
        proc.kill()
        proc.wait(timeout=10)
