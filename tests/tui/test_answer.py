"""Pilot tests of the answer screen: a form generated from the schema, live validation, submit."""

from __future__ import annotations

from textual.widgets import Static

from lobster_tui.tui.screens.answer import AnswerScreen
from lobster_tui.tui.screens.confirm import ConfirmScreen
from lobster_tui.tui.widgets.schema_form import SchemaForm
from tests.tui.helpers import Lobster, MakeApp, settle, wait_until


def status(app: object) -> str:
    return str(app.screen.query_one("#answer-status", Static).render())  # type: ignore[attr-defined]


def form(app: object) -> SchemaForm:
    return app.screen.query_one("#answer-form", SchemaForm)  # type: ignore[attr-defined]


async def test_answer_screen_refuses_an_invalid_answer_and_submits_a_valid_one(
    lobster: Lobster, make_app: MakeApp
) -> None:
    lobster.workflow("release-notes")
    app = make_app(lobster.root)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, AnswerScreen)
        # Prefilled from the step's defaults, and those are valid.
        assert form(app).value == {"decision": "publish", "audience": {"channels": ["changelog"]}}
        assert status(app).startswith("✓ Valid")

        # A bad value: its error shows beside its field, and below the form in the runner's words.
        form(app).set_value({"decision": "publish", "audience": {"channels": []}})
        await pilot.pause()
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, AnswerScreen)  # refused, still here
        assert "Workflow input step review response failed schema validation at /audience/channels" in status(app)
        assert any("Not submitted" in n.message for n in app._notifications)
        assert "must NOT have fewer than 1 items" in form(app).field_at("/audience/channels")._error_text
        assert len(lobster.resume_files()) == 1

        # The fix clears it; ctrl+s resumes the run and the panel shows it finish.
        form(app).set_value({"decision": "publish", "audience": {"channels": ["blog", "changelog"]}})
        await pilot.pause(0.5)
        assert status(app).startswith("✓ Valid")
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert app.screen is app.inbox
        assert lobster.resume_files() == []
        log = "\n".join(app.inbox.log_panel.transcript)
        assert "● publish" in log and "The run finished ok." in log


async def test_the_prefilled_answer_is_sent_by_keyboard_alone(lobster: Lobster, make_app: MakeApp) -> None:
    lobster.workflow("release-notes")
    app = make_app(lobster.root)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("enter", "ctrl+s")
        await settle(app, pilot)
        assert app.screen is app.inbox and lobster.resume_files() == []


async def test_escape_asks_before_dropping_a_changed_answer(lobster: Lobster, make_app: MakeApp) -> None:
    lobster.workflow("release-notes")
    before = lobster.files()
    app = make_app(lobster.root)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("escape")  # nothing changed: leaves at once
        await settle(app, pilot)
        assert app.screen is app.inbox
        await pilot.press("enter")
        await pilot.pause()
        form(app).set_value({"decision": "drop", "audience": {"channels": ["blog"]}})
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        await pilot.pause()
        assert isinstance(app.screen, AnswerScreen)
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("y")
        await settle(app, pilot)
        assert app.screen is app.inbox
        assert lobster.files() == before


async def test_pipeline_input_request_is_answered_through_the_runner(lobster: Lobster, make_app: MakeApp) -> None:
    lobster.pipeline(
        "exec --json --shell \"echo '{\\\"title\\\":\\\"x\\\"}'\" | ask --subject-from-stdin --prompt 'Rate it' "
        "--schema '{\"type\":\"object\",\"required\":[\"score\"],\"properties\":{\"score\":{\"type\":\"integer\",\"minimum\":1}}}'"
    )
    app = make_app(lobster.root)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        [entry] = app.inbox.checkpoint_list.entries
        assert entry.kind == "input"  # type: ignore[union-attr]
        await pilot.press("enter")
        await pilot.pause()
        form(app).set_value({"score": 0})
        await wait_until(lambda: "pipeline input response failed schema validation at /score" in status(app), pilot,
                         timeout=20, message="the schema error shown")
        form(app).set_value({"score": 5})
        await wait_until(lambda: "failed schema validation" not in status(app), pilot, timeout=20)
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        # A loaded machine may still be finishing the resumed run: wait for its outcome line.
        await wait_until(lambda: "The run finished ok." in "\n".join(app.inbox.log_panel.transcript), pilot,
                         timeout=20, message="the resumed run's outcome in the log panel")
        assert lobster.resume_files() == []
