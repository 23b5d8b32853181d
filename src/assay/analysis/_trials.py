"""Spans → the trials table: one row per trial with its outcome and what it did."""

from __future__ import annotations

import polars as pl

from assay import conventions as c
from assay.analysis import _columns as tc
from assay.analysis import _conventions as conv
from assay.analysis._events import explode_events
from assay.analysis._ownership import classify_traces, resolve_nested
from assay.errors import SchemaError
from assay.store import PROMOTED_ATTRIBUTES, promoted_column

_P = promoted_column


def trials_from_spans(
    spans: pl.LazyFrame,
    *,
    min_score: float | None = None,
    test_attribute: str = c.TEST_ID,
) -> pl.DataFrame:
    """Build the trials table from a lazy scan of the spans table.

    A trial passes when ``assay.trial.outcome = pass``; without an outcome, a trial span with
    status ERROR is an ``error``, and otherwise it passes when every check passed and every
    score is at least ``min_score`` (when given).

    Args:
        spans: A lazy scan of spans (``assay.store.scan_spans``).
        min_score: Scores below this fail a trial that has no explicit outcome.
        test_attribute: The attribute that names the test. ``assay.test.id`` by default; for
            traces without ``assay.*`` attributes (production traffic) another one, e.g.
            ``gen_ai.agent.name``: every span carrying it is then a trial.

    Returns:
        One row per trial; columns are named in ``assay.analysis.columns``.

    Raises:
        SchemaError: No trial spans, an unknown outcome value, or a non-numeric score.
    """
    if test_attribute != c.TEST_ID:
        # The mapped attribute stands in for assay.test.id everywhere downstream.
        spans = spans.with_columns(attribute_as_string(test_attribute).alias(_P(c.TEST_ID)))
    trial_spans = (
        spans.filter(pl.col(_P(c.TEST_ID)).is_not_null()).select(conv.SPAN_COLUMNS).collect()
    )
    if trial_spans.height == 0:
        total = spans.select(pl.len()).collect().item()
        raise SchemaError(
            f"no trial spans: none of the {total} spans read carries {test_attribute}"
        )
    _check_outcomes(trial_spans)
    shapes = classify_traces(trial_spans)
    # Fast path: a trace whose one trial is its root belongs wholly to that trial, so the work
    # is aggregated per trace and only then joined (no join over every span).
    simple = (
        _with_work_columns(spans.select(conv.SPAN_COLUMNS))
        .group_by("trace_id")
        .agg(_work_aggregations())
        .join(shapes.simple.lazy(), on="trace_id", how="inner")
        .collect(engine="streaming")
    )
    owners = shapes.simple
    per_trial = [simple]
    owner_spans: list[pl.DataFrame] = []
    if shapes.nested.len():
        nested = resolve_nested(
            spans.filter(pl.col("trace_id").is_in(shapes.nested.implode()))
            .select(conv.SPAN_COLUMNS)
            .collect()
        )
        per_trial.append(
            _with_work_columns(nested.lazy())
            .group_by("trace_id", tc.TRIAL_SPAN_ID)
            .agg(_work_aggregations())
            .collect()
        )
        owner_spans.append(nested.select("trace_id", "span_id", tc.TRIAL_SPAN_ID))
    work = pl.concat(per_trial, how="diagonal_relaxed").rename({tc.TRIAL_SPAN_ID: "span_id"})
    events = explode_events(
        spans.filter(pl.col("events").list.len() > 0)
        .select("trace_id", "span_id", "events")
        .collect()
    )
    located = pl.concat(
        [
            events.join(owners, on="trace_id", how="inner"),
            *(events.join(o, on=["trace_id", "span_id"], how="inner") for o in owner_spans),
        ],
        how="diagonal_relaxed",
    )
    scored = _scores_and_checks(located, trial_spans)
    trials = (
        trial_spans.select(
            pl.col(_P(c.TEST_ID)).alias(tc.TEST_ID),
            pl.col(_P(c.SUITE)).alias(tc.SUITE),
            pl.col(_P(c.RUN_ID)).alias(tc.RUN_ID),
            pl.col(_P(c.AGENT_VERSION)).alias(tc.AGENT_VERSION),
            pl.col(_P(c.TRIAL_INDEX)).alias(tc.TRIAL_INDEX),
            "trace_id",
            "span_id",
            pl.col(_P(c.TRIAL_OUTCOME)).str.to_lowercase().alias("_outcome"),
            pl.col("status_code"),
            pl.col("status_message").alias(tc.STATUS_MESSAGE),
            pl.col("start_time_unix_nano").alias(tc.START_TIME),
            ((pl.col("end_time_unix_nano") - pl.col("start_time_unix_nano")) / 1e9).alias(
                tc.DURATION_S
            ),
        )
        .join(work, on=["trace_id", "span_id"], how="left")
        .join(scored, on=["trace_id", "span_id"], how="left")
    )
    low_score = (
        pl.col(tc.SCORES).list.eval(pl.element().struct.field("value") < min_score).list.any()
        if min_score is not None
        else pl.lit(False)
    )
    outcome = (
        pl.when(pl.col("_outcome").is_not_null())
        .then(pl.col("_outcome"))
        .when(pl.col("status_code") == "ERROR")
        .then(pl.lit(c.OUTCOME_ERROR))
        .when((pl.col(tc.FAILED_CHECKS) > 0) | low_score.fill_null(False))
        .then(pl.lit(c.OUTCOME_FAIL))
        .otherwise(pl.lit(c.OUTCOME_PASS))
    )
    return (
        trials.with_columns(outcome.alias(tc.OUTCOME))
        .with_columns(
            (pl.col(tc.OUTCOME) == c.OUTCOME_PASS).alias(tc.PASSED),
            (pl.col(tc.OUTCOME) == c.OUTCOME_ERROR).alias(tc.ERROR),
        )
        .drop("_outcome", "status_code")
        .sort(tc.TEST_ID, tc.START_TIME, tc.TRIAL_INDEX, nulls_last=True)
        .select(
            tc.TEST_ID,
            tc.SUITE,
            tc.RUN_ID,
            tc.AGENT_VERSION,
            tc.TRIAL_INDEX,
            tc.TRACE_ID,
            tc.SPAN_ID,
            tc.OUTCOME,
            tc.PASSED,
            tc.ERROR,
            tc.SCORES,
            tc.CHECKS,
            tc.FAILED_CHECKS,
            tc.TOOL_SEQUENCE,
            tc.TOOL_CALLS,
            tc.LLM_CALLS,
            tc.INPUT_TOKENS,
            tc.OUTPUT_TOKENS,
            tc.ERROR_SPANS,
            tc.SPAN_COUNT,
            tc.MODELS,
            tc.START_TIME,
            tc.DURATION_S,
            tc.STATUS_MESSAGE,
        )
    )


