"""``lobster-tui --demo``: a fresh state directory where the examples wait at their first checkpoints."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

from .resources import examples_dir

DEMO_WORKFLOWS = ("inbox-cleanup.lobster", "release-notes.lobster", "deploy.lobster")
DEMO_PIPELINE = (
    "exec --json --shell \"echo '[{\\\"path\\\":\\\"/var/log/app.log.1\\\",\\\"size_mb\\\":120},"
    "{\\\"path\\\":\\\"/var/log/app.log.2\\\",\\\"size_mb\\\":96}]'\" "
    "| approve --preview-from-stdin --prompt 'Delete 2 rotated log files?'"
)


def make_demo_state(base: Path | None = None, env: Mapping[str, str] | None = None) -> Path:
    """Run the examples with the real runner until each halts; return the state directory.

    The workflow files are copied next to the state directory first, so the checkpoints keep
    pointing at files that exist for as long as the demo folder does.
    """
    from lobster_tui.core.run_log import log_subscriber_for
    from lobster_tui.core.runner import RunContext, run_pipeline, run_workflow
    from lobster_tui.core.state import StateStore

    root = Path(base) if base is not None else Path(tempfile.mkdtemp(prefix="lobster-demo-"))
    workflows = root / "workflows"
    workflows.mkdir(parents=True, exist_ok=True)
    state = StateStore(root / "state")
    base_env = {k: v for k, v in (env or {}).items() if not k.startswith("LOBSTER_")}
    # Log the runs like the CLI does, so the previews can show what each run did before its gate.
    writer = log_subscriber_for(state)
    subscribers = [writer] if writer is not None else []
    for name in DEMO_WORKFLOWS:
        source = examples_dir() / name
        if not source.is_file():
            continue
        target = workflows / name
        shutil.copyfile(source, target)
        run_env = dict(base_env)
        if name == "deploy.lobster":
            # Shows the identity rules: production must be approved by someone other than ci-bot.
            run_env["LOBSTER_APPROVAL_INITIATED_BY"] = "ci-bot"
        context = RunContext(state=state, env=run_env, cwd=str(workflows), mode="tool", subscribers=list(subscribers))
        run_workflow(str(target), context)
    run_pipeline(
        DEMO_PIPELINE,
        RunContext(state=state, env=dict(base_env), cwd=str(workflows), mode="tool", subscribers=list(subscribers)),
    )
    return state.root


def remove_demo(state_root: Path) -> None:
    """Delete a demo folder made by :func:`make_demo_state` (the state dir's parent)."""
    parent = state_root.parent
    if parent.name.startswith("lobster-demo-"):
        shutil.rmtree(parent, ignore_errors=True)
