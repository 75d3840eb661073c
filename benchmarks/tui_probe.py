"""Run inside a fresh process by bench_tui: launch the real app headless and exit at a milestone.

``python tui_probe.py paint STATE_DIR`` exits after the first paint;
``python tui_probe.py inbox STATE_DIR N`` exits once the inbox lists N entries.
The parent times the whole process; peak RSS is printed as ``maxrss_kib=<n>`` on stdout.
"""

from __future__ import annotations

import asyncio
import resource
import sys


async def main(mode: str, state_dir: str, expected: int) -> None:
    from lobster_tui.tui.app import create_app

    app = create_app(state_dir, watch=False)
    async with app.run_test(size=(120, 36)) as pilot:
        if mode == "inbox":
            listing = app.inbox.checkpoint_list
            # The title ("N pending") is set with the scan's result: it is what says an empty
            # inbox has been listed (its sub_title is None before, never "").
            while len(listing.entries) < expected or not app.inbox.sub_title:
                await asyncio.sleep(0.002)
        await pilot.pause()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 0))
    print(f"maxrss_kib={resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}")
