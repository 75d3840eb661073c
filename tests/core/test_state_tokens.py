"""The state directory and tokens: key normalisation, atomic files, locks, claims, races."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lobster_tui.core.errors import LobsterParseError, LobsterRuntimeError
from lobster_tui.core.state import StateStore, is_consumed_marker, normalise_key
from lobster_tui.core.tokens import decode_token, encode_token
from tests.conftest import _clean_env


@pytest.mark.parametrize(
    ("key", "stem"),
    [
        ("_Demo KEY_", "demo_key"),
        ("___Demo KEY___", "demo_key"),
        (" Demo KEY ", "demo_key"),
        ("-Demo KEY-", "-demo_key-"),
        (".Demo KEY.", ".demo_key."),
        ("My Key/x", "my_key_x"),
    ],
)
def test_key_normalisation_examples(key: str, stem: str) -> None:
    assert normalise_key(key) == stem


@pytest.mark.parametrize("key", ["_", "___", "", "///"])
def test_keys_that_normalise_to_nothing_are_refused(key: str) -> None:
    with pytest.raises(LobsterRuntimeError, match="state key is empty/invalid"):
        normalise_key(key)


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_no_key_escapes_the_state_directory(key: str) -> None:
    store = StateStore(Path("/tmp/lobster-state-root"))
    try:
        path = store.key_path(key)
    except LobsterRuntimeError:
        return
    assert path.parent == store.root
    assert path.name.endswith(".json") and os.path.normpath(path) == str(path)


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1))
def test_tokens_round_trip(state_key: str) -> None:
    decoded = decode_token(encode_token("pipeline-resume", state_key))
    assert decoded.kind == "pipeline-resume" and decoded.state_key == state_key


@settings(max_examples=500, deadline=None)
@given(st.one_of(st.text(), st.binary().map(lambda b: b.decode("latin-1"))))
def test_decoding_arbitrary_text_fails_only_with_parse_errors(text: str) -> None:
    try:
        decode_token(text)
    except LobsterParseError:
        pass


def test_decoding_is_lenient_like_the_reference() -> None:
    token = encode_token("workflow-file", "workflow_resume_abc")
    padded = token + "=" * (-len(token) % 4)
    standard = padded.replace("-", "+").replace("_", "/")
    for variant in (padded, standard, " ".join(token[i : i + 10] for i in range(0, len(token), 10)), token + "!!garbage"):
        assert decode_token(variant).state_key == "workflow_resume_abc"


def test_atomic_writes_are_private_and_leave_no_temp_files(tmp_path: Path) -> None:
    store = StateStore(tmp_path / "state")
    store.write_value("k", {"a": [1, 2.5]})
    path = store.key_path("k")
    assert path.read_text() == '{\n  "a": [\n    1,\n    2.5\n  ]\n}\n'
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(store.root.stat().st_mode) == 0o700
    path.chmod(0o640)
    store.write_value("k", 1)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640  # rewriting keeps the mode
    assert sorted(p.name for p in store.root.iterdir()) == ["k.json"]


def test_locks_exclude_each_other_and_leave_nothing(tmp_path: Path) -> None:
    store = StateStore(tmp_path)
    inside = 0
    overlaps = 0
    guard = threading.Lock()

    def worker() -> None:
        nonlocal inside, overlaps
        for _ in range(20):
            with store.locked("shared"):
                with guard:
                    inside += 1
                    overlaps += inside > 1
                time.sleep(0.001)
                with guard:
                    inside -= 1

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert overlaps == 0
    assert list(tmp_path.iterdir()) == []


def test_a_lock_left_by_a_dead_process_is_reclaimed(tmp_path: Path) -> None:
    store = StateStore(tmp_path)
    lock = tmp_path / "k.json.lock"
    lock.mkdir()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    (lock / "owner").write_text(f"{dead.stdout.strip()}::abcdefabcdef\n")
    started = time.monotonic()
    with store.locked("k"):
        pass
    assert time.monotonic() - started < 2 and not lock.exists()


def test_claim_is_compare_and_swap(tmp_path: Path) -> None:
    store = StateStore(tmp_path)
    snapshot = {"pipeline": [], "resumeAtIndex": 0, "items": []}
    store.write_value("pipeline_resume_x", snapshot)
    assert store.claim("pipeline_resume_x", snapshot) is True
    assert is_consumed_marker(store.read_value("pipeline_resume_x"))
    assert store.claim("pipeline_resume_x", snapshot) is False


def test_approval_ids_are_sanitised_on_lookup(tmp_path: Path) -> None:
    store = StateStore(tmp_path)
    approval_id = store.create_approval_index("pipeline_resume_abc")
    assert approval_id is not None and len(approval_id) == 8
    assert store.find_state_key_by_approval_id(approval_id) == "pipeline_resume_abc"
    assert store.find_state_key_by_approval_id(approval_id.upper()) is None or approval_id.isdigit()
    dashed = f"{approval_id[:4]}-{approval_id[4:]}"
    assert store.find_state_key_by_approval_id(dashed) == "pipeline_resume_abc"
    index = json.loads(store.approval_index_path(approval_id).read_text())
    assert list(index) == ["stateKey", "createdAt"]


def test_racing_resumes_run_the_side_effect_once(tmp_path: Path) -> None:
    state_dir = tmp_path / "state"
    effects = tmp_path / "effects"
    env = _clean_env(state_dir)
    cli = [sys.executable, "-m", "lobster_tui.cli"]
    halted = subprocess.run(
        [*cli, "run", "--mode", "tool", f"exec --json --shell 'echo [1]' | approve --prompt go | exec --shell 'echo x >> {effects}'"],
        capture_output=True, text=True, env=env, cwd=tmp_path, check=True,
    )
    approval_id = json.loads(halted.stdout)["requiresApproval"]["approvalId"]
    racers = [
        subprocess.Popen([*cli, "resume", "--id", approval_id, "--approve", "yes"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
        for _ in range(6)
    ]
    results = [json.loads(proc.communicate(timeout=60)[0]) for proc in racers]
    winners = [r for r in results if r["ok"]]
    assert len(winners) == 1
    for loser in results:
        if not loser["ok"]:
            assert "not found" in loser["error"]["message"]
    assert effects.read_text().count("x") == 1
    assert [p.name for p in state_dir.iterdir() if p.suffix == ".json"] == []
    assert not any(p.name.endswith(".lock") or p.name.endswith(".tmp") for p in state_dir.iterdir())
    assert os.path.isdir(state_dir)


def test_outcome_tells_not_found_apart_from_other_failures() -> None:
    from lobster_tui.core.runner import Outcome

    gone = [Outcome(status="error", error_type="runtime_error", error_message=m)
            for m in ("Pipeline resume state not found", "Resume state not found")]
    gone.append(Outcome(status="error", error_type="parse_error", error_message='Approval ID "ab12" not found or expired'))
    assert all(outcome.not_found for outcome in gone)
    assert not Outcome(status="error", error_type="runtime_error", error_message="exec failed (1): boom").not_found
    assert not Outcome(status="ok").not_found
