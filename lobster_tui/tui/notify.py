"""Noticing checkpoints that arrive while the app is open: a header badge, the bell, a desktop note.

:class:`ArrivalNotice` compares one scan with the one before (never the first scan: what is pending
at start is not news) and remembers which arrivals the reviewer has not looked at yet. The next
checkpoint of a run this app just resumed is not news either: the reviewer caused it.

:func:`desktop_notification` writes OSC 9 (iTerm2, WezTerm, kitty, Ghostty, Windows Terminal) and/or
OSC 777 ``notify`` (VTE terminals such as GNOME Terminal, foot, urxvt, Ghostty) through the app's
driver, only when the app runs in a real terminal: never in tests' headless mode or a browser.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from lobster_tui.core.checkpoints import BrokenCheckpoint, Checkpoint

Entry = Checkpoint | BrokenCheckpoint


class ArrivalNotice:
    """Which listed checkpoints arrived after the first scan and have not been looked at."""

    def __init__(self) -> None:
        self._known: set[str] | None = None
        self._own_runs: set[str] = set()
        self.unseen: set[str] = set()
        """State keys of arrivals the reviewer has not highlighted (or pressed a key after) yet."""

    def own_run(self, entry: Entry) -> None:
        """A decision from this app resumes this checkpoint's run: its next gate is expected."""
        run_id = getattr(entry, "run_id", None)
        if run_id:
            self._own_runs.add(run_id)

    def scanned(self, entries: Iterable[Entry]) -> list[Entry]:
        """Record a scan; returns the checkpoints that are news (empty on the first scan)."""
        listed = list(entries)
        keys = {entry.state_key for entry in listed}
        if self._known is None:
            self._known = keys
            return []
        arrived = [
            entry
            for entry in listed
            if entry.state_key not in self._known and getattr(entry, "run_id", None) not in self._own_runs
        ]
        self._known = keys
        self.unseen = (self.unseen & keys) | {entry.state_key for entry in arrived}
        return arrived

    def seen(self, state_key: str | None = None) -> bool:
        """The reviewer looked at one arrival (or, without a key, at all of them); True if that changed anything."""
        before = len(self.unseen)
        if state_key is None:
            self.unseen.clear()
        else:
            self.unseen.discard(state_key)
        return len(self.unseen) != before

    @property
    def badge(self) -> str:
        """``"2 new"`` while arrivals wait to be looked at, else empty."""
        return f"{len(self.unseen)} new" if self.unseen else ""


def describe_arrivals(arrived: list[Entry]) -> tuple[str, str]:
    """A title and a one-line body for a desktop notification."""
    from .formatting import one_line

    count = len(arrived)
    title = "lobster: 1 new checkpoint" if count == 1 else f"lobster: {count} new checkpoints"
    first = arrived[0]
    if isinstance(first, Checkpoint):
        body = f"{first.workflow} › {first.step}: {first.prompt}"
    else:
        body = f"unreadable state file {first.path.name}"
    if count > 1:
        body += f" (and {count - 1} more)"
    return title, one_line(body, 160)


def osc_text(text: str) -> str:
    """Text safe inside an OSC string: no control characters, no ``;`` (OSC 777's separator)."""
    return "".join(" " if not ch.isprintable() or ch == ";" else ch for ch in text)


def notification_sequences(title: str, body: str, env: Mapping[str, str]) -> list[str]:
    """The escape sequences to write for this terminal (both protocols when it cannot be told)."""
    title, body = osc_text(title), osc_text(body)
    osc9 = f"\x1b]9;{title}: {body}\x1b\\"
    osc777 = f"\x1b]777;notify;{title};{body}\x1b\\"
    program = (env.get("TERM_PROGRAM") or "").lower()
    term = (env.get("TERM") or "").lower()
    if program in ("iterm.app", "wezterm") or env.get("KITTY_WINDOW_ID") or env.get("WT_SESSION"):
        sequences = [osc9]
    elif env.get("VTE_VERSION") or "rxvt" in term or term.startswith("foot") or program == "ghostty":
        sequences = [osc777]
    else:
        sequences = [osc9, osc777]
    if env.get("TMUX"):
        # tmux passes an escape to the outer terminal only wrapped (and with allow-passthrough on).
        sequences = [f"\x1bPtmux;{seq.replace(chr(27), chr(27) * 2)}\x1b\\" for seq in sequences]
    return sequences


def desktop_notification(app: Any, title: str, body: str, env: Mapping[str, str]) -> bool:
    """Write the notification escapes through the app's driver; False when not in a real terminal."""
    driver = getattr(app, "_driver", None)
    if driver is None or app.is_headless or app.is_web or getattr(app, "is_inline", False):
        return False
    for sequence in notification_sequences(title, body, env):
        driver.write(sequence)
    driver.flush()
    return True
