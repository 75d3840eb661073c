"""What ``y`` and ``Y`` copy: a checkpoint's id, or the shell command that decides it with the CLI.

The command is what a reviewer would type in another shell with the same ``LOBSTER_STATE_DIR``:
``lobster resume --id <approvalId> --approve yes`` for an approval (``--token`` when it has no
approval id), ``lobster resume --token <token> --response-json '<defaults or {}>'`` for an input
request. Every argument is shell-quoted, so pasting it can never run anything else.
"""

from __future__ import annotations

import shlex

from lobster_tui.core.checkpoints import BrokenCheckpoint, Checkpoint

from .decisions import token_for

Entry = Checkpoint | BrokenCheckpoint


def copy_id(entry: Entry) -> str:
    """The id to copy: the approval id, else the state key (what ``--token`` decodes to)."""
    if isinstance(entry, Checkpoint) and entry.approval_id:
        return entry.approval_id
    return entry.state_key


def resume_command(entry: Entry) -> str:
    """The ``lobster resume`` command that decides this checkpoint the way ``enter`` / ``a`` would."""
    if isinstance(entry, BrokenCheckpoint):
        # Only dropping applies to an unreadable state file (what c does in the inbox).
        return _join("lobster", "resume", "--token", token_for(entry), "--cancel")
    if entry.kind == "input":
        return _join("lobster", "resume", "--token", entry.token, "--response-json", default_answer(entry))
    if entry.approval_id:
        return _join("lobster", "resume", "--id", entry.approval_id, "--approve", "yes")
    return _join("lobster", "resume", "--token", entry.token, "--approve", "yes")


def default_answer(checkpoint: Checkpoint) -> str:
    """The request's ``defaults`` as compact JSON (JavaScript key order), else ``{}``."""
    if not checkpoint.has_defaults:
        return "{}"
    from lobster_tui.core.jsvalues import dumps_compact

    try:
        return dumps_compact(checkpoint.defaults)
    except (TypeError, ValueError):
        return "{}"


def _join(*parts: str) -> str:
    return " ".join(shlex.quote(part) for part in parts)
