"""Budgets for a run (trials, tokens, cost, wall time) and the user's price table."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from assay.errors import ConfigError, InputError, SchemaError
from assay.run._live import LLMUsage


@dataclass(frozen=True, slots=True)
class Price:
    """The price of one model, in USD per ``per`` tokens."""

    input: float
    """Price of ``per`` prompt tokens."""
    output: float
    """Price of ``per`` completion tokens."""


@dataclass(frozen=True, slots=True)
class PriceTable:
    """Model prices, read from a YAML or JSON file (``docs/suites.md``).

    ::

        per: 1000000                 # prices are per this many tokens (default one million)
        models:
          gpt-4o: {input: 2.50, output: 10.00}
          "*": {input: 1.00, output: 4.00}    # any other model
        trial_tokens: {input: 2000, output: 500, model: gpt-4o}   # for --dry-run estimates
    """

    models: Mapping[str, Price]
    """Prices by model name; ``"*"`` prices any other model."""
    per: float = 1_000_000
    """The number of tokens the prices are for."""
    trial_tokens: tuple[int, int, str | None] | None = None
    """Typical ``(input, output, model)`` tokens of one trial, for cost estimates."""

    def price(self, model: str | None) -> Price | None:
        """The price of ``model``: exact name, else the longest prefix, else ``"*"``."""
        if model is not None:
            if model in self.models:
                return self.models[model]
            prefixes = [m for m in self.models if m != "*" and model.startswith(m)]
            if prefixes:
                return self.models[max(prefixes, key=len)]
        return self.models.get("*")

    def cost(self, calls: list[LLMUsage]) -> tuple[float, set[str]]:
        """USD cost of these LLM calls, and the models that have no price."""
        total = 0.0
        unpriced: set[str] = set()
        for call in calls:
            price = self.price(call.model)
            if price is None:
                unpriced.add(call.model or "(no model)")
                continue
            total += (call.input_tokens * price.input + call.output_tokens * price.output) / (
                self.per
            )
        return total, unpriced

    def trial_cost_estimate(self) -> float | None:
        """The cost of one typical trial, if ``trial_tokens`` is given."""
        if self.trial_tokens is None:
            return None
        tokens_in, tokens_out, model = self.trial_tokens
        return self.cost([LLMUsage(model, tokens_in, tokens_out)])[0]


def _price_number(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise SchemaError(f"{where}: must be a number (got {value!r})")
    if value < 0:
        raise SchemaError(f"{where}: must not be negative (got {value})")
    return float(value)


def load_prices(path: str | Path) -> PriceTable:
    """Read a price table (YAML or JSON).

    Raises:
        InputError: The file cannot be read.
        SchemaError: It does not follow the format of :class:`PriceTable`.
    """
    file = Path(path)
    try:
        document: Any = yaml.safe_load(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"{file}: cannot read price table: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        place = f"{file}:{mark.line + 1}" if mark is not None else str(file)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SchemaError(f"{place}: price table is not valid YAML/JSON: {problem}") from None
    if not isinstance(document, dict) or not isinstance(document.get("models"), dict):
        raise SchemaError(f"{file}: a price table needs `models:` (model -> {{input, output}})")
    unknown = set(document) - {"per", "models", "trial_tokens", "currency"}
    if unknown:
        raise SchemaError(f"{file}: unknown field {sorted(unknown)[0]!r}")
    models: dict[str, Price] = {}
    for name, entry in document["models"].items():
        where = f"{file}: models.{name}"
        if not isinstance(entry, dict) or set(entry) - {"input", "output"}:
            raise SchemaError(f"{where}: must be {{input: USD, output: USD}}")
        models[str(name)] = Price(
            _price_number(entry.get("input", 0), f"{where}.input"),
            _price_number(entry.get("output", 0), f"{where}.output"),
        )
    per = _price_number(document.get("per", 1_000_000), f"{file}: per")
    if per <= 0:
        raise SchemaError(f"{file}: per: must be positive")
    trial_tokens = None
    if document.get("trial_tokens") is not None:
        tt = document["trial_tokens"]
        if not isinstance(tt, dict):
            raise SchemaError(f"{file}: trial_tokens: must be {{input, output, model}}")
        trial_tokens = (
            int(_price_number(tt.get("input", 0), f"{file}: trial_tokens.input")),
            int(_price_number(tt.get("output", 0), f"{file}: trial_tokens.output")),
            str(tt["model"]) if tt.get("model") is not None else None,
        )
    return PriceTable(models, per, trial_tokens)


@dataclass(frozen=True, slots=True)
class Budget:
    """Limits for a whole run. A new trial starts only while every limit has room left."""

    max_trials: int | None = None
    """Trials started, over all tests."""
    max_tokens: int | None = None
    """Prompt + completion tokens recorded by finished trials."""
    max_cost: float | None = None
    """USD spent by finished trials (needs a price table)."""
    max_time: float | None = None
    """Seconds of wall time since the run started."""

    def __post_init__(self) -> None:
        for name in ("max_trials", "max_tokens", "max_cost", "max_time"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise ConfigError(f"--{name.replace('_', '-')} must not be negative ({value})")


@dataclass(slots=True)
class Spending:
    """What a run has used so far."""

    started: float
    """``time.monotonic()`` at the start."""
    trials: int = 0
    """Trials started."""
    tokens: int = 0
    """Tokens recorded by finished trials."""
    cost: float = 0.0
    """USD of finished trials."""

    def elapsed(self) -> float:
        """Seconds since the start."""
        return time.monotonic() - self.started

    def exhausted(self, budget: Budget) -> str | None:
        """The reason no further trial may start, or None."""
        if budget.max_trials is not None and self.trials >= budget.max_trials:
            return f"budget: --max-trials {budget.max_trials} reached"
        if budget.max_tokens is not None and self.tokens >= budget.max_tokens:
            return f"budget: --max-tokens {budget.max_tokens} reached ({self.tokens} used)"
        if budget.max_cost is not None and self.cost >= budget.max_cost:
            return f"budget: --max-cost {budget.max_cost:g} reached (${self.cost:.4f} spent)"
        if budget.max_time is not None and self.elapsed() >= budget.max_time:
            return f"budget: --max-time {budget.max_time:g}s reached"
        return None
