"""A resume by token scans the approval indexes once: the audit line's find is reused to clean up."""

from __future__ import annotations

from pathlib import Path

import pytest

from lobster_tui.core.runner import RunContext, resume, run_workflow
from lobster_tui.core.state import StateStore

FLOW = "steps:\n  - id: gate\n    approval: Go?\n  - id: after\n    run: echo done\n"


def _halted(tmp_path: Path) -> tuple[StateStore, str]:
    (tmp_path / "flow.lobster").write_text(FLOW)
    store = StateStore(tmp_path / "state")
    halted = run_workflow(str(tmp_path / "flow.lobster"), RunContext(state=store, cwd=str(tmp_path), env={}))
    assert halted.status == "needs_approval" and halted.requires_approval is not None
    # Another checkpoint's index stays where it is.
    store.root.joinpath("approval_00000000.json").write_text('{"stateKey":"workflow_resume_other"}')
    return store, halted.requires_approval["resumeToken"]


def test_a_token_resume_scans_indexes_once_and_removes_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store, token = _halted(tmp_path)
    scans = []
    original = StateStore.iter_approval_index_files

    def counted(self: StateStore):  # type: ignore[no-untyped-def]
        scans.append(1)
        return original(self)

    monkeypatch.setattr(StateStore, "iter_approval_index_files", counted)
    outcome = resume(RunContext(state=store, cwd=str(tmp_path), env={}), token=token, approved=True)
    assert outcome.status == "ok", outcome.error_message
    assert len(scans) == 1
    assert sorted(path.name for path in store.root.glob("approval_*.json")) == ["approval_00000000.json"]


def test_a_reused_id_is_not_removed_for_the_wrong_key(tmp_path: Path) -> None:
    store, _ = _halted(tmp_path)
    (own,) = [path for path in store.root.glob("approval_*.json") if path.name != "approval_00000000.json"]
    key = store.find_state_key_by_approval_id(own.stem.removeprefix("approval_"))
    assert key is not None and store.approval_ids_for_key(key)  # remembered by the scan
    own.write_text('{"stateKey":"workflow_resume_someone_else"}')  # the id now names another key
    store.remove_approval_indexes_for_key(key)
    assert own.exists()
