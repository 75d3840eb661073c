"""``llm.invoke`` / ``llm_task.invoke``: one LLM call through an adapter, cached (spec §5.17).

Input items become artifacts; the answer is one normalised item. Answers are remembered twice so
that a resumed or retried run does not pay for the same call again: in run state under
``--state-key`` / ``LOBSTER_RUN_STATE_KEY`` (replayed with ``source: "run_state"``) and in a file
cache keyed by a hash of everything that shapes the answer (``source: "cache"``).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...errors import AbortError, LobsterError, LobsterRuntimeError
from ...jsvalues import (
    UNDEFINED,
    dumps_compact,
    dumps_pretty,
    js_string,
    js_to_number,
    js_truthy,
    loads,
    stable_stringify,
)
from ...records import record
from ...state import now_iso
from ..base import CommandContext, CommandResult, CommandSpec
from .invoke import (
    ERROR_EXCERPT_CHARS,
    HttpResponse,
    first_present,
    parse_url,
    post_json,
)

CACHE_KEY_VERSION = 2
"""Identity version of the cache key; bumped whenever the hashed fields change (head: 2)."""

_STATE_VERSION = 1
_DEFAULT_VALIDATION_RETRIES = 1
_FALSE_WORDS = ("false", "0", "no")
_TRUE_WORDS = ("true", "1", "yes")

Adapter = Callable[[dict[str, Any]], Any]
"""Sends one payload and returns the response envelope ``{ok, result?, error?}`` (unvalidated)."""


@record(frozen=True)
class _Flavour:
    """What differs between ``llm.invoke`` and its OpenClaw-only alias ``llm_task.invoke``."""

    name: str
    default_provider: str | None
    # The item's ``source``: the provider name, except that the alias reports the legacy "clawd".
    fixed_source: str | None


class _AdapterError(LobsterRuntimeError):
    """An adapter call that got no usable answer; reported as ``<cmd> request failed: …``."""


# -- small JavaScript-flavoured readers -----------------------------------------------------------


def _first_env(env: dict[str, str], keys: tuple[str, ...]) -> Any:
    """The first of ``keys`` whose value is non-blank (untrimmed), else UNDEFINED."""
    for key in keys:
        value = env.get(key)
        if value is not None and value.strip():
            return value
    return UNDEFINED


def _env_string(raw: Any, env: dict[str, str], keys: tuple[str, ...], fallback: str) -> str:
    if raw is not None and raw is not UNDEFINED and js_string(raw).strip():
        return js_string(raw).strip()
    from_env = _first_env(env, keys)
    return from_env.strip() if from_env is not UNDEFINED else fallback


def _optional_number(value: Any) -> int | float | None:
    if value is None or value is UNDEFINED:
        return None
    number = js_to_number(value)
    return number if math.isfinite(number) else None


def _flag(value: Any) -> bool:
    """The command's own boolean reading: ``false``/``0``/``no`` are false, unlike plain truthiness."""
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _FALSE_WORDS:
            return False
        if word in _TRUE_WORDS:
            return True
    return js_truthy(value)


def _parse_array(raw: Any, label: str) -> list[Any]:
    if not js_truthy(raw):
        return []
    try:
        parsed = loads(js_string(raw))
    except ValueError:
        parsed = None
    if not isinstance(parsed, list):
        raise LobsterRuntimeError(f"{label} must be a JSON array")
    return parsed


def _parse_object(raw: Any, label: str) -> dict[str, Any] | None:
    if not js_truthy(raw):
        return None
    try:
        parsed = loads(js_string(raw))
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        raise LobsterRuntimeError(f"{label} must be a JSON object")
    return parsed


def _sha256_hex(text: str) -> str:
    import hashlib

    # Node hashes strings as UTF-8 with lone surrogates replaced; do the same instead of failing.
    clean = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return hashlib.sha256(clean.encode("utf-8")).hexdigest()


def normalize_artifact(raw: Any) -> dict[str, Any]:
    """Objects pass through; scalars become text artifacts; null and arrays become JSON ones."""
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, (str, bool, int, float)):
        return {"kind": "text", "text": js_string(raw)}
    return {"kind": "json", "data": raw}


