"""The reviewer's settings: ``$XDG_CONFIG_HOME/lobster-tui/config.toml`` (``~/.config/...`` by default).

Everything is optional; a bad value never stops the app. Each problem becomes one sentence naming
the key (the app shows them as a notification at start, ``lobster-tui`` also prints them on
stderr) and that key falls back to its default while the rest of the file still applies::

    theme = "gruvbox"              # any Textual theme name
    approver = "alice"             # who you are, when --approver and LOBSTER_APPROVAL_APPROVED_BY are unset
    stale_after = "24h"            # rows waiting longer get a stale mark: "90m", "36h", "2d"; false: never
    notifications = true           # desktop notification escapes (OSC 9 / OSC 777) on new checkpoints
    bell = true                    # ring the terminal bell on new checkpoints

    [keymap]                       # binding id = keys (ids are listed in the help screen, ?)
    "list.approve" = "ctrl+a"
    "app.history" = "h,3"
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path
from typing import Any

APP_DIR = "lobster-tui"
CONFIG_FILE = "config.toml"
DEFAULT_STALE_AFTER = timedelta(hours=24)

_KEYS = ("theme", "approver", "stale_after", "notifications", "bell", "keymap")
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd])\s*$", re.IGNORECASE)
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


@dataclass(frozen=True)
class Config:
    """Settings read from the config file; the defaults are what an absent file means."""

    theme: str | None = None
    """A Textual theme name; None keeps Textual's default."""
    keymap: Mapping[str, str] = field(default_factory=dict)
    """Binding id → keys, applied with ``App.set_keymap``."""
    approver: str | None = None
    """The approver identity used when neither ``--approver`` nor the environment names one."""
    stale_after: timedelta | None = DEFAULT_STALE_AFTER
    """Checkpoints waiting longer than this are marked stale; None: never."""
    notifications: bool = True
    """Send desktop notification escapes when a checkpoint arrives."""
    bell: bool = True
    """Ring the terminal bell when a checkpoint arrives."""
    path: Path | None = None
    """The file these settings came from (None: defaults, no file)."""
    problems: tuple[str, ...] = ()
    """One sentence per ignored or invalid setting, naming the key."""


def config_path(env: Mapping[str, str] | None = None) -> Path:
    """Where the config file lives: ``$XDG_CONFIG_HOME/lobster-tui/config.toml``, else ``~/.config/...``."""
    environment = os.environ if env is None else env
    xdg = (environment.get("XDG_CONFIG_HOME") or "").strip()
    # The XDG spec says a relative value is invalid and must be ignored.
    if xdg and os.path.isabs(xdg):
        base = Path(xdg)
    else:
        home = (environment.get("HOME") or "").strip()
        base = (Path(home) if home else Path.home()) / ".config"
    return base / APP_DIR / CONFIG_FILE


def load_config(path: str | Path | None = None, *, env: Mapping[str, str] | None = None) -> Config:
    """Read the config file; never raises.

    ``path`` is an explicit location (``--config``): a missing file is then a problem worth
    saying. Without it the XDG location is used, and a missing file just means defaults.
    """
    explicit = path is not None
    where = Path(path).expanduser() if path is not None else config_path(env)
    try:
        data = where.read_bytes()
    except FileNotFoundError:
        problems = (f"{where}: no such config file; using the defaults",) if explicit else ()
        return Config(problems=problems)
    except (OSError, ValueError) as error:
        return Config(problems=(f"{where}: cannot be read ({error}); using the defaults",))
    try:
        document = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        return Config(path=where, problems=(f"{where}: is not UTF-8 text; using the defaults",))
    except tomllib.TOMLDecodeError as error:
        return Config(path=where, problems=(f"{where}: not valid TOML ({error}); using the defaults",))
    config, problems = parse_config(document)
    return replace(config, path=where, problems=tuple(f"{where}: {problem}" for problem in problems))


def parse_config(document: Mapping[str, Any]) -> tuple[Config, list[str]]:
    """Settings from a parsed TOML document, and a sentence per key that was not usable."""
    problems: list[str] = []
    values: dict[str, Any] = {}
    for key, value in document.items():
        if key not in _KEYS:
            close = difflib.get_close_matches(key, _KEYS, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else f" (known keys: {', '.join(_KEYS)})"
            problems.append(f"unknown key '{key}' ignored{hint}")
            continue
        try:
            values[key] = _PARSERS[key](value)
        except ValueError as error:
            problems.append(f"'{key}' {error}; using the default")
        except _KeymapProblems as partial:
            values[key] = partial.keymap
            problems.extend(partial.problems)
    return Config(**values), problems


def _theme(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"must be a theme name (a string), got {_show(value)}")
    name = value.strip()
    known = theme_names()
    if name not in known:
        close = difflib.get_close_matches(name, known, n=1)
        hint = f"did you mean '{close[0]}'?" if close else f"themes: {', '.join(sorted(known))}"
        raise ValueError(f"is not a Textual theme: {_show(value)} ({hint})")
    return name


def theme_names() -> list[str]:
    """The names of Textual's built-in themes."""
    from textual.theme import BUILTIN_THEMES

    return list(BUILTIN_THEMES)


def _approver(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"must be a non-empty string, got {_show(value)}")
    return value.strip()


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"must be true or false, got {_show(value)}")
    return value


