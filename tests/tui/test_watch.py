"""The inbox follows the state directory through the real watcher (no fixed sleeps)."""

from __future__ import annotations

from lobster_tui.core.runner import resume
from tests.tui.helpers import Lobster, MakeApp, wait_until


async def test_new_checkpoints_appear_and_consumed_ones_go_keeping_the_selection(
    lobster: Lobster, make_app: MakeApp
) -> None:
    lobster.workflow("inbox-cleanup")
    lobster.workflow("release-notes")
    app = make_app(lobster.root, watch=True, debounce_ms=20)
    async with app.run_test(size=(120, 36)) as pilot:
        listing = app.inbox.checkpoint_list
        await wait_until(lambda: len(listing.entries) == 2, pilot, message="initial scan")
        # Highlight the older one (inbox-cleanup, second row).
        await pilot.press("j")
        selected = listing.highlighted
        assert selected is not None and selected.workflow == "inbox-cleanup"  # type: ignore[union-attr]
        # The watcher arms itself in a worker; poke the directory until a rescan proves it is on.
        generation = app.inbox._scan_generation

        def poked() -> bool:
            lobster.state.write_value("approval_00000000", {"stateKey": "nothing"})
            return app.inbox._scan_generation > generation

        await wait_until(poked, pilot, message="watcher armed")

        outcome = lobster.pipeline()  # a new checkpoint, newest first: rows shift down
        # Listed by the watcher, no key pressed (how fast is benchmarks/bench_tui.py's watch row).
        await wait_until(lambda: len(listing.entries) == 3, pilot, timeout=5, message="new checkpoint listed")
        assert listing.highlighted is not None
        assert listing.highlighted.state_key == selected.state_key  # selection followed the checkpoint
        assert listing.cursor_row == 2

        # Consumed elsewhere: it goes away by itself.
        done = resume(lobster.context(), token=outcome.requires_approval["resumeToken"], approved=True)
        assert done.status == "ok"
        await wait_until(lambda: len(listing.entries) == 2, pilot, timeout=5, message="consumed checkpoint removed")
        assert listing.highlighted is not None and listing.highlighted.state_key == selected.state_key