def compute_cache_key(
    *,
    provider: str,
    prompt: str,
    model: str,
    schema_version: str,
    artifact_hashes: list[str],
    output_schema: dict[str, Any] | None,
    temperature: int | float | None,
    max_output_tokens: int | float | None,
) -> str:
    """SHA-256 of everything that shapes an answer (R-CMD-LLM-5); ``null`` marks an omitted knob."""
    identity = {
        "cacheKeyVersion": CACHE_KEY_VERSION,
        "provider": provider,
        "prompt": prompt,
        "model": model or f"{provider}-default",
        "schemaVersion": schema_version,
        "artifactHashes": artifact_hashes,
        "outputSchema": output_schema,
        "temperature": temperature,
        "maxOutputTokens": max_output_tokens,
    }
    return _sha256_hex(stable_stringify(identity))


# -- providers -------------------------------------------------------------------------------------


def _resolve_provider(args: dict[str, Any], env: dict[str, str], flavour: _Flavour) -> str:
    explicit = js_string(first_present(args.get("provider"), env.get("LOBSTER_LLM_PROVIDER"), "")).strip().lower()
    if explicit:
        if explicit in ("openclaw", "pi", "http"):
            return explicit
        raise LobsterRuntimeError(f"Unsupported llm provider: {explicit}")
    if flavour.default_provider:
        return flavour.default_provider
    if (env.get("LOBSTER_PI_LLM_ADAPTER_URL") or "").strip():
        return "pi"
    if js_string(first_present(env.get("OPENCLAW_URL"), env.get("CLAWD_URL"), "")).strip():
        return "openclaw"
    if (env.get("LOBSTER_LLM_ADAPTER_URL") or "").strip():
        return "http"
    raise LobsterRuntimeError("llm.invoke could not resolve a provider. Set --provider or LOBSTER_LLM_PROVIDER")


def _resolve_adapter(provider: str, args: dict[str, Any], ctx: CommandContext, name: str) -> Adapter:
    env = ctx.env
    if provider == "openclaw":
        base = js_string(first_present(env.get("OPENCLAW_URL"), env.get("CLAWD_URL"), "")).strip()
        if not base:
            raise LobsterRuntimeError(f"{name} requires OPENCLAW_URL (or CLAWD_URL) for provider=openclaw")
        # No locality rule here (R-SAFE-1): OPENCLAW_TOKEN goes wherever OPENCLAW_URL points.
        endpoint = parse_url(base, absolute_path="/tools/invoke")
        token = js_string(first_present(args.get("token"), env.get("OPENCLAW_TOKEN"), env.get("CLAWD_TOKEN"), "")).strip()

        def invoke_openclaw(payload: dict[str, Any]) -> Any:
            body = dumps_compact({"tool": "llm-task", "action": "invoke", "args": payload})
            parsed = _parse_adapter_response(post_json(endpoint, body, token=token, signal=ctx.signal))
            if isinstance(parsed, dict) and "ok" in parsed:
                if parsed["ok"] is not True:
                    raise _AdapterError(f"openclaw adapter error: {_error_message(parsed, 'Unknown error')}")
                inner = parsed.get("result", UNDEFINED)
                if isinstance(inner, dict) and "ok" in inner:
                    return inner
                return {"ok": True, "result": inner}
            return {"ok": True, "result": parsed}

        return invoke_openclaw

    url_var, token_var = (
        ("LOBSTER_PI_LLM_ADAPTER_URL", "LOBSTER_PI_LLM_ADAPTER_TOKEN")
        if provider == "pi"
        else ("LOBSTER_LLM_ADAPTER_URL", "LOBSTER_LLM_ADAPTER_TOKEN")
    )
    adapter_url = (env.get(url_var) or "").strip()
    if not adapter_url:
        raise LobsterRuntimeError(f"{name} requires {url_var} for provider={provider}")
    token = js_string(first_present(args.get("token"), env.get(token_var), "")).strip()

    def invoke_http(payload: dict[str, Any]) -> Any:
        endpoint = parse_url(adapter_url)
        if endpoint.path == "/" or endpoint.path.startswith("/?"):
            # A bare origin means the adapter's conventional /invoke route; the query is kept.
            endpoint = parse_url(adapter_url, absolute_path="/invoke" + endpoint.path.lstrip("/"))
        parsed = _parse_adapter_response(post_json(endpoint, dumps_compact(payload), token=token, signal=ctx.signal))
        if isinstance(parsed, dict) and "ok" in parsed:
            return parsed
        return {"ok": True, "result": parsed}

    return invoke_http


