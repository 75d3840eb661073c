"""Pilot tests of deciding: every decision goes through a modal and the real core runner."""

from __future__ import annotations

from lobster_tui.core.checkpoints import Checkpoint
from lobster_tui.core.runner import resume
from lobster_tui.tui.screens.confirm import ConfirmScreen
from lobster_tui.tui.screens.review import ReviewScreen
from tests.tui.helpers import Lobster, MakeApp, settle

IDENTITY_WORKFLOW = """\
name: guarded
steps:
  - id: plan
    run: >
      printf '%s' '[{"host": "db-1"}, {"host": "db-2"}]'
  - id: gate
    stdin: $plan.json
    approval:
      prompt: Restart both databases?
      required_approver: bob
  - id: restart
    when: $gate.approved
    run: echo restarted
"""


def log_text(app: object) -> str:
    """Everything the run log panel shows."""
    return "\n".join(app.inbox.log_panel.transcript)  # type: ignore[attr-defined]


def pending_keys(app: object) -> list[str]:
    return [e.state_key for e in app.inbox.checkpoint_list.entries]  # type: ignore[attr-defined]


async def test_approve_with_a_then_y_runs_the_rest_and_streams_the_log(lobster: Lobster, make_app: MakeApp) -> None:
    lobster.workflow("inbox-cleanup")
    [state_file] = lobster.resume_files()
    app = make_app(lobster.root, approver="alice")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        assert app.inbox.log_panel.display is False
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        summary = str(app.screen.query_one("#confirm-summary").render())
        assert "3 items pass the gate" in summary and "Recorded approver: alice" in summary
        # The safe choice has focus.
        assert app.focused is not None and app.focused.id == "no"
        await pilot.press("y")
        await settle(app, pilot)
        assert state_file not in lobster.files()
        assert lobster.resume_files() == []
        assert pending_keys(app) == []
        assert app.inbox.log_panel.display is True
        text = log_text(app)
        assert "↻ approve by alice" in text
        assert "● archive" in text
        assert "archived m-1042" in text
        assert "✓ archive  ok" in text
        assert "■ run ok" in text
        assert "The run finished ok." in text
        # l toggles the panel.
        await pilot.press("l")
        assert app.inbox.log_panel.display is False
        await pilot.press("l")
        assert app.inbox.log_panel.display is True


async def test_reject_with_x_then_y_cancels_the_run(lobster: Lobster, make_app: MakeApp) -> None:
    lobster.workflow("inbox-cleanup")
    app = make_app(lobster.root)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        await pilot.press("x", "y")
        await settle(app, pilot)
        assert lobster.resume_files() == []
        text = log_text(app)
        assert "reject by no approver identity" in text
        assert "archive" not in text.split("reject", 1)[1]  # nothing after the gate ran
        assert "Cancelled: nothing after the gate ran." in text


async def test_cancel_with_c_then_y_drops_an_input_request(lobster: Lobster, make_app: MakeApp) -> None:
    lobster.workflow("release-notes")
    app = make_app(lobster.root)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        # Approve and reject do not apply to an input request: a and x do nothing.
        await pilot.press("a", "x")
        await pilot.pause()
        assert app.screen is app.inbox
        await pilot.press("c")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await settle(app, pilot)
        assert lobster.resume_files() == []
        assert "Cancelled" in log_text(app)


async def test_n_escape_and_enter_back_out_and_nothing_changes(lobster: Lobster, make_app: MakeApp) -> None:
    lobster.workflow("inbox-cleanup")
    before = lobster.files()
    app = make_app(lobster.root)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        for decision_key, back_out in (("a", "n"), ("x", "escape"), ("c", "enter")):
            await pilot.press(decision_key)
            await pilot.pause()
            assert isinstance(app.screen, ConfirmScreen)
            await pilot.press(back_out)  # enter presses the focused No button
            await settle(app, pilot)
            assert app.screen is app.inbox, (decision_key, back_out)
        # Other keys in the modal decide nothing.
        await pilot.press("a", "space", "a", "x", "c", "q")
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        assert lobster.files() == before
        assert app.inbox.log_panel.display is False


async def test_stray_keys_on_the_list_never_decide(lobster: Lobster, make_app: MakeApp) -> None:
    lobster.workflow("inbox-cleanup")
    before = lobster.files()
    app = make_app(lobster.root)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        await pilot.press("y", "Y", "space", "1", "n", "z", "tab", "y", "shift+tab", "y")
        await settle(app, pilot)
        assert lobster.files() == before
        assert app.workers._workers == set() or all(w.group != "decisions" for w in app.workers)


