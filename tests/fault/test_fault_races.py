"""Racing reviewers: many deciders on one checkpoint, round after round; exactly one may win.

Each round halts a fresh checkpoint of a scenario (see ``scenarios.py``) and lets several racers
decide it at once with a seeded mix of intents (approve, reject, cancel, answer; by token or by
approval id). Racers are ``lobster resume`` subprocesses, threads calling the core API, or forked
processes calling it. Per round exactly one racer succeeds, every other gets an error envelope
saying the checkpoint was not found, and the gated side effect ran once if the winner approved or
answered, else never. A scanner thread lists the directory throughout: it must never raise and
never list a checkpoint as pending once a winning resume has returned.

Doubles (rounds with more than one winner, or an effect that ran twice) are tallied as
``race doubles`` before the assertion fails, so a soak run reports how many it saw.
"""

from __future__ import annotations

import multiprocessing
import random
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from lobster_tui.core.checkpoints import BrokenCheckpoint, Checkpoint, scan_checkpoints
from lobster_tui.core.state import StateStore
from tests.fault.faultlib import (
    SCALE,
    assert_envelope,
    finish,
    leftover_locks,
    scaled,
    start_cli,
    state_json_files,
    tally,
)
from tests.fault.scenarios import SCENARIOS, Halted, Scenario, cli_args, core_resume

LOSER_WORDS = ("not found",)
Plan = list[tuple[str, bool]]
Race = tuple[list[dict[str, Any]], float]


class Scanner(threading.Thread):
    """Lists the state directory in a loop, remembering what each scan saw and when it started."""

    def __init__(self, state_dir: Path) -> None:
        super().__init__(daemon=True, name="fault-scanner")
        self.store = StateStore(state_dir)
        self.stop = threading.Event()
        self.scans: list[tuple[float, set[str]]] = []
        self.errors: list[str] = []

    def run(self) -> None:
        while not self.stop.is_set():
            started = time.monotonic()
            try:
                found = scan_checkpoints(self.store)
            except Exception as error:  # the property under test: scanning never raises
                self.errors.append(f"{type(error).__name__}: {error}")
                continue
            pending = {c.state_key for c in found if isinstance(c, Checkpoint)}
            broken = [c for c in found if isinstance(c, BrokenCheckpoint)]
            if broken:
                self.errors.append(f"broken checkpoint listed: {broken[0].state_key}: {broken[0].reason}")
            self.scans.append((started, pending))
            self.stop.wait(0.002)

    def listed_after(self, key: str, moment: float) -> bool:
        return any(started > moment and key in pending for started, pending in list(self.scans))


def _plan(rng: random.Random, scenario: Scenario, racers: int, halted: Halted) -> list[tuple[str, bool]]:
    """Intents for one round: at least two of the winning kind, plus a seeded mix of the others."""
    main = "approve" if scenario.kind == "approval" else "answer"
    plan = [main, main] + [rng.choice(scenario.intents) for _ in range(racers - 2)]
    rng.shuffle(plan)
    return [(intent, halted.approval_id is not None and rng.random() < 0.5) for intent in plan]


def _judge(scenario: Scenario, halted: Halted, plan: list[tuple[str, bool]], results: list[dict[str, Any]],
           effects: Path, state_dir: Path) -> str | None:
    """Check one round; returns what went wrong, or None."""
    try:
        _check_round(scenario, halted, plan, results, effects, state_dir)
    except AssertionError as error:
        return str(error)
    return None


def _check_round(scenario: Scenario, halted: Halted, plan: list[tuple[str, bool]], results: list[dict[str, Any]],
                 effects: Path, state_dir: Path) -> None:
    winners = [(intent, env) for (intent, _), env in zip(plan, results) if env["ok"]]
    lines = [line for line in effects.read_text().splitlines() if line == halted.tag] if effects.exists() else []
    doubles = max(0, len(winners) - 1) + max(0, len(lines) - 1)
    if doubles:
        tally("race doubles", doubles)
    context = f"{scenario.name} round {halted.tag}: plan={plan} results={results}"
    assert len(winners) == 1, f"{len(winners)} winners; {context}"
    intent, envelope = winners[0]
    expected_status = {"approve": "ok", "answer": "ok", "reject": "cancelled", "cancel": "cancelled"}[intent]
    assert envelope["status"] == expected_status, context
    for (loser_intent, _), env in zip(plan, results):
        if not env["ok"]:
            message = env["error"]["message"]
            assert any(word in message.lower() for word in LOSER_WORDS), f"loser said {message!r}; {context}"
    ran = intent in ("approve", "answer") and scenario.has_effect
    assert len(lines) == (1 if ran else 0), f"effect ran {len(lines)} times; {context}"
    assert state_json_files(state_dir) == [], f"files left: {state_json_files(state_dir)}; {context}"
    assert leftover_locks(state_dir) == [], context


