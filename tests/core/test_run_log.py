"""Run logs: the writer subscriber, its bounds and retention, and the readers (issue 4)."""

from __future__ import annotations

import io
import json
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from lobster_tui.core import run_log
from lobster_tui.core.cancel import CancelSignal
from lobster_tui.core.event_models import LogNote, Output, OutputTruncated, RunFinished, parse_event
from lobster_tui.core.events import RunEvents
from lobster_tui.core.process import run_process
from lobster_tui.core.run_log import (
    LINE_CAP_BYTES,
    LogLimits,
    RunLogWriter,
    RunNotFoundError,
    follow_events,
    list_runs,
    log_path,
    log_subscriber_for,
    logs_command,
    prune_logs,
    read_events,
    resolve_run_id,
    runs_dir,
)
from lobster_tui.core.state import StateStore
from tests.core.polling import wait_until


@pytest.fixture
def state(tmp_path: Path) -> StateStore:
    return StateStore(tmp_path / "state")


def start_run(events: RunEvents, name: str = "demo") -> None:
    events.emit("run_started", name=name, source="workflow", target="/w/demo.yaml", args={}, cwd="/w", resumed=False)


def run_child_step(events: RunEvents, step_id: str, code: str) -> None:
    """Run a real Python child as one step, streaming its lines through the events."""
    events.emit("step_started", stepId=step_id, kind="shell", command=f"python -c {code!r}")
    result = run_process(
        [sys.executable, "-c", code],
        env=dict(os.environ),
        cwd=os.getcwd(),
        stdin_data=None,
        signal=CancelSignal(),
        on_output=events.output_sink(step_id),
    )
    events.emit("step_finished", stepId=step_id, status="ok", exitCode=result.returncode, durationMs=1, error=None)


def finish_run(events: RunEvents, status: str = "ok") -> None:
    events.emit("run_finished", status=status, durationMs=5, error=None)


def halt_at_approval(events: RunEvents, approval_id: str = "ab12cd", state_key: str = "workflow_resume_x") -> None:
    events.emit("step_started", stepId="gate", kind="approval", command=None)
    events.emit("step_finished", stepId="gate", status="ok", exitCode=None, durationMs=0, error=None)
    events.emit("checkpoint", kind="approval", stateKey=state_key, approvalId=approval_id, prompt="Go?")
    finish_run(events, "needs_approval")


def logged_run(state: StateStore, *, limits: LogLimits | None = None, status: str = "ok", name: str = "demo",
               state_key: str = "workflow_resume_x") -> str:
    """A complete short run written through a fresh writer; returns its run id."""
    events = RunEvents(None, [RunLogWriter(state, limits)])
    start_run(events, name)
    events.emit("step_started", stepId="a", kind="shell", command="echo hi")
    events.emit("output", stepId="a", stream="stdout", line="hi")
    events.emit("step_finished", stepId="a", status="ok", exitCode=0, durationMs=1, error=None)
    if status in ("needs_approval", "needs_input"):
        halt_at_approval(events, state_key=state_key)
    else:
        finish_run(events, status)
    return events.run_id


def types_of(events: list[dict[str, Any]]) -> list[str]:
    return [event["type"] for event in events]


# -- the writer ------------------------------------------------------------------------------------


def test_events_of_real_children_are_logged_in_order_across_steps_and_streams(state: StateStore) -> None:
    events = RunEvents(None, [RunLogWriter(state)])
    start_run(events)
    code = (
        "import sys\n"
        "for i in range(300):\n"
        "    print(f'out {i}', flush=True)\n"
        "    print(f'err {i}', file=sys.stderr, flush=True)\n"
    )
    run_child_step(events, "first", code)
    run_child_step(events, "second", "print('second says hi')")
    finish_run(events)

    logged = read_events(state, events.run_id)
    seqs = [event["seq"] for event in logged]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    assert types_of(logged)[:2] == ["run_started", "step_started"] and logged[-1]["type"] == "run_finished"
    first = [event for event in logged if event.get("stepId") == "first" and event["type"] == "output"]
    assert [e["line"] for e in first if e["stream"] == "stdout"] == [f"out {i}" for i in range(300)]
    assert [e["line"] for e in first if e["stream"] == "stderr"] == [f"err {i}" for i in range(300)]
    # Every line of a step sits between its step_started and step_finished.
    kinds = [(event["type"], event.get("stepId")) for event in logged]
    assert kinds.index(("step_finished", "first")) < kinds.index(("step_started", "second"))
    assert kinds[-3:] == [("output", "second"), ("step_finished", "second"), ("run_finished", None)]
    for event in logged:
        parse_event(event)  # every logged event is valid for the typed readers


