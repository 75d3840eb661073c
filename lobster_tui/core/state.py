"""The state directory (spec §8): resume states, approval indexes, user keys, locks.

File names, JSON shapes and the lock protocol are the reference runtime's, so a directory can be
shared with it: a checkpoint written by either runtime can be listed, claimed and resumed by the
other. Writes are atomic (temp file, fsync, rename, directory fsync); new files are 0600 and the
directory is created 0700.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import stat as stat_module
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .cancel import CancelSignal
from .errors import LobsterRuntimeError
from .jsvalues import UNDEFINED, dumps_compact, dumps_pretty, loads, stable_stringify

CONSUMED_MARKER_TYPE = "lobster.consumed-resume-state.v1"
RESUME_PREFIXES = ("pipeline_resume_", "workflow_resume_", "workflow-resume_")
APPROVAL_PREFIX = "approval_"

_LOCK_POLL_SECONDS = 0.010
_LOCK_HEARTBEAT_SECONDS = 0.250
_LOCK_STALE_SECONDS = 30.0
_APPROVAL_ID_ATTEMPTS = 16
_INDEX_WRITE_FAILURES = {"EACCES", "EDQUOT", "EIO", "ENOSPC", "EPERM", "EROFS"}


def now_iso() -> str:
    """UTC time stamp with milliseconds and ``Z`` (R-GEN-9)."""
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now * 1000) % 1000:03d}Z"


def random_hex(nbytes: int) -> str:
    """``nbytes`` random bytes as hex, from the OS CSPRNG (what ``secrets.token_hex`` does,
    without importing ``secrets``, whose hashlib/hmac/random imports cost every start-up)."""
    return os.urandom(nbytes).hex()


def uuid4_text() -> str:
    """A random version-4 UUID in canonical lowercase form, like ``str(uuid.uuid4())``."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _remove_tree(path: Path) -> None:
    """Remove a lock directory. It normally holds just its ``owner`` file, so that case is done by
    hand: importing ``shutil`` (bz2, lzma) would cost every resume a few milliseconds."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(path):
            if entry.is_dir(follow_symlinks=False):
                break
            os.unlink(entry.path)
        else:
            os.rmdir(path)
            return
    import shutil

    shutil.rmtree(path, ignore_errors=True)


def default_state_dir(env: dict[str, str] | None = None) -> Path:
    """``LOBSTER_STATE_DIR`` (trimmed, when non-empty) else ``~/.lobster/state`` (R-STATE-1)."""
    source = os.environ if env is None else env
    configured = (source.get("LOBSTER_STATE_DIR") or "").strip()
    if configured:
        return Path(configured).expanduser()
    home = source.get("HOME") or os.path.expanduser("~")
    return Path(home) / ".lobster" / "state"


_LONE_SURROGATE: re.Pattern[str] | None = None  # compiled on first need (0.7 ms: a wide range)
_KEY_UNSAFE = re.compile(r"[^a-z0-9._-]+")
_UNDERSCORES = re.compile(r"_+")


def _escape_lone_surrogates(text: str) -> str:
    global _LONE_SURROGATE
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    if _LONE_SURROGATE is None:
        _LONE_SURROGATE = re.compile("[\ud800-\udfff]")
    return _LONE_SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def normalise_key(key: str) -> str:
    """Map a state key to its file stem (R-STATE-3); raises on keys that normalise to nothing."""
    text = _UNDERSCORES.sub("_", _KEY_UNSAFE.sub("_", str(key).lower()))
    if text.startswith("_"):
        text = text[1:]
    if text.endswith("_"):
        text = text[:-1]
    if not text:
        raise LobsterRuntimeError("state key is empty/invalid")
    return text


def is_consumed_marker(value: Any) -> bool:
    """True for the tombstone a claimed resume state is replaced with (R-STATE-22)."""
    return isinstance(value, dict) and value.get("type") == CONSUMED_MARKER_TYPE


def _process_start_time(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            stat = handle.read()
    except OSError:
        return ""
    # The command name (field 2) may contain spaces; fields after it follow the last ')'.
    fields = stat[stat.rfind(")") + 2 :].split()
    return fields[19] if len(fields) > 19 else ""


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def read_regular_file(path: Path, limit: int | None = None) -> bytes:
    """The bytes of ``path`` if it is a regular file, read without following a final symlink.

    FileNotFoundError when missing; ValueError for a symlink, FIFO, device or directory (opened
    non-blocking, so a FIFO is refused instead of blocking the reader); other OSErrors propagate.
    """
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.EMLINK):
            raise ValueError(f"{path.name} is a symbolic link (not followed)") from None
        if error.errno in (errno.ENXIO, errno.EISDIR):
            raise ValueError(f"{path.name} is not a regular file") from None
        raise
    if not stat_module.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ValueError(f"{path.name} is not a regular file")
    with os.fdopen(fd, "rb") as handle:
        return handle.read() if limit is None else handle.read(limit)


class _Heartbeat:
    """One thread per process touches the owner file of every lock it holds, each
    ``_LOCK_HEARTBEAT_SECONDS``; it sleeps while none is held.

    A thread per lock cost a thread start per acquisition (four on a resume, a millisecond each on
    a busy machine) for locks that are nearly always released long before their first beat.
    """

    def __init__(self) -> None:
        import threading

        self._owners: dict[object, Path] = {}
        self._changed = threading.Condition()
        self._pid = 0  # the process whose thread runs: a forked child starts its own

    def hold(self, owner: Path) -> object:
        """Start touching ``owner``; returns the handle :meth:`drop` takes."""
        handle = object()
        with self._changed:
            if not self._owners:
                self._changed.notify()  # the thread sleeps until something is held
            self._owners[handle] = owner
            if self._pid != os.getpid():
                import threading

                self._pid = os.getpid()
                threading.Thread(target=self._run, name="lobster-lock-heartbeat", daemon=True).start()
        return handle

    def drop(self, handle: object) -> None:
        with self._changed:
            self._owners.pop(handle, None)

    def _run(self) -> None:
        while True:
            with self._changed:
                while not self._owners:
                    self._changed.wait()
                # A beat after the first hold, then every beat while any is held (a lock taken
                # between beats is touched early, never late).
                deadline = time.monotonic() + _LOCK_HEARTBEAT_SECONDS
                while (left := deadline - time.monotonic()) > 0:
                    self._changed.wait(left)
                owners = list(self._owners.values())
            for owner in owners:
                with contextlib.suppress(OSError):
                    os.utime(owner)


_HEARTBEAT = _Heartbeat()


class _DirectoryLock:
    """The reference's per-file directory lock (R-STATE-7), so both runtimes exclude each other."""

    def __init__(self, target: Path, signal: CancelSignal | None, max_wait: float | None) -> None:
        self.lock_dir = target.with_name(target.name + ".lock")
        self.owner_file = self.lock_dir / "owner"
        self.signal = signal
        self.max_wait = max_wait
        self.owner_text = ""
        self._stop_heartbeat: Any = None

    def acquire(self) -> bool:
        """Take the lock; False when the directory is read-only (callers then read unlocked)."""
        deadline = None if self.max_wait is None else time.monotonic() + self.max_wait
        pid = os.getpid()
        while True:
            try:
                os.mkdir(self.lock_dir, 0o700)
            except FileExistsError:
                if not self._reclaim_if_stale():
                    if self.signal is not None:
                        self.signal.raise_if_aborted()
                    if deadline is not None and time.monotonic() > deadline:
                        raise LobsterRuntimeError(f"Timed out waiting for state lock {self.lock_dir.name}")
                    time.sleep(_LOCK_POLL_SECONDS)
                continue
            except PermissionError:
                return False
            except OSError as error:
                if error.errno in (30,):  # EROFS
                    return False
                raise
            self.owner_text = f"{pid}:{_process_start_time(pid)}:{random_hex(6)}\n"
            fd = os.open(self.owner_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(self.owner_text)
            self._start_heartbeat()
            return True

    def _start_heartbeat(self) -> None:
        # Holders touch the owner file so waiters on hosts without /proc can tell it is alive.
        self._stop_heartbeat = _HEARTBEAT.hold(self.owner_file)

    def _reclaim_if_stale(self) -> bool:
        try:
            stat = os.lstat(self.lock_dir)
        except FileNotFoundError:
            return True
        if not stat_module.S_ISDIR(stat.st_mode):
            # A file, FIFO or symlink is never a lock (locks are directories): remove the entry
            # itself, never what a link points to, instead of waiting on it forever.
            with contextlib.suppress(OSError):
                os.unlink(self.lock_dir)
            return True
        if not self._is_stale(stat.st_mtime):
            return False
        marker = self.lock_dir / ".reclaiming"
        try:
            os.mkdir(marker)
        except OSError:
            return False
        try:
            current = os.stat(self.lock_dir)
            if current.st_ino == stat.st_ino:
                _remove_tree(self.lock_dir)
        finally:
            with contextlib.suppress(OSError):
                os.rmdir(marker)
        return True

    def _is_stale(self, dir_mtime: float) -> bool:
        try:
            text = read_regular_file(self.owner_file, limit=4096).decode("utf-8", "replace")
            owner_mtime = os.lstat(self.owner_file).st_mtime
        except (OSError, ValueError):
            return time.time() - dir_mtime >= _LOCK_STALE_SECONDS
        parts = text.strip().split(":")
        if len(parts) != 3 or not parts[0].isdigit():
            return time.time() - dir_mtime >= _LOCK_STALE_SECONDS
        pid = int(parts[0])
        if not _pid_alive(pid):
            return True
        if parts[1]:
            started = _process_start_time(pid)
            return bool(started) and started != parts[1]
        if time.time() - owner_mtime < _LOCK_STALE_SECONDS:
            return False
        time.sleep(_LOCK_HEARTBEAT_SECONDS)
        try:
            return os.stat(self.owner_file).st_mtime == owner_mtime
        except OSError:
            return True

    def release(self) -> None:
        if self._stop_heartbeat is not None:
            _HEARTBEAT.drop(self._stop_heartbeat)
            self._stop_heartbeat = None
        try:
            if self.owner_file.read_text(encoding="utf-8") != self.owner_text:
                return
        except OSError:
            return
        detached = self.lock_dir.with_name(
            f"{self.lock_dir.name}.release-{os.getpid()}-{random_hex(6)}"
        )
        try:
            os.rename(self.lock_dir, detached)
        except OSError:
            return
        _remove_tree(detached)


class StateStore:
    """One state directory. All file access of the runtime goes through here."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        # Index ids a scan found per state key (only non-empty finds): a resume scans once for its
        # audit line and its clean-up reuses the find (see remove_approval_indexes_for_key).
        self._found_indexes: dict[str, list[str]] = {}

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> StateStore:
        return cls(default_state_dir(env))

    # -- paths -------------------------------------------------------------------------------

    def ensure(self) -> None:
        """Create the directory (and parents) on demand, private to its owner."""
        if not self.root.is_dir():
            self.root.mkdir(parents=True, exist_ok=True, mode=0o700)

    def key_path(self, key: str) -> Path:
        return self.root / f"{normalise_key(key)}.json"

    # -- raw JSON files ----------------------------------------------------------------------

    def _read_path(self, path: Path) -> Any:
        """Parsed JSON of ``path``; UNDEFINED when missing; ValueError when malformed.

        Symbolic links, FIFOs, devices and directories named like state files are malformed, not
        followed or waited on: nothing planted in the directory leads a read outside it.
        """
        try:
            data = read_regular_file(path)
        except FileNotFoundError:
            return UNDEFINED
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ValueError(f"{path.name} is not UTF-8: {error}") from None
        try:
            return loads(text)
        except RecursionError:
            raise ValueError(f"{path.name} is nested too deeply") from None

    def _write_path(self, path: Path, text: str) -> None:
        # Lone surrogates (from JSON "\ud800" escapes or undecodable argv bytes) cannot be encoded as
        # UTF-8; the text is JSON, so writing them as \uXXXX escapes stores exactly the same value.
        text = _escape_lone_surrogates(text)
        self.ensure()
        mode = 0o600
        with contextlib.suppress(OSError):
            mode = os.stat(path).st_mode & 0o777
        temp = path.with_name(f".{path.name}.{random_hex(6)}.tmp")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(temp, mode)
            os.replace(temp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise
        self._fsync_dir()

    def _fsync_dir(self) -> None:
        with contextlib.suppress(OSError):
            dir_fd = os.open(self.root, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)

    @contextlib.contextmanager
    def locked(
        self, key: str, signal: CancelSignal | None = None, max_wait: float | None = None
    ) -> Iterator[None]:
        """Hold the per-file lock of ``key`` (R-STATE-7)."""
        self.ensure()
        lock = _DirectoryLock(self.key_path(key), signal, max_wait)
        held = lock.acquire()
        try:
            yield
        finally:
            if held:
                lock.release()

    # -- user keys (state.get / state.set / diff.last) -----------------------------------------

    def read_value(self, key: str) -> Any:
        """The JSON stored under ``key``; UNDEFINED when absent; ValueError when malformed."""
        return self._read_path(self.key_path(key))

    def write_value(self, key: str, value: Any) -> None:
        """Store ``value`` under ``key`` as pretty JSON plus newline, atomically (R-STATE-4/6)."""
        self._write_path(self.key_path(key), dumps_pretty(value) + "\n")

    def delete_key(self, key: str) -> bool:
        try:
            os.unlink(self.key_path(key))
        except FileNotFoundError:
            return False
        self._fsync_dir()
        return True

    # -- resume states and claims ---------------------------------------------------------------

    def new_resume_key(self, kind: str) -> str:
        """A fresh ``pipeline_resume_<uuid>`` / ``workflow_resume_<uuid>`` key."""
        prefix = "pipeline_resume_" if kind == "pipeline" else "workflow_resume_"
        return f"{prefix}{uuid4_text()}"

    def claim(self, key: str, snapshot: Any, signal: CancelSignal | None = None) -> bool:
        """Replace the state with a consumed marker iff it still equals ``snapshot`` (§9.6)."""
        with self.locked(key, signal):
            try:
                current = self.read_value(key)
            except ValueError:
                return False
            if current is UNDEFINED or stable_stringify(current) != stable_stringify(snapshot):
                return False
            marker = {
                "type": CONSUMED_MARKER_TYPE,
                "consumedAt": now_iso(),
                "claimId": random_hex(16),
            }
            self.write_value(key, marker)
            return True

    def delete_resume_state(self, key: str, *, bounded: bool = False) -> None:
        """Remove a state or its marker; ``bounded`` limits the lock wait (cancelled runs)."""
        try:
            with self.locked(key, max_wait=0.1 if bounded else None):
                self.delete_key(key)
        except LobsterRuntimeError:
            if not bounded:
                raise

    # -- approval short-ID index (§8.2) -------------------------------------------------------------

    def approval_index_path(self, approval_id: str) -> Path:
        return self.root / f"{APPROVAL_PREFIX}{approval_id}.json"

    def create_approval_index(self, state_key: str) -> str | None:
        """Publish ``approval_<id>.json`` with exclusive create; None when the FS cannot."""
        import errno

        self.ensure()
        payload = dumps_compact({"stateKey": state_key, "createdAt": now_iso()}) + "\n"
        for _ in range(_APPROVAL_ID_ATTEMPTS):
            approval_id = random_hex(4)
            target = self.approval_index_path(approval_id)
            temp = target.with_name(f".{target.name}.{random_hex(6)}.tmp")
            try:
                fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    handle.write(payload)
                    handle.flush()
                    os.fsync(handle.fileno())
                try:
                    # A hard link never replaces an existing index, unlike rename.
                    os.link(temp, target)
                except FileExistsError:
                    continue
                finally:
                    with contextlib.suppress(OSError):
                        os.unlink(temp)
            except OSError as error:
                name = errno.errorcode.get(error.errno or 0, "")
                if name in _INDEX_WRITE_FAILURES or name in ("EXDEV", "ENOTSUP", "EOPNOTSUPP", "EMLINK"):
                    return None
                raise
            self._fsync_dir()
            return approval_id
        raise LobsterRuntimeError("Could not allocate a unique approval ID")

    def find_state_key_by_approval_id(self, approval_id: str) -> str | None:
        """R-STATE-13: characters outside [a-f0-9] are dropped; anything unreadable is not found."""
        clean = re.sub(r"[^a-f0-9]", "", str(approval_id))
        if not clean:
            return None
        try:
            data = self._read_path(self.approval_index_path(clean))
        except (ValueError, OSError):
            return None
        if isinstance(data, dict) and isinstance(data.get("stateKey"), str):
            return data["stateKey"]
        return None

    def remove_approval_index(self, approval_id: str) -> None:
        clean = re.sub(r"[^a-f0-9]", "", str(approval_id))
        if clean:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.approval_index_path(clean))

    def approval_ids_for_key(self, state_key: str) -> list[str]:
        """Every index pointing at ``state_key`` (corrupt index files are skipped)."""
        found: list[str] = []
        for path in self.iter_approval_index_files():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError, RecursionError):  # corrupt, even absurdly nested: skipped
                continue
            if isinstance(data, dict) and data.get("stateKey") == state_key:
                found.append(path.stem[len(APPROVAL_PREFIX) :])
        if found:
            self._found_indexes[state_key] = list(found)
        return found

    def remove_approval_indexes_for_key(self, state_key: str) -> None:
        """Remove every index of ``state_key``: we never leave one pointing at a dead state.

        A key gets its one index when its state is published, before any token for it exists, so
        indexes an earlier scan found are all it will ever have: those are checked and removed
        without scanning the directory again. Without an earlier find (the index may not have
        existed yet), the directory is scanned.
        """
        known = self._found_indexes.pop(state_key, None)
        if known is None:
            ids = self.approval_ids_for_key(state_key)
            self._found_indexes.pop(state_key, None)
        else:  # each still has to name this key (ids are random: one could be reused meanwhile)
            ids = [approval_id for approval_id in known if self.find_state_key_by_approval_id(approval_id) == state_key]
        for approval_id in ids:
            self.remove_approval_index(approval_id)

    # -- listing ------------------------------------------------------------------------------

    def iter_approval_index_files(self) -> Iterator[Path]:
        try:
            entries = list(os.scandir(self.root))
        except FileNotFoundError:
            return
        for entry in entries:
            name = entry.name
            if name.startswith(APPROVAL_PREFIX) and name.endswith(".json") and entry.is_file(follow_symlinks=False):
                yield Path(entry.path)
