"""CLI speed: our ``lobster`` against the official runtime and the raw limit, side by side.

The raw limit is the same step commands spawned by a plain shell loop: what running the steps costs
with no runtime at all. Each figure is the median of ``repeats`` runs after a warm-up.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from harness import Measurement, checkout_env, median_time, official_lobster, our_lobster, run_quiet

ONE_STEP = "steps:\n  - id: one\n    run: echo hi\n"
APPROVAL = "steps:\n  - id: gate\n    approval: Go?\n  - id: after\n    run: echo done\n"
INPUT = (
    "steps:\n  - id: ask\n    input:\n      prompt: Go?\n      responseSchema:\n        type: object\n"
    "        properties: {ok: {type: boolean}}\n        required: [ok]\n  - id: after\n    run: echo done\n"
)


def _many_steps(count: int) -> str:
    return "steps:\n" + "".join(f"  - id: s{i}\n    run: echo {i}\n" for i in range(count))


def _raw_loop(count: int, env: dict[str, str], cwd: Path) -> None:
    script = f"i=0; while [ $i -lt {count} ]; do /bin/sh -lc \"echo $i\" >/dev/null; i=$((i+1)); done"
    run_quiet(["/bin/sh", "-c", script], env, cwd)


def _env(state: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOBSTER_")}
    env["LOBSTER_STATE_DIR"] = str(state)
    return checkout_env(env)


def _resume_once(cli: list[str], workflow: Path, work: Path, decision: list[str]) -> float:
    """Time only the resume: the run to the checkpoint happens before the clock starts."""
    import time

    state = Path(tempfile.mkdtemp(dir=work))
    env = _env(state)
    halted = json.loads(run_quiet([*cli, "run", "--mode", "tool", str(workflow)], env, work).stdout)
    request = halted.get("requiresApproval") or halted.get("requiresInput")
    args = ["--token", request["resumeToken"], *decision]
    started = time.perf_counter()
    result = run_quiet([*cli, "resume", *args], env, work)
    elapsed = time.perf_counter() - started
    assert json.loads(result.stdout)["status"] == "ok", result.stdout
    return elapsed


def _median_resume(cli: list[str], workflow: Path, work: Path, decision: list[str], repeats: int) -> float:
    import statistics

    _resume_once(cli, workflow, work, decision)
    return statistics.median(_resume_once(cli, workflow, work, decision) for _ in range(repeats))


def _many_steps_note(ours: float, raw: float, official: float | None) -> str:
    """The arithmetic of the 200-step row: what is left for the runtime once the steps are paid."""
    per_step = (ours - raw) / 200 * 1000
    text = (
        f"the raw loop (200 login shells, each forking `id` in /etc/profile) takes {raw * 1000:.0f} ms; "
        f"ours adds {(ours - raw) * 1000:.0f} ms, start-up included ({per_step:.1f} ms a step at most)"
    )
    if official:
        text += (
            f"; the raw loop alone is {raw / official:.2f}x of the official runtime, so ≤ 0.4x needs "
            f"≤ {0.4 * official * 1000:.0f} ms, {'below' if 0.4 * official < raw else 'above'} the raw loop"
        )
    return text


def run(repeats: int) -> list[Measurement]:
    ours = our_lobster()
    official = official_lobster()
    rows: list[Measurement] = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        files = {
            "one": work / "one.lobster",
            "many": work / "many.lobster",
            "approval": work / "approval.lobster",
            "input": work / "input.lobster",
        }
        files["one"].write_text(ONE_STEP)
        files["many"].write_text(_many_steps(200))
        files["approval"].write_text(APPROVAL)
        files["input"].write_text(INPUT)
        env = _env(work / "state")

        def timed(cli: list[str], path: Path) -> float:
            return median_time(lambda: run_quiet([*cli, "run", "--mode", "tool", str(path)], env, work), repeats)

        raw_one = median_time(lambda: _raw_loop(1, env, work), repeats)
        raw_many = median_time(lambda: _raw_loop(200, env, work), max(3, repeats // 2))
        ours_one = timed(ours, files["one"])
        ours_many = median_time(lambda: run_quiet([*ours, "run", "--mode", "tool", str(files["many"])], env, work), max(3, repeats // 2))
        theirs_one = timed(official, files["one"]) if official else None
        theirs_many = (
            median_time(lambda: run_quiet([*official, "run", "--mode", "tool", str(files["many"])], env, work), max(3, repeats // 2))
            if official else None
        )
        # The floor under every CLI figure: the interpreter starting and exiting with nothing to do.
        interpreter = median_time(lambda: run_quiet([ours[0], "-c", "pass"], env, work), repeats)
        rows.append(Measurement(
            "one-step workflow", ours_one, theirs_one, "official", 0.3,
            extra={"raw": raw_one, "python -c pass": interpreter},
        ))
        rows.append(Measurement(
            "200-step workflow", ours_many, theirs_many, "official", 0.4, extra={"raw": raw_many},
            note=_many_steps_note(ours_many, raw_many, theirs_many),
        ))
        rows.append(Measurement("200-step workflow vs raw shell loop", ours_many, raw_many, "raw", 3.0))
        approve = ["--approve", "yes"]
        answer = ["--response-json", '{"ok":true}']
        rows.append(Measurement(
            "approval resume", _median_resume(ours, files["approval"], work, approve, repeats),
            _median_resume(official, files["approval"], work, approve, repeats) if official else None, "official", 0.3,
        ))
        rows.append(Measurement(
            "input resume", _median_resume(ours, files["input"], work, answer, repeats),
            _median_resume(official, files["input"], work, answer, repeats) if official else None, "official", 0.3,
        ))
        rows.append(Measurement(
            "lobster version", median_time(lambda: run_quiet([*ours, "version"], env, work), repeats),
            median_time(lambda: run_quiet([*official, "version"], env, work), repeats) if official else None,
            "official", None,
        ))
    return rows
