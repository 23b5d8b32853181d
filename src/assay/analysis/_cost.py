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

from assay._bounded import read_text_bounded
from assay.analysis import _columns as tc
from assay.analysis import _conventions as conv
from assay.errors import SchemaError
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
    text = read_text_bounded(file, "price table")
    try:
        document: Any = yaml.safe_load(text)
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


_SPAN_COST = "_span_cost"
_SPAN_LLM = "_span_llm_calls"
_SPAN_TOKENS = "_span_tokens"
_SPAN_RECORDED = "_span_recorded"


def _per_call_costs(
    spans: pl.LazyFrame,
    trials: pl.DataFrame,
    prices: PriceTable,
    recorded: bool,
    unnamed_calls: pl.Series | None = None,
) -> pl.DataFrame | None:
    """Per trace holding one trial: the sum of each LLM call's cost, call by call.

    A call's cost is the one its instrumentation recorded, else its tokens at its own model's
    price; null if neither is known. Traces holding several trials are left to the trials-table
    estimate (their calls would need the ownership resolution of the trials table).

    Only traces whose calls the estimate could price differently are read: with ``recorded``
    (some span may carry a recorded cost), every one; else those whose trial used several
    models, or one model and calls that name none. For the rest, pricing the token totals at
    the one model's price is pricing each call at it. None when no trace needs it.
    """
    rows = trials.select(tc.TRACE_ID)
    if not recorded:
        models = trials.select(tc.TRACE_ID, pl.col(tc.MODELS).list.len().alias("_n"))
        several = models.filter(pl.col("_n") > 1).select(tc.TRACE_ID)
        one = models.filter(pl.col("_n") == 1).select(tc.TRACE_ID)
        if one.height:
            # Known from the reading of the spans (Trials.unnamed_calls), else read again.
            named_none = (
                unnamed_calls.to_frame(tc.TRACE_ID).lazy()
                if unnamed_calls is not None
                else spans.filter(conv.is_llm_call() & conv.model_name().is_null()).select(
                    tc.TRACE_ID
                )
            )
            unnamed = named_none.join(one.lazy(), on=tc.TRACE_ID, how="semi").unique().collect()
            several = pl.concat([several, unnamed])
        if several.height == 0:
            return None
        # Only these traces' trials are counted (every trial of a trace has its id).
        rows = rows.join(several, on=tc.TRACE_ID, how="semi")
    single = rows.group_by(tc.TRACE_ID).len().filter(pl.col("len") == 1).select(tc.TRACE_ID)
    if single.height == 0:
        return None
    calls = (
        spans.filter(conv.is_llm_call())
        .join(single.lazy(), on=tc.TRACE_ID, how="semi")
        .select(
            tc.TRACE_ID,
            conv.model_name().alias("_model"),
            conv.input_tokens().fill_null(0).alias("_in"),
            conv.output_tokens().fill_null(0).alias("_out"),
            (conv.recorded_cost() if recorded else pl.lit(None, pl.Float64)).alias("_recorded"),
        )
        .collect()
    )
    names: list[str | None] = calls["_model"].unique().to_list()
    table = pl.DataFrame(
        {
            "_model": names,
            "_price_in": [_price_of(prices, m, "input") for m in names],
            "_price_out": [_price_of(prices, m, "output") for m in names],
        },
        schema={"_model": pl.String, "_price_in": pl.Float64, "_price_out": pl.Float64},
    )
    estimate = (pl.col("_in") * pl.col("_price_in") + pl.col("_out") * pl.col("_price_out")) / (
        prices.per
    )
    return (
        calls.join(table, on="_model", how="left", nulls_equal=True)
        .with_columns(pl.coalesce("_recorded", estimate).alias(_SPAN_COST))
        .group_by(tc.TRACE_ID)
        .agg(
            # A sum with an unknown call in it is unknown.
            pl.when(pl.col(_SPAN_COST).null_count() == 0)
            .then(pl.col(_SPAN_COST).sum())
            .otherwise(None)
            .alias(_SPAN_COST),
            pl.len().cast(pl.Int64).alias(_SPAN_LLM),
            pl.col("_recorded").is_not_null().all().alias(_SPAN_RECORDED),
            (pl.col("_in") + pl.col("_out")).sum().cast(pl.Int64).alias(_SPAN_TOKENS),
        )
    )


def _price_of(prices: PriceTable, model: str | None, side: str) -> float | None:
    price = prices.price(model)
    if price is None:
        return None
    return price.input if side == "input" else price.output


