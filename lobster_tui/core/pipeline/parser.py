"""The inline pipeline DSL parser (spec §4.1, R-PARSE-1..7).

Text is split into stages at unquoted ``|``, each stage is tokenised shell-like, and the tokens after
the command name become an ``args`` mapping. The rules are the reference runtime's, oddities included
(greedy flags, empty tokens dropped, backslash rules that differ between the two quote kinds), so a
pipeline means the same thing under both runtimes.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import LobsterParseError
# Re-exported: the command modules take these JavaScript helpers from here.
from ..jsvalues import JS_WHITESPACE, is_array_index, js_key_order, js_trim  # noqa: F401
from .base import Stage

_TOKEN_SEPARATORS = " \t\n\r"
_QUOTES = "'\""
# Inside double quotes a backslash escapes only these characters (R-PARSE-2).
_DOUBLE_QUOTE_ESCAPABLE = '"\\$`'
# quote_token leaves tokens made only of these characters bare (the shims' rule, §3).
_BARE_TOKEN = re.compile(r"[A-Za-z0-9_\-./:=@]+")


def split_stages(text: str) -> list[str]:
    """Split pipeline text at unquoted ``|`` into trimmed stage texts (R-PARSE-1).

    Raises :class:`LobsterParseError` ``Unclosed quote``, ``Empty command stage`` (an empty stage
    other than the last) or ``Empty pipeline`` (no stage at all).
    """
    stages: list[str] = []
    current: list[str] = []
    quote: str | None = None
    i = 0
    while i < len(text):
        char = text[i]
        if quote is not None:
            if char == "\\":
                # A backslash travels with the next character, so an escaped quote never closes.
                current.append(text[i : i + 2])
                i += 2
                continue
            if char == quote:
                quote = None
        elif char in _QUOTES:
            quote = char
        elif char == "|":
            stages.append("".join(current))
            current = []
            i += 1
            continue
        current.append(char)
        i += 1
    if quote is not None:
        raise LobsterParseError("Unclosed quote")
    stages.append("".join(current))
    trimmed = [js_trim(stage) for stage in stages]
    if trimmed[-1] == "":
        trimmed.pop()  # `a | b |` is `a | b`
    if "" in trimmed:
        raise LobsterParseError("Empty command stage")
    if not trimmed:
        raise LobsterParseError("Empty pipeline")
    return trimmed


def tokenize(stage_text: str) -> list[str]:
    """Split one stage into shell-like tokens, dropping empty ones (R-PARSE-2).

    Raises :class:`LobsterParseError` ``Unclosed quote``.
    """
    tokens: list[str] = []
    current: list[str] = []
    quote: str | None = None
    i = 0
    n = len(stage_text)
    while i < n:
        char = stage_text[i]
        nxt = stage_text[i + 1] if i + 1 < n else ""
        if quote == "'":
            if char == "\\" and nxt == "'":
                current.append("'")
                i += 2
                continue
            if char == "'":
                quote = None
            else:
                current.append(char)
        elif quote == '"':
            if char == "\\" and nxt:
                if nxt in _DOUBLE_QUOTE_ESCAPABLE:
                    current.append(nxt)
                elif nxt != "\n":  # backslash-newline is a line continuation
                    current.append(char + nxt)
                i += 2
                continue
            if char == '"':
                quote = None
            else:
                current.append(char)
        elif char in _QUOTES:
            quote = char
        elif char in _TOKEN_SEPARATORS:
            _flush(tokens, current)
        else:
            current.append(char)
        i += 1
    if quote is not None:
        raise LobsterParseError("Unclosed quote")
    _flush(tokens, current)
    return tokens


def _flush(tokens: list[str], current: list[str]) -> None:
    # Empty tokens are dropped, so `''` cannot pass an empty argument (S-16).
    if current:
        tokens.append("".join(current))
        current.clear()


def parse_args(tokens: list[str]) -> dict[str, Any]:
    """Turn the tokens after a command name into ``args`` (R-PARSE-4, greedy flags per R-PARSE-5)."""
    args: dict[str, Any] = {"_": []}
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if not token.startswith("--"):
            args["_"].append(token)
            continue
        key, has_value, text = token[2:].partition("=")
        value: str | bool = text
        if not has_value:
            if i < len(tokens) and not tokens[i].startswith("--"):
                value = tokens[i]
                i += 1
            else:
                value = True
        _set_flag(args, key, value)
    return js_key_order(args)


def _set_flag(args: dict[str, Any], key: str, value: str | bool) -> None:
    if key == "_":
        # The reference lets `--_` replace the positional list with a string, after which commands
        # misread it and a later positional crashes; we refuse it up front instead.
        raise LobsterParseError("Flag --_ is not allowed: args._ holds the positional arguments")
    if key == "__proto__":
        return  # a JavaScript object silently ignores this assignment, so the flag vanishes
    args[key] = value


def parse_stage(stage_text: str) -> Stage:
    """Parse one stage text into ``Stage(name, args, raw)`` (R-PARSE-3).

    Raises :class:`LobsterParseError` ``Unclosed quote`` or ``Empty command stage``.
    """
    raw = js_trim(stage_text)
    tokens = tokenize(raw)
    if not tokens:
        raise LobsterParseError("Empty command stage")
    return Stage(name=tokens[0], args=parse_args(tokens[1:]), raw=raw)


def parse_pipeline(text: str) -> list[Stage]:
    """Parse pipeline text into its stages; every failure is a :class:`LobsterParseError`."""
    return [parse_stage(stage) for stage in split_stages(text)]


def quote_token(token: str) -> str:
    """Spell ``token`` so that :func:`tokenize` (and :func:`split_stages`) give it back unchanged.

    Tokens made of ``[A-Za-z0-9_\\-./:=@]`` stay bare; others are double-quoted with ``\\`` and ``"``
    escaped. Double quotes are used because inside single quotes a token cannot end in a backslash.
    Raises ``ValueError`` for the empty token, which the DSL cannot express (R-PARSE-2).
    """
    if token == "":
        raise ValueError("the pipeline DSL cannot express an empty token")
    if _BARE_TOKEN.fullmatch(token):
        return token
    escaped = token.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'
