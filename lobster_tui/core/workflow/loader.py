"""Finding, parsing and validating workflow files; step classification; args (spec §7.1, §7.2).

Validation reproduces the reference's checks in the reference's order, so the first problem in a
file is reported with the same sentence by both runtimes (R-WF-3). Several checks look odd (a
``run: 5`` reports a missing command, ``command: []`` counts as a command); they follow
JavaScript truthiness and ``typeof`` on purpose.
"""

from __future__ import annotations

import errno
import json
import math
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from ..errors import LobsterRuntimeError
# JS_WHITESPACE and js_trim are re-exported for the condition parser.
from ..jsvalues import JS_WHITESPACE, UNDEFINED, is_array_index, js_to_number, js_trim, js_truthy, loads  # noqa: F401

_WORKFLOW_EXTENSIONS = (".lobster", ".yaml", ".yml", ".json")
_MAX_TIMEOUT_MS = 2_147_483_647

StepKind = Literal["parallel", "workflow", "pipeline", "shell", "none"]


def _is_blank(value: Any) -> bool:
    """Not a string with visible content (JavaScript ``!(typeof v === "string" && v.trim())``)."""
    return not isinstance(value, str) or not js_trim(value)


# --- files -----------------------------------------------------------------------------------------


def _os_error_message(error: OSError, syscall: str, path: str) -> str:
    """An OS error worded as Node words it (``ENOENT: no such file or directory, stat '<path>'``)."""
    code = errno.errorcode.get(error.errno or 0, "EIO")
    reason = (error.strerror or "i/o error").lower()
    return f"{code}: {reason}, {syscall} '{path}'"


def resolve_workflow_path(path: str, cwd: str) -> str:
    """The absolute path of a workflow file, or :class:`LobsterRuntimeError` (R-CLI-7).

    The path must exist (symlinks followed), be a regular file and end in ``.lobster``, ``.yaml``,
    ``.yml`` or ``.json`` (case-insensitive; the name as given, not a symlink's target).
    """
    absolute = os.path.normpath(os.path.join(cwd, path))
    try:
        info = os.stat(absolute)
    except OSError as error:
        raise LobsterRuntimeError(_os_error_message(error, "stat", absolute)) from None
    if not stat.S_ISREG(info.st_mode):
        raise LobsterRuntimeError("Workflow path is not a file")
    if not absolute.lower().endswith(_WORKFLOW_EXTENSIONS):
        raise LobsterRuntimeError("Workflow file must end in .lobster, .yaml, .yml, or .json")
    return absolute




def _js_object_order(value: Any) -> Any:
    """Reorder mapping keys as a JavaScript object enumerates them: array-index keys first, ascending.

    ``Object.keys`` of a parsed ``{b: 1, "2": x, "1": y}`` is ``["1", "2", "b"]``; this is visible in
    dry-run ``args:`` lines, graph edge order and ``LOBSTER_ARGS_JSON``.
    """
    if isinstance(value, list):
        return [_js_object_order(item) for item in value]
    if not isinstance(value, dict):
        return value
    indexes = sorted((key for key in value if is_array_index(key)), key=int)
    ordered = {key: _js_object_order(value[key]) for key in indexes}
    ordered.update((key, _js_object_order(item)) for key, item in value.items() if key not in ordered)
    return ordered


def _parse_json(text: str) -> Any:
    try:
        return loads(text)
    except (ValueError, RecursionError) as error:
        raise LobsterRuntimeError(str(error)) from None


def _parse_yaml(text: str) -> Any:
    cached = _yaml_cache_get(text)
    if cached is not UNDEFINED:
        return cached
    import yaml

    from .yaml12 import load_yaml

    try:
        doc = load_yaml(text)
    except (yaml.YAMLError, RecursionError) as error:
        raise LobsterRuntimeError(str(error)) from None
    _yaml_cache_put(text, doc)
    return doc


# --- the parse cache ----------------------------------------------------------------------------------
# Importing PyYAML costs ~20 ms, a sixth of a one-step run, and most runs parse a file they parsed
# before. Parsed documents are kept as JSON under the user's cache directory, named by a CRC of the
# text; an entry stores the whole text and is used only when it equals the file's text exactly, so
# a stale or colliding entry can never be returned. LOBSTER_YAML_CACHE=0 turns the cache off.


