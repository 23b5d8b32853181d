"""Polars analysis: spans → trials table → per-test tables; reading the span conventions."""

from assay.analysis import _columns as columns
from assay.analysis import _conventions as conventions
from assay.analysis._ownership import assign_trials
from assay.analysis._trials import trials_from_spans
from assay.analysis._variants import tool_variants

__all__ = [
    "assign_trials",
    "columns",
    "conventions",
    "tool_variants",
    "trials_from_spans",
]
