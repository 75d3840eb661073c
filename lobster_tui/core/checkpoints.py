"""Pending checkpoints in a state directory (spec R-STATE-34): what the inbox lists.

A pending checkpoint is a ``pipeline_resume_*``/``workflow_resume_*`` file holding a live resume
state, written by our runner or the official one. Consumed markers, approval indexes, locks and temp
files are never pending; a file that cannot be read or does not have a resume state's shape is
returned as a :class:`BrokenCheckpoint` with the reason, so a reviewer sees it instead of a crash.

Speed (an inbox may hold 10,000 checkpoints): a scan reads each file once and keeps only what a row
of the list shows; everything else a :class:`Checkpoint` offers (token, items, preview, schema,
steps before the gate, ...) is worked out from the same bytes the first time it is asked for.
:class:`CheckpointScanner` keeps its last scan and re-reads only files whose inode, size or
times changed, so a watcher can rescan after every change.
"""

from __future__ import annotations

import json
import os
import stat
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .jsvalues import UNDEFINED
from .state import APPROVAL_PREFIX, RESUME_PREFIXES, StateStore, is_consumed_marker

if TYPE_CHECKING:
    from .tokens import TokenKind

CheckpointKind = Literal["approval", "input"]
_MAX_STATE_BYTES = 32 * 1024 * 1024
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)

Signature = tuple[int, int, int, int]
"""What tells a file changed between scans: inode, size, mtime and ctime (ns)."""


@dataclass(frozen=True)
class StepRecord:
    """A step (or pipeline stage) that ran before the gate, with what it produced."""

    step_id: str
    kind: str = "step"
    command: str | None = None
    stdout: str | None = None
    json_value: Any = None
    has_json: bool = False
    status: str = "ok"


_ROW_FIELDS = (
    "state_key", "kind", "source", "workflow", "step", "prompt", "created_at",
    "approval_id", "run_id", "file_path", "note",
)
_DETAIL_DEFAULTS: dict[str, Any] = {
    "token": "",
    "items": [],
    "preview": None,
    "has_subject": False,
    "subject": None,
    "response_schema": None,
    "has_defaults": False,
    "defaults": None,
    "initiated_by": None,
    "required_approver": None,
    "require_different_approver": False,
    "steps_before": [],
}