def _yaml_cache_path(text: str) -> Path | None:
    import zlib

    if os.environ.get("LOBSTER_YAML_CACHE", "1") == "0":
        return None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    digest = zlib.crc32(text.encode("utf-8", "surrogatepass"))
    return Path(base) / "lobster-tui" / "yaml" / f"{digest:08x}-{len(text)}.json"


def _yaml_cache_get(text: str) -> Any:
    path = _yaml_cache_path(text)
    if path is None:
        return UNDEFINED
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return UNDEFINED
    if isinstance(entry, dict) and entry.get("text") == text and "doc" in entry:
        return entry["doc"]
    return UNDEFINED


def _yaml_cache_put(text: str, doc: Any) -> None:
    path = _yaml_cache_path(text)
    if path is None:
        return
    try:
        encoded = json.dumps({"text": text, "doc": doc}, ensure_ascii=False, allow_nan=False)
        # Only documents JSON keeps exactly (string keys, finite numbers) are cached.
        if json.loads(encoded)["doc"] != doc:
            return
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        temp.write_text(encoded, encoding="utf-8")
        os.replace(temp, path)
    except (OSError, ValueError, TypeError, RecursionError):
        pass  # a cache that cannot be written is just a slower start


def load_workflow(path: str) -> dict[str, Any] | list[Any]:
    """Read and parse a workflow file (R-WF-1); it is not validated (see :func:`validate_workflow`).

    ``.json`` files are JSON, everything else YAML 1.2. Parse errors carry the parser's message. The
    document must be a mapping (``Workflow file must be a JSON/YAML object``); as in the reference a
    top-level list passes this test and fails the ``steps`` check instead.
    """
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError as error:
        raise LobsterRuntimeError(_os_error_message(error, "open", path)) from None
    parsed = _parse_json(text) if path.lower().endswith(".json") else _parse_yaml(text)
    if not isinstance(parsed, (dict, list)):
        raise LobsterRuntimeError("Workflow file must be a JSON/YAML object")
    return _js_object_order(parsed)


# --- step classification ---------------------------------------------------------------------------


def is_approval_step(step: Any) -> bool:
    """``approval`` is ``true``, a non-blank string or a mapping (R-WF-4)."""
    approval = step.get("approval") if isinstance(step, dict) else None
    return approval is True or isinstance(approval, dict) or not _is_blank(approval)


def is_input_step(step: Any) -> bool:
    """``input`` is a mapping (R-WF-4)."""
    return isinstance(step, dict) and isinstance(step.get("input"), dict)


def shell_text(step: dict[str, Any]) -> Any:
    """The shell command of a step: ``run`` if it is a string, else ``command`` (may be anything)."""
    run = step.get("run")
    return run if isinstance(run, str) else step.get("command")


def step_kind(step: dict[str, Any]) -> StepKind:
    """What a step executes, first match wins (R-WF-31); ``run: ""`` hides ``command``."""
    if isinstance(step.get("parallel"), dict):
        return "parallel"
    if not _is_blank(step.get("workflow")):
        return "workflow"
    if not _is_blank(step.get("pipeline")):
        return "pipeline"
    if not _is_blank(shell_text(step)):
        return "shell"
    return "none"


# --- validation ------------------------------------------------------------------------------------


def _fail(message: str) -> LobsterRuntimeError:
    return LobsterRuntimeError(message)


