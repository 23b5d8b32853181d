"""Model prices and what a trial cost: one price table for the runner and the analysis.

The format (``--prices FILE``, docs/suites.md) is YAML or JSON::

    per: 1000000                 # prices are per this many tokens (default one million)
    models:
      gpt-4o: {input: 2.50, output: 10.00}
      "*": {input: 1.00, output: 4.00}    # any other model
    trial_tokens: {input: 2000, output: 500, model: gpt-4o}   # for --dry-run estimates

Without a file, :data:`DEFAULT_PRICES` prices common models at list prices of
:data:`DEFAULT_PRICES_AS_OF` (docs/reports.md, "Cost").
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import polars as pl
import yaml

from assay.analysis import _columns as tc
from assay.errors import InputError, SchemaError
from assay.quality import Finding


class TokenUsage(Protocol):
    """Token usage of one LLM call (the runner's ``LLMUsage`` is one)."""

    @property
    def model(self) -> str | None:
        """The model that answered."""

    @property
    def input_tokens(self) -> int:
        """Prompt tokens."""

    @property
    def output_tokens(self) -> int:
        """Completion tokens."""


@dataclass(frozen=True, slots=True)
class Price:
    """The price of one model, in USD per ``per`` tokens."""

    input: float
    """Price of ``per`` prompt tokens."""
    output: float
    """Price of ``per`` completion tokens."""


@dataclass(frozen=True, slots=True)
class PriceTable:
    """Model prices, read from a YAML or JSON file (see the module docstring)."""

    models: Mapping[str, Price]
    """Prices by model name; ``"*"`` prices any other model."""
    per: float = 1_000_000
    """The number of tokens the prices are for."""
    trial_tokens: tuple[int, int, str | None] | None = None
    """Typical ``(input, output, model)`` tokens of one trial, for cost estimates."""
    source: str = "file"
    """Where the prices come from: a file's path, or ``default`` for :data:`DEFAULT_PRICES`."""

    def price(self, model: str | None) -> Price | None:
        """The price of ``model``: exact name, else the longest prefix, else ``"*"``."""
        if model is not None:
            if model in self.models:
                return self.models[model]
            prefixes = [m for m in self.models if m != "*" and model.startswith(m)]
            if prefixes:
                return self.models[max(prefixes, key=len)]
        return self.models.get("*")

    def tokens_cost(self, price: Price, input_tokens: float, output_tokens: float) -> float:
        """USD for this many tokens at ``price``."""
        return (input_tokens * price.input + output_tokens * price.output) / self.per

    def cost(self, calls: Iterable[TokenUsage]) -> tuple[float, set[str]]:
        """USD cost of these LLM calls, and the models that have no price."""
        total = 0.0
        unpriced: set[str] = set()
        for call in calls:
            price = self.price(call.model)
            if price is None:
                unpriced.add(call.model or "(no model)")
                continue
            total += self.tokens_cost(price, call.input_tokens, call.output_tokens)
        return total, unpriced

    def trial_cost_estimate(self) -> float | None:
        """The cost of one typical trial, if ``trial_tokens`` is given."""
        if self.trial_tokens is None:
            return None
        tokens_in, tokens_out, model = self.trial_tokens
        price = self.price(model)
        return self.tokens_cost(price, tokens_in, tokens_out) if price is not None else 0.0


DEFAULT_PRICES_AS_OF = "2025-06"
"""When the default list prices were taken from the vendors' price pages. Prices change: pass
``--prices`` with your own table for figures you rely on."""

DEFAULT_PRICES = PriceTable(
    {
        # OpenAI, USD per million tokens (standard tier, no cached-input discount).
        "gpt-4o": Price(2.50, 10.00),
        "gpt-4o-mini": Price(0.15, 0.60),
        "gpt-4.1": Price(2.00, 8.00),
        "gpt-4.1-mini": Price(0.40, 1.60),
        "gpt-4.1-nano": Price(0.10, 0.40),
        "o3": Price(2.00, 8.00),
        "o4-mini": Price(1.10, 4.40),
        # Anthropic (versioned names such as claude-sonnet-4-20250514 match by prefix).
        "claude-opus-4": Price(15.00, 75.00),
        "claude-sonnet-4": Price(3.00, 15.00),
        "claude-3-7-sonnet": Price(3.00, 15.00),
        "claude-3-5-sonnet": Price(3.00, 15.00),
        "claude-3-5-haiku": Price(0.80, 4.00),
        # Google (prompts up to 200k tokens for 2.5 Pro).
        "gemini-2.5-pro": Price(1.25, 10.00),
        "gemini-2.5-flash": Price(0.30, 2.50),
        "gemini-2.0-flash": Price(0.10, 0.40),
    },
    source="default",
)
"""List prices of common models as of :data:`DEFAULT_PRICES_AS_OF`; no ``"*"`` entry, so an
unknown model is reported as unpriced rather than guessed."""


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
    return PriceTable(models, per, trial_tokens, source=str(file))


def with_cost(
    trials: pl.DataFrame, prices: PriceTable = DEFAULT_PRICES
) -> tuple[pl.DataFrame, tuple[Finding, ...]]:
    """Add the ``cost_usd`` column to the trials table: each trial's tokens at its model's price.

    The trials table holds a trial's token totals and the models it used, not tokens per model,
    so a trial that used several models at different prices is priced at its first model and a
    finding says so. A trial with no LLM call costs 0; one whose model has no price gets null
    (and a finding), never a guess.

    Args:
        trials: The trials table.
        prices: The price table (the default table unless the user gave ``--prices``).

    Returns:
        The table with ``cost_usd`` (Float64, nullable), and what the user must be told.
    """
    costs: list[float | None] = []
    unpriced: dict[str, list[str]] = {}
    mixed: list[str] = []
    rows = trials.select(
        tc.TRACE_ID, tc.MODELS, tc.LLM_CALLS, tc.INPUT_TOKENS, tc.OUTPUT_TOKENS
    ).iter_rows()
    for trace_id, models, llm_calls, tokens_in, tokens_out in rows:
        if not llm_calls:
            costs.append(0.0)
            continue
        names: list[str | None] = list(models) or [None]
        priced = [prices.price(m) for m in names]
        if any(p is None for p in priced):
            for name, price in zip(names, priced, strict=True):
                if price is None:
                    unpriced.setdefault(name or "(no model)", []).append(str(trace_id))
            costs.append(None)
            continue
        if len(set(priced)) > 1:
            mixed.append(str(trace_id))
        first = priced[0]
        assert first is not None  # every model is priced here
        costs.append(prices.tokens_cost(first, tokens_in or 0, tokens_out or 0))
    findings: list[Finding] = []
    if unpriced:
        ids = [i for trace_ids in unpriced.values() for i in trace_ids]
        source = "the default price table" if prices.source == "default" else prices.source
        findings.append(
            Finding(
                "unpriced_models",
                f"no price for model(s) {', '.join(sorted(unpriced))} in {source}: "
                f"{len(set(ids))} trial(s) have no cost (give one with --prices)",
                len(set(ids)),
                tuple(sorted(set(ids))[:3]),
            )
        )
    if mixed:
        findings.append(
            Finding(
                "mixed_model_prices",
                f"{len(mixed)} trial(s) used models with different prices; the trials table "
                f"has no tokens per model, so each is priced at its first model",
                len(mixed),
                tuple(mixed[:3]),
            )
        )
    column = pl.Series(tc.COST_USD, costs, dtype=pl.Float64)
    return trials.with_columns(column), tuple(findings)