def _parse_adapter_response(response: HttpResponse) -> Any:
    if not response.ok:
        raise _AdapterError(f"{response.status} {response.reason}: {response.text[:ERROR_EXCERPT_CHARS]}")
    if not response.text:
        return None
    try:
        return loads(response.text)
    except ValueError:
        raise _AdapterError("Response was not JSON") from None


def _error_message(envelope: dict[str, Any], fallback: str) -> str:
    error = envelope.get("error")
    message = error.get("message") if isinstance(error, dict) else None
    return js_string(first_present(message, fallback))


# -- the response envelope -------------------------------------------------------------------------

_RESULT_STRINGS = ("runId", "model", "prompt", "status")
_RESULT_OBJECTS = ("metadata", "diagnostics")
_USAGE_NUMBERS = ("inputTokens", "outputTokens", "totalTokens")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _present(mapping: dict[str, Any], key: str) -> bool:
    return key in mapping and mapping[key] is not UNDEFINED


def valid_envelope(envelope: Any) -> bool:
    """The reference's response-envelope schema, checked by hand (it never changes).

    ``{ok: boolean, result?: {output: object, runId?/model?/prompt?/status?: string,
    usage?: {…Tokens?: number}, warnings?: string[], metadata?/diagnostics?: object},
    error?: object}``. A present ``null`` fails wherever a type is declared.
    """
    if not isinstance(envelope, dict) or not isinstance(envelope.get("ok"), bool):
        return False
    if _present(envelope, "error") and not isinstance(envelope["error"], dict):
        return False
    if not _present(envelope, "result"):
        return True
    result = envelope["result"]
    if not isinstance(result, dict) or not isinstance(result.get("output", UNDEFINED), dict):
        return False
    output = result["output"]
    if any(_present(output, key) and not isinstance(output[key], str) for key in ("text", "format")):
        return False
    if any(_present(result, key) and not isinstance(result[key], str) for key in _RESULT_STRINGS):
        return False
    if any(_present(result, key) and not isinstance(result[key], dict) for key in _RESULT_OBJECTS):
        return False
    if _present(result, "usage"):
        usage = result["usage"]
        if not isinstance(usage, dict) or any(_present(usage, k) and not _is_number(usage[k]) for k in _USAGE_NUMBERS):
            return False
    if _present(result, "warnings"):
        warnings = result["warnings"]
        if not isinstance(warnings, list) or not all(isinstance(w, str) for w in warnings):
            return False
    return True


def _or_null(mapping: dict[str, Any], key: str) -> Any:
    value = mapping.get(key)
    return None if value is UNDEFINED else value


def normalize_result(
    envelope: dict[str, Any],
    *,
    kind: str,
    cache_key: str,
    schema_version: str,
    artifact_hashes: list[str],
    source: str,
    attempt: int,
) -> dict[str, Any]:
    """The one item a live call emits (R-CMD-LLM-4)."""
    result = envelope.get("result")
    result = result if isinstance(result, dict) else {}
    output = result.get("output")
    output = output if isinstance(output, dict) else {}
    data = _or_null(output, "data")
    format_value = _or_null(output, "format")
    status = first_present(result.get("status"), "completed")
    return {
        "kind": kind,
        "runId": _or_null(result, "runId"),
        "prompt": _or_null(result, "prompt"),
        "model": _or_null(result, "model"),
        "schemaVersion": schema_version,
        "status": js_string(status),
        "cacheKey": cache_key,
        "artifactHashes": artifact_hashes,
        "output": {
            "format": format_value if format_value is not None else ("json" if js_truthy(data) else "text"),
            "text": _or_null(output, "text"),
            "data": data,
        },
        "usage": _or_null(result, "usage"),
        "metadata": _or_null(result, "metadata"),
        "warnings": _or_null(result, "warnings"),
        "diagnostics": _or_null(result, "diagnostics"),
        "createdAt": now_iso(),
        "source": source,
        # Every built-in provider answers live; only a replay below is "cached".
        "cached": False,
        "attemptCount": attempt,
    }


# -- run state and the file cache ------------------------------------------------------------------


def _replay(items: list[Any], source: str) -> list[dict[str, Any]]:
    return [
        {**(item if isinstance(item, dict) else {}), "source": source, "cached": True, "replayed": True}
        for item in items
    ]


def _read_run_state(ctx: CommandContext, key: str) -> Any:
    with ctx.state.locked(key, ctx.signal):
        try:
            return ctx.state.read_value(key)
        except ValueError:
            return None  # a corrupt snapshot is a miss, never an error (D-17)