def _is_number(value: Any) -> bool:
    """JavaScript ``typeof value === "number"``."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_integer(value: Any) -> bool:
    return _is_number(value) and math.isfinite(value) and float(value).is_integer()


def _is_finite_non_negative(value: Any) -> bool:
    return _is_number(value) and math.isfinite(value) and value >= 0


def _is_timeout(value: Any) -> bool:
    return _is_integer(value) and 1 <= value <= _MAX_TIMEOUT_MS


def _object_id(value: Any) -> str | None:
    """The id of a step-like mapping when it is a non-empty string."""
    step_id = value.get("id") if isinstance(value, dict) else None
    return step_id if isinstance(step_id, str) and step_id else None


def _js_object(value: Any) -> bool:
    """JavaScript ``value && typeof value === "object"`` (arrays included)."""
    return isinstance(value, (dict, list))


def validate_workflow(doc: Any, *, warn: Callable[[str], None] | None = None) -> None:
    """Check a parsed workflow file, raising the first problem found (R-WF-3).

    ``warn`` receives the ``unknown format ...`` lines reported while compiling input schemas.
    """
    steps = doc.get("steps") if isinstance(doc, dict) else None
    if not isinstance(steps, list) or not steps:
        raise _fail("Workflow file requires a non-empty steps array")
    if "cost_limit" in doc:
        _validate_cost_limit(doc["cost_limit"])
    seen: set[str] = set()
    for step in steps:
        if not _js_object(step):
            raise _fail("Workflow step must be an object")
        step_id = _object_id(step)
        if step_id is None:
            raise _fail("Workflow step requires an id")
        _validate_step(step, step_id, seen, warn)
        if step_id in seen:
            raise _fail(f"Duplicate workflow step id: {step_id}")
        if isinstance(step.get("parallel"), dict):
            seen.update(branch["id"] for branch in step["parallel"]["branches"])
        seen.add(step_id)


def _validate_cost_limit(cost_limit: Any) -> None:
    if not isinstance(cost_limit, dict):
        raise _fail("Workflow cost_limit must be an object")
    # A missing max_usd is ``undefined``, whose ``Number()`` is NaN.
    max_usd = js_to_number(cost_limit.get("max_usd", UNDEFINED))
    if not math.isfinite(max_usd) or max_usd < 0:
        raise _fail("Workflow cost_limit.max_usd must be a non-negative number")
    if "action" in cost_limit and cost_limit["action"] not in ("warn", "stop"):
        raise _fail('Workflow cost_limit.action must be "warn" or "stop"')


def _validate_step(step: dict[str, Any], step_id: str, seen: set[str], warn: Callable[[str], None] | None) -> None:
    prefix = f"Workflow step {step_id}"
    if "workflow" in step and not isinstance(step["workflow"], str):
        raise _fail(f"{prefix} workflow must be a string (file path)")
    if isinstance(step.get("workflow"), str) and not js_trim(step["workflow"]):
        raise _fail(f"{prefix} workflow path cannot be blank")
    if "workflow_args" in step and not isinstance(step["workflow_args"], dict):
        raise _fail(f"{prefix} workflow_args must be a plain object")
    if "parallel" in step and not isinstance(step["parallel"], dict):
        raise _fail(f"{prefix} parallel must be an object")
    is_parallel = isinstance(step.get("parallel"), dict)
    if is_parallel:
        _validate_parallel(step["parallel"], step_id, seen)
    if "for_each" in step and not isinstance(step["for_each"], str):
        raise _fail(f"{prefix} for_each must be a string (step reference expression)")
    is_for_each = isinstance(step.get("for_each"), str)
    if is_for_each:
        _validate_for_each(step, step_id)

    pipeline = step.get("pipeline")
    execution_count = (
        js_truthy(shell_text(step))
        + (isinstance(pipeline, str) and pipeline != "")
        + (not _is_blank(step.get("workflow")))
        + is_parallel
        + is_for_each
    )
    approval, input_step = is_approval_step(step), is_input_step(step)
    if execution_count == 0 and not approval and not input_step:
        raise _fail(f"{prefix} requires run, command, pipeline, workflow, parallel, for_each, approval, or input")
    if execution_count > 1:
        raise _fail(f"{prefix} can only define one of run, command, pipeline, workflow, parallel, or for_each")
    if execution_count > 0 and input_step:
        raise _fail(f"{prefix} input steps cannot define run, command, pipeline, workflow, parallel, or for_each")
    if approval and input_step:
        raise _fail(f"{prefix} cannot define both approval and input")
    for field in ("run", "command", "pipeline"):
        if field in step and not isinstance(step[field], str):
            raise _fail(f"{prefix} {field} must be a string")
    if "input" in step:
        _validate_input(step["input"], prefix, warn)
    if isinstance(step.get("approval"), dict):
        _validate_approval_identity(step["approval"], prefix)
    if "timeout_ms" in step and not _is_timeout(step["timeout_ms"]):
        raise _fail(f"{prefix} timeout_ms must be a positive integer between 1 and 2147483647")
    if "on_error" in step and step["on_error"] not in ("stop", "continue", "skip_rest"):
        raise _fail(f'{prefix} on_error must be "stop", "continue", or "skip_rest"')
    if "retry" in step:
        _validate_retry(step["retry"], prefix)


def _validate_parallel(parallel: dict[str, Any], step_id: str, seen: set[str]) -> None:
    prefix = f"Workflow step {step_id} parallel"
    branches = parallel.get("branches")
    if not isinstance(branches, list) or not branches:
        raise _fail(f"{prefix} requires a non-empty branches array")
    if "wait" in parallel and parallel["wait"] not in ("all", "any"):
        raise _fail(f'{prefix} wait must be "all" or "any"')
    if "timeout_ms" in parallel and not _is_timeout(parallel["timeout_ms"]):
        raise _fail(f"{prefix} timeout_ms must be a positive integer between 1 and 2147483647")
    branch_ids: set[str] = set()
    for branch in branches:
        if not _js_object(branch):
            raise _fail(f"{prefix} branches must be objects")
        branch_id = _object_id(branch)
        if branch_id is None:
            raise _fail(f"{prefix} branch requires an id")
        if branch_id == step_id:
            raise _fail(f"{prefix} branch id cannot match the step id")
        if branch_id in branch_ids:
            raise _fail(f"Workflow step {step_id} duplicate parallel branch id: {branch_id}")
        if branch_id in seen:
            raise _fail(f"Duplicate workflow id across steps/parallel branches: {branch_id}")
        branch_ids.add(branch_id)
        pipeline = branch.get("pipeline")
        count = js_truthy(shell_text(branch)) + (isinstance(pipeline, str) and pipeline != "")
        if count == 0:
            raise _fail(f"{prefix} branch {branch_id} requires run, command, or pipeline")
        if count > 1:
            raise _fail(f"{prefix} branch {branch_id} can only define one of run, command, or pipeline")
        for field in ("run", "command", "pipeline"):
            if field in branch and not isinstance(branch[field], str):
                raise _fail(f"{prefix} branch {branch_id} {field} must be a string")


def _validate_for_each(step: dict[str, Any], step_id: str) -> None:
    prefix = f"Workflow step {step_id}"
    sub_steps = step.get("steps")
    if not isinstance(sub_steps, list) or not sub_steps:
        raise _fail(f"{prefix} for_each requires a non-empty steps array")
    if "batch_size" in step and not (_is_integer(step["batch_size"]) and step["batch_size"] >= 1):
        raise _fail(f"{prefix} batch_size must be a positive integer")
    if "pause_ms" in step and not _is_finite_non_negative(step["pause_ms"]):
        raise _fail(f"{prefix} pause_ms must be a finite non-negative number")
    if is_approval_step(step):
        raise _fail(f"{prefix} for_each steps cannot define approval (use a separate step after the loop)")
    if is_input_step(step):
        raise _fail(f"{prefix} for_each steps cannot define input (use a separate step after the loop)")
    if step.get("stdin") is not None:
        raise _fail(f"{prefix} for_each steps cannot define stdin (loop input comes from the for_each expression)")
    pipeline = step.get("pipeline")
    if (
        js_truthy(shell_text(step))
        or (isinstance(pipeline, str) and pipeline != "")
        or js_truthy(step.get("workflow"))
        or js_truthy(step.get("parallel"))
    ):
        raise _fail(f"{prefix} for_each cannot also define run, command, pipeline, workflow, or parallel")
    for field in ("item_var", "index_var"):
        if field in step and not isinstance(step[field], str):
            raise _fail(f"{prefix} {field} must be a string")
    item_var, index_var = step.get("item_var", "item"), step.get("index_var", "index")
    if item_var == index_var:
        raise _fail(f"{prefix} item_var and index_var cannot be the same")
    sub_ids: set[str] = set()
    for sub in sub_steps:
        sub_id = _object_id(sub)
        if sub_id is None:
            raise _fail(f"{prefix} for_each sub-step requires an id")
        if sub_id in (item_var, index_var):
            raise _fail(f"{prefix} for_each sub-step id '{sub_id}' conflicts with loop variable")
        if sub_id in sub_ids:
            raise _fail(f"{prefix} duplicate for_each sub-step id: {sub_id}")
        sub_ids.add(sub_id)
        _validate_sub_step(sub, f"{prefix} for_each sub-step {sub_id}", prefix)


def _validate_sub_step(sub: dict[str, Any], prefix: str, loop_prefix: str) -> None:
    if is_approval_step(sub) or is_input_step(sub):
        raise _fail(f"{loop_prefix} for_each sub-steps cannot contain approval or input steps")
    for field in ("run", "command", "pipeline"):
        if field in sub and not isinstance(sub[field], str):
            raise _fail(f"{prefix} {field} must be a string")
    if js_truthy(sub.get("workflow")) or js_truthy(sub.get("parallel")) or js_truthy(sub.get("for_each")):
        raise _fail(f"{prefix} cannot define workflow, parallel, or for_each")
    # Unlike top-level steps, a blank ``run`` does not hide a usable ``command`` here.
    has_shell = not _is_blank(sub.get("run")) or not _is_blank(sub.get("command"))
    has_pipeline = not _is_blank(sub.get("pipeline"))
    if not has_shell and not has_pipeline:
        raise _fail(f"{prefix} requires run, command, or pipeline")
    if has_shell and has_pipeline:
        raise _fail(f"{prefix} can only define one of run, command, or pipeline")


def _validate_input(input_spec: Any, prefix: str, warn: Callable[[str], None] | None) -> None:
    if not isinstance(input_spec, dict):
        raise _fail(f"{prefix} input must be an object")
    if not isinstance(input_spec.get("prompt"), str):
        raise _fail(f"{prefix} input.prompt must be a string")
    # ``typeof schema !== "object"``: null and arrays get past this test and fail to compile instead.
    if "responseSchema" not in input_spec or not isinstance(input_spec["responseSchema"], (dict, list, type(None))):
        raise _fail(f"{prefix} input.responseSchema must be an object")
    from ..schema import SchemaCompileError, compile_schema

    try:
        compile_schema(input_spec["responseSchema"], warn=warn)
    except SchemaCompileError as error:
        raise _fail(f"{prefix} input.responseSchema is invalid: {error.message}") from None


def _validate_approval_identity(approval: dict[str, Any], prefix: str) -> None:
    for field, kind in (
        ("initiated_by", str),
        ("initiatedBy", str),
        ("required_approver", str),
        ("requiredApprover", str),
        ("require_different_approver", bool),
        ("requireDifferentApprover", bool),
    ):
        if field in approval and not isinstance(approval[field], kind):
            raise _fail(f"{prefix} approval.{field} must be a {'string' if kind is str else 'boolean'}")


def _validate_retry(retry: Any, prefix: str) -> None:
    if not isinstance(retry, dict):
        raise _fail(f"{prefix} retry must be an object")
    if "max" in retry and not (_is_integer(retry["max"]) and retry["max"] >= 1):
        raise _fail(f"{prefix} retry.max must be a positive integer")
    if "backoff" in retry and retry["backoff"] not in ("fixed", "exponential"):
        raise _fail(f'{prefix} retry.backoff must be "fixed" or "exponential"')
    for field in ("delay_ms", "max_delay_ms"):
        if field in retry and not _is_finite_non_negative(retry[field]):
            raise _fail(f"{prefix} retry.{field} must be a finite non-negative number")
    if "jitter" in retry and not isinstance(retry["jitter"], bool):
        raise _fail(f"{prefix} retry.jitter must be a boolean")


# --- args ------------------------------------------------------------------------------------------


def _js_entries(value: Any) -> list[tuple[str, Any]]:
    """JavaScript ``Object.entries(value)`` for JSON values: lists and strings are indexed."""
    if isinstance(value, dict):
        return list(value.items())
    if isinstance(value, (list, str)):
        return [(str(index), item) for index, item in enumerate(value)]
    return []


def resolve_args(doc: Any, provided: Any) -> dict[str, Any]:
    """The resolved args of a run (R-WF-10).

    Each declared arg whose definition is a mapping with a ``default`` key (even ``null``) starts at
    that default; every provided entry then overrides or adds, declared or not. ``provided`` may be
    any JSON value: a list gives keys ``"0"``, ``"1"``, …; ``null``, numbers and booleans give
    nothing. Resolving already-resolved args again returns them unchanged.
    """
    declared = doc.get("args") if isinstance(doc, dict) else None
    resolved = {
        name: definition["default"]
        for name, definition in _js_entries(declared)
        if isinstance(definition, dict) and "default" in definition
    }
    resolved.update(_js_entries(provided))
    return _js_object_order(resolved)


def arg_env_name(name: str) -> str | None:
    """The ``<NAME>`` of ``LOBSTER_ARG_<NAME>``, or ``None`` when nothing is left (R-WF-13).

    Trim, upper-case, collapse every run of characters outside ``[A-Z0-9]`` into ``_`` and strip
    leading/trailing ``_``: ``user-id`` → ``USER_ID``, ``__edge__key__`` → ``EDGE_KEY``.
    """
    normalized = re.sub(r"[^A-Z0-9]+", "_", js_trim(name).upper()).strip("_")
    return normalized or None
