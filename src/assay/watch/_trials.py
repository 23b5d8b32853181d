"""Spans of complete traces → trials, by the one mapping ``assay analyze`` uses.

The trials come from :func:`assay.analysis.read_trials` with the same options
(``--test-attribute``, ``--pass-when``, ``--min-score``) and are priced by
:func:`assay.analysis.with_cost` with the same price table (``--prices``): a trace judged by
``watch`` gives the trial ``analyze`` would give it.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from assay.analysis import columns as tc
from assay.analysis import read_trials, with_cost
from assay.errors import SchemaError
from assay.judge import AnalyzeOptions, price_table, read_judgements
from assay.quality import Finding

__all__ = ["TrialBatch", "trials_of"]


@dataclass(frozen=True, slots=True)
class TrialBatch:
    """The trials of one look, in the order they started, and what reading them noticed."""

    trials: pl.DataFrame
    """The trials table (``assay.analysis.columns``, with ``cost_usd``), by start time."""
    findings: tuple[Finding, ...]
    """Findings of :func:`read_trials` (incomplete traces, NaN scores, ...)."""
    refused: str | None = None
    """Why these spans gave no trial (no trial span, a bad outcome value), else None."""
    recorded: dict[tuple[float, float, str], int] | None = None
    """Judgements recorded on the trials by ``assay run`` (threshold, confidence, errors) and
    how many trials record each; ``watch`` does not read them, and says so when they differ."""


def trials_of(spans: pl.DataFrame, options: AnalyzeOptions) -> TrialBatch:
    """The trials in ``spans`` (the spans of whole traces), mapped as ``analyze`` maps them.

    Args:
        spans: The spans of complete traces.
        options: The analysis options; their mapping fields are read.

    Returns:
        The trials, ordered by start time. Spans holding no trial (spans late for a trace
        already judged, or traces of other services) give an empty table and ``refused``.
    """
    try:
        read = read_trials(
            spans.lazy(),
            min_score=options.min_score,
            test_attribute=options.test_attribute,
            pass_when=options.pass_when,
        )
    except SchemaError as exc:
        return TrialBatch(pl.DataFrame(), (), str(exc))
    costed, priced = with_cost(read.table, price_table(options.prices), spans.lazy())
    ordered = costed.sort(tc.START_TIME, tc.TEST_ID, tc.TRIAL_INDEX, nulls_last=True)
    recorded: dict[tuple[float, float, str], int] = {}
    try:
        for judgement in read_judgements(spans.lazy(), read.table).values():
            key = (judgement.threshold, judgement.confidence, str(judgement.errors))
            recorded[key] = recorded.get(key, 0) + 1
    except SchemaError:
        recorded = {}  # watch reads no recorded judgement: a malformed one changes nothing here
    return TrialBatch(ordered, (*read.data_quality.findings, *priced), None, recorded)
