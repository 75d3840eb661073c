"""Templates and step references in workflow text (spec §7.3, §7.4).

``${name}`` inserts an arg, ``$id.path`` inserts a value from an earlier step's result object, and a
value that is exactly one ``$id.path`` (a *strict ref*) yields the raw value instead of text. All
substitution is raw text insertion with JavaScript ``String()`` coercion, as in the reference.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..errors import LobsterRuntimeError
from ..jsvalues import UNDEFINED, dumps_compact, js_string, js_to_number
from .loader import arg_env_name, js_trim

_ARG_PATTERN = re.compile(r"\$\{([A-Za-z0-9_-]+)\}")
_REF_BODY = r"\$([A-Za-z0-9_-]+)\.([A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*)"
STEP_REF_PATTERN = re.compile(_REF_BODY)
"""An inline step reference ``$id.seg.seg``: ids may contain ``-``, path segments may not (R-WF-22)."""
_STRICT_REF = re.compile(f"^{_REF_BODY}$")


def resolve_args_template(text: str, args: Mapping[str, Any]) -> str:
    """Replace each ``${name}`` whose name is a resolved arg with ``String(value)`` (R-WF-21).

    Unknown names stay as they are, so the shell may still expand them.
    """
    return _ARG_PATTERN.sub(lambda m: js_string(args[m.group(1)]) if m.group(1) in args else m.group(0), text)


def lookup_ref(results: Mapping[str, Any], step_id: str, path: str) -> Any:
    """The value at dotted ``path`` inside the result object of ``step_id`` (R-WF-22).

    Array segments must be in-range integer indexes (``Number(seg)``, so ``01`` is 1); object segments
    are members; stepping into anything else, or a missing id, gives ``UNDEFINED``. Unlike JavaScript,
    inherited members such as ``constructor`` are not found: only the JSON data is visible.
    """
    current: Any = results.get(step_id, UNDEFINED)
    for segment in path.split("."):
        if isinstance(current, list):
            index = js_to_number(segment)
            if not float(index).is_integer() or not 0 <= index < len(current):
                return UNDEFINED
            current = current[int(index)]
        elif isinstance(current, dict):
            current = current.get(segment, UNDEFINED)
        else:
            return UNDEFINED
    return current


def _render_ref(value: Any, path: str) -> str:
    if value is UNDEFINED:
        # A step that never gated or was never skipped reads as "not approved" / "not skipped".
        return "false" if path in ("approved", "skipped") else ""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, int, float)):
        return js_string(value)
    return dumps_compact(value)


def resolve_step_refs(text: str, results: Mapping[str, Any]) -> str:
    """Replace each ``$id.path`` whose id has a result with the rendered value (R-WF-22).

    Other ``$word.word`` texts (``$HOME.json``) are left for the shell.
    """

    def replace(match: re.Match[str]) -> str:
        step_id, path = match.group(1), match.group(2)
        if step_id not in results:
            return match.group(0)
        return _render_ref(lookup_ref(results, step_id, path), path)

    return STEP_REF_PATTERN.sub(replace, text)


def resolve_template(text: str, args: Mapping[str, Any], results: Mapping[str, Any]) -> str:
    """``${name}`` substitution, then step references on the result (R-WF-20)."""
    return resolve_step_refs(resolve_args_template(text, args), results)


def parse_strict_ref(text: str) -> tuple[str, str] | None:
    """``(id, path)`` when the trimmed text is exactly one step reference (R-WF-23), else ``None``."""
    match = _STRICT_REF.match(js_trim(text))
    return (match.group(1), match.group(2)) if match else None


def resolve_value(value: Any, args: Mapping[str, Any], results: Mapping[str, Any]) -> Any:
    """Resolve a ``stdin`` or ``for_each`` value (R-WF-23, R-WF-24).

    ``None``/``UNDEFINED`` give ``None`` (no input); a strict ref gives the raw referenced value
    (possibly ``UNDEFINED``) and fails with ``Unknown step reference: <id>.<path>`` for an id without
    a result; any other string is template-resolved; other values are returned untouched (no
    templates are resolved inside mappings or lists).
    """
    if value is None or value is UNDEFINED:
        return None
    if not isinstance(value, str):
        return value
    ref = parse_strict_ref(value)
    if ref is None:
        return resolve_template(value, args, results)
    step_id, path = ref
    if step_id not in results:
        raise LobsterRuntimeError(f"Unknown step reference: {step_id}.{path}")
    return lookup_ref(results, step_id, path)


def build_step_env(
    base_env: Mapping[str, str],
    args: Mapping[str, Any],
    workflow_env: Any,
    step_env: Any,
    args_for_templates: Mapping[str, Any],
    results: Mapping[str, Any],
) -> dict[str, str]:
    """The environment of a step (R-WF-12): later layers override earlier ones.

    base env → ``LOBSTER_ARGS_JSON`` (compact JSON of ``args``) → ``LOBSTER_ARG_<NAME>`` =
    ``String(value)`` for each arg → ``workflow_env`` → ``step_env``. Env map values are resolved
    with :func:`resolve_template` against ``args_for_templates`` and ``results``; non-string values
    are dropped, as the reference does, and a map that is not a mapping contributes nothing.
    """
    env = dict(base_env)
    env["LOBSTER_ARGS_JSON"] = dumps_compact(dict(args))
    for name, value in args.items():
        env_name = arg_env_name(name)
        if env_name is not None:
            env[f"LOBSTER_ARG_{env_name}"] = js_string(value)
    for layer in (workflow_env, step_env):
        if isinstance(layer, Mapping):
            for key, value in layer.items():
                if isinstance(value, str):
                    env[key] = resolve_template(value, args_for_templates, results)
    return env
