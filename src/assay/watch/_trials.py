"""Spans of complete traces → trials, by the one mapping ``assay analyze`` uses.

The trials come from :func:`assay.analysis.read_trials` with the same options
(``--test-attribute``, ``--pass-when``, ``--min-score``) and are priced by
:func:`assay.analysis.with_cost` with the same price table (``--prices``): a trace judged by
``watch`` gives the trial ``analyze`` would give it.

One trace that breaks the trial contract (an outcome of ``False``, a trial index that is no
number) makes ``read_trials`` refuse every span it was given; ``analyze`` then stops, as bad
input does. A watch cannot stop: like a collector, which rejects the one record and never the
batch, it finds the trace that is refused by halving the traces (O(k log n) reads for k bad
traces among n), names it with the reason, and counts every other trial.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from assay.analysis import NoTrialSpans, read_trials, with_cost
from assay.analysis import columns as tc
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
    rejected: tuple[tuple[str, str], ...] = ()
    """Traces left out because they break the trial contract: (trace id, why)."""


def trials_of(spans: pl.DataFrame, options: AnalyzeOptions) -> TrialBatch:
    """The trials in ``spans`` (the spans of whole traces), mapped as ``analyze`` maps them.

    Args:
        spans: The spans of complete traces.
        options: The analysis options; their mapping fields are read.

    Returns:
        The trials, ordered by start time. Spans holding no trial (spans late for a trace
        already judged, or traces of other services) give an empty table and ``refused``;
        a trace that breaks the trial contract is left out and named in ``rejected``.
    """
    try:
        return _read(spans, options)
    except NoTrialSpans as exc:
        return TrialBatch(pl.DataFrame(), (), str(exc))
    except SchemaError as exc:
        traces = spans[tc.TRACE_ID].unique(maintain_order=True)
        if traces.len() <= 1:
            trace = str(traces[0]) if traces.len() else "?"
            return TrialBatch(pl.DataFrame(), (), None, {}, ((trace, str(exc)),))
        half = traces.len() // 2
        parts = [
            trials_of(spans.filter(pl.col(tc.TRACE_ID).is_in(part.implode())), options)
            for part in (traces[:half], traces[half:])
        ]
        return _merged(parts)


def _merged(parts: list[TrialBatch]) -> TrialBatch:
    """The trials of disjoint sets of traces, as one batch."""
    made = [p for p in parts if p.refused is None]
    if not made:
        refused = next(p.refused for p in parts if p.refused is not None)
        rejected = tuple(r for p in parts for r in p.rejected)
        return TrialBatch(pl.DataFrame(), (), refused, {}, rejected)
    trials = pl.concat([p.trials for p in made], how="diagonal_relaxed")
    recorded: dict[tuple[float, float, str], int] = {}
    for part in made:
        for key, count in (part.recorded or {}).items():
            recorded[key] = recorded.get(key, 0) + count
    return TrialBatch(
        trials.sort(tc.START_TIME, tc.TEST_ID, tc.TRIAL_INDEX, nulls_last=True),
        tuple(f for p in made for f in p.findings),
        None,
        recorded,
        tuple(r for p in parts for r in p.rejected),
    )


def _read(spans: pl.DataFrame, options: AnalyzeOptions) -> TrialBatch:
    """:func:`trials_of` on spans ``read_trials`` accepts (it raises ``SchemaError`` else)."""
    read = read_trials(
        spans.lazy(),
        min_score=options.min_score,
        test_attribute=options.test_attribute,
        pass_when=options.pass_when,
    )
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
