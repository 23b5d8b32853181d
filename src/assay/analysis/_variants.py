"""Tool-sequence variants: the distinct tool paths of each test, with counts and pass rates."""

from __future__ import annotations

import polars as pl

from assay.analysis import _columns as tc

SEQUENCE = "sequence"
COUNT = "count"
PASSES = "passes"
PASS_RATE = "pass_rate"


def tool_variants(trials: pl.DataFrame) -> pl.DataFrame:
    """Tabulate each test's distinct tool sequences.

    Args:
        trials: The trials table (one row per trial), as built by
            :func:`assay.analysis.trials_from_spans`.

    Returns:
        One row per (test, distinct tool sequence): ``test_id``, ``sequence`` (list of tool
        names), ``count`` (trials that took it), ``passes`` (of those, passing trials) and
        ``pass_rate`` (passes / count). Ordered by test id, then most frequent first, then by
        sequence so that ties are stable.
    """
    return (
        trials.group_by(tc.TEST_ID, tc.TOOL_SEQUENCE)
        .agg(
            pl.len().cast(pl.Int64).alias(COUNT),
            pl.col(tc.PASSED).cast(pl.Int64).sum().alias(PASSES),
        )
        .rename({tc.TOOL_SEQUENCE: SEQUENCE})
        .with_columns((pl.col(PASSES) / pl.col(COUNT)).alias(PASS_RATE))
        .with_columns(pl.col(SEQUENCE).list.join(" ").alias("_key"))
        .sort([tc.TEST_ID, COUNT, "_key"], descending=[False, True, False])
        .drop("_key")
    )