class Checkpoint:
    """One pending approval or input request, with everything a reviewer needs to decide.

    The fields a list row shows (and ``run_id``, ``file_path``, ``note``) are set by the scan.
    The details (``token``, ``items``, ``preview``, ``subject``, ``response_schema``, ``defaults``,
    identity rules, ``steps_before``) are computed on first access from the file's bytes as they
    were when scanned, so a checkpoint never changes under a reviewer who is looking at it.
    Instances are treated as immutable; :meth:`copy_with` makes a changed copy.
    """

    # Slots, not a __dict__ (nor a pydantic model): an inbox may hold 10,000 of these, and each
    # object the cyclic GC tracks makes every full collection in the app slower.
    __slots__ = (*_ROW_FIELDS, "_path", "_raw", "_doc", *_DETAIL_DEFAULTS)

    state_key: str
    kind: CheckpointKind
    source: Literal["pipeline", "workflow"]
    workflow: str
    step: str
    prompt: str
    created_at: datetime
    approval_id: str | None
    run_id: str | None
    file_path: str | None
    note: str | None
    # Details: unset until first asked for (then ``__getattr__`` fills them in).
    token: str
    items: list[Any]
    preview: str | None
    has_subject: bool
    subject: Any
    response_schema: Any
    has_defaults: bool
    defaults: Any
    initiated_by: str | None
    required_approver: str | None
    require_different_approver: bool
    steps_before: list[StepRecord]

    def __init__(
        self,
        *,
        state_key: str,
        path: Path | str,
        kind: CheckpointKind,
        source: Literal["pipeline", "workflow"],
        workflow: str,
        step: str,
        prompt: str,
        created_at: datetime,
        approval_id: str | None = None,
        run_id: str | None = None,
        file_path: str | None = None,
        note: str | None = None,
        raw: bytes | None = None,
        doc: dict[str, Any] | None = None,
        **details: Any,
    ) -> None:
        self.state_key = state_key
        self._path = path
        self.kind = kind
        self.source = source
        self.workflow = workflow
        self.step = step
        self.prompt = prompt
        self.created_at = created_at
        self.approval_id = approval_id
        self.run_id = run_id
        self.file_path = file_path
        self.note = note
        self._raw = raw
        self._doc = doc
        if details or raw is None:
            unknown = details.keys() - _DETAIL_DEFAULTS.keys()
            if unknown:
                raise TypeError(f"unknown Checkpoint fields: {', '.join(sorted(unknown))}")
            # Built by hand (tests, copies): what is not given keeps its default.
            for name, default in _DETAIL_DEFAULTS.items():
                setattr(self, name, details.get(name, default))

    def __getattr__(self, name: str) -> Any:
        # Only reached for attributes not set yet: the details, on their first use.
        if name in _DETAIL_DEFAULTS and self._raw is not None:
            for detail, value in _details(self).items():
                setattr(self, detail, value)
            return object.__getattribute__(self, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def path(self) -> Path:
        """The state file."""
        if not isinstance(self._path, Path):
            self._path = Path(self._path)  # made on demand: a Path costs more than the rest of a row
        return self._path

    @property
    def short_id(self) -> str:
        """The approval id, else the first 8 characters of the state key's uuid."""
        if self.approval_id:
            return self.approval_id
        return self.state_key.rsplit("_", 1)[-1][:8]

    def copy_with(self, **changes: Any) -> Checkpoint:
        """A copy with some fields changed (row fields or details)."""
        unknown = changes.keys() - set(_ROW_FIELDS) - _DETAIL_DEFAULTS.keys()
        if unknown:
            raise TypeError(f"unknown Checkpoint fields: {', '.join(sorted(unknown))}")
        copy = object.__new__(Checkpoint)
        for name in self.__slots__:
            setattr(copy, name, getattr(self, name))  # details too: the copy must not recompute them
        for name, value in changes.items():
            setattr(copy, name, value)
        return copy

    def _given_details(self) -> dict[str, Any]:
        given = {}
        for name in _DETAIL_DEFAULTS:
            try:
                given[name] = object.__getattribute__(self, name)
            except AttributeError:
                pass
        return given

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Checkpoint):
            return NotImplemented
        if any(getattr(self, name) != getattr(other, name) for name in _ROW_FIELDS):
            return False
        if self._raw != other._raw or self._doc != other._doc:
            return False
        # Details not computed on one side come from the same bytes: compare those both have.
        mine, theirs = self._given_details(), other._given_details()
        return all(mine[name] == theirs[name] for name in mine.keys() & theirs.keys())

    def __hash__(self) -> int:
        return hash((self.state_key, self.created_at))

    def __repr__(self) -> str:
        return (
            f"Checkpoint(state_key={self.state_key!r}, kind={self.kind!r}, workflow={self.workflow!r}, "
            f"step={self.step!r}, prompt={self.prompt!r}, approval_id={self.approval_id!r})"
        )


class BrokenCheckpoint:
    """A resume-state file that cannot be listed as a checkpoint, and why."""

    __slots__ = ("_path", "created_at", "reason", "state_key")

    def __init__(self, *, state_key: str, path: Path | str, reason: str, created_at: datetime) -> None:
        self.state_key = state_key
        self._path = path
        self.reason = reason
        self.created_at = created_at

    @property
    def path(self) -> Path:
        """The state file."""
        if not isinstance(self._path, Path):
            self._path = Path(self._path)
        return self._path

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BrokenCheckpoint):
            return NotImplemented
        return (self.state_key, str(self._path), self.reason, self.created_at) == (
            other.state_key, str(other._path), other.reason, other.created_at
        )

    def __hash__(self) -> int:
        return hash((self.state_key, self.reason))

    def __repr__(self) -> str:
        return f"BrokenCheckpoint(state_key={self.state_key!r}, reason={self.reason!r})"


Entry = Checkpoint | BrokenCheckpoint


# -- reading files ---------------------------------------------------------------------------------


