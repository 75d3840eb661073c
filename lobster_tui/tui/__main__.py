"""``lobster-tui``: open the inbox of pending Lobster checkpoints."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``lobster-tui``."""
    parser = argparse.ArgumentParser(
        prog="lobster-tui",
        description="A terminal inbox of pending Lobster approvals and input requests.",
    )
    parser.add_argument(
        "--state-dir",
        help="state directory to list (default: $LOBSTER_STATE_DIR or ~/.lobster/state)",
    )
    parser.add_argument(
        "--approver",
        help="who you are when approving (default: $LOBSTER_APPROVAL_APPROVED_BY)",
    )
    parser.add_argument(
        "--demo",
        action="store_true",
        help="open a fresh temporary state directory where the examples wait at their first checkpoints",
    )
    parser.add_argument(
        "--no-watch",
        action="store_true",
        help="do not follow the state directory (press r to rescan)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``lobster-tui`` console script."""
    args = build_parser().parse_args(argv)
    from .app import create_app

    state_dir = args.state_dir
    demo_root = None
    if args.demo:
        from .demo import make_demo_state

        print("Preparing the demo: running the examples to their first checkpoints...", file=sys.stderr)
        demo_root = make_demo_state(env=os.environ)
        state_dir = str(demo_root)
    app = create_app(state_dir, watch=not args.no_watch, approver=args.approver)
    app.run()
    if demo_root is not None:
        from .demo import remove_demo

        remove_demo(demo_root)
    return app.return_code or 0


if __name__ == "__main__":
    raise SystemExit(main())
