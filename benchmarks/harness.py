"""Measuring helpers shared by the benchmark groups: warm-up, repeats, medians, peers."""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OFFICIAL_CACHE = Path.home() / ".cache" / "lobster-tui" / "official"
OFFICIAL_VERSION = "2026.5.22"


@dataclass
class Measurement:
    """One benchmark row: our figure, the peer's, and the target ratio."""

    name: str
    ours: float
    peer: float | None
    peer_name: str
    target: float | None
    unit: str = "s"
    note: str = ""
    extra: dict[str, float] = field(default_factory=dict)

    @property
    def ratio(self) -> float | None:
        if self.peer in (None, 0):
            return None
        return self.ours / self.peer

    @property
    def met(self) -> bool | None:
        if self.target is None:
            return None
        value = self.ratio if self.peer is not None else self.ours
        return value is not None and value <= self.target


def median_time(action: Callable[[], object], repeats: int, warmup: int = 1) -> float:
    """Median wall time of ``action`` over ``repeats`` runs after ``warmup`` untimed ones."""
    for _ in range(warmup):
        action()
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def run_quiet(argv: list[str], env: dict[str, str], cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, input=stdin, capture_output=True, text=True, env=env, cwd=str(cwd), check=False)


def our_lobster() -> list[str]:
    """Our CLI from this checkout, byte-compiled as ``pip install`` leaves it.

    Measuring the checkout (not whatever copy a venv holds) keeps the figures about this code;
    compiling first matches an installed package, whose ``.pyc`` files pip writes at install time
    (a checkout run with PYTHONDONTWRITEBYTECODE would recompile every module on every start).
    """
    import compileall

    compileall.compile_dir(str(REPO / "lobster_tui"), quiet=1)
    return [sys.executable, "-m", "lobster_tui.cli"]


def checkout_env(base: dict[str, str]) -> dict[str, str]:
    """``base`` with this checkout first on the import path."""
    env = dict(base)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def official_lobster(install: bool = True) -> list[str] | None:
    """The official runtime: LOBSTER_OFFICIAL_BIN, the cache folder, or installed there with npm."""
    configured = os.environ.get("LOBSTER_OFFICIAL_BIN")
    if configured and Path(configured).exists():
        return [configured]
    binary = OFFICIAL_CACHE / "node_modules" / ".bin" / "lobster"
    if binary.exists():
        return [str(binary)]
    if not install or not shutil.which("npm") or not shutil.which("node"):
        return None
    OFFICIAL_CACHE.mkdir(parents=True, exist_ok=True)
    if not (OFFICIAL_CACHE / "package.json").exists():
        subprocess.run(["npm", "init", "-y"], cwd=OFFICIAL_CACHE, capture_output=True, check=False)
    subprocess.run(
        ["npm", "install", "--silent", "--no-audit", "--no-fund", f"@clawdbot/lobster@{OFFICIAL_VERSION}"],
        cwd=OFFICIAL_CACHE, capture_output=True, check=False,
    )
    return [str(binary)] if binary.exists() else None


def machine_description() -> str:
    """CPU model, core count and memory, for the report header."""
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = ""
    try:
        kib = int(Path("/proc/meminfo").read_text().split()[1])
        memory = f", {kib / 1024 / 1024:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    node = subprocess.run(["node", "--version"], capture_output=True, text=True, check=False).stdout.strip() if shutil.which("node") else "absent"
    return f"{cpu}, {os.cpu_count()} cores{memory}; Python {sys.version.split()[0]}; Node {node}"


def load_average() -> str:
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return "?"
