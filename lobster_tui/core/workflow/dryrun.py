"""Dry-run plans: what a workflow or pipeline would do, without doing it (spec R-WF-140, R-CLI-13).

A workflow plan walks the steps in order with *planned* results instead of real ones: approval
steps count as approved, input steps as answered with ``{"pending": true}``, everything else as a
result without output. Conditions are evaluated against those, so the plan shows which steps would
be skipped, and step references that need real output are flagged rather than guessed. Pipelines
and stdin references are validated up front, so a plan fails where a run would fail.
"""

from __future__ import annotations

import re
from collections.abc import Container, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import LobsterParseError, LobsterRuntimeError
from ..jsvalues import dumps_compact, js_string, js_truthy
from .conditions import evaluate_condition
from .loader import is_approval_step, is_input_step, js_trim, resolve_args, shell_text, step_kind
from .templates import resolve_args_template, resolve_value

if TYPE_CHECKING:
    from ..pipeline.base import Stage

_OUTPUT_REF = re.compile(r"\$[A-Za-z0-9_-]+\.(?:stdout|json)")
_STRICT_OUTPUT_REF = re.compile(r"^\$[A-Za-z0-9_-]+\.(?:stdout|json)$")
_APPROVED_REF = re.compile(r"\$([A-Za-z0-9_-]+)\.approved")
_OUTPUT_NOTE = "[contains step output refs — unknown at plan time]"
_DEFERRED_LINE = "     [command validation deferred — stage name depends on step output]"


def _plan_text(text: str, args: dict[str, Any], planned: dict[str, Any]) -> str:
    """Text as the plan shows it: args substituted, ``$id.approved`` of planned steps decided.

    Every other step reference stays verbatim: its value is not known before the run.
    """

    def approved(match: re.Match[str]) -> str:
        result = planned.get(match.group(1))
        if result is None:
            return match.group(0)
        return "true" if result.get("approved") is True else "false"

    return _APPROVED_REF.sub(approved, resolve_args_template(text, args))


def _with_note(text: str) -> str:
    return f"{text}  {_OUTPUT_NOTE}" if _OUTPUT_REF.search(text) else text


def _stdin_line(stdin: Any) -> str | None:
    """The ``stdin:`` detail line, shown only for string stdin that needs another step's output."""
    if not isinstance(stdin, str):
        return None
    trimmed = js_trim(stdin)
    if _STRICT_OUTPUT_REF.match(trimmed):
        return f"     stdin: {trimmed}  [output unknown at plan time]"
    if _OUTPUT_REF.search(trimmed):
        return f"     stdin: {trimmed}  {_OUTPUT_NOTE}"
    return None


def _check_value(value: Any, args: dict[str, Any], planned: dict[str, Any], context: str) -> None:
    """Resolve a stdin/for_each value against planned results; an unknown step id fails the plan."""
    try:
        resolve_value(value, args, planned)
    except LobsterRuntimeError as error:
        raise LobsterRuntimeError(f"{context}: {error.message}") from None


def _check_pipeline(text: str, known_commands: Container[str], unknown: str) -> bool:
    """Validate stage names (``unknown`` + name is the error). True if some stage was deferred.

    A stage whose name contains a ``$id.stdout``/``$id.json`` reference cannot be checked before the
    run and is skipped.
    """
    from ..pipeline.parser import parse_pipeline

    try:
        stages = parse_pipeline(text)
    except LobsterParseError as error:
        raise LobsterRuntimeError(error.message) from None
    deferred = False
    for stage in stages:
        if _OUTPUT_REF.search(stage.name):
            deferred = True
        elif stage.name not in known_commands:
            raise LobsterRuntimeError(unknown + stage.name)
    return deferred


def _retry_line(retry: Any) -> str | None:
    if not isinstance(retry, dict):
        return None
    attempts = retry.get("max", 1)
    if not attempts > 1:
        return None
    backoff = retry.get("backoff", "fixed")
    delay = js_string(retry.get("delay_ms", 1000))
    jitter = ", jitter" if retry.get("jitter", False) else ""
    return f"     retry: up to {js_string(attempts)} attempts, {backoff} backoff (base: {delay}ms{jitter})"


