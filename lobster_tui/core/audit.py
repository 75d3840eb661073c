"""The audit journal: one JSON line per decision made through our runner (CLI or TUI).

Each line says who decided what about which checkpoint, and what the resume did:
``time, approver, user, stateKey, approvalId, kind, workflow, step, prompt, decision, answerSha256,
outcome{status, error, next}``. It lives at ``<state dir>/audit/journal.jsonl``, a subfolder the
official runtime ignores. Answers are recorded as a SHA-256 of their stable JSON, never verbatim.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any, TextIO

from .jsvalues import UNDEFINED, stable_stringify
from .state import StateStore, now_iso

JOURNAL_DIR = "audit"
JOURNAL_FILE = "journal.jsonl"
_PROMPT_LIMIT = 500


def journal_path(state: StateStore) -> Path:
    return state.root / JOURNAL_DIR / JOURNAL_FILE


def describe_checkpoint(snapshot: Any, key: str) -> dict[str, Any]:
    """What a journal line says about the checkpoint, read from its resume state alone."""
    info: dict[str, Any] = {"kind": None, "workflow": None, "step": None, "prompt": None}
    if not isinstance(snapshot, dict):
        return info
    if key.startswith("pipeline_resume_"):
        stages = snapshot.get("pipeline") if isinstance(snapshot.get("pipeline"), list) else []
        at = snapshot.get("resumeAtIndex") if isinstance(snapshot.get("resumeAtIndex"), int) else 0
        same_stage = snapshot.get("resumeMode") == "same_stage"
        gate = at if same_stage else at - 1
        info["kind"] = "input" if snapshot.get("haltType") == "input_request" else "approval"
        info["workflow"] = " | ".join(s.get("raw", "") for s in stages if isinstance(s, dict))[:_PROMPT_LIMIT]
        if 0 <= gate < len(stages) and isinstance(stages[gate], dict):
            info["step"] = stages[gate].get("name")
        info["prompt"] = snapshot.get("prompt")
    else:
        info["kind"] = "input" if "inputStepId" in snapshot else "approval"
        info["workflow"] = snapshot.get("filePath")
        info["step"] = snapshot.get("inputStepId", snapshot.get("approvalStepId"))
        info["prompt"] = _workflow_prompt(snapshot, info["step"])
    if isinstance(info["prompt"], str):
        info["prompt"] = info["prompt"][:_PROMPT_LIMIT]
    return info


def _workflow_prompt(snapshot: dict[str, Any], step_id: Any) -> str | None:
    from .errors import LobsterError
    from .workflow.loader import load_workflow

    path = snapshot.get("filePath")
    try:
        if not isinstance(path, str) or not stat.S_ISREG(os.stat(path).st_mode):
            return None  # a number would be read as a file descriptor; /dev/zero or a FIFO never ends
        doc = load_workflow(path)
    except (LobsterError, OSError, ValueError, KeyError, RecursionError):
        return None
    steps = doc.get("steps") if isinstance(doc, dict) and isinstance(doc.get("steps"), list) else []
    step = next((s for s in steps if isinstance(s, dict) and s.get("id") == step_id), None)
    if step is None:
        return None
    if isinstance(step.get("input"), dict):
        prompt = step["input"].get("prompt")
        return prompt if isinstance(prompt, str) else None
    approval = step.get("approval")
    if isinstance(approval, dict) and isinstance(approval.get("prompt"), str):
        return approval["prompt"]
    if isinstance(approval, str) and approval.strip() and approval != "required":
        return approval
    return f"Approve {step_id}?"


def answer_hash(response: Any) -> str | None:
    if response is UNDEFINED:
        return None
    # hashlib loads OpenSSL (several ms; ~30 ms on a busy CI machine) for one small digest: the
    # interpreter's own SHA-256 gives the same digest for a fraction of that.
    try:
        from _sha256 import sha256  # CPython 3.11
    except ImportError:
        try:
            from _sha2 import sha256  # type: ignore[no-redef]  # CPython 3.12+
        except ImportError:
            from hashlib import sha256

    return sha256(stable_stringify(response).encode("utf-8")).hexdigest()


def _user_name() -> str | None:
    """The OS user, as ``getpass.getuser`` finds it, without importing getpass on every decision."""
    for name in ("LOGNAME", "USER", "LNAME", "USERNAME"):
        if os.environ.get(name):
            return os.environ[name]
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_name
    except (ImportError, KeyError, OSError):
        return None


def record(
    state: StateStore,
    *,
    key: str,
    approval_id: str | None,
    snapshot: Any,
    decision: str,
    approver: str | None,
    response: Any,
    outcome: dict[str, Any],
) -> None:
    """Append one decision to the journal (flushed and fsynced: it is a record)."""
    user = _user_name()
    entry = {
        "time": now_iso(),
        "approver": approver,
        "user": user,
        "stateKey": key,
        "approvalId": approval_id,
        **describe_checkpoint(snapshot, key),
        "decision": decision,
        "answerSha256": answer_hash(response),
        "outcome": outcome,
    }
    path = journal_path(state)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    if path.parent.is_symlink():
        raise OSError(f"{path.parent} is a symbolic link (not followed)")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def read_journal(state: StateStore) -> tuple[list[dict[str, Any]], int]:
    """Every readable entry, oldest first, and how many corrupt lines were skipped."""
    try:
        text = journal_path(state).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return [], 0
    entries: list[dict[str, Any]] = []
    skipped = 0
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            skipped += 1
            continue
        if isinstance(entry, dict):
            entries.append(entry)
        else:
            skipped += 1
    return entries, skipped


def audit_command(args: list[str], stdout: TextIO, stderr: TextIO) -> int:
    """``lobster audit [--json]``: the journal as a table, or as a JSON array."""
    state = StateStore.from_env()
    entries, skipped = read_journal(state)
    if skipped:
        stderr.write(f"note: skipped {skipped} unreadable journal line(s)\n")
    if "--json" in args:
        stdout.write(json.dumps(entries, indent=2, ensure_ascii=False) + "\n")
        return 0
    if not entries:
        stdout.write(f"No decisions recorded yet in {journal_path(state)}\n")
        return 0
    rows = [("time", "approver", "decision", "checkpoint", "step", "outcome")]
    for entry in entries:
        outcome = entry.get("outcome") if isinstance(entry.get("outcome"), dict) else {}
        status = outcome.get("status") or "?"
        if outcome.get("error"):
            status = f"{status}: {outcome['error']}"
        rows.append((
            str(entry.get("time", ""))[:19].replace("T", " "),
            str(entry.get("approver") or entry.get("user") or "-"),
            str(entry.get("decision", "")),
            str(entry.get("approvalId") or str(entry.get("stateKey", ""))[-8:]),
            str(entry.get("step") or ""),
            status[:80],
        ))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        stdout.write("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() + "\n")
    return 0
