"""A state directory written by the official runtime is listed and resumed by the inbox."""

from __future__ import annotations

from pathlib import Path

from lobster_tui.core.checkpoints import Checkpoint
from lobster_tui.tui.widgets.schema_form import SchemaForm
from tests.tui.helpers import MakeApp, settle


def resume_files(state: Path) -> list[str]:
    return sorted(p.name for p in state.glob("*_resume_*.json"))


async def test_official_checkpoints_are_listed_and_resumed(official_state: Path, make_app: MakeApp) -> None:
    app = make_app(official_state, approver="alice")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        entries = [e for e in app.inbox.checkpoint_list.entries if isinstance(e, Checkpoint)]
        assert [(e.kind, e.source, e.step) for e in entries] == [
            ("input", "workflow", "review"),
            ("approval", "workflow", "confirm"),
            ("approval", "pipeline", "approve"),
        ]
        assert [e.short_id for e in entries] == ["fcb96ed6", "d9e30443", "3d1ca43a"]
        assert app.sub_title == "3 pending"

        # Approve the pipeline (the oldest, last row): a, then y.
        await pilot.press("G", "a", "y")
        await settle(app, pilot)
        assert "pipeline_resume_6c897aa6-43b7-46da-835c-9e137c9a8ee5.json" not in resume_files(official_state)
        assert not (official_state / "approval_3d1ca43a.json").exists()
        log = "\n".join(app.inbox.log_panel.transcript)
        assert "The run finished ok." in log

        # Approve the workflow's gate: its archive step runs.
        listing = app.inbox.checkpoint_list
        assert listing.select_key("workflow_resume_f990d334-92ee-4dc6-92ce-1373acaa0cb8")
        await pilot.press("a", "y")
        await settle(app, pilot)
        log = "\n".join(app.inbox.log_panel.transcript)
        assert "✓ archive  ok" in log

        # Answer the input request through the answer screen.
        assert listing.select_key("workflow_resume_fcb96ed6-7feb-4deb-bea9-1975f00032b9")
        await pilot.press("enter")
        await pilot.pause()
        form = app.screen.query_one("#answer-form", SchemaForm)
        assert form.value["decision"] == "publish"  # prefilled from the workflow's defaults
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert resume_files(official_state) == []
        assert app.sub_title == "0 pending"