def test_log_file_and_folder_are_private_and_lines_are_compact_json(state: StateStore) -> None:
    run_id = logged_run(state)
    path = log_path(state, run_id)
    assert path.parent == runs_dir(state)
    assert path.stat().st_mode & 0o777 == 0o600
    assert runs_dir(state).stat().st_mode & 0o777 == 0o700
    first_line = path.read_bytes().split(b"\n")[0]
    assert b", " not in first_line and b'": ' not in first_line
    assert json.loads(first_line)["type"] == "run_started"


def test_a_partial_last_line_from_a_child_is_logged_as_a_line(state: StateStore) -> None:
    events = RunEvents(None, [RunLogWriter(state)])
    start_run(events)
    run_child_step(events, "a", "import sys; sys.stdout.write('one\\ntwo, no newline')")
    finish_run(events)
    lines = [e["line"] for e in read_events(state, events.run_id) if e["type"] == "output"]
    assert lines == ["one", "two, no newline"]


def test_invalid_utf8_and_binary_output_is_logged_safely(state: StateStore, monkeypatch: pytest.MonkeyPatch) -> None:
    events = RunEvents(None, [RunLogWriter(state)])
    start_run(events)
    payload = "b'caf\\xc3\\xa9 \\xff\\xfe bad\\n\\x00\\x01\\x1b[31mred\\x7f\\n' + bytes(range(256))"
    run_child_step(events, "bin", f"import sys; sys.stdout.buffer.write({payload})")
    finish_run(events)

    raw = log_path(state, events.run_id).read_bytes()
    raw.decode("utf-8")  # the log itself is always valid UTF-8 ...
    for line in raw.splitlines():
        json.loads(line)  # ... and every line valid JSON
    lines = [e["line"] for e in read_events(state, events.run_id) if e["type"] == "output"]
    assert lines[0] == "café \ufffd\ufffd bad"
    assert lines[1].startswith("\x00\x01\x1b[31mred")

    out = io.StringIO()
    monkeypatch.setenv("LOBSTER_STATE_DIR", str(state.root))
    assert logs_command([events.run_id], out, io.StringIO()) == 0
    # The transcript shows control characters instead of sending them to the terminal.
    assert "\x1b" not in out.getvalue() and "\x00" not in out.getvalue()
    assert "\\x1b[31mred" in out.getvalue()


def test_huge_output_keeps_head_and_tail_with_one_truncation_event(state: StateStore) -> None:
    limits = LogLimits(head_lines=100, tail_lines=50, keep_runs=10)
    events = RunEvents(None, [RunLogWriter(state, limits)])
    start_run(events)
    run_child_step(events, "big", "for i in range(20000): print(i)")
    run_child_step(events, "after", "print('after')")
    finish_run(events)

    logged = read_events(state, events.run_id)
    big = [e for e in logged if e.get("stepId") == "big" and e["type"] in ("output", "output_truncated")]
    assert [e["line"] for e in big[:100]] == [str(i) for i in range(100)]
    assert big[100]["type"] == "output_truncated" and big[100]["droppedLines"] == 20000 - 150
    assert [e["line"] for e in big[101:]] == [str(i) for i in range(19950, 20000)]
    assert isinstance(parse_event(big[100]), OutputTruncated)
    # The tail is written before the step's end; the next step gets its own (empty) ring.
    kinds = [(e["type"], e.get("stepId")) for e in logged]
    assert kinds.index(("step_finished", "big")) == kinds.index(("output_truncated", "big")) + 51
    assert [e["line"] for e in logged if e.get("stepId") == "after" and e["type"] == "output"] == ["after"]
    seqs = [e["seq"] for e in logged]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)


