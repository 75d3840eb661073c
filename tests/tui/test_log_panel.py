"""The inbox's live log panel on its own: wrapping, bounds, following, and when feeds are drained."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import App, ComposeResult

from lobster_tui.tui.widgets.log_panel import LogPanel
from tests.tui.helpers import wait_until


class PanelApp(App[None]):
    """Only a log panel (keeping at most ``max_lines`` lines)."""

    def __init__(self, max_lines: int = 5000) -> None:
        super().__init__()
        self.max_lines = max_lines

    def compose(self) -> ComposeResult:
        yield LogPanel(id="log", max_lines=self.max_lines)

    @property
    def panel(self) -> LogPanel:
        return self.query_one(LogPanel)


def _output(step: str = "loud", stream: str = "stdout") -> dict[str, Any]:
    return {"type": "output", "runId": "r1", "seq": 1, "stepId": step, "stream": stream}


async def test_placeholder_until_the_first_line_then_a_section_per_run() -> None:
    app = PanelApp()
    async with app.run_test(size=(60, 12)) as pilot:
        panel = app.panel
        assert panel.visible_text()[0] == "Decisions you take stream their run here."
        assert panel.transcript == []
        feed = panel.new_feed("approve · deploy")
        feed.push({"type": "step_started", "runId": "r1", "stepId": "build", "command": "make"})
        feed.output_block(_output("build"), "compiling\nlinking", 2)
        feed.output_block(_output("build", "stderr"), "warning: slow", 1)
        panel.finish(feed, "ok", "The run finished ok.")
        await pilot.pause()
        assert panel.transcript == [
            "── approve · deploy ──",
            "● build  make",
            "  │ compiling",
            "  │ linking",
            "  ! warning: slow",
            "⏹ The run finished ok.",
        ]
        assert panel.visible_text()[: len(panel.transcript)] == panel.transcript
        assert panel.border_subtitle == "idle · following"


async def test_long_lines_wrap_and_continue_under_their_text() -> None:
    app = PanelApp()
    async with app.run_test(size=(40, 12)) as pilot:
        panel = app.panel
        width = panel.scrollable_content_region.width
        feed = panel.new_feed("run")
        long_line = "".join(str(n % 10) for n in range(3 * width))
        feed.output_block(_output(), long_line, 1)
        panel.finish(feed, "ok", "done")
        await pilot.pause()
        assert panel.transcript[1] == "  │ " + long_line  # the transcript is not wrapped
        rows = panel.visible_text()
        first = rows.index("  │ " + long_line[: width - 4])
        continued = rows[first + 1 : rows.index("⏹ done")]
        assert len(continued) >= 2
        # Continuation rows start under the text (after "  │ "), and nothing is lost.
        assert all(row.startswith("    ") for row in continued)
        assert long_line[: width - 4] + "".join(row[4:] for row in continued) == long_line


async def test_event_prose_wraps_at_spaces_and_output_at_the_width() -> None:
    app = PanelApp()
    async with app.run_test(size=(40, 12)) as pilot:
        panel = app.panel
        width = panel.scrollable_content_region.width
        words = [f"word{n}" for n in range(30)]
        panel.write_line(Text("⏸ waiting for input: " + " ".join(words)))
        await pilot.pause()
        rows = [row for row in panel.visible_text() if row.strip()]
        prose = rows[rows.index(next(r for r in rows if r.startswith("⏸"))):]
        assert len(prose) >= 3 and all(len(row) <= width for row in prose)
        # Every word is whole on one row, in order, and nothing is lost.
        assert " ".join(" ".join(row.split()) for row in prose).split()[4:] == words
        assert all(row.startswith("  ") for row in prose[1:])  # continued under the text


async def test_keeps_at_most_max_lines_and_the_newest_are_in_view() -> None:
    app = PanelApp(max_lines=50)
    async with app.run_test(size=(40, 12)) as pilot:
        panel = app.panel
        panel.write_lines([Text(f"line {n}") for n in range(500)])
        await pilot.pause()
        assert panel.transcript == [f"line {n}" for n in range(450, 500)]
        assert panel.total_rows == 50
        assert panel.visible_text()[-1] == "line 499"


async def test_finish_shows_the_outcome_at_once_when_following() -> None:
    app = PanelApp()
    async with app.run_test(size=(40, 12)) as pilot:
        panel = app.panel
        feed = panel.new_feed("run")
        feed.output_block(_output(), "\n".join(str(n) for n in range(1, 81)), 80)
        await pilot.pause()
        panel.finish(feed, "ok", "all done")
        # No refresh needed: the next frame drawn already has the outcome on screen.
        assert panel.scroll_y == panel.max_scroll_y > 0
        assert panel.visible_text()[-1] == "⏹ all done"


async def test_scrolling_back_stops_following_and_g_shift_follows_again() -> None:
    app = PanelApp()
    async with app.run_test(size=(40, 12)) as pilot:
        panel = app.panel
        panel.focus()
        panel.write_lines([Text(f"line {n}") for n in range(100)])
        await pilot.pause()
        await pilot.press("k")
        assert not panel.following and panel.border_subtitle == "idle · paused (f follows)"
        top = panel.visible_text()[0]
        panel.write_lines([Text(f"more {n}") for n in range(20)])
        await pilot.pause()
        assert panel.visible_text()[0] == top  # new lines do not move a reader who scrolled back
        await pilot.press("G")
        assert panel.following
        assert panel.visible_text()[-1] == "more 19"
        await pilot.press("g")
        assert not panel.following and panel.visible_text()[0] == "line 0"
        await pilot.press("f")
        assert panel.following and panel.visible_text()[-1] == "more 19"


async def test_a_reader_keeps_their_place_while_old_lines_leave_the_top() -> None:
    app = PanelApp(max_lines=60)
    async with app.run_test(size=(40, 12)) as pilot:
        panel = app.panel
        panel.write_lines([Text(f"line {n}") for n in range(60)])
        await pilot.pause()
        panel.following = False
        panel.scroll_to(y=30, animate=False)
        await pilot.pause()
        assert panel.visible_text()[0] == "line 30"
        panel.write_lines([Text(f"more {n}") for n in range(10)])  # lines 0-9 leave the top
        await pilot.pause()
        assert panel.visible_text()[0] == "line 30"


async def test_a_feed_is_drained_on_a_timer_not_on_each_notification() -> None:
    app = PanelApp()
    async with app.run_test(size=(40, 12)) as pilot:
        panel = app.panel
        feed = panel.new_feed("run")
        drains: list[int] = []
        drain = feed.drain

        def counted(keep_lines: int | None = None) -> Any:
            drains.append(feed.pending_lines)
            return drain(keep_lines)

        feed.drain = counted  # type: ignore[method-assign]
        feed.output_block(_output(), "first", 1)
        # The notification is handled by scheduling a drain, not by draining on the spot...
        panel.on_log_panel_events_ready(LogPanel.EventsReady(feed))
        assert drains == [] and panel.transcript == ["── run ──"]
        for n in range(50):  # ...so a burst of output meanwhile joins that one drain
            feed.output_block(_output(), f"line {n}", 1)
        await wait_until(lambda: len(panel.transcript) > 1, pilot, message="the scheduled drain")
        assert drains == [51]
        assert panel.transcript[-1] == "  │ line 49"


async def test_control_characters_never_reach_the_terminal_and_tabs_are_expanded() -> None:
    app = PanelApp()
    async with app.run_test(size=(60, 12)) as pilot:
        panel = app.panel
        feed = panel.new_feed("run")
        feed.output_block(_output(), "\x1b[2Jwiped\na\tb", 2)
        panel.finish(feed, "ok", "done")
        await pilot.pause()
        assert panel.transcript[1:3] == ["  │ ?[2Jwiped", "  │ a\tb"]  # what a reader would copy
        rows = panel.visible_text()
        assert rows[1] == "  │ ?[2Jwiped"
        assert rows[2] == "  │ a" + " " * 3 + "b"  # the tab stops at column 8