def _signature(st: os.stat_result) -> Signature:
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _read_bytes(path: str, dir_fd: int | None = None) -> tuple[bytes, os.stat_result]:
    """A state file's bytes and stat, without following symlinks; raises ValueError with a reason.

    ``path`` is relative to ``dir_fd`` when given. Raises FileNotFoundError when the file is gone
    (a checkpoint decided meanwhile).
    """
    try:
        # Non-blocking, so a FIFO named like a state file is refused instead of hanging the scan.
        fd = os.open(path, _OPEN_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        raise
    except OSError as error:
        if error.errno == 40:  # ELOOP: a symlink, possibly out of the directory
            raise ValueError("is a symbolic link (not followed)") from None
        raise ValueError(error.strerror or str(error)) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ValueError("is not a regular file")
        # One os.read sized from fstat: Python's buffered open() costs more than the read itself.
        want = min(st.st_size, _MAX_STATE_BYTES) + 1
        data = os.read(fd, want)
        if len(data) == want:  # the file grew since fstat (or is over the limit)
            data = _read_rest(fd, data)
    except OSError as error:
        raise ValueError(error.strerror or str(error)) from None
    finally:
        os.close(fd)
    return data, st


def _read_rest(fd: int, start: bytes) -> bytes:
    chunks = [start]
    total = len(start)
    while total <= _MAX_STATE_BYTES:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
    raise ValueError(f"larger than {_MAX_STATE_BYTES // (1024 * 1024)} MiB")


def _parse(data: bytes) -> Any:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("not UTF-8 text") from None
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    except ValueError as error:
        raise ValueError(f"not valid JSON ({error})") from None


def _mtime(path: str | Path) -> datetime:
    try:
        return datetime.fromtimestamp(os.lstat(path).st_mtime, tz=UTC)
    except OSError:
        return datetime.now(UTC)


def _parse_time(value: Any, st: os.stat_result) -> datetime:
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value)  # 3.11 reads a "Z" suffix itself
        except ValueError:
            pass
        else:
            # A stamp without an offset is UTC; a naive datetime could not be sorted with the rest.
            return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
    return datetime.fromtimestamp(st.st_mtime, tz=UTC)


def _index_state_key(path: str, dir_fd: int | None = None) -> tuple[Signature | None, str | None]:
    """An approval index's signature and the ``stateKey`` it points at (None when unreadable)."""
    try:
        data, st = _read_bytes(path, dir_fd)
        value = json.loads(data.decode("utf-8"))
    except (OSError, ValueError, RecursionError):  # corrupt, even absurdly nested: skipped
        return None, None
    key = value.get("stateKey") if isinstance(value, dict) else None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns), key if isinstance(key, str) else None


class _WorkflowFiles:
    """Workflow documents by path, loaded again only when the file changed."""

    def __init__(self) -> None:
        self._docs: dict[str, _WorkflowFile] = {}
        self._checked: set[str] = set()

    def new_scan(self) -> None:
        """Look at each file's signature again (once per scan)."""
        self._checked.clear()

    def get(self, path: str) -> tuple[dict[str, Any] | None, str | None]:
        """The document, or None and why it could not be loaded."""
        loaded = self.version(path)
        return loaded.doc, loaded.error

    def version(self, path: str) -> _WorkflowFile:
        """What is loaded for this path; the same object until the file changes."""
        if path not in self._checked:
            self._checked.add(path)
            try:
                sig: Signature | None = _signature(os.stat(path))
            except OSError:
                sig = None
            cached = self._docs.get(path)
            if cached is None or cached.signature != sig or sig is None:
                self._docs[path] = _WorkflowFile.load(path, sig)
        return self._docs[path]


class _WorkflowFile:
    """One loaded workflow file (or why it could not be loaded), with its steps by id."""

    __slots__ = ("doc", "error", "signature", "steps")

    def __init__(self, signature: Signature | None, doc: dict[str, Any] | None, error: str | None) -> None:
        self.signature = signature
        self.doc = doc
        self.error = error
        self.steps: dict[Any, dict[str, Any]] = {}
        listed = doc.get("steps") if doc is not None else None
        for step in listed if isinstance(listed, list) else []:
            if isinstance(step, dict) and isinstance(step.get("id"), str):
                self.steps.setdefault(step["id"], step)  # the first of a duplicated id, like a search

    @classmethod
    def load(cls, path: str, signature: Signature | None) -> _WorkflowFile:
        from .errors import LobsterError
        from .workflow.loader import load_workflow

        try:
            if not stat.S_ISREG(os.stat(path).st_mode):
                raise ValueError("Workflow path is not a file")  # a FIFO or device would block
            doc = load_workflow(path)
            if not isinstance(doc, dict):
                return cls(signature, None, "workflow file is not an object")
            return cls(signature, doc, None)
        except (LobsterError, OSError, ValueError, RecursionError) as error:
            return cls(signature, None, getattr(error, "message", None) or str(error))


