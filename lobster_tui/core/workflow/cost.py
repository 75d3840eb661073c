"""LLM cost tracking and ``cost_limit`` (spec §7.16), at the level the spec allows a port.

Every usage-bearing object in a step's ``json`` is billed once, except replayed cached answers. The
summary survives pauses through the resume state's ``cost`` field.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

from ..errors import LobsterRuntimeError

if TYPE_CHECKING:
    from .executor import WorkflowRun

PRICES_PER_MILLION: dict[str, tuple[float, float]] = {
    "gpt-4o": (2.5, 10),
    "gpt-4o-mini": (0.15, 0.6),
    "gpt-4-turbo": (10, 30),
    "gpt-3.5-turbo": (0.5, 1.5),
    "claude-opus-4-20250514": (15, 75),
    "claude-sonnet-4-5-20250514": (3, 15),
    "claude-haiku-3-5": (0.8, 4),
    "gemini-1.5-pro": (1.25, 5),
    "gemini-1.5-flash": (0.075, 0.3),
}
_INVALID_PRICING = (
    "[WARN] Ignoring invalid LOBSTER_LLM_PRICING_JSON; custom LLM pricing must be a JSON object whose "
    "model entries have finite non-negative input and output rates.\n"
)


def _tokens(usage: dict[str, Any], *names: str) -> int:
    for name in names:
        value = usage.get(name)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0:
            return math.floor(value)
    return 0


class CostTracker:
    """Running LLM spend of one workflow run."""

    def __init__(self, stderr: Any) -> None:
        self.stderr = stderr
        self.by_step: list[dict[str, Any]] = []
        self._warned: set[str] = set()
        self._prices: dict[str, tuple[float, float]] | None = None

    def prices(self, env: dict[str, str]) -> dict[str, tuple[float, float]]:
        if self._prices is None:
            prices = dict(PRICES_PER_MILLION)
            raw = env.get("LOBSTER_LLM_PRICING_JSON")
            if raw:
                try:
                    custom = json.loads(raw)
                    if not isinstance(custom, dict):
                        raise ValueError
                    for model, rate in custom.items():
                        pair = (rate["input"], rate["output"])
                        if not all(isinstance(r, (int, float)) and math.isfinite(r) and r >= 0 for r in pair):
                            raise ValueError
                        prices[model] = (float(pair[0]), float(pair[1]))
                except (ValueError, TypeError, KeyError):
                    self._write(_INVALID_PRICING)
            self._prices = prices
        return self._prices

    def _write(self, text: str) -> None:
        if self.stderr is not None:
            self.stderr.write(text)

    @property
    def total_usd(self) -> float:
        return round(sum(entry["costUsd"] for entry in self.by_step), 6)

    def record(self, run: WorkflowRun, step_id: str) -> None:
        """Bill the usage objects in a step's result, then enforce ``cost_limit`` (R-WF-131)."""
        value = run.results.get(step_id, {}).get("json")
        items = value if isinstance(value, list) else [value]
        for item in items:
            if not isinstance(item, dict) or not isinstance(item.get("usage"), dict) or item.get("replayed") is True:
                continue
            usage = item["usage"]
            model = item.get("model") if isinstance(item.get("model"), str) else None
            tokens_in = _tokens(usage, "inputTokens", "input_tokens", "prompt_tokens")
            tokens_out = _tokens(usage, "outputTokens", "output_tokens", "completion_tokens")
            rates = self.prices(run.base_env).get(model or "")
            if rates is None:
                label = model or "<missing>"
                if label not in self._warned:
                    self._warned.add(label)
                    self._write(
                        f'[WARN] No LLM pricing configured for model "{label}"; recording zero cost. '
                        "Set LOBSTER_LLM_PRICING_JSON to enable cost_limit enforcement for this model.\n"
                    )
                rates = (0.0, 0.0)
            cost = (tokens_in * rates[0] + tokens_out * rates[1]) / 1_000_000
            self.by_step.append(
                {"stepId": step_id, "model": model, "inputTokens": tokens_in, "outputTokens": tokens_out, "costUsd": cost}
            )
        self.enforce(run.doc.get("cost_limit"))

    def enforce(self, limit: Any) -> None:
        if not isinstance(limit, dict) or "max_usd" not in limit:
            return
        maximum = float(limit["max_usd"])
        total = self.total_usd
        if total <= maximum:
            return
        if limit.get("action") == "stop":
            raise LobsterRuntimeError(f"Cost limit exceeded: ${total:.4f} > ${maximum:.2f} limit")
        self._write(f"[WARN] Cost ${total:.4f} exceeds limit ${maximum:.2f}\n")

    def absorb(self, child: CostTracker, step_id: str) -> None:
        """A child workflow's spend counts under the parent step id (R-WF-123)."""
        for entry in child.by_step:
            self.by_step.append({**entry, "stepId": step_id})

    def summary(self) -> dict[str, Any] | None:
        """``_meta.cost`` (R-WF-132), or None when nothing was billed."""
        if not self.by_step:
            return None
        return {
            "totalInputTokens": sum(e["inputTokens"] for e in self.by_step),
            "totalOutputTokens": sum(e["outputTokens"] for e in self.by_step),
            "estimatedCostUsd": self.total_usd,
            "byStep": list(self.by_step),
        }

    def restore(self, summary: Any) -> None:
        if isinstance(summary, dict) and isinstance(summary.get("byStep"), list):
            self.by_step = [dict(entry) for entry in summary["byStep"] if isinstance(entry, dict)]