def _cache_path(ctx: CommandContext, name: str, cache_key: str) -> Path:
    root = ctx.env.get("LOBSTER_CACHE_DIR") or ""
    base = Path(ctx.cwd) / root if root else Path(ctx.cwd) / ".lobster-cache"
    return base / name / f"{cache_key}.json"


def _read_cache(path: Path, cache_key: str) -> list[Any] | None:
    try:
        entry = loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, NotADirectoryError, ValueError):
        return None
    except OSError as error:
        raise LobsterRuntimeError(str(error)) from None
    if not isinstance(entry, dict) or entry.get("cacheKey") != cache_key or not isinstance(entry.get("items"), list):
        return None
    return entry["items"]


def _write_cache(path: Path, cache_key: str, items: list[Any]) -> None:
    import secrets

    path.parent.mkdir(parents=True, exist_ok=True)
    text = dumps_pretty({"items": items, "cacheKey": cache_key, "storedAt": now_iso()}) + "\n"
    # Write then rename, so a concurrent reader sees the old entry or the new one, never half.
    temp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    try:
        temp.write_text(text, encoding="utf-8")
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def _persist(
    ctx: CommandContext,
    *,
    state_key: str | None,
    record: dict[str, Any],
    cache: tuple[Path, str] | None,
) -> None:
    """Store the answer in run state, then in the cache; a failed cache write undoes the state."""
    if state_key is None:
        if cache is not None:
            _write_cache(cache[0], cache[1], record["items"])
        return
    store = ctx.state
    with store.locked(state_key, ctx.signal):
        try:
            before = store.read_value(state_key)
        except ValueError:
            before = None
        stored = False
        try:
            ctx.signal.raise_if_aborted()
            store.write_value(state_key, record)
            stored = True
            ctx.signal.raise_if_aborted()
            if cache is not None:
                _write_cache(cache[0], cache[1], record["items"])
        except BaseException:
            # Readers must never replay an answer whose run was cancelled or half-stored.
            if stored:
                if before is UNDEFINED:
                    store.delete_key(state_key)
                else:
                    store.write_value(state_key, before)
            raise


# -- the command -----------------------------------------------------------------------------------