def attribute_as_string(attribute: str) -> pl.Expr:
    """An attribute's value as a string: its promoted column, else read from ``attributes``."""
    if attribute in PROMOTED_ATTRIBUTES:
        return pl.col(_P(attribute)).cast(pl.String)
    match = (
        pl.col("attributes")
        .list.eval(pl.element().filter(pl.element().struct.field("key") == attribute))
        .list.first()
    )
    return pl.coalesce(
        match.struct.field("string_value"),
        match.struct.field("int_value").cast(pl.String),
        match.struct.field("double_value").cast(pl.String),
        match.struct.field("bool_value").cast(pl.String),
    )


def _check_outcomes(trial_spans: pl.DataFrame) -> None:
    outcomes = trial_spans[_P(c.TRIAL_OUTCOME)].drop_nulls().str.to_lowercase()
    bad = outcomes.filter(~outcomes.is_in(list(c.OUTCOMES)))
    if bad.len():
        raise SchemaError(
            f"{c.TRIAL_OUTCOME} must be one of {', '.join(c.OUTCOMES)} (found {bad[0]!r})"
        )


def _with_work_columns(spans: pl.LazyFrame) -> pl.LazyFrame:
    """Add what each span is: the tool it calls, whether it is an LLM call, usage, model."""
    return spans.with_columns(
        conv.tool_name().alias(tc.TOOL),
        conv.is_llm_call().alias(tc.IS_LLM),
        conv.model_name().alias(tc.MODEL),
        conv.input_tokens().alias(tc.IN_TOK),
        conv.output_tokens().alias(tc.OUT_TOK),
    )


