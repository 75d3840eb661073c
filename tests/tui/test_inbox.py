"""Pilot tests of the inbox: listing, previews, filtering, broken files and the empty state."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from textual.widgets import Static

from lobster_tui.core.checkpoints import BrokenCheckpoint, Checkpoint, scan_checkpoints
from lobster_tui.tui.screens.help import HelpScreen
from lobster_tui.tui.widgets.preview import CheckpointPreview

from tests.tui.helpers import Lobster, MakeApp, settle, wait_until


def preview_text(app: object) -> str:
    """All text the preview shows now."""
    preview = app.screen.query_one(CheckpointPreview)  # type: ignore[attr-defined]
    return "\n".join(str(static.render()) for static in preview.query(Static))


async def test_lists_pending_checkpoints_newest_first_with_count(lobster: Lobster, make_app: MakeApp) -> None:
    lobster.workflow("inbox-cleanup")
    lobster.workflow("release-notes")
    lobster.pipeline()
    app = make_app(lobster.root)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        entries = app.inbox.checkpoint_list.entries
        assert [e.kind for e in entries if isinstance(e, Checkpoint)] == ["approval", "input", "approval"]
        assert [e.workflow for e in entries][1:] == ["release-notes", "inbox-cleanup"]
        assert app.sub_title == "3 pending"
        assert app.inbox.checkpoint_list.row_count == 3
        # The newest (the pipeline) is highlighted and previewed, items as a table.
        text = preview_text(app)
        assert "Apply?" in text and "Pipeline" in text
        await pilot.press("j")
        await pilot.pause()
        assert "Review the release notes" in preview_text(app)
        assert "Subject" in preview_text(app) and "Faster inbox, safer resumes" in preview_text(app)
        await pilot.press("G")
        await pilot.pause()
        text = preview_text(app)
        assert "Archive these 3 newsletters" in text
        assert "collect" in text  # the step that ran before the gate
        assert "No approver rules" in text
        await pilot.press("g")
        await pilot.pause()
        assert app.inbox.checkpoint_list.cursor_row == 0


GATE = """\
name: gate-{n}
steps:
  - id: gate
    approval: "Ship change {n}?"
