"""Health checks of a state directory that both shells report (``lobster doctor``, the TUI)."""

from __future__ import annotations

import os
import stat
from pathlib import Path


def state_dir_warnings(root: Path) -> list[str]:
    """Problems that let someone else read or forge checkpoints: loose modes, foreign owners."""
    warnings: list[str] = []
    try:
        info = os.stat(root)
    except FileNotFoundError:
        return warnings
    except OSError as error:
        return [f"state directory {root} cannot be read: {error.strerror}"]
    uid = os.getuid()
    if info.st_mode & stat.S_IWOTH:
        warnings.append(f"state directory {root} is world-writable (mode {stat.S_IMODE(info.st_mode):o}); run: chmod 700 {root}")
    elif info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        warnings.append(f"state directory {root} is readable by others (mode {stat.S_IMODE(info.st_mode):o}); run: chmod 700 {root}")
    if info.st_uid != uid:
        warnings.append(f"state directory {root} is owned by uid {info.st_uid}, not you (uid {uid})")
    try:
        entries = list(os.scandir(root))
    except OSError:
        return warnings
    foreign = [e.name for e in entries if e.is_file(follow_symlinks=False) and e.stat(follow_symlinks=False).st_uid != uid]
    loose = [
        e.name
        for e in entries
        if e.is_file(follow_symlinks=False) and e.name.endswith(".json") and e.stat(follow_symlinks=False).st_mode & stat.S_IWOTH
    ]
    if foreign:
        warnings.append(f"{len(foreign)} file(s) in the state directory are owned by another user, e.g. {foreign[0]}")
    if loose:
        warnings.append(f"{len(loose)} file(s) in the state directory are world-writable, e.g. {loose[0]}")
    return warnings
