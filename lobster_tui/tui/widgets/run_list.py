"""The runs of a state directory: one row per run log, newest first, live."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import DataTable

from lobster_tui.core.run_log import RunSummary

from ..event_lines import theme_colour
from ..formatting import Clock, format_age, one_line, utc_now
from ..run_story import elapsed_ms, parse_time, span

STATUS_LABELS = {
    "running": "● running",
    "needs_approval": "⏸ approval",
    "needs_input": "⏸ input",
    "ok": "✓ ok",
    "failed": "✗ failed",
    "cancelled": "⊘ cancelled",
    "interrupted": "↯ interrupted",
    "unknown": "? unknown",
}


def run_name(run: RunSummary) -> str:
    """What a person calls the run: its workflow's name, else the file or the pipeline text."""
    if run.name:
        return run.name
    if run.source == "workflow" and run.target:
        return run.target.rsplit("/", 1)[-1]
    if run.source == "pipeline" and run.target:
        return f"$ {run.target}"
    return run.target or "-"


def _clip_left(text: str, width: int) -> str:
    """The end of a path is what tells files apart: cut from the left."""
    flat = one_line(text, 0)
    return flat if len(flat) <= width else "…" + flat[len(flat) - width + 1 :]


def run_duration(run: RunSummary, now: datetime) -> int | None:
    """Wall-clock of the run: to ``now`` while running (by the app's clock), else as logged."""
    if run.status == "running":
        return elapsed_ms(run.started, None, now)
    return run.duration_ms