def _policy_lines(step: dict[str, Any]) -> list[str]:
    """Timeout, on_error, retry and approval lines shared by every executing step.

    ``for_each`` loops get none: they ignore timeout, retry and on_error (S-18) and cannot gate.
    """
    lines: list[str] = []
    if js_truthy(step.get("timeout_ms")):
        lines.append(f"     timeout: {js_string(step['timeout_ms'])}ms")
    if js_truthy(step.get("on_error")) and step["on_error"] != "stop":
        lines.append(f"     on_error: {step['on_error']}")
    retry = _retry_line(step.get("retry"))
    if retry is not None:
        lines.append(retry)
    if is_approval_step(step):
        lines.append("     [approval required]")
    return lines


def _plan_for_each(
    step: dict[str, Any],
    number: int,
    args: dict[str, Any],
    planned: dict[str, Any],
    known_commands: Container[str],
) -> list[str]:
    step_id = step["id"]
    source = step["for_each"]
    _check_value(source, args, planned, f"Workflow step {step_id} for_each")
    item_var, index_var = step.get("item_var", "item"), step.get("index_var", "index")
    sub_steps: list[dict[str, Any]] = step["steps"]
    lines = [
        f"  {number}. {step_id}  [for_each]",
        f"     for_each: {_with_note(source)}",
        f"     item_var: {item_var}, index_var: {index_var}",
    ]
    if js_truthy(step.get("batch_size")):
        lines.append(f"     batch_size: {js_string(step['batch_size'])}")
    if js_truthy(step.get("pause_ms")):
        lines.append(f"     pause_ms: {js_string(step['pause_ms'])}")
    lines.append(f"     sub-steps: {len(sub_steps)}")
    # Sub-steps see the outer plan plus a placeholder item and index 0; their results stay inside.
    scope = dict(planned)
    scope[item_var] = {"id": item_var, "json": {"_placeholder": True}}
    scope[index_var] = {"id": index_var, "json": 0}
    for sub_number, sub in enumerate(sub_steps, start=1):
        sub_id = sub["id"]
        prefix = f"       {sub_number}. {sub_id}"
        if not evaluate_condition(sub, scope):
            lines.append(f"{prefix}  [skipped — condition: false]")
            scope[sub_id] = {"id": sub_id, "skipped": True}
            continue
        if sub.get("stdin") is not None:
            _check_value(sub["stdin"], args, scope, f"Workflow step {step_id} for_each sub-step {sub_id} stdin")
        kind = step_kind(sub)
        if kind == "shell":
            lines.append(f"{prefix}  [shell] run: {_plan_text(shell_text(sub), args, scope)}")
        elif kind == "pipeline":
            text = _plan_text(sub["pipeline"], args, scope)
            unknown = f"Workflow step {step_id} for_each sub-step {sub_id} pipeline: unknown command: "
            _check_pipeline(text, known_commands, unknown)
            lines.append(f"{prefix}  [pipeline] pipeline: {text}")
        else:
            lines.append(f"{prefix}  [no-op]")
        scope[sub_id] = {"id": sub_id}
    planned[step_id] = {"id": step_id}
    return lines


def _plan_parallel(
    step: dict[str, Any], args: dict[str, Any], planned: dict[str, Any], known_commands: Container[str]
) -> list[str]:
    parallel = step["parallel"]
    lines = [f"     wait: {parallel.get('wait', 'all')}"]
    if js_truthy(parallel.get("timeout_ms")):
        lines.append(f"     timeout: {js_string(parallel['timeout_ms'])}ms")
    for branch in parallel["branches"]:
        branch_id = branch["id"]
        shell = shell_text(branch)
        if isinstance(branch.get("pipeline"), str) and js_trim(branch["pipeline"]):
            text = _plan_text(branch["pipeline"], args, planned)
            unknown = f"Parallel branch {branch_id} pipeline references unknown command: "
            _check_pipeline(text, known_commands, unknown)
            lines.append(f"     branch {branch_id}: [pipeline] {_with_note(text)}")
        elif isinstance(shell, str) and js_trim(shell):
            lines.append(f"     branch {branch_id}: [shell] {_with_note(_plan_text(shell, args, planned))}")
        else:
            lines.append(f"     branch {branch_id}: [no-op]")
        # Later branches (and steps) may refer to this branch, as they can after a real run.
        planned[branch_id] = {"id": branch_id}
    return lines


