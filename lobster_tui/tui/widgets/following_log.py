"""What the two live logs share: following the newest line, and how scrolling back stops that.

:class:`~.log_panel.LogPanel` (the inbox's side panel) and :class:`~.run_log_view.RunLogView`
(the run view) are both virtual line logs that stick to their newest line while ``following``.
Any way a reader moves back (a key, the wheel, a click on the scrollbar, dragging its thumb)
stops following, or the next batch of lines would pull them to the end again; scrolling is
immediate (no animation), so it keeps up with a held key and a busy stream.
"""

from __future__ import annotations

from textual import events
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.scrollbar import ScrollTo, ScrollUp


class FollowingLog(ScrollView):
    """A scroll view that follows its newest line until the reader scrolls back.

    Subclasses say how to reach the end (:meth:`_scroll_to_end`) and react to ``following``
    (``watch_following``); ``f`` toggles it and ``G`` jumps to the end and follows again.
    """

    following: reactive[bool] = reactive(True)
    """Whether new lines scroll the log to the end."""

    def _scroll_to_end(self) -> None:
        raise NotImplementedError

    def pause(self) -> None:
        """Stop following (the reader scrolled back)."""
        if self.following:
            self.following = False

    def action_toggle_follow(self) -> None:
        """Follow the newest line, or stop so the reader can read back."""
        self.following = not self.following

    def action_follow_end(self) -> None:
        """Jump to the newest line and keep following."""
        self.following = True
        self._scroll_to_end()

    def action_scroll_home(self) -> None:
        """Jump to the first line kept and stop following."""
        self.pause()
        self.scroll_to(y=0, animate=False)

    def action_scroll_end(self) -> None:
        self.action_follow_end()

    def action_scroll_up(self) -> None:
        self.pause()
        self.scroll_up(animate=False)

    def action_scroll_down(self) -> None:
        self.scroll_down(animate=False)

    def action_page_up(self) -> None:
        self.pause()
        self.scroll_page_up(animate=False)

    def action_page_down(self) -> None:
        self.scroll_page_down(animate=False)

    def _on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        self.pause()
        super()._on_mouse_scroll_up(event)

    def _on_scroll_up(self, event: ScrollUp) -> None:
        self.pause()  # a click on the scrollbar above its thumb
        super()._on_scroll_up(event)

    def _on_scroll_to(self, message: ScrollTo) -> None:
        if message.y is not None and message.y < self.scroll_y:
            self.pause()  # the scrollbar's thumb dragged up
        super()._on_scroll_to(message)