"""


async def test_moving_between_similar_checkpoints_updates_the_preview_in_place(
    lobster: Lobster, make_app: MakeApp
) -> None:
    for n in (1, 2):
        lobster.workflow(f"gate-{n}", text=GATE.format(n=n))
    lobster.workflow("release-notes")
    app = make_app(lobster.root)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        preview = app.inbox.preview
        # Newest first: release-notes (input), gate-2, gate-1.
        await pilot.press("j")
        await wait_until(lambda: "Ship change 2?" in preview_text(app), pilot, timeout=20)
        widgets = list(preview.children)
        await pilot.press("j")
        await wait_until(lambda: "Ship change 1?" in preview_text(app), pilot, timeout=20)
        # Same sections: the same widgets took the new text (nothing was unmounted).
        assert list(preview.children) == widgets
        assert "gate-1" in preview_text(app) and "gate-2" not in preview_text(app)
        # An input request has other sections: the preview is rebuilt for it.
        await pilot.press("g")
        await wait_until(lambda: "Answer schema" in preview_text(app), pilot, timeout=20)
        assert "Ship change" not in preview_text(app)


async def test_empty_inbox_says_how_to_make_a_checkpoint(tmp_path: Path, make_app: MakeApp) -> None:
    app = make_app(tmp_path / "nothing-here")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        hint = app.screen.query_one("#empty-hint", Static)
        assert hint.display
        assert "lobster run --mode tool examples/inbox-cleanup.lobster" in str(hint.render())
        assert app.sub_title == "0 pending"
        # Decision keys do nothing on an empty list.
        await pilot.press("a", "x", "c", "y")
        await pilot.pause()
        assert app.screen is app.inbox


async def test_corrupt_state_file_is_a_marked_row_not_a_crash(lobster: Lobster, make_app: MakeApp) -> None:
    lobster.workflow("inbox-cleanup")
    broken = lobster.root / "workflow_resume_0badf00d-0000-4000-8000-000000000000.json"
    broken.write_text("{ this is not json", encoding="utf-8")
    app = make_app(lobster.root)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        # The first scan starts after the first frame: on a loaded machine it may still be on its way.
        await wait_until(lambda: len(app.inbox.checkpoint_list.entries) == 2, pilot, timeout=20, message="scan")
        entries = app.inbox.checkpoint_list.entries
        bad = [e for e in entries if isinstance(e, BrokenCheckpoint)]
        assert len(bad) == 1 and "not valid JSON" in bad[0].reason
        assert app.sub_title == "1 pending · 1 broken"
        assert app.inbox.checkpoint_list.select_key(bad[0].state_key)
        await wait_until(lambda: "Unreadable checkpoint" in preview_text(app), pilot, timeout=20, message="preview")
        assert "not valid JSON" in preview_text(app)
        # Approve and reject do not apply; enter does not open it.
        await pilot.press("a", "x", "enter")
        await pilot.pause()
        assert app.screen is app.inbox
        # c deletes it, after a confirmation.
        await pilot.press("c")
        await pilot.pause()
        assert type(app.screen).__name__ == "ConfirmScreen"
        await pilot.press("y")
        await settle(app, pilot)
        assert not broken.exists()
        assert [type(e) for e in app.inbox.checkpoint_list.entries] == [Checkpoint]


async def test_filter_as_you_type_and_escape_clears(lobster: Lobster, make_app: MakeApp) -> None:
    lobster.workflow("inbox-cleanup")
    lobster.workflow("release-notes")
    lobster.pipeline()
    app = make_app(lobster.root)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        listing = app.inbox.checkpoint_list
        await pilot.press("slash")
        await pilot.press(*"release")
        await pilot.pause()
        assert [e.workflow for e in listing.shown] == ["release-notes"]
        assert "1 of 3" in str(listing.border_title)
        # Letters typed into the filter are text, not commands.
        assert app.screen is app.inbox and app.inbox.log_panel.display is False
        await pilot.press("enter")  # keep the filter, back to the list
        await pilot.pause()
        assert app.focused is listing
        assert [e.workflow for e in listing.shown] == ["release-notes"]
        await pilot.press("escape")
        await pilot.pause()
        assert len(listing.shown) == 3
        # The filter matches ids and prompts too, case-insensitively.
        await pilot.press("slash", *"APPLY")
        await pilot.pause()
        assert [e.prompt for e in listing.shown] == ["Apply?"]
        await pilot.press("escape")
        await pilot.pause()
        assert len(listing.shown) == 3 and app.focused is listing


async def test_rescan_with_r_picks_up_changes_when_not_watching(lobster: Lobster, make_app: MakeApp) -> None:
    lobster.workflow("inbox-cleanup")
    app = make_app(lobster.root)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        assert len(app.inbox.checkpoint_list.entries) == 1
        lobster.pipeline()
        await pilot.press("r")
        await settle(app, pilot)
        assert len(app.inbox.checkpoint_list.entries) == 2


async def test_help_is_generated_from_bindings(lobster: Lobster, make_app: MakeApp) -> None:
    lobster.workflow("inbox-cleanup")
    app = make_app(lobster.root)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        described = {row.description for row in app.screen.rows}
        assert {"Approve", "Reject", "Cancel", "Open", "Filter", "Rescan", "Log", "Quit"} <= described
        assert all(row.binding_id for row in app.screen.rows)
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is app.inbox


async def test_every_binding_has_an_id_and_a_description() -> None:
    from lobster_tui.tui.app import LobsterApp
    from lobster_tui.tui.screens.answer import AnswerScreen
    from lobster_tui.tui.screens.confirm import ConfirmScreen
    from lobster_tui.tui.screens.help import HelpScreen
    from lobster_tui.tui.screens.inbox import InboxScreen
    from lobster_tui.tui.screens.review import ReviewScreen
    from lobster_tui.tui.widgets.checkpoint_list import CheckpointList
    from lobster_tui.tui.widgets.filter_input import FilterInput
    from lobster_tui.tui.widgets.log_panel import LogPanel

    for owner in (LobsterApp, InboxScreen, ReviewScreen, AnswerScreen, ConfirmScreen, HelpScreen,
                  CheckpointList, FilterInput, LogPanel):
        for binding in owner.BINDINGS:
            assert binding.id, f"{owner.__name__}: {binding}"  # type: ignore[union-attr]
            assert binding.description, f"{owner.__name__}: {binding}"  # type: ignore[union-attr]


async def test_narrow_terminal_stacks_the_panes(lobster: Lobster, make_app: MakeApp) -> None:
    lobster.workflow("inbox-cleanup")
    app = make_app(lobster.root)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        assert app.inbox.has_class("-narrow")
        listing = app.screen.query_one("#list-pane").region
        side = app.screen.query_one("#side-pane").region
        assert side.y >= listing.bottom  # below, not beside
        assert listing.width == 80
    app = make_app(lobster.root)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(app, pilot)
        listing = app.screen.query_one("#list-pane").region
        side = app.screen.query_one("#side-pane").region
        assert side.x >= listing.right  # beside


async def test_command_palette_offers_the_same_actions(lobster: Lobster, make_app: MakeApp) -> None:
    lobster.workflow("inbox-cleanup")
    app = make_app(lobster.root)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"approve")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause(0.1)
        # The palette's Approve is the list's approve: it asks first.
        assert type(app.screen).__name__ == "ConfirmScreen"
        await pilot.press("n")
        await pilot.pause()
        assert len(app.inbox.checkpoint_list.entries) == 1


async def test_keys_typed_right_after_slash_go_to_the_filter(lobster: Lobster, make_app: MakeApp) -> None:
    from textual import events

    lobster.pipeline()
    app = make_app(lobster.root)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        # A fast typist: every key is queued before the first is handled.
        for key, character in [("slash", "/"), ("q", "q"), ("u", "u"), ("i", "i"), ("t", "t")]:
            app.post_message(events.Key(key, character))
        await settle(app, pilot)
        assert app.is_running
        box = app.screen.query_one("#filter")
        assert box.value == "quit"  # type: ignore[attr-defined]
        # In the filter, "/" is text (paths are worth filtering by).
        await pilot.press("slash")
        assert box.value == "quit/"  # type: ignore[attr-defined]


async def test_mouse_highlights_opens_and_backs_out(lobster: Lobster, make_app: MakeApp) -> None:
    from lobster_tui.tui.screens.confirm import ConfirmScreen
    from lobster_tui.tui.screens.review import ReviewScreen
    from lobster_tui.tui.widgets.checkpoint_list import CheckpointList

    lobster.workflow("inbox-cleanup")
    lobster.pipeline()
    before = lobster.files()
    app = make_app(lobster.root)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        listing = app.inbox.checkpoint_list
        assert listing.cursor_row == 0
        # Below the border (y=0) and the header (y=1): the first row is y=2, the second y=3.
        await pilot.click(CheckpointList, offset=(12, 3))
        await pilot.pause()
        assert listing.cursor_row == 1
        assert "Archive these 3 newsletters" in preview_text(app)
        await pilot.click(CheckpointList, offset=(12, 3))  # a second click opens it
        await pilot.pause()
        assert isinstance(app.screen, ReviewScreen)
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.click("#no")
        await settle(app, pilot)
        assert isinstance(app.screen, ReviewScreen)
        assert lobster.files() == before


async def test_a_long_list_renders_only_the_rows_on_screen(lobster: Lobster, make_app: MakeApp) -> None:
    for _ in range(60):
        lobster.pipeline("exec --json --shell 'echo [1]' | approve --prompt 'Go?'")
    app = make_app(lobster.root)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        listing = app.inbox.checkpoint_list
        assert listing.row_count == 60
        height = listing.scrollable_content_region.height
        assert 5 < height < 60

        def screen_lines() -> list[str]:
            return ["".join(s.text for s in listing.render_line(y)) for y in range(height)]

        assert "workflow › step" in screen_lines()[0]
        # A full repaint builds the cells of the rows on screen, not of all 60.
        built: list[str] = []
        cells = listing._cells
        listing._cells = lambda entry: (built.append(entry.state_key), cells(entry))[1]  # type: ignore[method-assign]
        listing.refresh_ages()
        await pilot.pause()
        assert 0 < len(built) <= height - 1
        await pilot.press("G")
        await pilot.pause()
        last = listing.highlighted
        assert listing.cursor_row == 59 and last is not None
        assert last.short_id in screen_lines()[-1]  # scrolled so the cursor is on screen
        await pilot.press("pageup")
        await pilot.pause()
        assert listing.cursor_row == 59 - (height - 1)
        assert any(listing.highlighted.short_id in line for line in screen_lines()[1:])  # type: ignore[union-attr]
        await pilot.press("g")
        await pilot.pause()
        assert listing.cursor_row == 0 and listing.scroll_offset.y == 0


async def test_the_previews_age_moves_on_with_the_clock_like_the_lists(
    lobster: Lobster, make_app: MakeApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    lobster.pipeline()
    # The list repaints ages every 15 s; the preview's header must too (here sooner, for the test).
    monkeypatch.setattr(CheckpointPreview, "AGE_REFRESH_SECONDS", 0.05, raising=False)
    [made] = [entry.created_at for entry in scan_checkpoints(lobster.state) if isinstance(entry, Checkpoint)]
    clock = [made + timedelta(seconds=5)]
    app = make_app(lobster.root, clock=lambda: clock[0])
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        header = app.screen.query_one("CheckpointPreview .meta", Static)
        assert "(5s ago)" in str(header.render())
        preview = app.screen.query_one(CheckpointPreview)
        prompt = preview.query_one(".prompt", Static)
        clock[0] = made + timedelta(hours=3)
        await wait_until(lambda: "(3h ago)" in str(header.render()), pilot, message="the age moved on")
        # Only the header line changed: the preview was not rebuilt around it.
        assert preview.query_one(".meta", Static) is header
        assert preview.query_one(".prompt", Static) is prompt
