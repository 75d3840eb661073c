"""The inline pipeline DSL: parser, engine and the command library (spec §4, §5)."""