def log_lines_of(state: StateStore, lines: list[str], limits: LogLimits, blocks: list[int] | None) -> list[dict[str, Any]]:
    """Log ``lines`` of step ``a`` one event each (``blocks`` None) or in blocks of those sizes."""
    writer = RunLogWriter(state, limits)
    base = {"type": "output", "runId": "samerun", "time": "2030-01-01T00:00:00.000Z", "stepId": "a", "stream": "stdout"}
    writer({"type": "run_started", "runId": "samerun", "seq": 1, "time": base["time"]})
    if blocks is None:
        for index, line in enumerate(lines):
            writer({**base, "seq": 2 + index, "line": line})
    else:
        start = 0
        for size in blocks:
            writer.output_block({**base, "seq": 2 + start}, "\n".join(lines[start : start + size]), size)
            start += size
    writer({"type": "step_finished", "runId": "samerun", "seq": 2 + len(lines), "time": base["time"], "stepId": "a"})
    return read_events(state, "samerun")


@pytest.mark.parametrize(("head", "tail"), [(10, 7), (0, 5), (3, 0), (0, 0), (100, 100), (5, 1000)])
def test_blocks_of_lines_are_logged_exactly_like_one_event_per_line(tmp_path: Path, head: int, tail: int) -> None:
    lines = [f"line {i}" for i in range(60)] + ["é" * 5000, "\x00\x1b bytes", "", "last"]
    limits = LogLimits(head_lines=head, tail_lines=tail)
    single = log_lines_of(StateStore(tmp_path / "single"), lines, limits, None)
    generator = random.Random(head * 1000 + tail)
    for attempt in range(5):
        sizes: list[int] = []
        while sum(sizes) < len(lines):
            sizes.append(min(generator.randint(1, 20), len(lines) - sum(sizes)))
        assert log_lines_of(StateStore(tmp_path / f"blocks{attempt}"), lines, limits, sizes) == single
    outputs = [e for e in single if e["type"] in ("output", "output_truncated")]
    kept_head = min(head, len(lines))
    kept_tail = min(tail, len(lines) - kept_head)
    assert len([e for e in outputs if e["type"] == "output"]) == kept_head + kept_tail
    if kept_head + kept_tail < len(lines):
        truncated = outputs[kept_head]
        assert truncated["type"] == "output_truncated" and truncated["seq"] == 2 + kept_head
        assert truncated["droppedLines"] == len(lines) - kept_head - kept_tail
    assert [e["seq"] for e in outputs] == sorted(e["seq"] for e in outputs)


