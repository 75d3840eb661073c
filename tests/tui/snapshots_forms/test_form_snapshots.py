"""Snapshots of five representative schema forms in a tiny host app at 100x40.

Each ends with ``validate()`` (so errors and the summary are drawn now, not after the debounce)
and with no focus, so no cursor blinks. Update with
``pytest tests/tui/snapshots_forms --snapshot-update`` after looking at the diff.
"""

from __future__ import annotations

from typing import Any

from textual.pilot import Pilot

from tests.tui.forms.corpus import ADDRESS, DEPLOY_PARAMS, NOTIFY, RELEASE
from tests.tui.forms.host import SIZE, FormHost, tab_to, type_text


async def _still(pilot: Pilot[Any]) -> None:
    app = pilot.app
    assert isinstance(app, FormHost)
    app.form.validate()
    app.screen.set_focus(None)
    await pilot.pause()


def test_release_notes_prefilled(snap_compare: Any) -> None:
    assert snap_compare(FormHost(RELEASE["responseSchema"], RELEASE["defaults"]), terminal_size=SIZE, run_before=_still)


def test_deploy_parameters_partly_filled(snap_compare: Any) -> None:
    async def fill(pilot: Pilot[Any]) -> None:
        await tab_to(pilot, "/environment")
        await pilot.press("right", "enter")
        await tab_to(pilot, "/replicas")
        await type_text(pilot, "4")
        await _still(pilot)

    assert snap_compare(FormHost(DEPLOY_PARAMS), terminal_size=SIZE, run_before=fill)


def test_discriminated_union_slack(snap_compare: Any) -> None:
    async def pick_slack(pilot: Pilot[Any]) -> None:
        await tab_to(pilot, "/channel")
        await pilot.press("right", "enter", "tab")
        await type_text(pilot, "deploys")
        await _still(pilot)

    assert snap_compare(FormHost(NOTIFY), terminal_size=SIZE, run_before=pick_slack)


def test_errors_beside_fields_after_validate(snap_compare: Any) -> None:
    async def submit_half_done(pilot: Pilot[Any]) -> None:
        await tab_to(pilot, "/address/postal_code")
        await type_text(pilot, "12a")
        await _still(pilot)

    assert snap_compare(FormHost(ADDRESS), terminal_size=SIZE, run_before=submit_half_done)


def test_json_tab(snap_compare: Any) -> None:
    async def open_json(pilot: Pilot[Any]) -> None:
        await pilot.press("f2")
        await _still(pilot)

    assert snap_compare(FormHost(RELEASE["responseSchema"], RELEASE["defaults"]), terminal_size=SIZE, run_before=open_json)