def _stale_after(value: Any) -> timedelta | None:
    return parse_duration(value)


def parse_duration(value: Any) -> timedelta | None:
    """``"90m"``, ``"24h"``, ``"2d"``, ``"45s"``, or a number of hours; ``false`` means never."""
    if value is False:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if value <= 0:
            raise ValueError(f"must be more than zero, got {_show(value)}")
        return timedelta(hours=value)
    if isinstance(value, str):
        match = _DURATION.match(value)
        if match and float(match.group(1)) > 0:
            return timedelta(seconds=float(match.group(1)) * _UNIT_SECONDS[match.group(2).lower()])
    raise ValueError(f'must be a duration such as "90m", "24h" or "2d" (or false), got {_show(value)}')


class _KeymapProblems(Exception):
    """Some keymap entries were unusable; the rest still apply."""

    def __init__(self, keymap: dict[str, str], problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.keymap = keymap
        self.problems = problems


def _keymap(value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        raise ValueError(f'must be a table of binding id = "keys" ([keymap]), got {_show(value)}')
    keymap: dict[str, str] = {}
    problems: list[str] = []
    for binding_id, keys in value.items():
        if not isinstance(keys, str) or not keys.strip() or any(not part.strip() for part in keys.split(",")):
            problems.append(f"'keymap.{binding_id}' must be keys such as \"ctrl+a\" or \"h,3\", got {_show(keys)}; ignored")
            continue
        keymap[binding_id] = ",".join(part.strip() for part in keys.split(","))
    if problems:
        raise _KeymapProblems(keymap, problems)
    return keymap


_PARSERS = {
    "theme": _theme,
    "approver": _approver,
    "stale_after": _stale_after,
    "notifications": _bool,
    "bell": _bool,
    "keymap": _keymap,
}


def unknown_binding_ids(keymap: Mapping[str, str], known: Iterable[str]) -> list[str]:
    """Keymap entries that name no binding (a typo would otherwise do nothing, silently)."""
    known_ids = set(known)
    problems = []
    for binding_id in keymap:
        if binding_id not in known_ids:
            close = difflib.get_close_matches(binding_id, sorted(known_ids), n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else " (press ? to see the ids)"
            problems.append(f"'keymap.{binding_id}' names no key binding{hint}; ignored")
    return problems


def _show(value: Any) -> str:
    text = repr(value) if not isinstance(value, str) else f'"{value}"'
    return text if len(text) <= 40 else text[:39] + "…"


def lobster_binding_ids() -> set[str]:
    """Every binding id declared by lobster-tui's screens and widgets (those imported so far)."""
    from textual.binding import Binding
    from textual.dom import DOMNode

    found: set[str] = set()
    seen: set[type] = set()
    stack: list[type] = [DOMNode]
    while stack:
        cls = stack.pop()
        if cls in seen:
            continue
        seen.add(cls)
        stack.extend(cls.__subclasses__())
        if not cls.__module__.startswith("lobster_tui."):
            continue
        for binding in cls.__dict__.get("BINDINGS", []):
            if isinstance(binding, Binding) and binding.id:
                found.add(binding.id)
    return found


def apply_config(app: Any, config: Config) -> list[str]:
    """Apply the theme and keymap to an app; returns what could not be applied, in words."""
    problems: list[str] = []
    where = f"{config.path}: " if config.path else ""
    if config.theme:
        try:
            app.theme = config.theme
        except Exception as error:  # noqa: BLE001 - an unknown theme must not stop the app
            problems.append(f"{where}'theme' {config.theme!r} cannot be used ({error}); using the default")
    if config.keymap:
        known = lobster_binding_ids()
        if not set(config.keymap) <= known:
            # Some screens are imported on first use; load them all before calling an id unknown.
            _import_all_screens_and_widgets()
            known = lobster_binding_ids()
        problems.extend(where + problem for problem in unknown_binding_ids(config.keymap, known))
        app.set_keymap(dict(config.keymap))
    return problems


def _import_all_screens_and_widgets() -> None:
    import importlib
    import pkgutil

    from . import screens, widgets

    for package in (screens, widgets):
        for module in pkgutil.walk_packages(package.__path__, prefix=f"{package.__name__}."):
            try:
                importlib.import_module(module.name)
            except Exception:  # noqa: BLE001 - a module that fails to import has no bindings to offer
                continue