def run_llm(items: list[Any], args: dict[str, Any], ctx: CommandContext, flavour: _Flavour) -> CommandResult:
    """Resolve the adapter, replay a stored answer if there is one, else call (with schema retries)."""
    name = flavour.name
    env = ctx.env
    # Replays return without any network I/O, so a cancelled run must be caught up front.
    ctx.signal.raise_if_aborted()
    provider = _resolve_provider(args, env, flavour)
    adapter = _resolve_adapter(provider, args, ctx, name)
    prompt = js_string(args["prompt"]) if js_truthy(args.get("prompt")) else " ".join(args.get("_") or [])
    if not prompt:
        raise LobsterRuntimeError(f"{name} requires --prompt or positional text")
    model = _env_string(args.get("model"), env, ("LOBSTER_LLM_MODEL", "LLM_TASK_MODEL"), "")
    schema_version = _env_string(
        args.get("schema-version"), env, ("LOBSTER_LLM_SCHEMA_VERSION", "LLM_TASK_SCHEMA_VERSION"), "v1"
    )
    max_output_tokens = _optional_number(args.get("max-output-tokens"))
    temperature = _optional_number(args.get("temperature"))
    provided_artifacts = _parse_array(args.get("artifacts-json"), f"{name} --artifacts-json")
    metadata = _parse_object(args.get("metadata-json"), f"{name} --metadata-json")
    output_schema = _parse_object(args.get("output-schema"), f"{name} --output-schema")
    max_retries: float = 0
    if output_schema is not None:
        raw_retries = first_present(
            args.get("max-validation-retries"),
            _first_env(env, ("LOBSTER_LLM_VALIDATION_RETRIES", "LLM_TASK_VALIDATION_RETRIES")),
        )
        retries = js_to_number(raw_retries)
        max_retries = max(0, retries if math.isfinite(retries) else _DEFAULT_VALIDATION_RETRIES)
    disable_cache = _flag(args.get("disable-cache"))
    force_refresh = _flag(
        first_present(args.get("refresh"), _first_env(env, ("LOBSTER_LLM_FORCE_REFRESH", "LLM_TASK_FORCE_REFRESH")))
    )
    state_key = js_string(first_present(args.get("state-key"), env.get("LOBSTER_RUN_STATE_KEY"), "")).strip() or None

    artifacts = [normalize_artifact(item) for item in [*items, *provided_artifacts]]
    artifact_hashes = [_sha256_hex(stable_stringify(artifact)) for artifact in artifacts]
    cache_key = compute_cache_key(
        provider=provider,
        prompt=prompt,
        model=model,
        schema_version=schema_version,
        artifact_hashes=artifact_hashes,
        output_schema=output_schema,
        temperature=temperature,
        max_output_tokens=max_output_tokens,
    )

    if state_key is not None and not force_refresh:
        stored = _read_run_state(ctx, state_key)
        ctx.signal.raise_if_aborted()
        if (
            isinstance(stored, dict)
            and stored.get("type") == name
            and stored.get("cacheKey") == cache_key
            and isinstance(stored.get("items"), list)
        ):
            return CommandResult(output=_replay(stored["items"], "run_state"))
    cache_path = _cache_path(ctx, name, cache_key)
    if not disable_cache and not force_refresh:
        cached_items = _read_cache(cache_path, cache_key)
        ctx.signal.raise_if_aborted()
        if cached_items is not None:
            return CommandResult(output=_replay(cached_items, "cache"))

    payload: dict[str, Any] = {"prompt": prompt}
    if model:
        payload["model"] = model
    payload["artifacts"] = artifacts
    payload["artifactHashes"] = artifact_hashes
    if metadata is not None:
        payload["metadata"] = metadata
    if output_schema is not None:
        payload["outputSchema"] = output_schema
    payload["schemaVersion"] = schema_version
    if max_output_tokens is not None:
        payload["maxOutputTokens"] = max_output_tokens
    if temperature is not None:
        payload["temperature"] = temperature

    validator = _compile(output_schema, ctx) if output_schema is not None else None
    source = flavour.fixed_source or provider
    attempt = 0
    validation_errors: list[str] = []
    while True:
        ctx.signal.raise_if_aborted()
        attempt += 1
        if attempt > 1:
            retry_context: dict[str, Any] = {"attempt": attempt}
            if validation_errors:
                retry_context["validationErrors"] = validation_errors
            payload["retryContext"] = retry_context
        envelope = _call(adapter, payload, ctx, name)
        if not valid_envelope(envelope):
            raise LobsterRuntimeError(f"{name} received invalid response envelope")
        if envelope["ok"] is not True:
            raise LobsterRuntimeError(f"{name} remote error: {_error_message(envelope, 'llm adapter returned an error')}")
        item = normalize_result(
            envelope,
            kind=name,
            cache_key=cache_key,
            schema_version=schema_version,
            artifact_hashes=artifact_hashes,
            source=source,
            attempt=attempt,
        )
        if validator is not None:
            errors = validator.all_errors(item["output"]["data"])
            if errors:
                validation_errors = [f"{error.instance_path or '/'} {error.message}".strip() for error in errors]
                # Exactly 1 + retries calls in all (head; the release made one more).
                if attempt > max_retries:
                    raise LobsterRuntimeError(f"{name} output failed schema validation: {'; '.join(validation_errors)}")
                continue
        ctx.signal.raise_if_aborted()
        record = {"type": name, "version": _STATE_VERSION, "cacheKey": cache_key, "items": [item], "storedAt": now_iso()}
        _persist(ctx, state_key=state_key, record=record, cache=None if disable_cache else (cache_path, cache_key))
        return CommandResult(output=[item])


def _compile(schema: dict[str, Any], ctx: CommandContext) -> Any:
    """Compile ``--output-schema``; ``unknown format`` warnings go to stderr, as Ajv prints them."""
    from ...schema import SchemaCompileError, compile_schema

    def warn(line: str) -> None:
        ctx.stderr.write(line + "\n")

    try:
        return compile_schema(schema, warn=warn)
    except SchemaCompileError as error:
        raise LobsterRuntimeError(error.message) from None


def _call(adapter: Adapter, payload: dict[str, Any], ctx: CommandContext, name: str) -> Any:
    """One adapter call; cancellation stays an abort, anything else is ``request failed``."""
    try:
        return adapter(payload)
    except AbortError:
        raise
    except LobsterError as error:
        ctx.signal.raise_if_aborted()
        raise LobsterRuntimeError(f"{name} request failed: {error.message}") from None


