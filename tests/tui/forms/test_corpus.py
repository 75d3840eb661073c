"""Every corpus schema renders, is filled by keyboard alone, and gives the answer the core accepts."""

from __future__ import annotations

import pytest

from lobster_tui.core.schema import compile_schema
from tests.tui.forms.corpus import CASES, Case
from tests.tui.forms.host import SIZE, FormHost, tab_to, type_text


def test_corpus_is_big_enough() -> None:
    assert len({case.name for case in CASES}) == len(CASES) >= 30


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
async def test_fill_by_keyboard(case: Case) -> None:
    compiled = compile_schema(case.schema)
    assert compiled.is_valid(case.expected), "the corpus expects an answer its own schema refuses"
    app = FormHost(case.schema, case.defaults)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        for step in case.steps:
            kind, *args = step
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
