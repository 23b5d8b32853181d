"""Scores and checks, read from span events.

The events are ``assay.score``, ``assay.check`` and the OTel GenAI ``gen_ai.evaluation.result``.
"""

from __future__ import annotations

import polars as pl

from assay import conventions as c
from assay.errors import SchemaError


def _attribute(key: str, field: str) -> pl.Expr:
    """The ``field`` of the event attribute named ``key`` (null if absent)."""
    return (
        pl.col("_attributes")
        .list.eval(pl.element().filter(pl.element().struct.field("key") == key))
        .list.first()
        .struct.field(field)
    )


def _typed(key: str) -> list[pl.Expr]:
    return [
        _attribute(key, "type").alias(f"{key}#type"),
        _attribute(key, "double_value").alias(f"{key}#double"),
        _attribute(key, "int_value").alias(f"{key}#int"),
        _attribute(key, "string_value").alias(f"{key}#str"),
        _attribute(key, "bool_value").alias(f"{key}#bool"),
    ]


def explode_events(evented: pl.DataFrame) -> pl.DataFrame:
    """One row per score or check event.

    Columns: ``trace_id``, ``span_id``, ``time``, ``kind`` (``score`` / ``check``), ``name``,
    ``value`` (float, scores), ``label`` (str, evaluations) and ``passed`` (bool, checks).
    An evaluation may carry only a label; its ``value`` is then null.

    Raises:
        SchemaError: A score whose value is not a number.
    """
    wanted = [c.SCORE_EVENT, c.CHECK_EVENT, c.EVALUATION_EVENT]
    events = (
        evented.select("trace_id", "span_id", "events")
        .explode("events")
        .unnest("events")
        .filter(pl.col("name").is_in(wanted))
        .rename({"name": "_event", "attributes": "_attributes", "time_unix_nano": "time"})
    )
    if events.height == 0:
        return pl.DataFrame(
            schema={
                "trace_id": pl.String,
                "span_id": pl.String,
                "time": pl.Int64,
                "kind": pl.String,
                "name": pl.String,
                "value": pl.Float64,
                "label": pl.String,
                "passed": pl.Boolean,
            }
        )
    events = events.with_columns(
        *_typed(c.SCORE_NAME),
        *_typed(c.SCORE_VALUE),
        *_typed(c.CHECK_NAME),
        *_typed(c.CHECK_PASSED),
        *_typed(c.EVALUATION_NAME),
        *_typed(c.EVALUATION_SCORE),
        _attribute(c.EVALUATION_LABEL, "string_value").alias("label"),
    )
    is_score = pl.col("_event") == c.SCORE_EVENT
    is_eval = pl.col("_event") == c.EVALUATION_EVENT
    value_key = pl.when(is_score).then(pl.lit(c.SCORE_VALUE)).otherwise(pl.lit(c.EVALUATION_SCORE))
    events = events.with_columns(
        value_key.alias("_value_key"),
        pl.when(is_score)
        .then(pl.col(f"{c.SCORE_VALUE}#type"))
        .when(is_eval)
        .then(pl.col(f"{c.EVALUATION_SCORE}#type"))
        .alias("_value_type"),
        pl.when(is_score)
        .then(
            pl.coalesce(
                pl.col(f"{c.SCORE_VALUE}#double"), pl.col(f"{c.SCORE_VALUE}#int").cast(pl.Float64)
            )
        )
        .when(is_eval)
        .then(
            pl.coalesce(
                pl.col(f"{c.EVALUATION_SCORE}#double"),
                pl.col(f"{c.EVALUATION_SCORE}#int").cast(pl.Float64),
            )
        )
        .alias("value"),
    )
    # A score event must carry a number; an evaluation event may carry only a label.
    bad = events.filter(
        (is_score & ~pl.col("_value_type").is_in(["double", "int"]).fill_null(False))
        | (is_eval & pl.col("_value_type").is_not_null() & pl.col("value").is_null())
    )
    if bad.height:
        row = bad.row(0, named=True)
        key = row["_value_key"]
        raw = row[f"{key}#str"] if row[f"{key}#str"] is not None else row[f"{key}#bool"]
        raise SchemaError(
            f"span {row['span_id']} (trace {row['trace_id']}): event {row['_event']} has a "
            f"non-numeric {key} ({row['_value_type'] or 'missing'}: {raw!r})"
        )
    checks_bad = events.filter(
        (pl.col("_event") == c.CHECK_EVENT) & (pl.col(f"{c.CHECK_PASSED}#type") != "bool")
    )
    if checks_bad.height:
        row = checks_bad.row(0, named=True)
        raise SchemaError(
            f"span {row['span_id']} (trace {row['trace_id']}): event {c.CHECK_EVENT} needs a "
            f"boolean {c.CHECK_PASSED}"
        )
    return events.select(
        "trace_id",
        "span_id",
        "time",
        pl.when(pl.col("_event") == c.CHECK_EVENT)
        .then(pl.lit("check"))
        .otherwise(pl.lit("score"))
        .alias("kind"),
        pl.when(is_score)
        .then(pl.col(f"{c.SCORE_NAME}#str"))
        .when(is_eval)
        .then(pl.col(f"{c.EVALUATION_NAME}#str"))
        .otherwise(pl.col(f"{c.CHECK_NAME}#str"))
        .fill_null("score")
        .alias("name"),
        "value",
        "label",
        pl.col(f"{c.CHECK_PASSED}#bool").alias("passed"),
    ).filter(
        (pl.col("kind") == "check") | pl.col("value").is_not_null() | pl.col("label").is_not_null()
    )