def _plan_step(
    step: dict[str, Any],
    number: int,
    args: dict[str, Any],
    planned: dict[str, Any],
    known_commands: Container[str],
) -> list[str]:
    step_id = step["id"]
    if not evaluate_condition(step, planned):
        planned[step_id] = {"id": step_id, "skipped": True}
        return [f"  {number}. {step_id}  [skipped — condition: false]"]
    if is_input_step(step):
        planned[step_id] = {"id": step_id, "response": {"pending": True}}
        return [f"  {number}. {step_id}  [input]", f"     prompt: {step['input']['prompt']}", "     [input required]"]
    if isinstance(step.get("for_each"), str):
        return _plan_for_each(step, number, args, planned, known_commands)
    if step.get("stdin") is not None:
        _check_value(step["stdin"], args, planned, f"Workflow step {step_id} stdin")

    kind = step_kind(step)
    lines = [f"  {number}. {step_id}  [{'no-op' if kind == 'none' else kind}]"]
    if kind == "parallel":
        lines.extend(_plan_parallel(step, args, planned, known_commands))
    elif kind == "workflow":
        lines.append(f"     workflow: {_with_note(_plan_text(step['workflow'], args, planned))}")
        workflow_args = step.get("workflow_args")
        if isinstance(workflow_args, dict) and workflow_args:
            lines.append(f"     args: {', '.join(workflow_args)}")
    elif kind == "shell":
        lines.append(f"     run: {_with_note(_plan_text(shell_text(step), args, planned))}")
    elif kind == "pipeline":
        text = _plan_text(step["pipeline"], args, planned)
        unknown = f"Workflow step {step_id} pipeline references unknown command: "
        deferred = _check_pipeline(text, known_commands, unknown)
        lines.append(f"     pipeline: {_with_note(text)}")
        if deferred:
            lines.append(_DEFERRED_LINE)
    stdin = _stdin_line(step.get("stdin"))
    if stdin is not None:
        lines.append(stdin)
    lines.extend(_policy_lines(step))
    planned[step_id] = {"id": step_id, "approved": True} if is_approval_step(step) else {"id": step_id}
    return lines


def plan_dry_run(doc: dict[str, Any], args: Any, known_commands: Container[str], start_index: int = 0) -> str:
    """The stderr text of ``lobster run --dry-run <workflow>`` (R-WF-140), ending in a newline.

    ``doc`` must be validated; ``args`` are the provided or already resolved args (defaults are
    applied here; resolving twice is harmless). Steps are numbered from 1 at ``start_index``.
    Raises :class:`LobsterRuntimeError` for what would fail at run time: condition errors, stdin or
    ``for_each`` references to unknown steps, unparsable pipelines and unknown commands.
    """
    resolved = resolve_args(doc, args)
    steps: list[dict[str, Any]] = doc["steps"][start_index:]
    planned: dict[str, Any] = {}
    noun = "step" if len(steps) == 1 else "steps"
    lines = [f"[DRY RUN] Would execute {len(steps)} {noun}:", ""]
    for number, step in enumerate(steps, start=1):
        lines.extend(_plan_step(step, number, resolved, planned, known_commands))
    return "\n".join(lines) + "\n"


def _stage_args(args: dict[str, Any]) -> list[str]:
    """Positionals as themselves, then ``key=value`` flags (non-string values as compact JSON)."""
    parts = [str(positional) for positional in args.get("_", [])]
    parts.extend(
        f"{key}={value if isinstance(value, str) else dumps_compact(value)}" for key, value in args.items() if key != "_"
    )
    return parts


def plan_pipeline_dry_run(stages: Sequence[Stage], known_commands: Container[str]) -> str:
    """The stderr text of ``lobster run --dry-run '<pipeline>'`` (R-CLI-13), ending in a newline.

    Every stage name must be a known command, else ``Unknown command: <name>``.
    """
    for stage in stages:
        if stage.name not in known_commands:
            raise LobsterRuntimeError(f"Unknown command: {stage.name}")
    noun = "stage" if len(stages) == 1 else "stages"
    lines = [f"[DRY RUN] Pipeline ({len(stages)} {noun}):"]
    for number, stage in enumerate(stages, start=1):
        parts = _stage_args(stage.args)
        lines.append(f"  {number}. {stage.name}  args: {', '.join(parts)}" if parts else f"  {number}. {stage.name}")
    return "\n".join(lines) + "\n"