_ARGS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "provider": {
            "type": "string",
            "description": "LLM adapter provider (openclaw, pi, http). Optional if auto-detected.",
        },
        "token": {"type": "string", "description": "Optional bearer token for providers that support it."},
        "prompt": {"type": "string", "description": "Primary prompt / instructions"},
        "model": {"type": "string", "description": "Model identifier. Optional; adapter defaults may apply if omitted."},
        "artifacts-json": {"type": "string", "description": "JSON array of artifacts to send"},
        "metadata-json": {"type": "string", "description": "JSON object of metadata to include"},
        "output-schema": {"type": "string", "description": "JSON schema LLM output must satisfy"},
        "schema-version": {"type": "string", "description": "Logical schema version for caching"},
        "max-validation-retries": {"type": "number", "description": "Retries when schema validation fails"},
        "temperature": {"type": "number", "description": "Sampling temperature"},
        "max-output-tokens": {"type": "number", "description": "Max completion tokens"},
        "state-key": {"type": "string", "description": "Run-state key override (else LOBSTER_RUN_STATE_KEY)"},
        "refresh": {"type": "boolean", "description": "Bypass run-state + cache"},
        "disable-cache": {"type": "boolean", "description": "Skip persistent cache"},
        "_": {"type": "array", "items": {"type": "string"}},
    },
    "required": [],
}

_FEATURES = (
    "Features:\n"
    "  - Typed payload validation before invoking the adapter.\n"
    "  - Run-state + file cache so resumes do not re-call the LLM.\n"
    "  - Optional JSON-schema enforcement with bounded retries.\n\n"
)

_LLM_HELP = (
    "llm.invoke — call a configured LLM adapter with caching and schema validation\n\n"
    "Usage:\n"
    "  llm.invoke --prompt 'Write summary'\n"
    "  llm.invoke --provider openclaw --model claude-3-sonnet --prompt 'Write summary'\n"
    "  cat artifacts.json | llm.invoke --provider pi --prompt 'Score each item'\n"
    "  ... | llm.invoke --prompt 'Plan next steps' --output-schema '{\"type\":\"object\"}'\n\n"
    + _FEATURES
    + "Config:\n"
    "  - Provider resolution order: --provider, LOBSTER_LLM_PROVIDER, then environment auto-detect.\n"
    "  - Built-in providers: openclaw, pi, http.\n"
    "  - OpenClaw provider uses OPENCLAW_URL (CLAWD_URL also supported) and OPENCLAW_TOKEN.\n"
    "  - Pi provider uses LOBSTER_PI_LLM_ADAPTER_URL and is intended to be supplied by a Pi extension.\n"
    "  - Generic http provider uses LOBSTER_LLM_ADAPTER_URL and optional LOBSTER_LLM_ADAPTER_TOKEN.\n"
)

_LLM_TASK_HELP = (
    "llm_task.invoke — backward-compatible alias for llm.invoke using OpenClaw\n\n"
    "Usage:\n"
    "  llm_task.invoke --prompt 'Write summary'\n"
    "  llm_task.invoke --model claude-3-sonnet --prompt 'Write summary'\n"
    "  cat artifacts.json | llm_task.invoke --prompt 'Score each item'\n\n"
    + _FEATURES
    + "Config:\n"
    "  - Requires OPENCLAW_URL (or CLAWD_URL) and optionally OPENCLAW_TOKEN.\n"
    "  - Use llm.invoke for new workflows and non-OpenClaw adapters.\n"
)


def _make(flavour: _Flavour, description: str, help_text: str) -> CommandSpec:
    def run(items: list[Any], args: dict[str, Any], ctx: CommandContext) -> CommandResult:
        return run_llm(items, args, ctx, flavour)

    return CommandSpec(
        name=flavour.name,
        run=run,
        description=description,
        args_schema=_ARGS_SCHEMA,
        side_effects=["calls_llm"],
        help_text=help_text,
    )


llm_invoke = _make(
    _Flavour(name="llm.invoke", default_provider=None, fixed_source=None),
    "Call a configured LLM adapter with typed payloads and caching",
    _LLM_HELP,
)
llm_task_invoke = _make(
    _Flavour(name="llm_task.invoke", default_provider="openclaw", fixed_source="clawd"),
    "Backward-compatible alias for llm.invoke using the OpenClaw adapter",
    _LLM_TASK_HELP,
)

COMMANDS: list[CommandSpec] = [llm_invoke, llm_task_invoke]
