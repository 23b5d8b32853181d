"""A failed tool call's message when its span has no status message: its recorded exception.

Frameworks set a failed tool span's status to ERROR, but not all give the status a description:
pydantic-ai's tool spans carry the error only as an ``exception`` event (``exception.type``,
``exception.message``), e.g. ``ToolRetryError: not yet`` for a ``ModelRetry``. Without this the
reports would count tool errors and show no message for them. Only ERROR spans without a status
message are read here, so a set without such spans costs one filtered scan.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from assay import conventions as c
from assay.analysis import _columns as tc
from assay.analysis import _conventions as conv
from assay.store import SpanContents

__all__ = ["with_exception_messages"]

_KEYS = ["trace_id", tc.TRIAL_SPAN_ID]
_MESSAGES = 3
_FOUND = "_exception_messages"


def _attribute(key: str) -> pl.Expr:
    return (
        pl.col("attributes")
        .list.eval(pl.element().filter(pl.element().struct.field("key") == key))
        .list.first()
        .struct.field("string_value")
    )


def _exceptions(spans: pl.LazyFrame) -> pl.DataFrame:
    """The first recorded exception of each failed tool span without a status message.

    Columns ``trace_id``, ``span_id``, ``start`` and ``m`` (``Type: message``).
    """
    failed = (
        spans.filter(
            (pl.col("status_code") == "ERROR")
            & pl.col("status_message").is_null()
            & (pl.col("events").list.len() > 0)
        )
        .filter(conv.tool_name().is_not_null())
        .select("trace_id", "span_id", pl.col("start_time_unix_nano").alias("start"), "events")
        .collect()
    )
    if failed.height == 0:
        return failed.select("trace_id", "span_id", "start", pl.lit(None, pl.String).alias("m"))
    events = (
        failed.explode("events")
        .unnest("events")
        .filter(pl.col("name") == c.EXCEPTION_EVENT)
        .with_columns(
            _attribute(c.EXCEPTION_TYPE).str.split(".").list.last().alias("_type"),
            _attribute(c.EXCEPTION_MESSAGE).alias("_message"),
        )
        .with_columns(
            pl.when(pl.col("_type").is_not_null() & pl.col("_message").is_not_null())
            .then(pl.concat_str("_type", pl.lit(": "), "_message"))
            .otherwise(pl.coalesce("_message", "_type"))
            .alias("m")
        )
        .filter(pl.col("m").is_not_null())
    )
    return events.group_by("trace_id", "span_id", maintain_order=True).agg(
        pl.col("start").first(), pl.col("m").first()
    )


def with_exception_messages(
    table: pl.DataFrame,
    spans: pl.LazyFrame,
    simple: pl.DataFrame,
    owners: Sequence[pl.DataFrame],
    contents: SpanContents | None,
) -> pl.DataFrame:
    """``table`` with the tool error messages of its trials filled from exception events.

    A trial whose failed tool calls gave no status message gets their exceptions' messages
    (``Type: message``, first three in start-time order) instead of none.

    Args:
        table: The trials being built (``trace_id``, ``_trial_span_id``, tool error columns).
        spans: The spans read.
        simple: ``trace_id`` → ``_trial_span_id`` of traces that are one trial.
        owners: ``trace_id``, ``span_id``, ``_trial_span_id`` of the spans of other traces.
        contents: What the files may hold (no events: nothing to read).
    """
    lacking = (pl.col(tc.TOOL_ERRORS) > 0) & (pl.col(tc.TOOL_ERROR_MESSAGES).list.len() == 0)
    if (contents is not None and not contents.events) or not table.select(lacking.any()).item():
        return table
    found = _exceptions(spans)
    if found.height == 0:
        return table
    owned = pl.concat(
        [
            found.join(simple, on="trace_id", how="inner"),
            *(found.join(o, on=["trace_id", "span_id"], how="inner") for o in owners),
        ],
        how="diagonal_relaxed",
    )
    messages = owned.sort("start").group_by(_KEYS).agg(pl.col("m").head(_MESSAGES).alias(_FOUND))
    return (
        table.join(messages, on=_KEYS, how="left")
        .with_columns(
            pl.when(lacking & pl.col(_FOUND).is_not_null())
            .then(pl.col(_FOUND))
            .otherwise(pl.col(tc.TOOL_ERROR_MESSAGES))
            .alias(tc.TOOL_ERROR_MESSAGES)
        )
        .drop(_FOUND)
    )
