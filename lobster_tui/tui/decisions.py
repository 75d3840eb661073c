"""What a reviewer's decision means, and how it is carried out through the core runner.

Nothing here touches widgets: the app runs :func:`carry_out` in a thread worker and turns the
result into messages. Keeping it apart makes the rules (what a modal says, how "someone else got
there first" is explained) easy to read and to test.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from lobster_tui.core.checkpoints import BrokenCheckpoint, Checkpoint
from lobster_tui.core.jsvalues import UNDEFINED

from .formatting import one_line

DecisionKind = Literal["approve", "reject", "cancel", "answer"]
Entry = Checkpoint | BrokenCheckpoint

VERBS: dict[DecisionKind, str] = {
    "approve": "Approve",
    "reject": "Reject",
    "cancel": "Cancel",
    "answer": "Submit answer",
}


@dataclass(frozen=True)
class Decision:
    """One decision on one checkpoint, as the reviewer confirmed it."""

    kind: DecisionKind
    entry: Entry
    approver: str | None = None
    response: Any = field(default=UNDEFINED)

    @property
    def state_key(self) -> str:
        """The checkpoint's state key; decisions in flight are tracked by it."""
        return self.entry.state_key

    @property
    def title(self) -> str:
        """A modal title such as "Approve inbox-cleanup · confirm?"."""
        entry = self.entry
        if isinstance(entry, BrokenCheckpoint):
            return f"{VERBS[self.kind]} broken checkpoint {short_key(entry.state_key)}?"
        return f"{VERBS[self.kind]} {one_line(entry.workflow, 40)} · {entry.step}?"

    def summary(self) -> list[str]:
        """Plain sentences saying what will happen, for the confirm modal."""
        entry = self.entry
        if isinstance(entry, BrokenCheckpoint):
            return [
                f"The unreadable state file {entry.path.name} is deleted ({entry.reason}).",
                "Nothing runs.",
            ]
        lines = [f"Prompt: {one_line(entry.prompt, 200)}"]
        if self.kind == "approve":
            if entry.items:
                count = len(entry.items)
                lines.append(f"{count} item{'s pass' if count != 1 else ' passes'} the gate.")
            lines.append("The run resumes now and runs the steps after the gate; its log streams beside the inbox.")
        elif self.kind == "reject":
            lines.append("The checkpoint is deleted and the run ends as cancelled. Nothing after the gate runs.")
        elif self.kind == "cancel":
            lines.append("The checkpoint is dropped without a decision. Nothing after it runs.")
        else:
            lines.append("The answer is checked against the schema, then the run resumes with it.")
        if self.kind in ("approve", "reject", "answer"):
            lines.append(f"Recorded approver: {self.approver or 'none (no --approver or LOBSTER_APPROVAL_APPROVED_BY)'}")
        return lines

    def resume_arguments(self) -> dict[str, Any]:
        """Keyword arguments for :func:`lobster_tui.core.runner.resume`."""
        token = token_for(self.entry)
        if self.kind == "cancel":
            return {"token": token, "cancel": True}
        if self.kind == "answer":
            return {"token": token, "response": self.response}
        return {"token": token, "approved": self.kind == "approve"}


def short_key(state_key: str) -> str:
    """The first 8 characters of a state key's uuid."""
    return state_key.rsplit("_", 1)[-1][:8]


def token_for(entry: Entry) -> str:
    """The resume token of a checkpoint; a broken one gets the token its file name implies."""
    if isinstance(entry, Checkpoint):
        return entry.token
    from lobster_tui.core.tokens import encode_token, kind_for_state_key

    return encode_token(kind_for_state_key(entry.state_key), entry.state_key)


def explain_gone(path: Path) -> str:
    """Why a checkpoint is no longer pending, read from what its state file holds now."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return "no longer pending: resumed or cancelled elsewhere"
    except (OSError, ValueError):
        return "no longer pending: its state file changed and cannot be read"
    from lobster_tui.core.state import is_consumed_marker

    if is_consumed_marker(data):
        return f"already resumed at {data.get('consumedAt') or 'an unknown time'}"
    return "no longer pending: its state file changed since it was listed"


def still_pending(entry: Entry) -> str | None:
    """None when the entry's file still holds the state that was listed, else why not.

    Checked before a confirm modal opens, so a reviewer is not asked to decide on something that
    is already gone. The runner's own claim is still what makes a resume happen at most once.
    """
    from lobster_tui.core.checkpoints import load_checkpoint

    current = load_checkpoint(entry.path)
    if current is None:
        return explain_gone(entry.path)
    if isinstance(entry, Checkpoint) and isinstance(current, Checkpoint) and current.token != entry.token:
        return "no longer pending: its state file changed since it was listed"
    return None


@dataclass
class DecisionResult:
    """What carrying out a decision ended with, ready to be shown."""

    decision: Decision
    status: str
    message: str
    run_id: str | None = None
    stale: bool = False
    next_key: str | None = None
    """The state key of the run's next checkpoint, when it halted again."""


Resume = Callable[..., Any]


def carry_out(decision: Decision, context: Any, resume: Resume) -> DecisionResult:
    """Call the runner (blocking: run this in a thread worker) and explain the outcome."""
    outcome = resume(context, **decision.resume_arguments())
    status = outcome.status
    signal = getattr(context, "signal", None)
    if status == "error" and signal is not None and signal.aborted:
        return DecisionResult(decision, "stopped", f"Stopped: {signal.reason}", outcome.run_id)
    if status == "error":
        if outcome.not_found:
            return DecisionResult(decision, "stale", explain_gone(decision.entry.path), outcome.run_id, stale=True)
        return DecisionResult(decision, "error", outcome.error_message or "the run failed", outcome.run_id)
    if status == "needs_approval":
        prompt = (outcome.requires_approval or {}).get("prompt")
        message = f"The run stopped at its next approval: {one_line(prompt, 80)}"
    elif status == "needs_input":
        prompt = (outcome.requires_input or {}).get("prompt")
        message = f"The run stopped at its next input request: {one_line(prompt, 80)}"
    elif status == "cancelled":
        message = "Cancelled: nothing after the gate ran." if decision.kind != "approve" else "The run was cancelled."
    else:
        message = "The run finished ok."
    next_key = getattr(outcome, "state_key", None) if status in ("needs_approval", "needs_input") else None
    return DecisionResult(decision, status, message, outcome.run_id, next_key=next_key)
