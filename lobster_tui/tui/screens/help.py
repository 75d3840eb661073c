"""The help screen, generated from the bindings that were active when ``?`` was pressed."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Label, Static

from ..widgets.key_footer import KeyFooter


@dataclass(frozen=True)
class HelpRow:
    """One key of the help table."""

    keys: str
    description: str
    where: str
    binding_id: str


def help_rows(bindings: Iterable[tuple[str, Binding]], key_display: Callable[[Binding], str]) -> list[HelpRow]:
    """Rows from ``(where, binding)`` pairs: only our bindings (those with an id), and keys that do
    the same thing in the same place (``j`` and ``down``) merged into one row."""
    rows: dict[tuple[str, str], HelpRow] = {}
    for where, binding in bindings:
        if not binding.description or not binding.id:
            continue
        keys = key_display(binding)
        merge = (where, binding.description)
        if merge in rows:
            old = rows[merge]
            if keys not in old.keys.split(" "):
                rows[merge] = HelpRow(f"{old.keys} {keys}", old.description, old.where, f"{old.binding_id} {binding.id}")
            continue
        rows[merge] = HelpRow(keys, binding.description, where, binding.id)
    return list(rows.values())


class HelpScreen(ModalScreen[None]):
    """Every key that works where you were, with what it does.

    | Key | Action |
    | :- | :- |
    | `escape` / `q` / `?` | Close. |
    """

    BINDINGS: list[BindingType] = [
        Binding("escape,q,question_mark", "close", "Close", id="help.close"),
    ]

    def __init__(self, rows: list[HelpRow], state_dir: str = "", approver: str | None = None) -> None:
        super().__init__()
        self.rows = rows
        self.state_dir = state_dir
        self.approver = approver

    def compose(self) -> ComposeResult:
        with Vertical(id="help-dialog"):
            yield Label("Keys", id="help-title")
            table: DataTable = DataTable(id="help-table", cursor_type="row", zebra_stripes=True)
            yield table
            facts = []
            if self.state_dir:
                facts.append(f"State directory: {self.state_dir}")
            facts.append(f"Approver: {self.approver or 'not set (--approver or LOBSTER_APPROVAL_APPROVED_BY)'}")
            facts.append("Deciding always asks first: y confirms, n or esc backs out.")
            facts.append("a approves and x rejects an approval; enter answers an input request; c cancels either.")
            yield Static("\n".join(facts), id="help-facts", markup=False)
        yield KeyFooter()

    def on_mount(self) -> None:
        table = self.query_one("#help-table", DataTable)
        # The id is what config.toml's [keymap] uses to give a binding other keys.
        table.add_columns("key", "does", "where", "id")
        for row in self.rows:
            table.add_row(row.keys, row.description, row.where, row.binding_id)
        table.focus()

    def action_close(self) -> None:
        """Back to where you were."""
        self.dismiss(None)
