"""Checking an answer against an input request's schema, in the runner's own words."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lobster_tui.core.checkpoints import Checkpoint


@dataclass(frozen=True)
class AnswerCheck:
    """An answer and why the runner would refuse it, if it would."""

    value: Any
    problem: str | None

    @property
    def ok(self) -> bool:
        """True when the runner would accept the answer."""
        return self.problem is None


def schema_label(checkpoint: Checkpoint) -> str:
    """The label the runner puts before a validation failure, so the wording matches the CLI's."""
    if checkpoint.source == "workflow":
        return f"Workflow input step {checkpoint.step}"
    return "pipeline input"


def check_value(checkpoint: Checkpoint, value: Any) -> AnswerCheck:
    """Validate an answer value against the checkpoint's response schema, in the runner's words."""
    from lobster_tui.core.schema import SchemaCompileError, compile_schema, validation_failure

    label = schema_label(checkpoint)
    try:
        # Format warnings ("unknown format ... ignored") are the runtime's stderr chatter, not a
        # reason to refuse; drop them here.
        compiled = compile_schema(checkpoint.response_schema, warn=lambda _line: None)
    except SchemaCompileError:
        return AnswerCheck(value, f"{label} response schema is invalid")
    return AnswerCheck(value, validation_failure(label, compiled, value))