def _work_aggregations() -> list[pl.Expr]:
    """Per trial: its tool sequence, LLM calls, tokens, error spans, models."""
    is_tool = pl.col(tc.TOOL).is_not_null()
    # Only trial spans carry a test id, so this counts ERROR spans other than trial spans.
    is_work = pl.col(_P(c.TEST_ID)).is_null()
    return [
        pl.col(tc.TOOL)
        .filter(is_tool)
        .sort_by(pl.col("start_time_unix_nano").filter(is_tool))
        .alias(tc.TOOL_SEQUENCE),
        is_tool.sum().cast(pl.Int64).alias(tc.TOOL_CALLS),
        pl.col(tc.IS_LLM).sum().cast(pl.Int64).alias(tc.LLM_CALLS),
        pl.col(tc.IN_TOK).filter(pl.col(tc.IS_LLM)).sum().cast(pl.Int64).alias(tc.INPUT_TOKENS),
        pl.col(tc.OUT_TOK).filter(pl.col(tc.IS_LLM)).sum().cast(pl.Int64).alias(tc.OUTPUT_TOKENS),
        ((pl.col("status_code") == "ERROR") & is_work).sum().cast(pl.Int64).alias(tc.ERROR_SPANS),
        pl.len().cast(pl.Int64).alias(tc.SPAN_COUNT),
        pl.col(tc.MODEL)
        .filter(pl.col(tc.IS_LLM) & pl.col(tc.MODEL).is_not_null())
        .unique(maintain_order=True)
        .alias(tc.MODELS),
    ]


def _scores_and_checks(located: pl.DataFrame, trial_spans: pl.DataFrame) -> pl.DataFrame:
    """Per trial: its scores (from any span of the trial) and its checks (trial span only).

    ``located`` holds score and check events with the ``_trial_span_id`` that owns them.
    """
    located = located.sort("time")
    scores = (
        located.filter(pl.col("kind") == "score")
        .group_by("trace_id", tc.TRIAL_SPAN_ID)
        .agg(pl.struct("name", "value").alias(tc.SCORES))
    )
    checks = (
        located.filter(
            (pl.col("kind") == "check") & (pl.col("span_id") == pl.col(tc.TRIAL_SPAN_ID))
        )
        .group_by("trace_id", tc.TRIAL_SPAN_ID)
        .agg(
            pl.struct("name", "passed").alias(tc.CHECKS),
            (~pl.col("passed")).sum().cast(pl.Int64).alias(tc.FAILED_CHECKS),
        )
    )
    keys = trial_spans.select("trace_id", pl.col("span_id").alias(tc.TRIAL_SPAN_ID))
    empty_scores = pl.lit([], dtype=pl.List(pl.Struct({"name": pl.String, "value": pl.Float64})))
    empty_checks = pl.lit([], dtype=pl.List(pl.Struct({"name": pl.String, "passed": pl.Boolean})))
    return (
        keys.join(scores, on=["trace_id", tc.TRIAL_SPAN_ID], how="left")
        .join(checks, on=["trace_id", tc.TRIAL_SPAN_ID], how="left")
        .with_columns(
            pl.col(tc.SCORES).fill_null(empty_scores),
            pl.col(tc.CHECKS).fill_null(empty_checks),
            pl.col(tc.FAILED_CHECKS).fill_null(0),
        )
        .rename({tc.TRIAL_SPAN_ID: "span_id"})
    )
