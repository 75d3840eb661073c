"""Text from workflows and runs is shown as written, never read as Textual or Rich markup.

A prompt such as ``Delete [/tmp] files?`` is a closing markup tag with no opening one: read as
markup it raised MarkupError during layout and took the whole app down. Every screen that shows
such text goes through here: the inbox preview, the confirm modal, the review screen with its
items table, the bulk confirmation, History and Runs.
"""

from __future__ import annotations

from textual.widgets import DataTable, Static

from lobster_tui.tui.screens.bulk_confirm import BulkConfirmScreen
from lobster_tui.tui.screens.confirm import ConfirmScreen
from lobster_tui.tui.screens.review import ReviewScreen
from lobster_tui.tui.screens.run_view import RunViewScreen
from tests.tui.helpers import Lobster, MakeApp, settle, wait_until

PROMPT = "Delete [/tmp] and [bold]x[/bold] files? [link=x]"
WORKFLOW = f"""\
name: "[/cleanup]"
steps:
  - id: list
    run: echo '[{{"path":"[/var/log]","why":"[b]old"}}]'
  - id: gate
    approval:
      prompt: "{PROMPT}"
      items: $list.json
"""


def all_text(app: object) -> str:
    """Every Static and DataTable cell on the current screen, as plain text."""
    screen = app.screen  # type: ignore[attr-defined]
    parts = [str(static.render()) for static in screen.query(Static)]
    for table in screen.query(DataTable):
        for row in range(table.row_count):
            parts.extend(str(cell) for cell in table.get_row_at(row))
    return "\n".join(parts)


async def test_brackets_in_prompts_items_and_names_are_shown_literally_on_every_screen(
    lobster: Lobster, make_app: MakeApp
) -> None:
    lobster.workflow("markup", text=WORKFLOW)
    lobster.workflow("markup-2", text=WORKFLOW)
    app = make_app(lobster.root)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        assert len(app.inbox.checkpoint_list.entries) == 2
        # The preview of the highlighted checkpoint (it crashed here).
        await wait_until(lambda: PROMPT in all_text(app), pilot, timeout=20, message="preview shows the prompt")
        # The confirm modal names the prompt; n leaves it.
        await pilot.press("a")
        await wait_until(lambda: isinstance(app.screen, ConfirmScreen), pilot)
        assert "[/tmp]" in all_text(app) or "[/tmp]" in str(app.screen.query_one("#confirm-title", Static).render())
        await pilot.press("n")
        # The review screen, with the items as a table.
        await pilot.press("enter")
        await wait_until(lambda: isinstance(app.screen, ReviewScreen), pilot)
        await pilot.pause()
        assert "[/var/log]" in all_text(app) and "[b]old" in all_text(app)
        await pilot.press("escape")
        # Both marked, one bulk confirmation listing both prompts.
        await pilot.press("asterisk", "A")
        await wait_until(lambda: isinstance(app.screen, BulkConfirmScreen), pilot)
        assert all_text(app).count("[/tmp]") >= 2
        await pilot.press("y")
        await wait_until(lambda: not app.inbox.checkpoint_list.entries, pilot, timeout=30, message="both approved")
        await settle(app, pilot)
        # History lists the decisions with their prompts; Runs lists the runs by name.
        await pilot.press("3")
        await wait_until(lambda: "[/tmp]" in all_text(app), pilot, timeout=20, message="history shows the prompt")
        await pilot.press("escape")
        await pilot.press("2")
        await wait_until(lambda: "[/cleanup]" in all_text(app), pilot, timeout=20, message="runs show the name")
        # A run view searched for text with brackets: the query shows in the log's border.
        await pilot.press("enter")
        await wait_until(lambda: isinstance(app.screen, RunViewScreen), pilot, timeout=20, message="run view")
        await pilot.press("slash", *"[/x", "enter")
        view = app.screen
        assert isinstance(view, RunViewScreen)
        log = view.log_view
        # The border keeps the Content it was given (its str getter re-escapes, imperfectly for "[/x").
        await wait_until(lambda: "/[/x" in log._border_subtitle.plain, pilot, timeout=20,  # type: ignore[union-attr]
                         message="the search in the subtitle")
    assert app.return_code in (None, 0)


async def test_notifications_never_read_their_text_as_markup(lobster: Lobster, make_app: MakeApp) -> None:
    app = make_app(lobster.root)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        # From the app and from a widget (which passes markup=True explicitly to the app).
        app.notify("step failed: rm: cannot remove '[/tmp]'", title="[/oops]")
        app.inbox.checkpoint_list.notify("Not watching [/state]: gone", severity="warning")
        await pilot.pause()
        # Headless apps keep toasts off screen; the notification says how its toast renders it.
        sent = [n for n in app._notifications if "[/" in n.message]
        assert [n.message for n in sent] == ["step failed: rm: cannot remove '[/tmp]'", "Not watching [/state]: gone"]
        assert not any(n.markup for n in sent)
    assert app.return_code in (None, 0)


async def test_typed_filters_with_brackets_are_shown_literally(lobster: Lobster, make_app: MakeApp) -> None:
    lobster.workflow("markup", text=WORKFLOW)
    app = make_app(lobster.root)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        listing = app.inbox.checkpoint_list
        # The inbox filter goes into the list's border title (markup in Textual).
        await pilot.press("slash", *"[/tmp]")
        await wait_until(lambda: listing.filter_text == "[/tmp]", pilot, timeout=20, message="filter typed")
        await pilot.pause()
        assert len(listing.shown) == 1
        assert "filter: [/tmp]" in listing._border_title.plain  # type: ignore[union-attr]
        await pilot.press("escape")
        # History's filter likewise.
        await pilot.press("3")
        await pilot.pause()
        await pilot.press("slash", *"[/x")
        await pilot.pause(0.3)
    assert app.return_code in (None, 0)


async def test_start_run_lists_workflows_whose_names_have_brackets(lobster: Lobster, make_app: MakeApp) -> None:
    from textual.widgets import OptionList

    from lobster_tui.tui.screens.start_run import StartRunScreen

    (lobster.workdir / "[x]cleanup.lobster").write_text(WORKFLOW, encoding="utf-8")
    app = make_app(lobster.root, cwd=str(lobster.workdir))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        await pilot.press("n")
        await wait_until(lambda: isinstance(app.screen, StartRunScreen), pilot, timeout=20, message="start screen")
        files = app.screen.query_one("#start-files", OptionList)
        await wait_until(lambda: files.option_count == 1, pilot, timeout=20, message="the workflow listed")
        await pilot.pause()
        assert "[x]cleanup.lobster" in str(files.get_option_at_index(0).prompt)
    assert app.return_code in (None, 0)