def with_cost(
    trials: pl.DataFrame,
    prices: PriceTable = DEFAULT_PRICES,
    spans: pl.LazyFrame | None = None,
    *,
    recorded_costs: bool = True,
    unnamed_calls: pl.Series | None = None,
) -> tuple[pl.DataFrame, tuple[Finding, ...]]:
    """Add the ``cost_usd`` column to the trials table: what each trial's LLM calls cost.

    With ``spans`` (the trace set the trials came from), a trial that is alone in its trace is
    costed call by call: the cost an instrumentation recorded on the call
    (:data:`assay.conventions.RECORDED_COST_ATTRIBUTES`), else the call's tokens at its own
    model's price. Otherwise — no spans, several trials in one trace, or calls that do not add
    up to the trial's usage — the trial's token totals are priced at its model's price; a trial
    that used several differently priced models is then priced at its first model, and a finding
    says so. A trial with no LLM call costs 0; one with an unpriced model gets null (and a
    finding), never a guess.

    Args:
        trials: The trials table.
        prices: The price table (the default table unless the user gave ``--prices``).
        spans: A lazy scan of the spans the trials were built from.
        recorded_costs: Whether some span may carry a recorded cost (``SpanContents``); when
            none can, only the traces a token-total estimate could misprice are read.
        unnamed_calls: The traces holding an LLM call that names no model, when the caller
            knows them (``Trials.unnamed_calls``); None: the spans are scanned for them.

    Returns:
        The table with ``cost_usd`` (Float64, nullable) and ``cost_recorded`` (whether every
        call's cost was the recorded one), and what the user must be told.
    """
    costed, unpriced = _estimated_cost(trials, prices)
    per_call = (
        _per_call_costs(spans, trials, prices, recorded_costs, unnamed_calls)
        if spans is not None
        else None
    )
    if per_call is not None:
        usage = pl.col(tc.INPUT_TOKENS) + pl.col(tc.OUTPUT_TOKENS)
        # Call by call only where the calls add up to what the trials table counted (where some
        # call's usage is unknown, the trial's is too: its calls are priced one by one).
        exact = (
            (pl.col(_SPAN_LLM) == pl.col(tc.LLM_CALLS))
            & ((pl.col(_SPAN_TOKENS) == usage) | usage.is_null())
        ).fill_null(False)
        costed = (
            costed.join(per_call, on=tc.TRACE_ID, how="left")
            .with_columns(
                pl.when(exact)
                .then(pl.col(_SPAN_COST))
                .otherwise(pl.col(tc.COST_USD))
                .alias(tc.COST_USD),
                pl.when(exact).then(False).otherwise(pl.col(_MIXED)).alias(_MIXED),
                (exact & pl.col(_SPAN_RECORDED).fill_null(False)).alias(tc.COST_RECORDED),
            )
            .drop(_SPAN_COST, _SPAN_LLM, _SPAN_TOKENS, _SPAN_RECORDED)
        )
    else:
        costed = costed.with_columns(pl.lit(False).alias(tc.COST_RECORDED))
    findings = _findings(costed, unpriced, prices)
    return costed.drop(_MODELS_AT, _MIXED), findings


_MODELS_AT = "_models_at"
_MIXED = "_mixed_prices"


def _estimated_cost(
    trials: pl.DataFrame, prices: PriceTable
) -> tuple[pl.DataFrame, list[list[str]]]:
    """Each trial's token totals at its model's price, with what went unpriced or mixed.

    Priced once per distinct list of models (trials repeat a few), then per trial by index.
    Returns the table, with per trial the position of its list of models (``_MODELS_AT``),
    and per list its unpriced models: a trial holds an index, not a list of its own (4M
    trials' lists would take a quarter of a GiB).
    """
    from assay.analysis._features import distinct_lists

    model_lists, index = distinct_lists(trials[tc.MODELS])
    first_in, first_out, unpriced, mixed = [], [], [], []
    for models in model_lists:
        names: list[str | None] = list(models) or [None]
        priced = [prices.price(m) for m in names]
        unpriced.append(
            [name or "(no model)" for name, p in zip(names, priced, strict=True) if not p]
        )
        mixed.append(not unpriced[-1] and len(set(priced)) > 1)
        first = priced[0] if not unpriced[-1] else None
        first_in.append(first.input if first is not None else None)
        first_out.append(first.output if first is not None else None)
    lists = pl.DataFrame(
        {"_in_price": first_in, "_out_price": first_out, _MIXED: mixed},
        schema={"_in_price": pl.Float64, "_out_price": pl.Float64, _MIXED: pl.Boolean},
    ).with_row_index(_MODELS_AT)
    per_trial = lists[pl.Series(index)] if len(model_lists) else lists.clear(trials.height)
    calls = pl.col(tc.LLM_CALLS).fill_null(0) > 0
    tokens_in = pl.col(tc.INPUT_TOKENS).fill_null(0)
    tokens_out = pl.col(tc.OUTPUT_TOKENS).fill_null(0)
    cost = (tokens_in * pl.col("_in_price") + tokens_out * pl.col("_out_price")) / prices.per
    table = (
        pl.concat([trials, per_trial], how="horizontal")
        .with_columns(
            pl.when(calls).then(cost).otherwise(0.0).alias(tc.COST_USD),
            # A trial without calls has no unpriced model, whatever its list names.
            pl.when(calls).then(pl.col(_MODELS_AT)),
            pl.col(_MIXED) & calls,
        )
        .drop("_in_price", "_out_price")
    )
    return table, unpriced


def _findings(
    costed: pl.DataFrame, unpriced_by_list: list[list[str]], prices: PriceTable
) -> tuple[Finding, ...]:
    findings: list[Finding] = []
    unpriced = costed.filter(pl.col(tc.COST_USD).is_null())
    if unpriced.height:
        lists = unpriced[_MODELS_AT].drop_nulls().unique().to_list()
        names = sorted({name for at in lists for name in unpriced_by_list[at]})
        source = "the default price table" if prices.source == "default" else prices.source
        findings.append(
            Finding(
                "unpriced_models",
                f"no price for model(s) {', '.join(names) or '(unknown)'} in {source}: "
                f"{unpriced.height} trial(s) have no cost (give prices with --prices)",
                unpriced.height,
                tuple(unpriced[tc.TRACE_ID].head(3).to_list()),
            )
        )
    mixed = costed.filter(pl.col(_MIXED))
    if mixed.height:
        findings.append(
            Finding(
                "mixed_model_prices",
                f"{mixed.height} trial(s) used models with different prices but could not be "
                f"costed call by call, so each is priced at its first model",
                mixed.height,
                tuple(mixed[tc.TRACE_ID].head(3).to_list()),
            )
        )
    return tuple(findings)