def _race_threads(state_dir: Path, work: Path, halted: Halted, plan: Plan) -> Race:
    barrier = threading.Barrier(len(plan))
    results: list[dict[str, Any] | None] = [None] * len(plan)
    returned: list[float] = [0.0] * len(plan)

    def racer(index: int, intent: str, by_id: bool) -> None:
        barrier.wait()
        try:
            results[index] = core_resume(state_dir, work, halted, intent, by_id, {"n": index})
        except Exception as error:  # an exception is a failure of the property, keep it visible
            results[index] = {"ok": None, "exception": f"{type(error).__name__}: {error}"}
        returned[index] = time.monotonic()

    threads = [threading.Thread(target=racer, args=(i, intent, by_id)) for i, (intent, by_id) in enumerate(plan)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    done = [r for r in results if r is not None]
    assert len(done) == len(plan) and all(r["ok"] is not None for r in done), done
    winner_returned = min((t for t, r in zip(returned, done) if r["ok"]), default=0.0)
    return done, winner_returned


def _process_racer(args: tuple[str, str, Halted, str, bool, int, Any]) -> dict[str, Any]:
    state_dir, work, halted, intent, by_id, index, start = args
    start.wait(30)
    return core_resume(Path(state_dir), Path(work), halted, intent, by_id, {"n": index})


def _race_processes(state_dir: Path, work: Path, halted: Halted, plan: Plan) -> Race:
    ctx = multiprocessing.get_context("fork")
    manager_start = ctx.Event()
    queue = ctx.Queue()

    def target(index: int, intent: str, by_id: bool) -> None:
        queue.put((index, _process_racer((str(state_dir), str(work), halted, intent, by_id, index, manager_start))))

    procs = [ctx.Process(target=target, args=(i, intent, by_id)) for i, (intent, by_id) in enumerate(plan)]
    for proc in procs:
        proc.start()
    manager_start.set()
    results: dict[int, dict[str, Any]] = {}
    winner_returned = 0.0
    for _ in procs:
        index, envelope = queue.get(timeout=60)
        results[index] = envelope
        if envelope["ok"] and not winner_returned:
            winner_returned = time.monotonic()
    for proc in procs:
        proc.join(10)
    return [results[i] for i in range(len(plan))], winner_returned


def _race_cli(state_dir: Path, work: Path, halted: Halted, plan: Plan) -> Race:
    procs = [
        start_cli(state_dir, *cli_args(halted, intent, by_id, {"n": i}), cwd=work)
        for i, (intent, by_id) in enumerate(plan)
    ]
    results = []
    winner_returned = 0.0
    for proc in procs:
        outcome = finish(proc)
        envelope = assert_envelope(outcome, "racing resume")
        if envelope["ok"] and not winner_returned:
            winner_returned = time.monotonic()
        results.append(envelope)
    return results, winner_returned


# (race function, rounds at scale 1, racers per round). A CLI racer costs a Python start-up, so at
# scale 1 the CLI races the four scenarios with a gated effect; a soak run races them all.
RACERS = {"threads": (_race_threads, 4, 5), "processes": (_race_processes, 1, 4), "cli": (_race_cli, 1, 4)}
CLI_AT_SCALE_1 = {"pipeline_approval", "pipeline_input_same_stage", "workflow_approval", "workflow_input"}
CASES = [
    pytest.param(scenario, how, id=f"{scenario.name}-{how}")
    for scenario in SCENARIOS
    for how in sorted(RACERS)
    if how != "cli" or SCALE > 1 or scenario.name in CLI_AT_SCALE_1
]


@pytest.mark.parametrize(("scenario", "how"), CASES)
def test_exactly_one_racer_wins_each_round(scenario: Scenario, how: str, rng: random.Random, tmp_path: Path) -> None:
    race, rounds, racers = RACERS[how]
    state_dir = tmp_path / "state"
    work = tmp_path / "work"
    work.mkdir()
    effects = tmp_path / "effects.txt"
    scanner = Scanner(state_dir)
    scanner.start()
    problems: list[str] = []
    try:
        for round_no in range(scaled(rounds)):
            halted = scenario.halt(state_dir, work, effects, f"r{round_no}-{rng.randrange(10**6)}")
            plan = _plan(rng, scenario, racers, halted)
            results, winner_returned = race(state_dir, work, halted, plan)
            tally(f"race rounds ({how})", 1)
            problem = _judge(scenario, halted, plan, results, effects, state_dir)
            if problem:
                # Keep racing: a soak run reports every bad round, not just the first.
                problems.append(problem)
                for leftover in state_json_files(state_dir):
                    leftover.unlink()
                continue
            # A scan that starts now must not list the decided checkpoint.
            fresh = {c.state_key for c in scan_checkpoints(StateStore(state_dir)) if isinstance(c, Checkpoint)}
            assert halted.state_key not in fresh
            time.sleep(0.005)
            assert not scanner.listed_after(halted.state_key, winner_returned), (
                f"{halted.state_key} listed as pending after its resume returned"
            )
    finally:
        scanner.stop.set()
        scanner.join(10)
    assert problems == [], f"{len(problems)} bad round(s):\n" + "\n".join(problems)
    assert scanner.errors == []
    assert scanner.scans, "the scanner never completed a scan"