_PIPELINE_STATE_VALID: Callable[[dict[str, Any]], bool] | None = None
_WORKFLOW_STATE_VALID: Callable[[Any], bool] | None = None


def _load_state_checks() -> None:
    """Import the runtime's resume-state checks once (not at import: ``lobster run`` starts fast)."""
    global _PIPELINE_STATE_VALID, _WORKFLOW_STATE_VALID
    if _PIPELINE_STATE_VALID is None or _WORKFLOW_STATE_VALID is None:
        from .runner import _pipeline_state_valid
        from .workflow.resume import _workflow_state_valid

        _PIPELINE_STATE_VALID, _WORKFLOW_STATE_VALID = _pipeline_state_valid, _workflow_state_valid


# -- scanning --------------------------------------------------------------------------------------


_Cached = tuple[Signature | None, str | None, object, "Entry | None"]
"""What a scan keeps of a state file: its signature, its approval id, the workflow file it was
built with (compared by identity; None for pipelines) and the entry (None: consumed or gone)."""


class CheckpointScanner:
    """Scans one state directory again and again, re-reading only the files that changed.

    A file is read again when its inode, size, mtime or ctime differ from the last scan (atomic
    writes rename a new inode in place), when its approval id changed, or when its workflow file
    changed. Safe to call from several threads (scans run one at a time).
    """

    def __init__(self, state: StateStore) -> None:
        self.state = state
        self._lock = threading.Lock()
        self._states: dict[str, _Cached] = {}
        self._indexes: dict[str, tuple[Signature | None, str | None]] = {}
        self._files = _WorkflowFiles()
        self._prefix = ""  # the directory's path with a trailing separator

    def scan(self) -> list[Entry]:
        """Every pending checkpoint (and broken state file) in the directory, newest first."""
        with self._lock:
            _load_state_checks()
            try:
                dir_fd = os.open(self.state.root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
            except FileNotFoundError:
                self._states, self._indexes = {}, {}
                return []
            try:
                # Files are opened relative to the directory: no path walk per file.
                return self._scan(dir_fd)
            finally:
                os.close(dir_fd)

    def _scan(self, dir_fd: int) -> list[Entry]:
        indexes: list[os.DirEntry[str]] = []
        states: list[os.DirEntry[str]] = []
        with os.scandir(dir_fd) as listing:
            for dir_entry in listing:
                name = dir_entry.name
                if name.endswith(".json"):
                    if name.startswith(RESUME_PREFIXES):
                        states.append(dir_entry)
                    elif name.startswith(APPROVAL_PREFIX) and dir_entry.is_file(follow_symlinks=False):
                        indexes.append(dir_entry)
        self._files.new_scan()
        self._prefix = os.path.join(self.state.root, "")
        ids = self._approval_ids(indexes, dir_fd)
        before = self._states
        kept: dict[str, _Cached] = {}
        found: list[Entry] = []
        for dir_entry in states:
            name = dir_entry.name
            key = name[:-5]
            approval_id = ids.get(key)
            cached = before.get(name)
            if cached is None or not self._still_valid(cached, dir_entry, approval_id):
                cached = self._read(name, dir_fd, key, approval_id)
            kept[name] = cached
            if cached[3] is not None:
                found.append(cached[3])
        self._states = kept
        found.sort(key=_created_at, reverse=True)
        return found

    def _approval_ids(self, indexes: list[os.DirEntry[str]], dir_fd: int) -> dict[str, str]:
        ids: dict[str, str] = {}
        before = self._indexes
        kept: dict[str, tuple[Signature | None, str | None]] = {}
        start = len(APPROVAL_PREFIX)
        for dir_entry in indexes:
            name = dir_entry.name
            cached = before.get(name)
            if cached is None or cached[0] is None or cached[0] != _lstat_signature(dir_entry):
                cached = _index_state_key(name, dir_fd)
            kept[name] = cached
            if cached[1] is not None:
                ids.setdefault(cached[1], name[start:-5])
        self._indexes = kept
        return ids

    def _still_valid(self, cached: _Cached, dir_entry: os.DirEntry[str], approval_id: str | None) -> bool:
        signature, old_id, workflow_file, entry = cached
        if signature is None or old_id != approval_id or signature != _lstat_signature(dir_entry):
            return False
        if isinstance(entry, Checkpoint) and entry.file_path is not None:
            return self._files.version(entry.file_path) is workflow_file
        return True

    def _read(self, name: str, dir_fd: int, key: str, approval_id: str | None) -> _Cached:
        path = self._prefix + name
        try:
            raw, st = _read_bytes(name, dir_fd)
        except FileNotFoundError:
            return (None, approval_id, None, None)  # decided since the directory was listed
        except ValueError as error:
            return (None, approval_id, None, _broken(key, path, str(error), None))
        entry = _entry(key, path, raw, st, approval_id, self._files)
        used = None
        if isinstance(entry, Checkpoint) and entry.file_path is not None:
            used = self._files.version(entry.file_path)
        return ((st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns), approval_id, used, entry)


def _lstat_signature(dir_entry: os.DirEntry[str]) -> Signature | None:
    try:
        return _signature(dir_entry.stat(follow_symlinks=False))
    except OSError:
        return None


def _created_at(entry: Entry) -> datetime:
    return entry.created_at


def scan_checkpoints(state: StateStore) -> list[Entry]:
    """Every pending checkpoint (and broken state file) in the directory, newest first."""
    return CheckpointScanner(state).scan()


def load_checkpoint(
    path: Path, ids: dict[str, str] | None = None, files: _WorkflowFiles | None = None
) -> Entry | None:
    """One state file as a checkpoint; None for consumed markers and vanished files."""
    _load_state_checks()
    key = path.stem
    approval_id = (ids or {}).get(key)
    try:
        raw, st = _read_bytes(str(path))
    except FileNotFoundError:
        return None
    except ValueError as error:
        if not path.exists() and not path.is_symlink():
            return None
        return _broken(key, str(path), str(error), None)
    return _entry(key, str(path), raw, st, approval_id, files or _WorkflowFiles())


def _broken(key: str, path: str, reason: str, st: os.stat_result | None) -> BrokenCheckpoint:
    created = datetime.fromtimestamp(st.st_mtime, tz=UTC) if st is not None else _mtime(path)
    return BrokenCheckpoint(state_key=key, path=path, reason=reason, created_at=created)


class _Broken(Exception):
    pass


def _entry(
    key: str, path: str, raw: bytes, st: os.stat_result, approval_id: str | None, files: _WorkflowFiles
) -> Entry | None:
    try:
        data = _parse(raw)
    except ValueError as error:
        return _broken(key, path, str(error), st)
    if is_consumed_marker(data):
        return None
    try:
        if key.startswith("pipeline_resume_"):
            return _pipeline_row(key, path, raw, data, st, approval_id)
        return _workflow_row(key, path, raw, data, st, approval_id, files)
    except _Broken as broken:
        return _broken(key, path, str(broken), st)


def _optional_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _pipeline_row(
    key: str, path: str, raw: bytes, data: Any, st: os.stat_result, approval_id: str | None
) -> Checkpoint:
    assert _PIPELINE_STATE_VALID is not None
    if not isinstance(data, dict) or not _PIPELINE_STATE_VALID(data):
        raise _Broken("not a valid pipeline resume state")
    stages = data["pipeline"]
    gate = _pipeline_gate(data)
    return Checkpoint(
        state_key=key,
        path=path,
        kind="input" if data.get("haltType") == "input_request" else "approval",
        source="pipeline",
        workflow=" | ".join(stage["raw"] for stage in stages),
        step=gate[1]["name"] if gate[1] else "?",
        prompt=data["prompt"] if isinstance(data.get("prompt"), str) else "Approve?",
        created_at=_parse_time(data.get("createdAt"), st),
        approval_id=approval_id,
        run_id=_optional_str(data.get("runId")),
        raw=raw,
    )


def _pipeline_gate(data: dict[str, Any]) -> tuple[int, dict[str, Any] | None]:
    stages = data["pipeline"]
    at = data["resumeAtIndex"]
    gate_index = at if data.get("resumeMode") == "same_stage" else at - 1
    return gate_index, stages[gate_index] if 0 <= gate_index < len(stages) else None


def _workflow_row(
    key: str,
    path: str,
    raw: bytes,
    data: Any,
    st: os.stat_result,
    approval_id: str | None,
    files: _WorkflowFiles,
) -> Checkpoint:
    assert _WORKFLOW_STATE_VALID is not None
    if not _WORKFLOW_STATE_VALID(data):
        raise _Broken("not a valid workflow resume state")
    file_path = data["filePath"]
    workflow_file = files.version(file_path)
    doc, load_error = workflow_file.doc, workflow_file.error
    is_input = "inputStepId" in data
    step_id = data["inputStepId"] if is_input else str(data.get("approvalStepId", ""))
    step = workflow_file.steps.get(step_id)
    if is_input:
        spec = step.get("input") if step and isinstance(step.get("input"), dict) else {}
        prompt = _input_metadata(data).get("prompt") or spec.get("prompt")
        prompt = prompt if isinstance(prompt, str) else f"Input for {step_id}"
    else:
        result = data["steps"].get(step_id, {})
        prompt = _approval_prompt(step, result) if step is not None and isinstance(result, dict) else None
        prompt = prompt or f"Approve {step_id}?"
    return Checkpoint(
        state_key=key,
        path=path,
        kind="input" if is_input else "approval",
        source="workflow",
        workflow=doc["name"] if doc and isinstance(doc.get("name"), str) else Path(file_path).stem,
        step=step_id,
        prompt=prompt,
        created_at=_parse_time(data.get("createdAt"), st),
        approval_id=approval_id,
        run_id=_optional_str(data.get("runId")),
        file_path=file_path,
        note=f"workflow file unavailable: {load_error}" if load_error else None,
        raw=raw,
        doc=doc,
    )


def _find_step(doc: dict[str, Any] | None, step_id: str) -> dict[str, Any] | None:
    steps = doc.get("steps") if doc and isinstance(doc.get("steps"), list) else []
    return next((s for s in steps if isinstance(s, dict) and s.get("id") == step_id), None)


def _input_metadata(data: dict[str, Any]) -> dict[str, Any]:
    if data.get("inputKind") == "pipeline_command":
        metadata: dict[str, Any] = data["pipelineInput"]["commandInput"]["pending"]["metadata"]
        return metadata
    return {}


def _approval_prompt(step: dict[str, Any], result: dict[str, Any]) -> str | None:
    """The prompt ``build_approval_request`` would give, without building the rest of the request.

    A row needs only the prompt; the items and preview (which may serialise a large output) wait
    until the checkpoint is looked at. ``tests/core/test_checkpoints.py`` keeps the two in step.
    """
    value = result.get("json", UNDEFINED)
    if isinstance(value, dict):
        nested = value.get("requiresApproval")
        if isinstance(nested, dict) and isinstance(nested.get("prompt"), str) and nested["prompt"]:
            return str(nested["prompt"])
        if isinstance(value.get("prompt"), str) and value["prompt"]:
            return str(value["prompt"])
    approval = step.get("approval")
    if isinstance(approval, dict) and isinstance(approval.get("prompt"), str) and approval["prompt"]:
        return str(approval["prompt"])
    if isinstance(approval, str) and approval.strip() and approval != "required":
        return approval
    return None


# -- details, on first use ---------------------------------------------------------------------------


def _details(checkpoint: Checkpoint) -> dict[str, Any]:
    """Everything but the row, from the bytes the scan read."""
    from .tokens import encode_token, kind_for_state_key

    assert checkpoint._raw is not None
    data = _parse(checkpoint._raw)
    kind: TokenKind = "pipeline-resume" if checkpoint.source == "pipeline" else kind_for_state_key(checkpoint.state_key)
    fields = dict(_DETAIL_DEFAULTS, token=encode_token(kind, checkpoint.state_key))
    if checkpoint.source == "pipeline":
        _pipeline_details(fields, data)
    else:
        _workflow_details(fields, data, checkpoint._doc, checkpoint.step)
    return fields


def _pipeline_details(fields: dict[str, Any], data: dict[str, Any]) -> None:
    stages = data["pipeline"]
    gate_index, gate = _pipeline_gate(data)
    fields["steps_before"] = [
        StepRecord(step_id=f"{i + 1}:{stage['name']}", kind="stage", command=stage["raw"])
        for i, stage in enumerate(stages[: max(gate_index, 0)])
    ]
    if data.get("haltType") == "input_request":
        fields["response_schema"] = data.get("inputSchema")
        same_stage = data.get("resumeMode") == "same_stage"
        metadata = data.get("commandInput", {}).get("pending", {}).get("metadata", {}) if same_stage else {}
        if "subject" in metadata:
            fields.update(has_subject=True, subject=metadata["subject"])
        if "defaults" in metadata:
            fields.update(has_defaults=True, defaults=metadata["defaults"])
    else:
        fields["items"] = list(data["items"])
        if gate is not None and gate["name"] == "approve":
            fields["preview"] = _approve_preview(data["items"], gate["args"])


def _approve_preview(items: list[Any], args: dict[str, Any]) -> str | None:
    """Rebuild ``approve --preview-from-stdin`` text: pipeline states do not store it."""
    from .jsvalues import js_truthy
    from .pipeline.commands.gates import approve_preview

    if not js_truthy(args.get("preview-from-stdin", args.get("previewFromStdin"))):
        return None
    limit = args.get("limit", args.get("previewLimit", args.get("preview-limit")))
    return approve_preview(items, limit) or None


def _workflow_details(fields: dict[str, Any], data: dict[str, Any], doc: dict[str, Any] | None, step_id: str) -> None:
    results: dict[str, Any] = data["steps"]
    steps = doc.get("steps") if doc and isinstance(doc.get("steps"), list) else []
    step = _find_step(doc, step_id)
    fields["steps_before"] = _records(results, steps)
    if "inputStepId" in data:
        _input_fields(fields, data, step)
    else:
        _approval_fields(fields, data, step, results.get(step_id, {}))


def _records(results: dict[str, Any], steps: list[Any]) -> list[StepRecord]:
    order = [s.get("id") for s in steps if isinstance(s, dict)]
    ordered = [sid for sid in order if sid in results] + [sid for sid in results if sid not in order]
    records = []
    for sid in ordered:
        result = results[sid]
        if not isinstance(result, dict):
            continue
        status = "skipped" if result.get("skipped") else "failed" if result.get("error") else "ok"
        step = next((s for s in steps if isinstance(s, dict) and s.get("id") == sid), {})
        command = step.get("run") or step.get("command") or step.get("pipeline") or step.get("workflow")
        records.append(
            StepRecord(
                step_id=str(sid),
                kind="step",
                command=command if isinstance(command, str) else None,
                stdout=result.get("stdout") if isinstance(result.get("stdout"), str) else None,
                json_value=result.get("json"),
                has_json="json" in result,
                status=status,
            )
        )
    return records


def _input_fields(fields: dict[str, Any], data: dict[str, Any], step: dict[str, Any] | None) -> None:
    spec = step.get("input") if step and isinstance(step.get("input"), dict) else {}
    metadata = _input_metadata(data)
    fields["response_schema"] = data.get("inputSchema")
    if "inputSubject" in data:
        fields.update(has_subject=True, subject=data["inputSubject"])
    defaults = metadata.get("defaults", spec.get("defaults", UNDEFINED))
    if defaults is not UNDEFINED:
        fields.update(has_defaults=True, defaults=defaults)


def _approval_fields(fields: dict[str, Any], data: dict[str, Any], step: dict[str, Any] | None, result: Any) -> None:
    from .workflow.executor import build_approval_request

    identity = data.get("approvalIdentity") if isinstance(data.get("approvalIdentity"), dict) else {}
    if step is not None and isinstance(result, dict):
        request, _ = build_approval_request(step, result, {})
    else:
        request = {"items": []}
    fields["items"] = list(request.get("items", []))
    fields["preview"] = request.get("preview")
    fields["initiated_by"] = _optional_str(identity.get("initiatedBy"))
    fields["required_approver"] = _optional_str(identity.get("requiredApprover"))
    fields["require_different_approver"] = identity.get("requireDifferentApprover") is True


def identity_problem(checkpoint: Checkpoint, approver: str | None) -> str | None:
    """Why ``approver`` may not approve this checkpoint (R-WF-64), or None when allowed."""
    from .errors import LobsterParseError
    from .workflow.executor import check_approver

    identity: dict[str, Any] = {}
    if checkpoint.initiated_by:
        identity["initiatedBy"] = checkpoint.initiated_by
    if checkpoint.required_approver:
        identity["requiredApprover"] = checkpoint.required_approver
    if checkpoint.require_different_approver:
        identity["requireDifferentApprover"] = True
    try:
        check_approver(checkpoint.step, identity, approver)
    except LobsterParseError as error:
        return error.message
    return None
