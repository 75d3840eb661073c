"""Every corpus schema renders, is filled by keyboard alone, and gives the answer the core accepts.

Starting a Textual app costs far more than filling a form, so the corpus runs in a few chunks,
each in one host app that swaps in one form after another; a failing case is reported by name.
"""

from __future__ import annotations

import pytest
from textual.pilot import Pilot

from lobster_tui.core.schema import compile_schema
from lobster_tui.tui.widgets.schema_form.fields import FieldWidget
from tests.tui.forms.corpus import CASES, Case
from tests.tui.forms.host import SIZE, FormHost, tab_to, type_text

CHUNK = 7
CHUNKS = [CASES[i : i + CHUNK] for i in range(0, len(CASES), CHUNK)]


def test_corpus_is_big_enough() -> None:
    assert len({case.name for case in CASES}) == len(CASES) >= 30


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_expected_answers_satisfy_their_schema(case: Case) -> None:
    assert compile_schema(case.schema).is_valid(case.expected)


async def _fill(pilot: Pilot[None], app: FormHost, case: Case) -> None:
    await app.replace_form(case.schema, case.defaults)
    await pilot.pause()
    for kind, *args in case.steps:
        if kind == "to":
            await tab_to(pilot, args[0])
        elif kind == "type":
            await type_text(pilot, args[0])
        else:
            await pilot.press(*args)
    await pilot.pause()
    form = app.form
    assert form.value == case.expected
    assert form.validate() is None
    assert form.dirty == (case.steps != ())
    # A valid answer leaves no error beside any field.
    assert not [f for f in form.query(FieldWidget) if f.errors_shown]


@pytest.mark.parametrize(
    "chunk", CHUNKS, ids=[f"{chunk[0].name}..{chunk[-1].name}" for chunk in CHUNKS]
)
async def test_fill_by_keyboard(chunk: list[Case]) -> None:
    app = FormHost()
    failures: list[str] = []
    async with app.run_test(size=SIZE) as pilot:
        for case in chunk:
            try:
                await _fill(pilot, app, case)
            except AssertionError as error:
                failures.append(f"{case.name}: {error}")
    assert not failures, "\n".join(failures)
