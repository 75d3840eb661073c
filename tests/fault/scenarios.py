"""Checkpoints to fight over: each scenario halts a real run and knows what deciding it must do.

Every scenario's gated side effect appends one line (tagged with the round) to an effects file, so
a double resume is visible as two lines. The ``*_last`` scenarios have no step after the gate: they
check that even a resume that dispatches nothing is decided exactly once.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lobster_tui.core.runner import RunContext, resume, run_pipeline, run_workflow
from lobster_tui.core.state import StateStore

APPROVAL_INTENTS = ("approve", "reject", "cancel")
INPUT_INTENTS = ("answer", "cancel")


@dataclass
class Halted:
    """One fresh checkpoint of a scenario."""

    scenario: Scenario
    token: str
    approval_id: str | None
    state_key: str
    tag: str


@dataclass
class Scenario:
    name: str
    kind: str  # "approval" | "input"
    source: str  # "pipeline" | "workflow"
    text: str  # pipeline text or workflow file body; {effects} and {tag} are filled in
    has_effect: bool = True
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def intents(self) -> tuple[str, ...]:
        return APPROVAL_INTENTS if self.kind == "approval" else INPUT_INTENTS

    def halt(self, state_dir: Path, work: Path, effects: Path, tag: str) -> Halted:
        """Run the scenario until it halts; returns the checkpoint."""
        text = self.text.replace("{effects}", str(effects)).replace("{tag}", tag)
        rc = context(state_dir, work)
        if self.source == "pipeline":
            outcome = run_pipeline(text, rc)
        else:
            path = work / f"{self.name}-{tag}.lobster"
            path.write_text(text, encoding="utf-8")
            outcome = run_workflow(str(path), rc)
        envelope = outcome.envelope()
        assert envelope["ok"], envelope
        request = envelope["requiresApproval"] if self.kind == "approval" else envelope["requiresInput"]
        assert request is not None, envelope
        return Halted(self, request["resumeToken"], request.get("approvalId"), outcome.state_key or "", tag)


def context(state_dir: Path, work: Path) -> RunContext:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(work)}
    return RunContext(state=StateStore(state_dir), env=env, cwd=str(work))


_OBJECT = json.dumps({"type": "object"})

SCENARIOS = [
    Scenario(
        "pipeline_approval", "approval", "pipeline",
        "exec --json --shell 'echo [1]' | approve --prompt go | exec --shell 'echo {tag} >> {effects}'",
    ),
    Scenario("pipeline_approval_last", "approval", "pipeline", "exec --json --shell 'echo [1]' | approve --prompt go",
             has_effect=False),
    Scenario(
        "pipeline_input_same_stage", "input", "pipeline",
        f"ask --prompt q --schema '{_OBJECT}' | exec --shell 'echo {{tag}} >> {{effects}}'",
    ),
    Scenario(
        "pipeline_input_next_stage", "input", "pipeline",
        f"ask --emit --prompt q --schema '{_OBJECT}' | exec --shell 'echo {{tag}} >> {{effects}}'",
    ),
    Scenario(
        "workflow_approval", "approval", "workflow",
        "steps:\n  - id: gate\n    approval: go?\n  - id: effect\n    run: echo {tag} >> {effects}\n",
    ),
    Scenario(
        "workflow_approval_forgiving", "approval", "workflow",
        # retry and on_error must not turn a lost claim into a second "ok".
        "steps:\n  - id: gate\n    approval: go?\n  - id: effect\n    run: echo {tag} >> {effects}\n"
        "    retry: {max: 2, delay_ms: 1}\n    on_error: continue\n",
    ),
    Scenario("workflow_approval_last", "approval", "workflow",
             "steps:\n  - id: prep\n    run: echo '[1]'\n  - id: gate\n    approval: go?\n", has_effect=False),
    Scenario(
        "workflow_input", "input", "workflow",
        "steps:\n  - id: ask\n    input:\n      prompt: q\n      responseSchema: {type: object}\n"
        "  - id: effect\n    run: echo {tag} >> {effects}\n",
    ),
]

BY_NAME = {scenario.name: scenario for scenario in SCENARIOS}


def cli_args(halted: Halted, intent: str, by_id: bool, answer: Any) -> list[str]:
    """``lobster resume`` arguments for one racer."""
    target = ["--id", halted.approval_id] if by_id and halted.approval_id else ["--token", halted.token]
    if intent == "approve":
        return ["resume", *target, "--approve", "yes"]
    if intent == "reject":
        return ["resume", *target, "--approve", "no"]
    if intent == "cancel":
        return ["resume", *target, "--cancel"]
    return ["resume", *target, "--response-json", json.dumps(answer)]


def core_resume(state_dir: Path, work: Path, halted: Halted, intent: str, by_id: bool, answer: Any) -> dict[str, Any]:
    """The same decision through the core API, as the TUI makes it."""
    rc = context(state_dir, work)
    target: dict[str, Any] = (
        {"approval_id": halted.approval_id} if by_id and halted.approval_id else {"token": halted.token}
    )
    if intent == "approve":
        outcome = resume(rc, approved=True, **target)
    elif intent == "reject":
        outcome = resume(rc, approved=False, **target)
    elif intent == "cancel":
        outcome = resume(rc, cancel=True, **target)
    else:
        outcome = resume(rc, response=answer, **target)
    return outcome.envelope()
