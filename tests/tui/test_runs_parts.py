"""Unit tests of the pieces behind the Runs screens: the bounded feed, the story, the args form."""

from __future__ import annotations

import json
from pathlib import Path

from lobster_tui.tui.event_feed import EventFeed, OutputBlock, Skipped, output_events
from lobster_tui.tui.run_story import EVENT, NOTE, STDERR, STDOUT, CheckpointEntry, RunStory, StepEntry
from lobster_tui.tui.screens.start_run import ArgField, describe_workflow, find_workflows

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _block(step: str = "s", stream: str = "stdout") -> dict[str, object]:
    return {"type": "output", "runId": "r1", "seq": 1, "stepId": step, "stream": stream}


def test_feed_merges_blocks_and_keeps_the_newest_lines_with_a_marker_where_the_rest_were() -> None:
    feed = EventFeed(keep_lines=5)
    feed.push({"type": "step_started", "stepId": "s"})
    feed.output_block(_block(), "1\n2\n3", 3)
    feed.output_block(_block(), "4\n5\n6\n7", 4)
    feed.output_block(_block(stream="stderr"), "oops", 1)
    feed.push({"type": "step_finished", "stepId": "s"})
    assert feed.total_lines == 8
    items, dropped = feed.drain()
    assert dropped == 3
    started, skipped, out, err, finished = items
    assert started["type"] == "step_started" and finished["type"] == "step_finished"
    assert isinstance(skipped, Skipped) and (skipped.count, skipped.run_id, skipped.step_id) == (3, "r1", "s")
    assert isinstance(out, OutputBlock) and out.lines() == ["4", "5", "6", "7"] and out.count == 4
    assert isinstance(err, OutputBlock) and err.stream == "stderr" and err.lines() == ["oops"]
    assert [event["line"] for event in output_events(out)] == ["4", "5", "6", "7"]


def test_feed_memory_stays_bounded_while_nobody_drains() -> None:
    feed = EventFeed(keep_lines=1000)
    block = "\n".join(str(n) for n in range(100))
    for _ in range(10_000):  # a million lines, in blocks of 100
        feed.output_block(_block(), block, 100)
        assert feed.pending_lines <= 2000
    items, dropped = feed.drain(keep_lines=10)
    assert dropped == 1_000_000 - 10
    assert isinstance(items[-1], OutputBlock) and items[-1].lines() == [str(n) for n in range(90, 100)]


def test_feed_partial_trim_splits_only_the_tail_of_one_block() -> None:
    block = OutputBlock(_block(), ["a\nb\nc", "d\ne"], 5)
    assert block.keep_last(3) == 2
    assert block.lines() == ["c", "d", "e"]
    assert block.keep_last(5) == 0


def test_feed_trims_by_the_line_counts_blocks_came_with() -> None:
    feed = EventFeed(keep_lines=4)
    for start in range(0, 30, 3):  # blocks of 3 lines: "0\n1\n2", "3\n4\n5", ...
        feed.output_block(_block(), "\n".join(str(n) for n in range(start, start + 3)), 3)
    items, dropped = feed.drain(keep_lines=5)
    out = items[-1]
    assert isinstance(out, OutputBlock) and dropped == 25
    assert out.lines() == ["25", "26", "27", "28", "29"]
    assert out.piece_lines == [2, 3] and sum(out.piece_lines) == out.count == 5


def test_story_reads_a_run_across_its_checkpoint_as_one_story() -> None:
    story = RunStory()
    for line in (FIXTURES / "runs_state" / "runs" / "4f1c2a9e7b30.jsonl").read_text().splitlines():
        story.take_event(json.loads(line))
    assert story.status == "ok" and story.run_id == "4f1c2a9e7b30" and story.segments_finished == 2
    steps = [entry for entry in story.timeline if isinstance(entry, StepEntry)]
    assert [(step.step_id, step.status) for step in steps] == [("collect", "ok"), ("confirm", "ok"), ("archive", "ok")]
    assert steps[0].exit_code == 0 and steps[0].lines == 6
    (checkpoint,) = [entry for entry in story.timeline if isinstance(entry, CheckpointEntry)]
    assert checkpoint.decision == "approve" and checkpoint.approver == "alice"
    assert checkpoint.prompt.startswith("Archive these 3 newsletters")
    kinds = [kind for kind, _ in story.lines]
    assert STDERR in kinds and STDOUT in kinds and EVENT in kinds
    # Duration: first event to the last run_finished (31 minutes waiting at the gate included).
    assert story.duration_ms() == 31 * 60_000 + 9_100


