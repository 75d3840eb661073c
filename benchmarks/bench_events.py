"""Cost of run logging: a workflow step printing 200,000 lines, with and without the log subscriber.

Runs ``seq 200000`` as a workflow step through the core runner (``run_workflow``) twice per round:
once with a :class:`~lobster_tui.core.run_log.RunLogWriter` subscribed, once with no subscriber.
After one warm-up round it reports the median of 5 rounds of each and their ratio; the target is
at most 1.2x (the exit status is 1 when missed). The variants alternate so background load hits
both alike. CPU time of this process (all its threads; the child's own work is the same in both)
is printed beside wall-clock time because it is far less sensitive to a busy machine.

Usage: ``python benchmarks/bench_events.py [--lines N] [--rounds N]``
"""

from __future__ import annotations

import argparse
from typing import Any
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lobster_tui.core.events import Subscriber
from lobster_tui.core.run_log import RunLogWriter
from lobster_tui.core.runner import RunContext, run_workflow
from lobster_tui.core.state import StateStore

TARGET_RATIO = 1.2


def write_workflow(folder: Path, lines: int) -> Path:
    path = folder / "loud.yaml"
    path.write_text(f"name: loud\nsteps:\n  - id: loud\n    run: seq {lines}\n")
    return path


def run_once(workflow: Path, state: StateStore, logged: bool) -> tuple[float, float]:
    """Wall-clock and CPU seconds one run of ``workflow`` takes, logged or not."""
    subscribers: list[Subscriber] = [RunLogWriter(state)] if logged else []
    # No host limits: the benchmark measures logging, not the output cap.
    context = RunContext(state=state, cwd=str(workflow.parent), mode="tool", subscribers=subscribers)
    started, cpu_started = time.perf_counter(), time.process_time()
    outcome = run_workflow(str(workflow), context)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    if outcome.status != "ok":
        raise SystemExit(f"benchmark run failed: {outcome.error_message}")
    return elapsed, cpu


def measure(lines: int, rounds: int) -> tuple[float, float, float, float]:
    """Median (wall, cpu) without and with the run-log subscriber, after a warm-up."""
    with tempfile.TemporaryDirectory() as folder:
        workflow = write_workflow(Path(folder), lines)
        state = StateStore(Path(folder) / "state")
        run_once(workflow, state, True)  # warm-up: imports, caches, the state folder
        run_once(workflow, state, False)
        bare: list[tuple[float, float]] = []
        logged: list[tuple[float, float]] = []
        for _ in range(rounds):
            bare.append(run_once(workflow, state, False))
            logged.append(run_once(workflow, state, True))
    bare_wall, bare_cpu = (statistics.median(times) for times in zip(*bare))
    logged_wall, logged_cpu = (statistics.median(times) for times in zip(*logged))
    return bare_wall, bare_cpu, logged_wall, logged_cpu


def run(repeats: int) -> list[Any]:
    """The events group of ``benchmarks/run.py``."""
    from harness import Measurement

    bare_wall, _, logged_wall, _ = measure(200_000, max(3, repeats))
    return [Measurement("200,000-line step with run events logged", logged_wall, bare_wall, "same step, no events", 1.2)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args(argv)
    bare_wall, bare_cpu, logged_wall, logged_cpu = measure(options.lines, options.rounds)
    ratio = logged_wall / bare_wall
    print(f"{options.lines} lines, median of {options.rounds}:   wall        cpu")
    print(f"  no subscriber   {bare_wall * 1000:8.1f} ms {bare_cpu * 1000:8.1f} ms")
    print(f"  log subscriber  {logged_wall * 1000:8.1f} ms {logged_cpu * 1000:8.1f} ms")
    print(f"  ratio           {ratio:8.2f}x    {logged_cpu / bare_cpu:6.2f}x   (target <= {TARGET_RATIO}x)")
    return 0 if ratio <= TARGET_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
