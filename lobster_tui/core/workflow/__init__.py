"""Workflow files (spec §7): loading and validation, args, templates, conditions, dry-run plans,
graphs, and the executor that runs the steps."""
