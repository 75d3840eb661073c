"""KeyFooter: the keys shown follow the bindings, and unchanged bindings cost no rebuild."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Static
from textual.widgets._footer import FooterKey

from lobster_tui.tui.widgets.key_footer import KeyFooter


class Gate(Static, can_focus=True):
    BINDINGS = [Binding("a", "approve", "Approve"), Binding("x", "reject", "Reject")]
    open = True

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.open if action == "approve" else True


class FooterApp(App[None]):
    def compose(self) -> ComposeResult:
        yield Gate("gate")
        yield KeyFooter()


def shown_keys(app: FooterApp) -> list[str]:
    return [key.description for key in app.query(FooterKey) if not key.has_class("-command-palette")]


async def test_a_burst_of_binding_refreshes_rebuilds_once_and_only_on_change() -> None:
    app = FooterApp()
    async with app.run_test() as pilot:
        app.query_one(Gate).focus()
        await pilot.pause()
        footer = app.query_one(KeyFooter)
        assert shown_keys(app) == ["Approve", "Reject"]
        rebuilds = 0
        original = footer.recompose

        async def counted() -> None:
            nonlocal rebuilds
            rebuilds += 1
            await original()

        footer.recompose = counted  # type: ignore[method-assign]
        for _ in range(5):
            app.screen.refresh_bindings()
        await pilot.pause()
        assert rebuilds == 0  # the same keys: nothing to rebuild
        app.query_one(Gate).open = False
        for _ in range(5):
            app.screen.refresh_bindings()
        await pilot.pause()
        await pilot.pause()
        assert rebuilds == 1
        assert shown_keys(app) == ["Reject"]
