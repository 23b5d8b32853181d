"""Polars analysis: spans → trials table → per-test tables; reading the span conventions."""

from assay.analysis import _columns as columns
from assay.analysis._engines import SPANS_PER_BUCKET, Engine, engine_trials
from assay.analysis._ownership import assign_trials
from assay.analysis._trials import trials_from_spans
from assay.analysis._variants import tool_variants

__all__ = [
    "SPANS_PER_BUCKET",
    "Engine",
    "assign_trials",
    "columns",
    "engine_trials",
    "tool_variants",
    "trials_from_spans",
]
