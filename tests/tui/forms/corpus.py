"""Schemas people actually write, each with keys that fill its form and the answer they must give.

Every case is rendered, filled by keyboard only (``tab`` to a field, type, arrows, ``enter``,
``space``), and the form's value must equal ``expected`` and satisfy the core validator.
Steps are tuples:

- ``("to", "/path")``: press ``tab`` until the cursor is inside the field at that JSON Pointer;
- ``("type", "text")``: type the text (``\\n`` presses ``enter``);
- ``("keys", "down", "enter", ...)``: press those keys.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from lobster_tui.core.jsvalues import UNDEFINED

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"

Step = tuple[str, ...]


@dataclass(frozen=True)
class Case:
    """One schema, how to fill its form by keyboard, and the answer that must come out."""

    name: str
    schema: Any
    steps: tuple[Step, ...]
    expected: Any
    defaults: Any = UNDEFINED
    notes: str = field(default="", compare=False)


def _example_input(file: str, step: str) -> dict[str, Any]:
    workflow = yaml.safe_load((EXAMPLES / file).read_text(encoding="utf-8"))
    found = next(s for s in workflow["steps"] if s["id"] == step)
    return dict(found["input"])


# The spec's default `ask` schema (R-CMD-ASK-2).
ASK_SCHEMA = {
    "type": "object",
    "properties": {
        "decision": {"type": "string", "enum": ["approve", "reject", "redraft"]},
        "feedback": {"type": "string", "description": "Feedback for redraft"},
    },
    "required": ["decision"],
}

RELEASE = _example_input("release-notes.lobster", "review")
SMOKE = _example_input("deploy.lobster", "smoke_report")

DEPLOY_PARAMS = {
    "type": "object",
    "title": "Deploy parameters",
    "required": ["service", "environment", "replicas"],
    "properties": {
        "service": {
            "type": "string",
            "title": "Service",
            "enum": ["billing-api", "checkout", "inventory", "search", "notifications", "auth"],
        },
        "environment": {"type": "string", "title": "Environment", "enum": ["staging", "production"]},
        "replicas": {"type": "integer", "title": "Replicas", "minimum": 1, "maximum": 20},
        "dry_run": {"type": "boolean", "title": "Dry run", "default": True},
        "ref": {"type": "string", "title": "Git ref", "pattern": "^[A-Za-z0-9._/-]+$", "default": "main"},
    },
}

TRIAGE = {
    "type": "object",
    "title": "Triage",
    "required": ["action", "priority"],
    "properties": {
        "action": {"type": "string", "enum": ["accept", "reject", "defer", "duplicate"]},
        "priority": {"type": "integer", "enum": [1, 2, 3, 4], "title": "Priority"},
        "labels": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
        "duplicate_of": {"type": ["integer", "null"], "title": "Duplicate of issue"},
        "comment": {"type": "string", "maxLength": 2000, "title": "Comment"},
    },
}

ADDRESS = {
    "type": "object",
    "title": "Shipping address",
    "required": ["name", "address"],
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "address": {
            "type": "object",
            "required": ["street", "city", "postal_code", "country"],
            "properties": {
                "street": {"type": "string"},
                "city": {"type": "string"},
                "postal_code": {"type": "string", "pattern": "^[0-9]{5}$"},
                "country": {"type": "string", "enum": ["DE", "FR", "NL", "US", "GB", "IT"]},
            },
        },
    },
}

RECIPIENTS = {
    "type": "object",
    "required": ["recipients"],
    "properties": {
        "recipients": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["email"],
                "properties": {
                    "name": {"type": "string"},
                    "email": {"type": "string", "format": "email"},
                },
            },
        },
        "subject": {"type": "string", "default": "Weekly report"},
    },
}

NOTIFY = {
    "type": "object",
    "required": ["channel"],
    "properties": {
        "channel": {
            "oneOf": [
                {
                    "type": "object",
                    "title": "Email",
                    "required": ["kind", "address"],
                    "properties": {"kind": {"const": "email"}, "address": {"type": "string", "format": "email"}},
                },
                {
                    "type": "object",
                    "title": "Slack",
                    "required": ["kind", "channel"],
                    "properties": {"kind": {"const": "slack"}, "channel": {"type": "string", "pattern": "^#"}},
                },
                {
                    "type": "object",
                    "title": "Webhook",
                    "required": ["kind", "url"],
                    "properties": {"kind": {"const": "webhook"}, "url": {"type": "string", "format": "uri"}},
                },
            ]
        }
    },
}

PEOPLE_DEFS = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "person": {
            "type": "object",
            "required": ["login"],
            "properties": {"login": {"type": "string"}, "team": {"type": "string", "enum": ["core", "infra", "docs"]}},
        }
    },
    "required": ["author"],
    "properties": {"author": {"$ref": "#/$defs/person"}, "reviewer": {"$ref": "#/$defs/person"}},
}

DRAFT7_DEFS = {
    "definitions": {"money": {"type": "object", "required": ["amount", "currency"], "properties": {
        "amount": {"type": "number", "minimum": 0},
        "currency": {"type": "string", "enum": ["EUR", "USD"]},
    }}},
    "type": "object",
    "required": ["budget"],
    "properties": {"budget": {"$ref": "#/definitions/money"}},
}

TREE = {
    "$defs": {
        "node": {
            "type": "object",
            "required": ["name"],
            "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
        }
    },
    "$ref": "#/$defs/node",
}

CASES: list[Case] = [
    Case(
        "ask-default",
        ASK_SCHEMA,
        (("to", "/decision"), ("keys", "right", "right", "enter"), ("to", "/feedback"), ("type", "tighten the intro")),
        {"decision": "redraft", "feedback": "tighten the intro"},
        notes="spec R-CMD-ASK-2",
    ),
    Case(
        "ask-default-approve-only",
        ASK_SCHEMA,
        (("to", "/decision"), ("keys", "enter")),
        {"decision": "approve"},
    ),
    Case(
        "release-notes-review",
        RELEASE["responseSchema"],
        (
            ("to", "/decision"),
            ("keys", "right", "enter"),
            ("to", "/audience/channels"),
            ("keys", "down", "down", "space"),
            ("to", "/edits"),
            ("keys", "enter"),
            ("type", "Highlights"),
            ("keys", "tab"),
            ("type", "Mention the 10k benchmark"),
            ("to", "/notes"),
            ("type", "Looks good\nShip it"),
        ),
        {
            "decision": "revise",
            "audience": {"channels": ["changelog", "newsletter"]},
            "edits": [{"section": "Highlights", "change": "Mention the 10k benchmark"}],
            "notes": "Looks good\nShip it",
        },
        defaults=RELEASE["defaults"],
    ),
    Case(
        "release-notes-defaults-untouched",
        RELEASE["responseSchema"],
        (),
        {"decision": "publish", "audience": {"channels": ["changelog"]}},
        defaults=RELEASE["defaults"],
    ),
    Case(
        "release-notes-embargo",
        RELEASE["responseSchema"],
        (("to", "/audience/embargo_until"), ("type", "2026-12-01")),
        {"decision": "publish", "audience": {"channels": ["changelog"], "embargo_until": "2026-12-01"}},
        defaults=RELEASE["defaults"],
    ),
    Case(
        "deploy-smoke-report",
        SMOKE["responseSchema"],
        (
            ("to", "/passed"),
            ("keys", "space"),
            ("to", "/failures"),
            ("keys", "enter"),
            ("type", "login flaky"),
            ("to", "/latency_p95_ms"),
            ("type", "x1-2a0"),
        ),
        {"passed": True, "failures": ["login flaky"], "latency_p95_ms": 120},
        notes="letters typed into the integer field are refused",
    ),
    Case(
        "deploy-parameters",
        DEPLOY_PARAMS,
        (
            ("to", "/service"),
            ("keys", "enter"),
            ("type", "inv"),
            ("keys", "enter"),
            ("to", "/environment"),
            ("keys", "right", "enter"),
            ("to", "/replicas"),
            ("type", "3"),
            ("to", "/dry_run"),
            ("keys", "space"),
        ),
        {"service": "inventory", "environment": "production", "replicas": 3, "dry_run": False, "ref": "main"},
    ),
    Case(
        "triage-decision",
        TRIAGE,
        (
            ("to", "/action"),
            ("keys", "right", "right", "right", "enter"),
            ("to", "/priority"),
            ("keys", "right", "enter"),
            ("to", "/labels"),
            ("keys", "enter"),
            ("type", "bug"),
            ("to", "/duplicate_of"),
            ("keys", "tab"),
            ("type", "1234"),
        ),
        {"action": "duplicate", "priority": 2, "labels": ["bug"], "duplicate_of": 1234},
    ),
    Case(
        "triage-null-duplicate",
        TRIAGE,
        (
            ("to", "/action"),
            ("keys", "enter"),
            ("to", "/priority"),
            ("keys", "enter"),
            ("to", "/duplicate_of"),
            ("keys", "space"),
        ),
        {"action": "accept", "priority": 1, "duplicate_of": None},
        notes="the null toggle beside a nullable field",
    ),
    Case(
        "address",
        ADDRESS,
        (
            ("to", "/name"),
            ("type", "Ada Lovelace"),
            ("to", "/address/street"),
            ("type", "1 Analytical Way"),
            ("keys", "enter"),
            ("type", "London"),
            ("keys", "enter"),
            ("type", "12345"),
            ("to", "/address/country"),
            ("keys", "enter"),
            ("type", "GB"),
            ("keys", "enter"),
        ),
        {
            "name": "Ada Lovelace",
            "address": {"street": "1 Analytical Way", "city": "London", "postal_code": "12345", "country": "GB"},
        },
        notes="enter in a one-line field moves to the next",
    ),
    Case(
        "recipients",
        RECIPIENTS,
        (
            ("to", "/recipients"),
            ("keys", "enter"),
            ("type", "Grace"),
            ("keys", "tab"),
            ("type", "grace@example.com"),
        ),
        {"recipients": [{"name": "Grace", "email": "grace@example.com"}], "subject": "Weekly report"},
        notes="a property default prefills the subject",
    ),
    Case(
        "recipients-two",
        RECIPIENTS,
        (
            ("to", "/recipients"),
            ("keys", "enter"),
            ("keys", "tab"),
            ("type", "a@example.com"),
            ("keys", "tab", "enter"),
            ("keys", "tab"),
            ("type", "b@example.com"),
        ),
        {"recipients": [{"email": "a@example.com"}, {"email": "b@example.com"}], "subject": "Weekly report"},
        notes="with one recipient and minItems 1 the row buttons are disabled, so tab goes to + Add",
    ),
    Case(
        "discriminated-union-slack",
        NOTIFY,
        (("to", "/channel"), ("keys", "right", "enter"), ("keys", "tab"), ("type", "#deploys")),
        {"channel": {"kind": "slack", "channel": "#deploys"}},
        notes="the const discriminator is set by the pick",
    ),
    Case(
        "discriminated-union-prefilled",
        NOTIFY,
        (("to", "/channel/url"), ("type", "https://hooks.example/x")),
        {"channel": {"kind": "webhook", "url": "https://hooks.example/x"}},
        defaults={"channel": {"kind": "webhook", "url": "https://old.example"}},
    ),
    Case(
        "nullable-string",
        {
            "type": "object",
            "properties": {"reason": {"type": ["string", "null"], "title": "Reason"}, "ok": {"type": "boolean"}},
            "required": ["reason"],
        },
        (("to", "/reason"), ("keys", "space")),
        {"reason": None},
    ),
    Case(
        "nullable-anyof-root",
        {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}], "title": "Retry count"},
        (("to", ""), ("keys", "tab"), ("type", "7")),
        7,
    ),
    Case(
        "map-additional-properties",
        {"type": "object", "title": "Resource limits", "additionalProperties": {"type": "integer", "minimum": 0}},
        (("to", ""), ("keys", "enter"), ("type", "cpu"), ("keys", "enter"), ("type", "4")),
        {"cpu": 4},
        notes="enter on a key goes to its value",
    ),
    Case(
        "object-with-extra-labels",
        {
            "type": "object",
            "required": ["name"],
            "properties": {"name": {"type": "string"}},
            "additionalProperties": {"type": "string"},
        },
        (
            ("to", "/name"),
            ("type", "db"),
            ("keys", "tab", "enter"),
            ("type", "owner"),
            ("keys", "enter"),
            ("type", "infra"),
        ),
        {"name": "db", "owner": "infra"},
    ),
    Case(
        "refs-2020-12",
        PEOPLE_DEFS,
        (
            ("to", "/author/login"),
            ("type", "octocat"),
            ("to", "/author/team"),
            ("keys", "right", "right", "enter"),
            ("to", "/reviewer/login"),
            ("type", "hubot"),
        ),
        {"author": {"login": "octocat", "team": "infra"}, "reviewer": {"login": "hubot"}},
    ),
    Case(
        "refs-draft-07-definitions",
        DRAFT7_DEFS,
        (("to", "/budget/amount"), ("type", "12.5"), ("to", "/budget/currency"), ("keys", "enter")),
        {"budget": {"amount": 12.5, "currency": "EUR"}},
    ),
    Case(
        "recursive-tree",
        TREE,
        (
            ("to", "/name"),
            ("type", "root"),
            ("to", "/children"),
            ("keys", "enter"),
            ("type", "leaf"),
        ),
        {"name": "root", "children": [{"name": "leaf"}]},
    ),
    Case(
        "root-string",
        {"type": "string", "title": "Commit message", "minLength": 1},
        (("to", ""), ("type", "fix: typo")),
        "fix: typo",
    ),
    Case(
        "root-number",
        {"type": "number", "title": "Threshold", "exclusiveMinimum": 0},
        (("to", ""), ("type", "0.75")),
        0.75,
    ),
    Case(
        "root-enum",
        {"type": "string", "enum": ["low", "medium", "high"], "title": "Severity"},
        (("to", ""), ("keys", "right", "right", "enter")),
        "high",
    ),
    Case(
        "root-array-of-strings",
        {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1, "title": "Hosts"},
        (("to", ""), ("keys", "enter"), ("type", "a.example")),
        ["a.example"],
    ),
    Case(
        "enum-of-numbers",
        {"type": "object", "required": ["points"], "properties": {"points": {"type": "integer", "enum": [1, 2, 3, 5, 8, 13]}}},
        (("to", "/points"), ("keys", "enter", "down", "down", "down", "down", "enter")),
        {"points": 5},
    ),
    Case(
        "const-version",
        {
            "type": "object",
            "required": ["version", "confirmed"],
            "properties": {"version": {"const": 2}, "confirmed": {"type": "boolean", "title": "I have read the diff"}},
        },
        (("to", "/confirmed"), ("keys", "space")),
        {"version": 2, "confirmed": True},
    ),
    Case(
        "nested-arrays-of-objects",
        {
            "type": "object",
            "properties": {
                "stages": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "title": "Stage",
                        "required": ["name", "steps"],
                        "properties": {
                            "name": {"type": "string"},
                            "steps": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                        },
                    },
                }
            },
        },
        (
            ("to", "/stages"),
            ("keys", "enter"),
            ("type", "build"),
            ("keys", "tab", "enter"),
            ("type", "make"),
        ),
        {"stages": [{"name": "build", "steps": ["make"]}]},
    ),
    Case(
        "titled-constants",
        {
            "type": "object",
            "required": ["urgency"],
            "properties": {
                "urgency": {
                    "oneOf": [
                        {"const": "p1", "title": "Drop everything"},
                        {"const": "p2", "title": "This week"},
                        {"const": "p3", "title": "Someday"},
                    ]
                }
            },
        },
        (("to", "/urgency"), ("keys", "right", "enter")),
        {"urgency": "p2"},
    ),
    Case(
        "type-list-union",
        {"type": ["string", "integer"], "title": "Ticket"},
        (("to", ""), ("keys", "right", "enter", "tab"), ("type", "42")),
        42,
    ),
    Case(
        "multiline-x-multiline",
        {"type": "object", "properties": {"body": {"type": "string", "x-multiline": True, "title": "Body"}}},
        (("to", "/body"), ("type", "Line one\nLine two")),
        {"body": "Line one\nLine two"},
    ),
    Case(
        "tuple-array-as-json",
        {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "required": ["point"],
            "properties": {"point": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}]}},
        },
        (("to", "/point"), ("type", "[1, 2]")),
        {"point": [1, 2]},
        notes="tuple arrays fall back to a JSON editor for that part",
    ),
    Case(
        "if-then-else-as-json",
        {
            "type": "object",
            "required": ["rollout"],
            "properties": {
                "title": {"type": "string"},
                "rollout": {
                    "type": "object",
                    "if": {"properties": {"mode": {"const": "canary"}}},
                    "then": {"required": ["percent"]},
                },
            },
        },
        (("to", "/title"), ("type", "Canary"), ("to", "/rollout"), ("type", '{"mode": "canary", "percent": 5}')),
        {"title": "Canary", "rollout": {"mode": "canary", "percent": 5}},
    ),
    Case(
        "pattern-properties-as-json",
        {
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "patternProperties": {"^x-": {"type": "string"}},
            "additionalProperties": False,
        },
        (("to", "/name"), ("type", "svc"), ("keys", "tab", "enter"), ("type", "x-team"), ("keys", "enter"), ("type", '"core"')),
        {"name": "svc", "x-team": "core"},
    ),
    Case(
        "not-as-json",
        {"type": "object", "properties": {"code": {"not": {"type": "string"}}}},
        (("to", "/code"), ("type", "17")),
        {"code": 17},
    ),
    Case(
        "bounded-number",
        {
            "type": "object",
            "required": ["ratio"],
            "properties": {"ratio": {"type": "number", "minimum": 0, "maximum": 100, "multipleOf": 0.5}},
        },
        (("to", "/ratio"), ("type", "42.5")),
        {"ratio": 42.5},
    ),
    Case(
        "enum-with-null",
        {"type": "object", "required": ["level"], "properties": {"level": {"enum": ["warn", "error", None]}}},
        (("to", "/level"), ("keys", "right", "right", "enter")),
        {"level": None},
    ),
    Case(
        "optional-boolean-left-out",
        {
            "type": "object",
            "required": ["notify"],
            "properties": {"notify": {"type": "boolean"}, "archive": {"type": "boolean"}, "note": {"type": "string"}},
        },
        (("to", "/note"), ("type", "ok")),
        {"notify": False, "note": "ok"},
    ),
    Case(
        "schedule-date-time",
        {
            "type": "object",
            "required": ["at", "timezone"],
            "properties": {
                "at": {"type": "string", "format": "date-time", "title": "When"},
                "timezone": {"type": "string", "enum": ["UTC", "Europe/Berlin", "America/New_York", "Asia/Tokyo", "Australia/Sydney"]},
            },
        },
        (("to", "/at"), ("type", "2026-12-01T09:00:00Z"), ("to", "/timezone"), ("keys", "enter"), ("type", "Asia"), ("keys", "enter")),
        {"at": "2026-12-01T09:00:00Z", "timezone": "Asia/Tokyo"},
    ),
    Case(
        "checklist-of-numbers",
        {"type": "array", "items": {"enum": [1, 2, 4, 8]}, "uniqueItems": True, "title": "Shards"},
        (("to", ""), ("keys", "space", "down", "down", "space")),
        [1, 4],
    ),
    Case(
        "allof-merged",
        {
            "allOf": [
                {"type": "object", "required": ["id"], "properties": {"id": {"type": "integer"}}},
                {"required": ["label"], "properties": {"label": {"type": "string", "maxLength": 20}}},
            ]
        },
        (("to", "/id"), ("type", "9"), ("to", "/label"), ("type", "nine")),
        {"id": 9, "label": "nine"},
    ),
]
