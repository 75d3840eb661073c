"""Start a run (``n``): choose a workflow file, fill in its args, run it.

The files offered are the workflow files (``.lobster``, ``.yaml``, ``.yml``, ``.json`` holding a
``steps`` list) in the app's working directory; any other path can be typed. The form has one
field per declared arg, prefilled with its ``default``: a string default (or none) is plain text,
any other default is JSON (``30``, ``true``, ``["a"]``), checked before anything runs.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, cast

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from ..formatting import one_line, printable
from ..widgets.key_footer import KeyFooter

if TYPE_CHECKING:
    from ..app import LobsterApp

WORKFLOW_SUFFIXES = (".lobster", ".yaml", ".yml", ".json")
MAX_FILES = 200
_UNSET = object()


@dataclass(frozen=True)
class ArgField:
    """One declared arg of a workflow, as the form shows it."""

    name: str
    default: Any = _UNSET
    description: str | None = None

    @property
    def is_json(self) -> bool:
        """True when the field takes JSON (its default is not a string)."""
        return self.default is not _UNSET and not isinstance(self.default, str)

    @property
    def initial_text(self) -> str:
        """What the field starts with."""
        if self.default is _UNSET:
            return ""
        if isinstance(self.default, str):
            return self.default
        return json.dumps(self.default, ensure_ascii=False)

    def parse(self, text: str) -> tuple[bool, Any, str | None]:
        """(include it, its value, a problem) for what was typed."""
        if not self.is_json:
            if text == "" and self.default is _UNSET:
                return False, None, None  # left empty and no default: the workflow sees no value
            return True, text, None
        try:
            return True, json.loads(text), None
        except ValueError as error:
            return False, None, f"not JSON: {error.args[0] if error.args else error}"


@dataclass(frozen=True)
class WorkflowInfo:
    """A workflow file the dialog can run."""

    path: str
    name: str | None
    description: str | None
    args: tuple[ArgField, ...]
    problem: str | None = None


def describe_workflow(path: str, cwd: str) -> WorkflowInfo:
    """Load and validate a workflow file (core loader), with its args; ``problem`` says what is wrong."""
    from lobster_tui.core.errors import LobsterError
    from lobster_tui.core.workflow.loader import load_workflow, resolve_workflow_path, validate_workflow

    try:
        absolute = resolve_workflow_path(path, cwd)
        doc = load_workflow(absolute)
        validate_workflow(doc)
    except LobsterError as error:
        return WorkflowInfo(os.path.join(cwd, path), None, None, (), problem=str(getattr(error, "message", error)))
    assert isinstance(doc, dict)
    declared = doc.get("args")
    fields: list[ArgField] = []
    if isinstance(declared, dict):
        for name, definition in declared.items():
            if isinstance(definition, dict):
                description = definition.get("description")
                fields.append(ArgField(
                    str(name),
                    definition.get("default", _UNSET),
                    description if isinstance(description, str) else None,
                ))
            else:
                fields.append(ArgField(str(name)))
    name = doc.get("name")
    description = doc.get("description")
    return WorkflowInfo(
        absolute,
        name if isinstance(name, str) else None,
        description if isinstance(description, str) else None,
        tuple(fields),
    )


def find_workflows(folder: str, limit: int = MAX_FILES) -> list[WorkflowInfo]:
    """The runnable workflow files directly in ``folder``, by name."""
    try:
        names = sorted(entry.name for entry in os.scandir(folder)
                       if entry.name.lower().endswith(WORKFLOW_SUFFIXES) and entry.is_file())
    except OSError:
        return []
    found = []
    for name in names[: limit * 2]:
        info = describe_workflow(name, folder)
        # .json and .yaml files are often something else (package.json, CI files): skip those.
        if info.problem is None or name.lower().endswith(".lobster"):
            found.append(info)
        if len(found) >= limit:
            break
    return found


@dataclass(frozen=True)
class StartRequest:
    """What the dialog returns: the workflow to run and its args."""

    path: str
    args: dict[str, Any]


class StartRunScreen(ModalScreen[StartRequest | None]):
    """Choose a workflow file and its args; dismisses with a :class:`StartRequest` or None.

    | Key | Action |
    | :- | :- |
    | `ctrl+s` | Run it. |
    | `escape` | Back; nothing runs. |
    | `enter` | In the list: fill in the args. In a field: the next field (run after the last). |
    | `tab` | Next field. |
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "run", "Run", id="start.run", priority=True),
        Binding("escape", "cancel", "Back", id="start.cancel"),
    ]

    def __init__(self, cwd: str) -> None:
        super().__init__()
        self.cwd = cwd
        self.workflows: list[WorkflowInfo] = []
        self.chosen: WorkflowInfo | None = None
        # Field ids carry the form's generation: removing the old fields finishes after the
        # new ones are mounted.
        self._form = 0

    @property
    def lobster(self) -> LobsterApp:
        """The app, typed."""
        return cast("LobsterApp", self.app)

    def compose(self) -> ComposeResult:
        with Vertical(id="start-dialog"):
            yield Label("Run a workflow", id="start-title")
            yield Input(placeholder="workflow file (enter to load), or pick one below", id="start-path", compact=True)
            with Horizontal(id="start-body"):
                yield OptionList(id="start-files")
                with VerticalScroll(id="start-args"):
                    yield Static("Pick a workflow file.", classes="hint")
            yield Static("", id="start-error", markup=False)
            with Horizontal(id="start-buttons"):
                yield Button("Back (esc)", id="start-cancel", compact=True)
                yield Button("Run (ctrl+s)", id="start-run", variant="success", compact=True)
        yield KeyFooter()

    def on_mount(self) -> None:
        files = self.query_one("#start-files", OptionList)
        files.border_title = Content(f"in {one_line(self.cwd, 40)}")  # Content: a str title is markup
        files.focus()
        self._scan()

    @work(thread=True, exclusive=True, group="start-scan")
    def _scan(self) -> None:
        found = find_workflows(self.cwd)
        self.app.call_from_thread(self._show_files, found)

    def _show_files(self, found: list[WorkflowInfo]) -> None:
        self.workflows = found
        files = self.query_one("#start-files", OptionList)
        # Content, not str: an option's str prompt is markup, and a workflow's name may hold "[/x]".
        files.set_options(Option(Content(self._file_label(info))) for info in found)
        if found:
            files.highlighted = 0
            self._choose(found[0])
        else:
            self._show_args_hint(f"No workflow files in {self.cwd}; type a path above.")

    def _file_label(self, info: WorkflowInfo) -> str:
        name = os.path.relpath(info.path, self.cwd) if info.path.startswith(self.cwd) else info.path
        label = one_line(name, 40)
        if info.problem:
            return f"{label}  (cannot run)"
        if info.name and info.name != Path(name).stem:
            label += f"  · {one_line(info.name, 24)}"
        return label

    @on(OptionList.OptionHighlighted, "#start-files")
    def _file_highlighted(self, message: OptionList.OptionHighlighted) -> None:
        if 0 <= message.option_index < len(self.workflows):
            self._choose(self.workflows[message.option_index])

    @on(OptionList.OptionSelected, "#start-files")
    def _file_selected(self, message: OptionList.OptionSelected) -> None:
        if 0 <= message.option_index < len(self.workflows):
            self._choose(self.workflows[message.option_index])
            self._focus_first_field()

    @on(Input.Submitted, "#start-path")
    def _path_submitted(self, message: Input.Submitted) -> None:
        path = message.value.strip()
        if not path:
            return
        self._choose(describe_workflow(os.path.expanduser(path), self.cwd))
        self._focus_first_field()

    def _fields(self) -> list[Input]:
        return [field for field in self.query("#start-args Input").results(Input)
                if (field.id or "").startswith(f"arg-{self._form}-")]

    def _focus_first_field(self) -> None:
        fields = self._fields()
        if fields:
            fields[0].focus()
        else:
            self.query_one("#start-run", Button).focus()

    def _show_args_hint(self, text: str) -> None:
        box = self.query_one("#start-args", VerticalScroll)
        box.remove_children()
        box.mount(Static(text, classes="hint", markup=False))

    def _choose(self, info: WorkflowInfo) -> None:
        if self.chosen is not None and self.chosen.path == info.path and self.chosen.problem == info.problem:
            return
        self.chosen = info
        self._form += 1
        form = self._form
        self._say("")
        box = self.query_one("#start-args", VerticalScroll)
        box.remove_children()
        title = info.name or Path(info.path).name
        widgets: list[Static | Label | Input] = [Label(printable(one_line(title, 60)), classes="section-title", markup=False)]
        if info.problem:
            widgets.append(Static(printable(info.problem), classes="-error", markup=False))
        else:
            if info.description:
                widgets.append(Static(printable(info.description), classes="hint", markup=False))
            if not info.args:
                widgets.append(Static("No args. ctrl+s runs it.", classes="hint"))
            for index, field in enumerate(info.args):
                kind = "JSON" if field.is_json else "text"
                label = f"{field.name}  ({kind})"
                widgets.append(Label(printable(label), classes="arg-label", markup=False))
                if field.description:
                    widgets.append(Static(printable(field.description), classes="hint", markup=False))
                widgets.append(Input(field.initial_text, id=f"arg-{form}-{index}", classes="arg-input", compact=True))
                error_line = Static("", id=f"arg-error-{form}-{index}", classes="arg-error -error", markup=False)
                error_line.display = False  # a row only when there is something to say
                widgets.append(error_line)
        box.mount_all(widgets)

    @on(Input.Submitted, ".arg-input")
    def _field_submitted(self, message: Input.Submitted) -> None:
        fields = self._fields()
        if message.input in fields and fields.index(message.input) < len(fields) - 1:
            fields[fields.index(message.input) + 1].focus()
        else:
            self.action_run()

    def _say(self, problem: str) -> None:
        error = self.query_one("#start-error", Static)
        error.update(problem)
        error.display = bool(problem)

    def collect(self) -> StartRequest | None:
        """The request from the form, or None after showing what is wrong beside the field."""
        info = self.chosen
        if info is None:
            self._say("Choose a workflow file first.")
            return None
        if info.problem:
            self._say(f"This workflow cannot run: {info.problem}")
            return None
        args: dict[str, Any] = {}
        ok = True
        for index, field in enumerate(info.args):
            text = self.query_one(f"#arg-{self._form}-{index}", Input).value
            include, value, problem = field.parse(text)
            error_line = self.query_one(f"#arg-error-{self._form}-{index}", Static)
            error_line.update(problem or "")
            error_line.display = bool(problem)
            if problem:
                ok = False
            elif include:
                args[field.name] = value
        if not ok:
            self._say("Some args need fixing (see beside them).")
            return None
        self._say("")
        return StartRequest(info.path, args)

    @on(Button.Pressed, "#start-run")
    def _run_pressed(self) -> None:
        self.action_run()

    @on(Button.Pressed, "#start-cancel")
    def _cancel_pressed(self) -> None:
        self.dismiss(None)

    def action_run(self) -> None:
        """Run the chosen workflow with the args as filled in."""
        request = self.collect()
        if request is not None:
            self.dismiss(request)

    def action_cancel(self) -> None:
        """Back; nothing runs."""
        self.dismiss(None)