def test_long_lines_are_capped_with_a_marker(state: StateStore) -> None:
    events = RunEvents(None, [RunLogWriter(state)])
    start_run(events)
    events.emit("output", stepId="a", stream="stdout", line="é" * 10_000)
    finish_run(events)
    line = next(e["line"] for e in read_events(state, events.run_id) if e["type"] == "output")
    kept, marker = line.split(" [lobster: line truncated", 1)
    assert kept == "é" * (LINE_CAP_BYTES // 2)
    assert marker == ", 20000 bytes]"


def test_a_run_halted_by_a_checkpoint_flushes_its_tail_first(state: StateStore) -> None:
    events = RunEvents(None, [RunLogWriter(state, LogLimits(head_lines=1, tail_lines=1))])
    start_run(events)
    for i in range(5):
        events.emit("output", stepId="stage_1", stream="stdout", line=str(i))
    halt_at_approval(events)
    logged = read_events(state, events.run_id)
    tail = [e for e in logged if e.get("stepId") == "stage_1"]
    assert [e.get("line", e.get("droppedLines")) for e in tail] == ["0", 3, "4"]
    # A step without its own step_finished (a halted stage) has its tail written at the halt.
    assert types_of(logged)[-4:] == ["output_truncated", "output", "checkpoint", "run_finished"]


def test_the_limits_come_from_the_environment(monkeypatch: pytest.MonkeyPatch, state: StateStore) -> None:
    monkeypatch.setenv("LOBSTER_LOG_HEAD_LINES", "7")
    monkeypatch.setenv("LOBSTER_LOG_TAIL_LINES", "3")
    monkeypatch.setenv("LOBSTER_LOG_KEEP_RUNS", "not a number")
    assert LogLimits.from_env() == LogLimits(head_lines=7, tail_lines=3, keep_runs=200)
    monkeypatch.setenv("LOBSTER_LOG_KEEP_RUNS", "0")
    assert log_subscriber_for(state) is None


def test_concurrent_runs_write_their_own_logs(state: StateStore) -> None:
    writer = RunLogWriter(state)  # one writer shared by every run, as in a long-lived shell
    runs = [RunEvents(None, [writer]) for _ in range(6)]

    def run(events: RunEvents) -> None:
        start_run(events)
        run_child_step(events, "a", f"for i in range(2000): print('{events.run_id}', i)")
        finish_run(events)

    threads = [threading.Thread(target=run, args=(events,)) for events in runs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    for events in runs:
        logged = read_events(state, events.run_id)
        assert {e["runId"] for e in logged} == {events.run_id}
        lines = [e["line"] for e in logged if e["type"] == "output"]
        assert lines == [f"{events.run_id} {i}" for i in range(2000)]
    assert sorted(summary.id for summary in list_runs(state)) == sorted(events.run_id for events in runs)


def test_a_resume_appends_to_the_same_log(state: StateStore) -> None:
    first = RunEvents(None, [RunLogWriter(state)])
    start_run(first)
    halt_at_approval(first)
    second = RunEvents(first.run_id, [RunLogWriter(state)])  # another process resumes the run
    second.emit("resumed", stateKey="workflow_resume_x", decision="approve", approver="ann")
    second.emit("run_started", name="demo", source="workflow", target="/w/demo.yaml", args={}, cwd="/w", resumed=True)
    finish_run(second)
    assert types_of(read_events(state, first.run_id)) == [
        "run_started", "step_started", "step_finished", "checkpoint", "run_finished",
        "resumed", "run_started", "run_finished",
    ]


def test_unsafe_run_ids_are_not_logged(state: StateStore) -> None:
    events = RunEvents("../escape", [RunLogWriter(state)])
    start_run(events)
    finish_run(events)
    assert not (state.root / "escape.jsonl").exists() and not runs_dir(state).exists()


def test_logging_failures_never_reach_the_run(state: StateStore) -> None:
    state.ensure()
    runs_dir(state).write_text("a file where the runs folder should be")
    events = RunEvents(None, [RunLogWriter(state)])
    start_run(events)
    events.emit("output", stepId="a", stream="stdout", line="not logged, not fatal")
    finish_run(events)
    assert list_runs(state) == []


def test_the_writer_never_imports_pydantic() -> None:
    code = (
        "import sys\n"
        "from lobster_tui.core.run_log import log_subscriber_for\n"
        "print('pydantic' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


# -- retention -------------------------------------------------------------------------------------


def age(path: Path, seconds: float) -> None:
    stamp = time.time() - seconds
    os.utime(path, (stamp, stamp))


def test_retention_keeps_the_newest_runs_and_every_waiting_run(state: StateStore) -> None:
    old_done = [logged_run(state) for _ in range(3)]
    old_waiting = logged_run(state, status="needs_approval", state_key="workflow_resume_live")
    (state.root / "workflow_resume_live.json").write_text("{}")
    # Its checkpoint was dropped elsewhere (no resume state left): it no longer waits.
    old_orphan = logged_run(state, status="needs_approval", state_key="workflow_resume_gone")
    for offset, run_id in enumerate([*old_done, old_waiting, old_orphan]):
        age(log_path(state, run_id), 3600 * 48 + offset)
    # A log whose process died long ago (no run_finished) is fair game; a live-looking one is not.
    dead = log_path(state, "deadrun")
    dead.write_text('{"type":"run_started","runId":"deadrun","seq":1,"time":"2020-01-01T00:00:00.000Z"}\n')
    age(dead, 3600 * 48)
    live = log_path(state, "liverun")
    live.write_text('{"type":"run_started","runId":"liverun","seq":1,"time":"2020-01-01T00:00:00.000Z"}\n')
    age(live, 60)

    newest = [logged_run(state, limits=LogLimits(keep_runs=2)) for _ in range(2)]

    remaining = {path.stem for path in runs_dir(state).iterdir()}
    assert remaining == {*newest, old_waiting, "liverun"}


def test_prune_logs_protects_the_log_being_created(state: StateStore) -> None:
    first = logged_run(state)
    age(log_path(state, first), 3600 * 48)
    assert prune_logs(state, 0, protect=log_path(state, first)) == []
    assert prune_logs(state, 0) == [log_path(state, first)]


# -- readers ---------------------------------------------------------------------------------------


def test_corrupt_lines_are_skipped_with_a_note(state: StateStore) -> None:
    run_id = logged_run(state)
    path = log_path(state, run_id)
    lines = path.read_bytes().split(b"\n")
    lines[1:1] = [b'{"type":"output","line":"cut', b"\xff\xfe garbage", b"[1, 2]"]
    path.write_bytes(b"\n".join(lines))

    logged = read_events(state, run_id)
    notes = [e for e in logged if e["type"] == "log_note"]
    assert [note["lineNumber"] for note in notes] == [2, 3, 4]
    assert all(isinstance(parse_event(note), LogNote) for note in notes)
    assert types_of(logged) == ["run_started", "log_note", "log_note", "log_note",
                                "step_started", "output", "step_finished", "run_finished"]
    followed = list(follow_events(state, run_id, threading.Event()))
    assert followed == logged


def test_a_line_still_being_written_is_not_an_error(state: StateStore) -> None:
    run_id = logged_run(state, status="needs_approval")
    path = log_path(state, run_id)
    with open(path, "ab") as handle:
        handle.write(b'{"type":"resumed","runId":"' + run_id.encode() + b'","se')
    logged = read_events(state, run_id)
    assert "log_note" not in types_of(logged) and logged[-1]["type"] == "run_finished"
    assert list_runs(state)[0].status == "needs_approval"


def test_unknown_runs_raise_not_found(state: StateStore) -> None:
    with pytest.raises(RunNotFoundError):
        read_events(state, "nope")
    with pytest.raises(RunNotFoundError):
        resolve_run_id(state, "nope")


def test_a_unique_prefix_resolves_to_its_run(state: StateStore) -> None:
    run_id = logged_run(state)
    assert resolve_run_id(state, run_id[:6]) == run_id
    assert resolve_run_id(state, run_id) == run_id


def test_list_runs_reports_status_step_and_duration_newest_first(state: StateStore) -> None:
    done = logged_run(state, name="done")
    time.sleep(0.002)  # distinct start stamps order the listing (ms resolution), not an assertion
    failed = logged_run(state, status="failed", name="broken")
    time.sleep(0.002)
    waiting = logged_run(state, status="needs_approval", name="gated")
    time.sleep(0.002)
    running = RunEvents(None, [RunLogWriter(state)])
    start_run(running, "busy")
    running.emit("step_started", stepId="slow", kind="shell", command="sleep 100")

    summaries = list_runs(state)
    assert [s.id for s in summaries] == [running.run_id, waiting, failed, done]
    by_id = {s.id: s for s in summaries}
    assert by_id[done].status == "ok" and by_id[done].name == "done" and by_id[done].current_step == "a"
    assert by_id[failed].status == "failed"
    assert by_id[waiting].status == "needs_approval" and by_id[waiting].waiting
    assert by_id[waiting].approval_id == "ab12cd" and by_id[waiting].current_step == "gate"
    assert by_id[running.run_id].status == "running" and by_id[running.run_id].current_step == "slow"
    assert all(s.duration_ms is not None and s.duration_ms >= 0 for s in summaries)
    assert by_id[done].to_json()["currentStep"] == "a"


def count_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Make run_log's ``open`` record how many bytes each read returns."""
    sizes: list[int] = []

    class Counting(io.FileIO):
        def read(self, size: int = -1) -> bytes:
            data = super().read(size)
            sizes.append(len(data))
            return data

    monkeypatch.setattr(run_log, "open", lambda path, mode="rb": Counting(path, "r"), raising=False)
    return sizes


def test_list_runs_reads_only_the_ends_of_big_logs(state: StateStore, monkeypatch: pytest.MonkeyPatch) -> None:
    events = RunEvents(None, [RunLogWriter(state)])
    start_run(events, "big")
    events.emit("step_started", stepId="a", kind="shell", command="seq")
    line = {"type": "output", "runId": events.run_id, "seq": 3, "time": "2020-01-01T00:00:00.000Z",
            "stepId": "a", "stream": "stdout", "line": "x" * 80}
    with open(log_path(state, events.run_id), "a") as handle:  # a big middle, written fast
        handle.write((json.dumps(line) + "\n") * 50_000)
    halt_at_approval(events)
    assert log_path(state, events.run_id).stat().st_size > 5_000_000
    bytes_read = count_reads(monkeypatch)
    [summary] = list_runs(state)
    assert summary.name == "big" and summary.status == "needs_approval" and summary.current_step == "gate"
    assert 0 < sum(bytes_read) <= 2 * 8192


def follow_in_thread(state: StateStore, run_id: str, stop: threading.Event) -> tuple[list[dict[str, Any]], threading.Thread]:
    seen: list[dict[str, Any]] = []

    def follow() -> None:
        for event in follow_events(state, run_id, stop, poll=0.01):
            seen.append(event)

    thread = threading.Thread(target=follow, daemon=True)
    thread.start()
    return seen, thread


def test_follow_streams_new_events_and_ends_at_the_final_run_finished(state: StateStore) -> None:
    events = RunEvents(None, [RunLogWriter(state)])
    stop = threading.Event()
    seen, thread = follow_in_thread(state, events.run_id, stop)  # started before the log exists
    start_run(events)
    events.emit("step_started", stepId="a", kind="shell", command="x")
    wait_until(lambda: types_of(seen) == ["run_started", "step_started"])
    events.emit("output", stepId="a", stream="stdout", line="live")
    wait_until(lambda: len(seen) == 3)
    assert seen[-1]["line"] == "live"
    finish_run(events, "failed")
    thread.join(5)
    assert not thread.is_alive() and seen[-1]["type"] == "run_finished"


def test_follow_continues_past_a_checkpoint_until_the_resumed_run_ends(state: StateStore) -> None:
    first = RunEvents(None, [RunLogWriter(state)])
    stop = threading.Event()
    start_run(first)
    halt_at_approval(first)
    seen, thread = follow_in_thread(state, first.run_id, stop)
    wait_until(lambda: bool(seen) and seen[-1].get("status") == "needs_approval")
    assert thread.is_alive()
    second = RunEvents(first.run_id, [RunLogWriter(state)])
    second.emit("resumed", stateKey="workflow_resume_x", decision="approve", approver=None)
    finish_run(second, "ok")
    thread.join(5)
    assert not thread.is_alive()
    assert types_of(seen)[-2:] == ["resumed", "run_finished"]


def test_follow_a_real_workflow_across_its_approval_and_resume(state: StateStore, tmp_path: Path) -> None:
    from lobster_tui.core.runner import RunContext, resume, run_workflow

    workflow = tmp_path / "gated.yaml"
    workflow.write_text(
        "name: gated\nsteps:\n  - id: before\n    run: echo one\n"
        "  - id: gate\n    approval: Go?\n  - id: after\n    run: echo two\n"
    )

    def context() -> RunContext:  # one per process in real life: each gets its own writer
        return RunContext(state=state, cwd=str(tmp_path), mode="tool", subscribers=[RunLogWriter(state)])

    halted = run_workflow(str(workflow), context())
    assert halted.status == "needs_approval" and halted.run_id is not None
    stop = threading.Event()
    seen, thread = follow_in_thread(state, halted.run_id, stop)
    wait_until(lambda: bool(seen) and seen[-1].get("status") == "needs_approval")
    assert thread.is_alive()

    approval_id = halted.requires_approval["approvalId"]  # type: ignore[index]
    finished = resume(context(), approval_id=approval_id, approved=True)
    assert finished.status == "ok" and finished.run_id == halted.run_id
    thread.join(10)
    still_following = thread.is_alive()
    stop.set()  # only frees the thread should the assertion below fail
    assert not still_following
    lines = [(e.get("stepId"), e["line"]) for e in seen if e["type"] == "output"]
    assert lines == [("before", "one"), ("after", "two")]
    assert types_of(seen)[-3:] == ["output", "step_finished", "run_finished"] and seen[-1]["status"] == "ok"


def test_follow_stops_when_asked(state: StateStore) -> None:
    run_id = logged_run(state, status="needs_approval")
    stop = threading.Event()
    seen, thread = follow_in_thread(state, run_id, stop)
    wait_until(lambda: len(seen) == 8)
    stop.set()
    thread.join(5)
    assert not thread.is_alive()


def test_typed_models_read_back_a_log(state: StateStore) -> None:
    run_id = logged_run(state, status="needs_approval")
    models = [parse_event(event) for event in read_events(state, run_id)]
    assert isinstance(models[2], Output) and models[2].step_id == "a" and models[2].line == "hi"
    assert isinstance(models[-1], RunFinished) and models[-1].status == "needs_approval"