async def test_identity_rules_refuse_before_anything_runs(lobster: Lobster, make_app: MakeApp) -> None:
    lobster.workflow("guarded", text=IDENTITY_WORKFLOW)
    before = lobster.files()
    app = make_app(lobster.root, approver="alice")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        [entry] = app.inbox.checkpoint_list.entries
        assert isinstance(entry, Checkpoint) and entry.required_approver == "bob"
        text = "\n".join(str(s.render()) for s in app.inbox.preview.query("Static"))
        assert "Required approver: bob" in text
        assert "You are: alice (--approver)" in text
        assert "You may not approve" in text and "requires approver 'bob', got 'alice'" in text
        await pilot.press("a")
        await pilot.pause()
        assert app.screen is app.inbox  # no modal
        messages = [n.message for n in app._notifications]
        assert any("requires approver 'bob', got 'alice'" in m for m in messages)
        assert lobster.files() == before
    # Bob may.
    app = make_app(lobster.root, approver="bob")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        await pilot.press("a", "y")
        await settle(app, pilot)
        assert lobster.resume_files() == []
        assert "restarted" in log_text(app)


async def test_resumed_elsewhere_before_the_key_press(lobster: Lobster, make_app: MakeApp) -> None:
    outcome = lobster.workflow("inbox-cleanup")
    app = make_app(lobster.root)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        assert len(pending_keys(app)) == 1
        # Another reviewer (the CLI, say) approves it after the inbox listed it.
        done = resume(lobster.context(), token=outcome.requires_approval["resumeToken"], approved=True)
        assert done.status == "ok"
        await pilot.press("a")
        await settle(app, pilot)
        assert app.screen is app.inbox  # nothing to confirm
        messages = [n.message for n in app._notifications]
        assert any("no longer pending: resumed or cancelled elsewhere" in m for m in messages)
        assert pending_keys(app) == []  # and the inbox caught up


async def test_resumed_elsewhere_while_the_modal_is_open_never_runs_twice(lobster: Lobster, make_app: MakeApp) -> None:
    outcome = lobster.workflow("deploy")
    app = make_app(lobster.root)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        # Someone else approves staging meanwhile; their run halts at the smoke report, so the
        # staging gate's file now holds a consumed marker.
        other = resume(lobster.context(), token=outcome.requires_approval["resumeToken"], approved=True)
        assert other.status == "needs_input"
        await pilot.press("y")
        await settle(app, pilot)
        text = log_text(app)
        assert "already resumed at 20" in text
        assert "● staging" not in text  # the runner did not run staging a second time
        messages = [n.message for n in app._notifications]
        assert any("already resumed at" in m for m in messages)
        # The other reviewer's next checkpoint is what the inbox lists now.
        [entry] = app.inbox.checkpoint_list.entries
        assert isinstance(entry, Checkpoint) and entry.step == "smoke_report"


async def test_review_screen_shows_everything_and_decides(lobster: Lobster, make_app: MakeApp) -> None:
    lobster.workflow("inbox-cleanup")
    app = make_app(lobster.root)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ReviewScreen)
        text = "\n".join(str(s.render()) for s in app.screen.query("Static"))
        assert "Archive these 3 newsletters" in text
        # esc backs out, nothing changes.
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is app.inbox and len(lobster.resume_files()) == 1
        await pilot.press("enter", "x")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await settle(app, pilot)
        assert app.screen is app.inbox
        assert lobster.resume_files() == []
        assert "Cancelled" in log_text(app)


async def test_next_checkpoint_of_the_run_appears_in_the_inbox(lobster: Lobster, make_app: MakeApp) -> None:
    lobster.workflow("deploy")
    app = make_app(lobster.root)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        await pilot.press("a", "y")
        await settle(app, pilot)
        [entry] = app.inbox.checkpoint_list.entries
        assert isinstance(entry, Checkpoint) and (entry.kind, entry.step) == ("input", "smoke_report")
        text = log_text(app)
        assert "✓ staging  ok" in text and "waiting for input: Report the staging smoke test" in text
        assert "The run stopped at its next input request" in text


SLOW_STEP = """\
name: slow
steps:
  - id: gate
    approval: Start the slow step?
  - id: slow
    when: $gate.approved
    run: >
      {python} -c "import os, sys, time; open('{pidfile}', 'w').write(str(os.getpid()));
      print('tick 1', flush=True); time.sleep(60); print('never')"
"""


async def test_streams_a_running_step_and_stop_ends_its_child(lobster: Lobster, make_app: MakeApp) -> None:
    import os
    import sys

    from tests.tui.helpers import wait_until

    pidfile = lobster.workdir / "child.pid"
    lobster.workflow("slow", text=SLOW_STEP.format(python=sys.executable, pidfile=pidfile))
    app = make_app(lobster.root)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        await pilot.press("a", "y")
        # The step's first line shows while the step is still running.
        await wait_until(lambda: "  │ tick 1" in app.inbox.log_panel.transcript, pilot, timeout=10, message="streamed line")
        assert app.running == 1
        pid = int(pidfile.read_text())
        await pilot.press("s")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await wait_until(lambda: app.running == 0, pilot, timeout=10, message="run stopped")

        def child_gone() -> bool:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return True
            return False

        await wait_until(child_gone, pilot, timeout=10, message="child process ended")
        text = log_text(app)
        assert "Stopped: stopped from lobster-tui" in text
        assert "never" not in text
