"""Polars analysis: spans → trials table → per-test tables; reading the span conventions."""

from assay.analysis import _columns as columns
from assay.analysis import _conventions as conventions
from assay.analysis._behaviour_features import behaviour_sample
from assay.analysis._cost import (
    DEFAULT_PRICES,
    DEFAULT_PRICES_AS_OF,
    Price,
    PriceTable,
    load_prices,
    with_cost,
)
from assay.analysis._engines import SPANS_PER_BUCKET, Engine, engine_trials
from assay.analysis._ownership import assign_trials
from assay.analysis._trials import trials_from_spans
from assay.analysis._variants import tool_variants

__all__ = [
    "DEFAULT_PRICES",
    "DEFAULT_PRICES_AS_OF",
    "SPANS_PER_BUCKET",
    "Engine",
    "Price",
    "PriceTable",
    "assign_trials",
    "behaviour_sample",
    "columns",
    "conventions",
    "engine_trials",
    "load_prices",
    "tool_variants",
    "trials_from_spans",
    "with_cost",
]
