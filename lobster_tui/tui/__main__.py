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
    parser.add_argument(
        "--config",
        metavar="PATH",
        help="config file (default: $XDG_CONFIG_HOME/lobster-tui/config.toml or ~/.config/lobster-tui/config.toml)",
    )
    parser.add_argument(
        "--serve",
        action="store_true",
        help="serve the app in a web browser instead (needs the serve extra: pip install 'lobster-tui[serve]')",
    )
    parser.add_argument("--host", default="127.0.0.1", help="with --serve: address to listen on (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="with --serve: port to listen on (default: 8000)")
    commands = parser.add_subparsers(dest="command", metavar="{run}")
    run = commands.add_parser(
        "run",
        help="run a workflow file and watch it live",
        description="Run a workflow file through the runtime (tool mode) and open straight into its live view.",
    )
    run.add_argument("file", help="workflow file (.lobster, .yaml, .yml, .json)")
    run.add_argument("--args-json", metavar="JSON", help="the workflow's args as JSON, as for lobster run")
    # Also accepted after "run" (SUPPRESS: absent here does not undo the same option given before it).
    run.add_argument("--state-dir", default=argparse.SUPPRESS, help="as above")
    run.add_argument("--approver", default=argparse.SUPPRESS, help="as above")
    return parser


def _start_request(args: argparse.Namespace) -> tuple[str | None, object, str | None]:
    """``lobster-tui run FILE [--args-json JSON]``: (file, args, problem)."""
    if getattr(args, "command", None) != "run":
        return None, None, None
    import json

    start_args = None
    if args.args_json is not None:
        try:
            start_args = json.loads(args.args_json)
        except ValueError as error:
            return None, None, f"--args-json is not JSON: {error}"
    return os.path.abspath(os.path.expanduser(args.file)), start_args, None


def _forwarded(args: argparse.Namespace) -> list[str]:
    """The options a served browser session's own lobster-tui gets (all but the serve ones)."""
    forward: list[str] = []
    for name in ("state_dir", "approver", "config"):
        value = getattr(args, name)
        if value:
            forward += [f"--{name.replace('_', '-')}", value]
    if args.demo:
        forward.append("--demo")
    if args.no_watch:
        forward.append("--no-watch")
    return forward


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``lobster-tui`` console script."""
    args = build_parser().parse_args(argv)
    start_file, start_args, problem = _start_request(args)
    if problem is not None:
        print(f"lobster-tui run: {problem}", file=sys.stderr)
        return 2
    if args.serve:
        from .serve import serve

        return serve(args.host, args.port, _forwarded(args))
    from .app import create_app
    from .config import load_config

    config = load_config(args.config)
    for problem in config.problems:
        # Also a notification in the app; said here too, where it stays after the app closes.
        print(f"lobster-tui: config: {problem}", file=sys.stderr)

    state_dir = args.state_dir
    demo_root = None
    if args.demo:
        from .demo import make_demo_state

        print("Preparing the demo: running the examples to their first checkpoints...", file=sys.stderr)
        demo_root = make_demo_state(env=os.environ)
        state_dir = str(demo_root)
    app = create_app(
        state_dir,
        watch=not args.no_watch,
        approver=args.approver,
        config=config,
        start_file=start_file,
        start_args=start_args,
    )
    for problem in app.config_problems[len(config.problems) :]:
        print(f"lobster-tui: config: {problem}", file=sys.stderr)
    app.run()
    if demo_root is not None:
        from .demo import remove_demo

        remove_demo(demo_root)
    return app.return_code or 0


if __name__ == "__main__":
    raise SystemExit(main())
