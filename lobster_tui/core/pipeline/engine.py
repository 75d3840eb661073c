"""Running a list of stages (spec §4.2): items flow from stage to stage until one halts.

The engine knows nothing of state files or tokens; the runner turns its outcome into envelopes and
checkpoints. It does own the at-most-once boundary inside a resume: ``before_unsafe`` is called
once, right before the first stage that could have an external effect (§9.6).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TextIO

from ..errors import AbortError, LobsterError, LobsterRuntimeError
from ..events import NO_EVENTS, RunEvents
from ..records import field, record, replace
from .base import CommandContext, Stage
from .request_input import InputSuspension, StageInputRequester, replay_snapshot


@record
class SameStageResume:
    """What a same-stage input resume hands to the first stage it re-runs (R-RESUME-31)."""

    history: list[dict[str, Any]]
    pending: dict[str, Any]
    answer: Any


@record
class PipelineOutcome:
    """The run result of R-PIPE-5, plus what a command-level input suspension needs."""

    items: list[Any]
    rendered: bool = False
    halted_at: int | None = None
    # What the last renderer (json, table) received: tool mode reports these items instead.
    rendered_items: list[Any] = field(default_factory=list)
    suspension: InputSuspension | None = None
    replay_items: list[Any] = field(default_factory=list)

    @property
    def halted(self) -> bool:
        return self.halted_at is not None


class _CountingWriter:
    """Wraps the run's stdout to know whether anything was written (R-RI-5)."""

    def __init__(self, target: TextIO) -> None:
        self.target = target
        self.wrote = False

    def write(self, text: str) -> int:
        if text:
            self.wrote = True
        return self.target.write(text)

    def flush(self) -> None:
        self.target.flush()

    def isatty(self) -> bool:
        try:
            return self.target.isatty()
        except (AttributeError, ValueError):
            return False


def stage_step_id(index: int, stage: Stage) -> str:
    """How a stage is named in run events: 1-based position and command name."""
    return f"{index + 1}:{stage.name}"


def run_stages(
    stages: list[Stage],
    items: list[Any],
    ctx: CommandContext,
    *,
    events: RunEvents = NO_EVENTS,
    before_unsafe: Callable[[], None] | None = None,
    same_stage: SameStageResume | None = None,
    allow_request_input: bool = True,
    step_offset: int = 0,
) -> PipelineOutcome:
    """Run ``stages`` on ``items``; halts, input suspensions and errors end the loop early."""
    registry = ctx.registry
    stdout = _CountingWriter(ctx.stdout)
    rendered = False
    rendered_items: list[Any] = []
    claimed = before_unsafe is None

    def claim() -> None:
        nonlocal claimed
        if not claimed:
            claimed = True
            assert before_unsafe is not None
            before_unsafe()

    for index, stage in enumerate(stages):
        ctx.signal.raise_if_aborted()
        spec = registry.get(stage.name)
        if spec is None:
            raise LobsterRuntimeError(f"Unknown command: {stage.name}")
        resuming_here = index == 0 and same_stage is not None
        if not resuming_here and not spec.resume_safe_before_input:
            claim()
        requester = _make_requester(ctx, stdout, allow_request_input, same_stage if resuming_here else None, spec, claim)
        step_id = stage_step_id(index + step_offset, stage)
        stage_ctx = replace(
            ctx,
            stdout=stdout,  # type: ignore[arg-type]
            request_input=requester,
            on_output=events.output_sink(step_id),
            stage_name=stage.name,
        )
        events.emit("step_started", stepId=step_id, kind="stage", command=stage.raw)
        started = time.monotonic()
        try:
            result = spec.run(items, stage.args, stage_ctx)
        except InputSuspension as suspension:
            _finish_step(events, step_id, started, "ok", None)
            return PipelineOutcome(
                items=[],
                rendered=rendered or stdout.wrote,
                halted_at=index,
                suspension=suspension,
                replay_items=replay_snapshot(items),
            )
        except LobsterError as error:
            if resuming_here and not requester.answer_consumed:
                raise LobsterRuntimeError("resume input response was not consumed by requestInput") from error
            status = "timed_out" if isinstance(error, AbortError) and ctx.signal.timeout else "failed"
            _finish_step(events, step_id, started, status, error.message)
            raise
        if resuming_here and not requester.answer_consumed:
            _finish_step(events, step_id, started, "failed", "answer not consumed")
            raise LobsterRuntimeError("resume input response was not consumed by requestInput")
        _finish_step(events, step_id, started, "ok", None)
        if result.rendered:
            rendered = True
            rendered_items = items
        items = list(result.output)
        if result.halt:
            return PipelineOutcome(items=items, rendered=rendered, halted_at=index, rendered_items=rendered_items)
        ctx.signal.raise_if_aborted()
    return PipelineOutcome(items=items, rendered=rendered, rendered_items=rendered_items)


def _finish_step(events: RunEvents, step_id: str, started: float, status: str, error: str | None) -> None:
    events.emit(
        "step_finished",
        stepId=step_id,
        status=status,
        exitCode=None,
        durationMs=round((time.monotonic() - started) * 1000),
        error=error,
    )


class _UnsupportedRequester(StageInputRequester):
    """For for_each sub-steps and parallel branches, where no run can suspend (R-RI-7)."""

    def __call__(self, **_: Any) -> Any:
        raise LobsterRuntimeError("requestInput is not supported in this pipeline context")


def _make_requester(
    ctx: CommandContext,
    stdout: _CountingWriter,
    allow: bool,
    same_stage: SameStageResume | None,
    spec: Any,
    claim: Callable[[], None],
) -> StageInputRequester:
    if not allow:
        return _UnsupportedRequester()
    prompt_line = None
    if ctx.mode == "human" and ctx.interactive:
        stdin = ctx.stdin

        def prompt_line(text: str) -> str:
            stdout.target.write(text)
            stdout.target.flush()
            assert stdin is not None
            return stdin.readline().rstrip("\n")

    on_answer = None if spec.resume_safe_after_input else claim
    if same_stage is None:
        return StageInputRequester(prompt_line=prompt_line, wrote_output=lambda: stdout.wrote)
    return StageInputRequester(
        history=same_stage.history,
        pending=same_stage.pending,
        answer=same_stage.answer,
        on_answer=on_answer,
        prompt_line=prompt_line,
        wrote_output=lambda: stdout.wrote,
    )
