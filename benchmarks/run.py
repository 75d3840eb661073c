"""Run every benchmark group side by side and write docs/PERFORMANCE.md.

Usage: ``python benchmarks/run.py [--repeats N] [--only cli,tui,events] [--no-write]``
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import REPO, Measurement, load_average, machine_description  # noqa: E402

GROUPS = {
    "cli": "bench_cli",
    "tui": "bench_tui",
    "events": "bench_events",
}


def _format(value: float | None, unit: str) -> str:
    if value is None:
        return "n/a"
    if unit == "s":
        return f"{value * 1000:.0f} ms" if value < 10 else f"{value:.1f} s"
    if unit == "MiB":
        return f"{value:.0f} MiB"
    return f"{value:.2f} {unit}"


def _extra(name: str, value: float, unit: str) -> str:
    """An extra figure; names ending in a unit ("peak RSS MiB") carry it after the number instead."""
    if "MiB" in name:
        return f"{name.replace(' MiB', '')} {value:.0f} MiB"
    return f"{name} {_format(value, unit)}"


def render(rows: list[Measurement], started: float, load_before: str) -> str:
    lines = [
        "# Performance",
        "",
        f"Measured {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC by `python benchmarks/run.py` "
        f"in {time.monotonic() - started:.0f} s; load average before: {load_before}.",
        "",
        f"Machine: {machine_description()}.",
        "",
        "Each figure is a median after a warm-up. The ratio is ours divided by the peer; the target is a",
        "ratio to that peer, or an absolute limit where there is no peer. Both sides of a ratio are",
        "measured in the same run, but on a 2-core machine other work moves them by tens of percent:",
        "compare ratios within one run, and rerun on a quiet machine before drawing conclusions.",
        "",
        "| benchmark | ours | peer | peer figure | ratio | target | met |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        ratio = row.ratio
        target = "" if row.target is None else (f"≤ {row.target}x" if row.peer_name != "limit" else f"≤ {_format(row.target, row.unit)}")
        met = {True: "yes", False: "**no**", None: ""}[row.met]
        lines.append(
            f"| {row.name} | {_format(row.ours, row.unit)} | {row.peer_name} | {_format(row.peer, row.unit)} | "
            f"{'' if ratio is None else f'{ratio:.2f}x'} | {target} | {met} |"
        )
    notes = [f"- {row.name}: {row.note}" for row in rows if row.note]
    extras = [
        f"- {row.name}: " + ", ".join(_extra(k, v, row.unit) for k, v in row.extra.items())
        for row in rows
        if row.extra
    ]
    if extras:
        lines += ["", "Other figures measured in the same run:", "", *extras]
    if notes:
        lines += ["", "Notes:", "", *notes]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--only", default=",".join(GROUPS))
    parser.add_argument("--no-write", action="store_true")
    options = parser.parse_args()
    started = time.monotonic()
    load_before = load_average()
    rows: list[Measurement] = []
    for name in options.only.split(","):
        module_name = GROUPS[name.strip()]
        if not (Path(__file__).parent / f"{module_name}.py").exists():
            print(f"skipping {name}: {module_name}.py not present", file=sys.stderr)
            continue
        module = importlib.import_module(module_name)
        print(f"running {name}...", file=sys.stderr)
        rows += module.run(options.repeats)
    report = render(rows, started, load_before)
    print(report)
    if not options.no_write:
        (REPO / "docs" / "PERFORMANCE.md").write_text(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
