"""Pilot tests of the answer screen: JSON editor prefilled from defaults, live validation, submit."""

from __future__ import annotations

from textual.widgets import Static, TextArea

from lobster_tui.tui.screens.answer import AnswerScreen
from tests.tui.helpers import Lobster, MakeApp, settle


def status(app: object) -> str:
    return str(app.screen.query_one("#answer-status", Static).render())  # type: ignore[attr-defined]


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
        editor = app.screen.query_one("#answer-editor", TextArea)
        # Prefilled from the step's defaults, and those are valid.
        assert '"decision": "publish"' in editor.text
        assert status(app).startswith("✓ Valid")

        # Live validation in the runner's own words.
        editor.load_text('{"decision": "ship it", "audience": {"channels": ["blog"]}}')
        await pilot.pause()
        assert "Workflow input step review response failed schema validation at /decision" in status(app)
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, AnswerScreen)  # refused, still here
        assert any("Not submitted" in n.message for n in app._notifications)
        assert len(lobster.resume_files()) == 1

        editor.load_text("{not json")
        await pilot.pause()
        assert "Not valid JSON" in status(app)

        editor.load_text('{"decision": "publish", "audience": {"channels": ["blog", "changelog"]}}')
        await pilot.pause()
        assert status(app).startswith("✓ Valid")
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert app.screen is app.inbox
        assert lobster.resume_files() == []
        log = "\n".join(app.inbox.log_panel.transcript)
        assert "answer by" in log and "● publish" in log and "✓ publish  ok" in log
        assert "The run finished ok." in log


async def test_escape_leaves_the_answer_screen_without_sending(lobster: Lobster, make_app: MakeApp) -> None:
    lobster.workflow("release-notes")
    before = lobster.files()
    app = make_app(lobster.root)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, AnswerScreen)
        await pilot.press("escape")
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
        editor = app.screen.query_one("#answer-editor", TextArea)
        editor.load_text('{"score": 0}')
        await pilot.pause()
        assert "pipeline input response failed schema validation at /score" in status(app)
        editor.load_text('{"score": 5}')
        await pilot.pause()
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert lobster.resume_files() == []
        assert "The run finished ok." in "\n".join(app.inbox.log_panel.transcript)
