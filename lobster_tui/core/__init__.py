"""The Lobster runtime. Nothing in this package may import Textual (tests/core/test_layering.py)."""
