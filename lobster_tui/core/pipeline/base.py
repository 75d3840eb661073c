"""What a pipeline command is and what it sees (spec §4.2).

A command is a function ``run(items, args, ctx) -> CommandResult`` plus metadata, registered under
its name. Items are JSON values (``dict``/``list``/``str``/numbers/``bool``/``None``); ``args`` is the
parsed flag mapping of R-PARSE-3/4 (``args["_"]`` holds positionals, flag values are ``str`` or
``True``). Streams are eager lists: each stage receives the fully drained output of the previous one.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Literal, Protocol, TextIO

from ..cancel import CancelSignal
from ..jsvalues import UNDEFINED, dumps_pretty
from ..process import OutputSink
from ..records import field, record

if TYPE_CHECKING:
    from ..state import StateStore

Mode = Literal["tool", "human"]


@record
class Stage:
    """One parsed pipeline stage: ``{"name", "args", "raw"}`` as stored in resume state (R-PARSE-3)."""

    name: str
    args: dict[str, Any]
    raw: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "args": self.args, "raw": self.raw}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Stage:
        return cls(name=data["name"], args=data["args"], raw=data["raw"])


@record
class CommandResult:
    """What a command returns: its output items, whether it rendered to stdout, whether it halts."""

    output: list[Any]
    rendered: bool = False
    halt: bool = False


class InputRequester(Protocol):
    """``ctx.request_input`` (spec §6): returns the validated answer or suspends the run."""

    def __call__(
        self,
        *,
        prompt: Any,
        response_schema: Any,
        defaults: Any = UNDEFINED,
        subject: Any = UNDEFINED,
        suspended_state: Any = UNDEFINED,
    ) -> Any: ...

    def get_suspended_state(self) -> Any:
        """The ``suspendedState`` recorded for this command's next request, or ``UNDEFINED``."""
        ...


@record
class CommandContext:
    """Everything a command may touch (R-PIPE-8). Tests build one with :func:`make_context`."""

    env: dict[str, str]
    cwd: str
    mode: Mode
    registry: CommandRegistry
    state: StateStore
    signal: CancelSignal = field(default_factory=CancelSignal)
    stdin: TextIO | None = None
    stdout: TextIO = field(default_factory=lambda: sys.stdout)
    stderr: TextIO = field(default_factory=lambda: sys.stderr)
    request_input: InputRequester | None = None
    on_output: OutputSink | None = None
    stage_name: str = ""
    # Called right before a side effect that a workflow `retry` must never repeat (R-WF-93).
    on_non_retryable_side_effect: Callable[[], None] | None = None

    def render_json(self, items: list[Any]) -> None:
        """Write pretty JSON of ``items`` plus a newline to the run's stdout."""
        self.stdout.write(dumps_pretty(items) + "\n")
        self.stdout.flush()

    @property
    def interactive(self) -> bool:
        """True when stdin is a TTY (R-CLI-20); tool mode never prompts regardless."""
        stream = self.stdin
        try:
            return stream is not None and stream.isatty()
        except (ValueError, OSError):
            return False


CommandFn = Callable[[list[Any], dict[str, Any], CommandContext], CommandResult]


@record
class CommandSpec:
    """A registered command and the metadata ``commands.list`` reports (R-CMD-LIST-1)."""

    name: str
    run: CommandFn
    description: str | None = None
    args_schema: dict[str, Any] | None = None
    examples: list[Any] | None = None
    side_effects: list[str] = field(default_factory=list)
    help_text: str | None = None
    # Only approve and ask may be re-entered by a resume without claiming the checkpoint (§9.6).
    resume_safe_before_input: bool = False
    resume_safe_after_input: bool = False

    def help(self) -> str:
        if self.help_text:
            return self.help_text
        return f"{self.name}: {self.description or ''}".rstrip() + "\n"


class CommandRegistry:
    """Name → command. Names are matched exactly, at run time (R-PARSE-6, R-PIPE-3)."""

    def __init__(self, specs: Iterable[CommandSpec] = ()) -> None:
        self._specs: dict[str, CommandSpec] = {}
        for spec in specs:
            self.add(spec)

    def add(self, spec: CommandSpec) -> None:
        self._specs[spec.name] = spec

    def get(self, name: str) -> CommandSpec | None:
        return self._specs.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def names(self) -> list[str]:
        return sorted(self._specs)

    def specs(self) -> list[CommandSpec]:
        return [self._specs[name] for name in self.names()]


def command(
    name: str,
    *,
    description: str | None = None,
    args_schema: dict[str, Any] | None = None,
    examples: list[Any] | None = None,
    side_effects: list[str] | None = None,
    help_text: str | None = None,
    resume_safe_before_input: bool = False,
    resume_safe_after_input: bool = False,
) -> Callable[[CommandFn], CommandSpec]:
    """Decorator turning a ``run(items, args, ctx)`` function into a :class:`CommandSpec`."""

    def wrap(fn: CommandFn) -> CommandSpec:
        return CommandSpec(
            name=name,
            run=fn,
            description=description,
            args_schema=args_schema,
            examples=examples,
            side_effects=list(side_effects or []),
            help_text=help_text,
            resume_safe_before_input=resume_safe_before_input,
            resume_safe_after_input=resume_safe_after_input,
        )

    return wrap


def positionals(args: dict[str, Any]) -> list[str]:
    """The positional arguments of a stage (``args["_"]``)."""
    return list(args.get("_", []))