class RunList(DataTable):
    """Every run recorded under ``<state>/runs/``: status, name, age, duration, current step.

    | Key | Action |
    | :- | :- |
    | `j` / `down` | Next run. |
    | `k` / `up` | Previous run. |
    | `g` / `G` | Newest / oldest run. |
    | `enter` | Open the run: its steps and log. |
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "cursor_down", "Down", show=False, id="runs.down"),
        Binding("k", "cursor_up", "Up", show=False, id="runs.up"),
        Binding("g,home", "first", "Newest", show=False, id="runs.first"),
        Binding("G,end", "last", "Oldest", show=False, id="runs.last"),
        Binding("enter", "open", "Open", id="runs.open"),
    ]

    HELP_NAME = "run list"

    @dataclass
    class Opened(Message):
        """The user asked to open a run."""

        run_list: RunList
        run: RunSummary

        @property
        def control(self) -> RunList:
            """The list that sent the message."""
            return self.run_list

    @dataclass
    class Highlighted(Message):
        """The highlighted run changed."""

        run_list: RunList
        run: RunSummary | None

        @property
        def control(self) -> RunList:
            """The list that sent the message."""
            return self.run_list

    def __init__(self, *, clock: Clock = utc_now, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes, cursor_type="row", zebra_stripes=True)
        self._clock = clock
        self._runs: list[RunSummary] = []
        self._shown_key: tuple[object, ...] | None = None
        self._last_highlight: str | None = None
        self._widths_for = -1
        self._announced: RunSummary | None = None
        self._has_announced = False

    def on_mount(self) -> None:
        self._add_columns()

    def on_resize(self) -> None:
        if self._widths_for != self.size.width:
            self._shown_key = None
            self._rebuild()

    def _column_widths(self) -> dict[str, int]:
        """Name and step get what they need up to a cap; the file or pipeline takes what is left."""
        total = self.size.width or 100
        # As wide as the longest label shown: the rare "interrupted" widens it only while listed.
        status = max([len(STATUS_LABELS.get(run.status, run.status)) for run in self._runs] + [11])
        fixed = {"status": status, "age": 4, "duration": 7, "id": 12}
        spare = max(30, total - sum(fixed.values()) - 2 * 7 - 2)
        # As wide as the longest name (or step) needs, up to a cap.
        wanted_name = max([len(run_name(run)) for run in self._runs] + [12])
        wanted_step = max([len(run.current_step or "-") for run in self._runs] + [8])
        step = max(8, min(24, wanted_step, spare // 4))
        name = max(12, min(32, wanted_name, spare // 2))
        return {**fixed, "name": name, "step": step, "target": max(6, spare - name - step)}

    def _add_columns(self) -> None:
        widths = self._column_widths()
        self._widths_for = self.size.width
        labels = {"status": "status", "name": "name", "age": "age", "duration": "took", "step": "step", "id": "run",
                  "target": "file / pipeline"}
        for key, label in labels.items():
            self.add_column(label, key=key, width=widths[key])

    # -- data ------------------------------------------------------------------------------------

    @property
    def runs(self) -> Sequence[RunSummary]:
        """Every run listed, newest first."""
        return tuple(self._runs)

    @property
    def highlighted(self) -> RunSummary | None:
        """The run under the cursor."""
        if not self._runs or not self.is_valid_row_index(self.cursor_row):
            return None
        return self._runs[self.cursor_row]

    def set_runs(self, runs: Sequence[RunSummary]) -> None:
        """Show these runs, keeping the cursor on the same run; cheap when nothing changed."""
        self._runs = list(runs)
        self._rebuild()

    def select_run(self, run_id: str) -> bool:
        """Move the cursor to a run; False when it is not listed."""
        for index, run in enumerate(self._runs):
            if run.id == run_id:
                self.move_cursor(row=index)
                return True
        return False

    def _rebuild(self) -> None:
        now = self._clock()
        # A running run's duration moves with the clock; refresh_times repaints it in place.
        key = tuple(
            (run.id, run.status, run.current_step, None if run.status == "running" else run.duration_ms, run.name)
            for run in self._runs
        )
        if key == self._shown_key:
            self.refresh_times()
            return
        self._shown_key = key
        keep = self._last_highlight
        old_row = self.cursor_row
        self.clear(columns=True)
        self._add_columns()
        widths = self._column_widths()
        for run in self._runs:
            self.add_row(*self._cells(run, now, widths), key=run.id)
        target = next((index for index, run in enumerate(self._runs) if run.id == keep), None)
        if target is None and self._runs:
            target = min(max(old_row, 0), len(self._runs) - 1)
        if target is not None:
            self.move_cursor(row=target, animate=False)
        self._announce()

    def _cells(self, run: RunSummary, now: datetime, widths: Mapping[str, int]) -> list[Text | str]:
        variables: Mapping[str, str] = self.app.theme_variables if self.is_attached else {}
        colour = {
            "running": "accent", "needs_approval": "warning", "needs_input": "warning",
            "ok": "success", "failed": "error", "cancelled": "error", "interrupted": "error",
        }.get(run.status)
        style = (theme_colour(variables, colour) or "") if colour else "dim"
        started = parse_time(run.started)
        return [
            Text(STATUS_LABELS.get(run.status, run.status), style=style),
            Text(one_line(run_name(run), widths["name"])),  # Text: a str cell is read as markup
            format_age(started, now) if started else "-",
            span(run_duration(run, now)) or "-",
            Text(one_line(run.current_step or "-", widths["step"])),
            run.id[:12],
            Text(_clip_left(run.target or "", widths["target"]), style="dim"),
        ]

    def refresh_times(self) -> None:
        """Repaint ages and the durations of running runs against the clock."""
        now = self._clock()
        for run in self._runs:
            started = parse_time(run.started)
            if started is not None:
                self.update_cell(run.id, "age", format_age(started, now))
            if run.status == "running":
                self.update_cell(run.id, "duration", span(run_duration(run, now)) or "-")

    # -- cursor and messages ---------------------------------------------------------------------

    def _announce(self) -> None:
        run = self.highlighted
        if run is not None:
            self._last_highlight = run.id
        # Rebuilds repeat every few seconds; the footer (costly to recompose) and the screen only
        # need to hear about a different run, or the same run in another state.
        if run == self._announced and self._has_announced:
            return
        self._announced = run
        self._has_announced = True
        self.refresh_bindings()
        self.post_message(self.Highlighted(self, run))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        self._announce()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        # A click on the highlighted row (enter is bound to open).
        event.stop()
        self.action_open()

    def action_first(self) -> None:
        """Jump to the newest run."""
        if self._runs:
            self.move_cursor(row=0)

    def action_last(self) -> None:
        """Jump to the oldest run."""
        if self._runs:
            self.move_cursor(row=len(self._runs) - 1)

    def action_open(self) -> None:
        """Ask the screen to open the highlighted run."""
        run = self.highlighted
        if run is not None:
            self.post_message(self.Opened(self, run))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``enter`` only with a run under the cursor."""
        if action == "open":
            return self.highlighted is not None
        return True
