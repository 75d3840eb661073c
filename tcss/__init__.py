"""Stylesheets of lobster-tui (installed as the package ``lobster_tui.tcss``)."""