def test_story_keeps_the_newest_lines_and_numbers_them_from_the_start() -> None:
    story = RunStory(max_lines=100)
    story.take_event({"type": "step_started", "stepId": "loud", "runId": "r"})
    story.take_output("stdout", [str(n) for n in range(250)], "loud")
    assert len(story.lines) == 100 and story.next_number == 251 and story.first_number == 151
    assert story.line(250) == (STDOUT, "249") and story.line(100) is None
    story.take([Skipped(1000, "r", "loud")])
    assert story.line(story.next_number - 1) == (NOTE, "… 1,000 lines not shown — lobster logs r")
    assert story.steps[0].lines == 1250


def test_arg_fields_take_text_for_strings_and_json_for_the_rest() -> None:
    assert ArgField("mailbox", "personal").parse("work") == (True, "work", None)
    assert ArgField("note").parse("") == (False, None, None)  # no default, left empty: not sent
    days = ArgField("days", 30)
    assert days.is_json and days.initial_text == "30"
    assert days.parse("45") == (True, 45, None)
    include, _value, problem = days.parse("forty")
    assert not include and problem is not None and problem.startswith("not JSON")
    assert ArgField("tags", ["a", "b"]).initial_text == '["a", "b"]'


def test_workflow_files_are_found_and_described(tmp_path: Path) -> None:
    (tmp_path / "hello.lobster").write_text(
        "name: hello\ndescription: Says hello\nargs:\n  who:\n    default: world\n    description: whom\n"
        "  times:\n    default: 2\nsteps:\n  - id: greet\n    run: echo hi\n"
    )
    (tmp_path / "package.json").write_text('{"name": "not a workflow"}')
    (tmp_path / "broken.lobster").write_text("steps: 5\n")
    (tmp_path / "notes.txt").write_text("steps: []")
    found = {Path(info.path).name: info for info in find_workflows(str(tmp_path))}
    assert sorted(found) == ["broken.lobster", "hello.lobster"]
    assert found["broken.lobster"].problem
    hello = found["hello.lobster"]
    assert (hello.name, hello.description) == ("hello", "Says hello")
    assert [(field.name, field.default, field.description) for field in hello.args] == [
        ("who", "world", "whom"), ("times", 2, None)]
    assert describe_workflow("missing.lobster", str(tmp_path)).problem.startswith("ENOENT")  # type: ignore[union-attr]


async def test_inbox_log_panel_shows_a_bounded_tail_of_a_flood(tmp_path: Path) -> None:
    from lobster_tui.tui.app import create_app
    from lobster_tui.tui.widgets.log_panel import LogPanel

    app = create_app(tmp_path / "state", watch=False, env={"PATH": "/usr/bin:/bin"}, cwd=str(tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        app.inbox.show_log()
        panel = app.inbox.log_panel
        feed = panel.new_feed("approve · loud")
        # The runner hands 200,000 lines as blocks from its reader thread; nobody drains meanwhile.
        feed.push({"type": "step_started", "runId": "r9", "stepId": "loud", "command": "seq 200000"})
        block = "\n".join(str(n) for n in range(1, 1001))
        for start in range(0, 200_000, 1000):
            feed.output_block({"type": "output", "runId": "r9", "seq": start, "stepId": "loud", "stream": "stdout"},
                              block if start else block, 1000)
        assert feed.pending_lines <= 8 * LogPanel.BATCH_LINES  # memory bounded while the UI is busy
        panel.finish(feed, "ok", "The run finished ok.")
        await pilot.pause()
        transcript = panel.transcript
        assert len(transcript) <= LogPanel.BATCH_LINES + 10
        assert any("lines not shown — lobster logs r9" in line for line in transcript), transcript[:5]
        assert transcript[-2].endswith("1000") and transcript[-1] == "⏹ The run finished ok."
