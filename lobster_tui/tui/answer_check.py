"""Checking a typed JSON answer against an input request's schema, in the runner's own words."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lobster_tui.core.checkpoints import Checkpoint
from lobster_tui.core.jsvalues import UNDEFINED


@dataclass(frozen=True)
class AnswerCheck:
    """The parsed answer (UNDEFINED when it does not parse) and why it is refused, if it is."""

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


def check_answer(checkpoint: Checkpoint, text: str) -> AnswerCheck:
    """Parse ``text`` as JSON and validate it against the checkpoint's response schema."""
    from lobster_tui.core.jsvalues import loads
    from lobster_tui.core.schema import SchemaCompileError, compile_schema, validation_failure

    if not text.strip():
        return AnswerCheck(UNDEFINED, "The answer is empty: type a JSON value.")
    try:
        value = loads(text)
    except (ValueError, RecursionError) as error:
        return AnswerCheck(UNDEFINED, f"Not valid JSON: {error}")
    label = schema_label(checkpoint)
    try:
        # Format warnings ("unknown format ... ignored") are the runtime's stderr chatter, not a
        # reason to refuse; drop them here.
        compiled = compile_schema(checkpoint.response_schema, warn=lambda _line: None)
    except SchemaCompileError:
        return AnswerCheck(value, f"{label} response schema is invalid")
    return AnswerCheck(value, validation_failure(label, compiled, value))


def initial_answer(checkpoint: Checkpoint) -> str:
    """The editor's first text: the defaults when there are some, else an empty value of the schema's type."""
    from lobster_tui.core.jsvalues import dumps_pretty

    if checkpoint.has_defaults:
        return dumps_pretty(checkpoint.defaults)
    schema = checkpoint.response_schema
    kind = schema.get("type") if isinstance(schema, dict) else None
    return {"object": "{}", "array": "[]", "string": '""'}.get(kind if isinstance(kind, str) else "", "")
