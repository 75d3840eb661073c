"""Typed view of run events: one pydantic model per event type, a discriminated union on ``type``.

Writers (the runner, :mod:`lobster_tui.core.run_log`) deal in plain dicts so ``lobster run`` never
imports pydantic; readers such as the TUI validate those dicts into these models with
:func:`parse_event`. Field names are snake_case in Python and camelCase on the wire (``stepId``,
``durationMs``, ...), exactly as :mod:`lobster_tui.core.events` documents them. Unknown extra fields
are ignored, so a newer writer does not break an older reader.

Besides the runner's events there are two the log reader makes: :class:`LogNote` (``type:
"log_note"``) in place of a line it could not parse, so a damaged log is reported rather than fatal,
and :class:`RunInterrupted` when a followed log stops mid-run because its runner is gone.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
from pydantic.alias_generators import to_camel

StepStatus = Literal["ok", "failed", "skipped", "timed_out"]
RunStatus = Literal["ok", "needs_approval", "needs_input", "cancelled", "failed"]


class _Model(BaseModel):
    """Shared config: camelCase aliases, Python names accepted too, immutable instances."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True)


class _Event(_Model):
    """Fields every runner event carries."""

    run_id: str
    seq: int
    time: datetime


class RunStarted(_Event):
    """A run (or the resumed continuation of one) began."""

    type: Literal["run_started"] = "run_started"
    name: str | None
    source: Literal["workflow", "pipeline"]
    target: str
    args: dict[str, Any] = Field(default_factory=dict)
    cwd: str
    resumed: bool = False
    pid: int | None = None
    """The process running this segment (None in logs written before it was recorded)."""
    host: str | None = None
    """That process's host name."""


class StepStarted(_Event):
    """A workflow step or pipeline stage began; ``command`` is after substitution."""

    type: Literal["step_started"] = "step_started"
    step_id: str
    kind: str
    command: str | None = None


class Output(_Event):
    """One line a step wrote, without its newline."""

    type: Literal["output"] = "output"
    step_id: str
    stream: Literal["stdout", "stderr"]
    line: str


class StepFinished(_Event):
    """A step ended."""

    type: Literal["step_finished"] = "step_finished"
    step_id: str
    status: StepStatus
    exit_code: int | None = None
    duration_ms: int
    error: str | None = None


class Checkpoint(_Event):
    """The run halted for a decision: an approval or an input request."""

    type: Literal["checkpoint"] = "checkpoint"
    kind: Literal["approval", "input"]
    state_key: str
    approval_id: str | None = None
    prompt: str | None = None


class Resumed(_Event):
    """A checkpoint was decided; the run continues (or ends) in the same log."""

    type: Literal["resumed"] = "resumed"
    state_key: str
    decision: Literal["approve", "reject", "answer", "cancel"]
    approver: str | None = None


class OutputTruncated(_Event):
    """The log dropped ``dropped_lines`` output lines of a step; the kept tail follows."""

    type: Literal["output_truncated"] = "output_truncated"
    step_id: str
    dropped_lines: int


class RunFinished(_Event):
    """A run segment ended; ``needs_*`` means it waits at a checkpoint and may continue."""

    type: Literal["run_finished"] = "run_finished"
    status: RunStatus
    duration_ms: int
    error: str | None = None


class LogNote(_Model):
    """Produced by the log reader, not the runner: a line of the log that was skipped."""

    type: Literal["log_note"] = "log_note"
    run_id: str
    line_number: int
    message: str


class RunInterrupted(_Model):
    """Produced by the log reader, not the runner: the run's process is gone and its log ends
    mid-run (``follow_events(..., runner_check=...)``); ``time`` is its last event's."""

    type: Literal["run_interrupted"] = "run_interrupted"
    run_id: str
    time: datetime | None = None
    pid: int | None = None
    host: str | None = None


Event = Annotated[
    Union[
        RunStarted, StepStarted, Output, StepFinished, Checkpoint, Resumed, OutputTruncated, RunFinished, LogNote,
        RunInterrupted,
    ],
    Field(discriminator="type"),
]

EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)
"""Validates one event dict (``validate_python``) or JSON line (``validate_json``)."""


def parse_event(data: dict[str, Any]) -> Event:
    """Validate one event dict into its model; raises ``pydantic.ValidationError`` when invalid."""
    return EVENT_ADAPTER.validate_python(data)
