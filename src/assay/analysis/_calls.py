"""Which LLM spans are model calls: one per request made, whatever wraps it.

Frameworks record one model call as several spans: LlamaIndex's OpenInference instrumentation
opens a span for ``achat`` and another of the same name inside it, and a span for preparing the
call that sends nothing. Counting every span of kind ``LLM`` would count one request three times.
The rules (docs/integrations.md, "Which spans are calls"):

- An ``LLM`` call span directly inside another is the same call: the innermost is the call.
  Its token counts are its own, or, when it has none, those of the span around it (the span
  that carries the usage and the innermost of the chain are one call). Tool spans are not
  collapsed so: a tool may run other tools, each a call.
- An OpenInference ``LLM`` span that records no message sent or received and no token count
  made no request (it prepared one): it is not a call.

Spans a framework adds to sum up others (Google ADK's ``execute_tool (merged)``) are ruled out
where a tool span is recognised (:func:`assay.analysis._conventions.tool_name`).
"""

from __future__ import annotations

import polars as pl

from assay.analysis import _columns as tc
from assay.analysis import _conventions as conv
from assay.analysis._work import (
    CALL_SCREEN,
    WorkShape,
    aggregate_work,
    call_without_usage,
    calls_may_settle,
    in_trace_key,
    list_models,
)

_KEY = ["trace_id", "span_id"]


def settle_calls(worked: pl.LazyFrame, spans: pl.LazyFrame) -> pl.LazyFrame:
    """``worked`` with the spans that are not calls of their own no longer calls.

    Args:
        worked: The spans read, with their work columns (``with_work_columns``).
        spans: The scan they were read from, with the same trace ids: its attribute lists are
            read for the few OpenInference ``LLM`` spans that carry no token count.

    Returns:
        ``worked`` with ``_is_llm`` and the token columns settled; the spans are
        joined only when some span changes.
    """
    if not _may_change(worked):
        return worked
    llm = (
        worked.filter(pl.col(tc.IS_LLM))
        .select(
            *_KEY,
            "parent_span_id",
            tc.IN_TOK,
            tc.OUT_TOK,
            conv.is_openinference_llm().alias("_oi_llm"),
        )
        .collect()
    )
    # LLM spans directly inside an LLM span, and OpenInference LLM spans without usage: most
    # sets hold neither (one span per call, with its usage), and then nothing else is done.
    inner = llm.join(
        llm.select("trace_id", pl.col("span_id").alias("parent_span_id")),
        on=["trace_id", "parent_span_id"],
        how="semi",
    )
    no_usage = llm.filter(
        pl.col("_oi_llm") & pl.col(tc.IN_TOK).is_null() & pl.col(tc.OUT_TOK).is_null()
    )
    if inner.height == 0 and no_usage.height == 0:
        return worked
    # The spans with a call directly inside: the inner one is the call.
    wrapping = inner.select("trace_id", pl.col("parent_span_id").alias("span_id")).unique()
    # The innermost of a chain takes the usage of the span around it when it has none (only
    # where that span wraps nothing else: two retries inside one span do not share its usage).
    only_child = (
        inner.group_by("trace_id", "parent_span_id")
        .agg(pl.len().alias("_n"))
        .filter(pl.col("_n") == 1)
        .drop("_n")
    )
    around = llm.join(wrapping, on=_KEY, how="semi").select(
        "trace_id",
        pl.col("span_id").alias("parent_span_id"),
        pl.col(tc.IN_TOK).alias("_in_around"),
        pl.col(tc.OUT_TOK).alias("_out_around"),
    )
    inherits = (
        inner.filter(pl.col(tc.IN_TOK).is_null() & pl.col(tc.OUT_TOK).is_null())
        .join(only_child, on=["trace_id", "parent_span_id"], how="semi")
        .join(around, on=["trace_id", "parent_span_id"], how="inner")
        .filter(pl.col("_in_around").is_not_null() | pl.col("_out_around").is_not_null())
        .select(*_KEY, "_in_around", "_out_around")
    )
    # Spans in no chain (neither around a call nor inside one) that record no request.
    alone = no_usage.join(wrapping, on=_KEY, how="anti").join(inner, on=_KEY, how="anti")
    unsent = _unsent(alone.select(_KEY), spans)
    not_llm = pl.concat([wrapping, unsent]).unique()
    if not_llm.height + inherits.height == 0:
        return worked
    changes = not_llm.with_columns(pl.lit(True).alias("_not_llm")).join(
        inherits, on=_KEY, how="full", coalesce=True
    )
    not_llm_now = pl.col("_not_llm").fill_null(False)
    return (
        worked.join(changes.lazy(), on=_KEY, how="left", maintain_order="left")
        .with_columns(
            (pl.col(tc.IS_LLM) & ~not_llm_now).alias(tc.IS_LLM),
            pl.coalesce(tc.IN_TOK, "_in_around").alias(tc.IN_TOK),
            pl.coalesce(tc.OUT_TOK, "_out_around").alias(tc.OUT_TOK),
        )
        .drop("_not_llm", "_in_around", "_out_around")
    )


def work_per_trace(worked: pl.LazyFrame, spans: pl.LazyFrame, shape: WorkShape) -> pl.DataFrame:
    """Per trace, what its spans did (``aggregate_work`` with the models listed), calls settled.

    The spans are aggregated as read first: in most traces every LLM span sits under one span
    that is no LLM span, so no call can be inside another, and with every call's usage recorded
    nothing is settled (:func:`assay.analysis._work.calls_may_settle`, from parent keys the
    group-by reads beside its figures). Only the other traces are settled
    (:func:`settle_calls`), and aggregated again where that changed a span: the same rows as
    settling every span first, without a look at every call of a set of one span per call (20M
    spans: about 1.8 CPU-s).

    Args:
        worked: The spans read, with their work columns (``with_work_columns``).
        spans: The scan they were read from (see :func:`settle_calls`).
        shape: Which kinds of span the spans may hold.
    """
    keys = ["trace_id"]
    per_trace = list_models(worked, aggregate_work(worked, keys, shape).collect(), keys)
    unsure = per_trace.filter(calls_may_settle())["trace_id"]
    per_trace = per_trace.drop(CALL_SCREEN)
    if unsure.len() == 0:
        return per_trace
    part = (
        worked
        if unsure.len() == per_trace.height
        else worked.filter(pl.col("trace_id").is_in(unsure.implode()))
    )
    settled = settle_calls(part, spans)
    if settled is part:
        return per_trace
    again = list_models(settled, aggregate_work(settled, keys, shape).collect(), keys)
    return per_trace.update(again.drop(CALL_SCREEN), on=keys, include_nulls=True)


def _may_change(worked: pl.LazyFrame) -> bool:
    """Whether an LLM span may be inside another, or a call lack usage: the exact look's screen.

    Most sets (one span per call, with its usage) end here.

    Spans are compared by a 64-bit key of span and trace (:func:`in_trace_key`), not by the two
    strings (a bucket of 1M spans, 550k of them calls: 0.04 CPU-s against the exact look's
    0.09). Equal ids have equal keys, so no chain is missed; two ids sharing a key (about 2⁻⁶⁴
    a pair) only send the spans to the exact look, which finds no chain there.
    """
    found = (
        worked.filter(pl.col(tc.IS_LLM))
        .select(
            in_trace_key("parent_span_id").is_in(in_trace_key("span_id").implode()).any(),
            call_without_usage().any(),
        )
        .collect()
        .row(0)
    )
    return any(found)


def _unsent(candidates: pl.DataFrame, spans: pl.LazyFrame) -> pl.DataFrame:
    """The ``candidates`` whose attributes record no message sent or received: no request.

    ``candidates`` are OpenInference LLM spans in no chain and without usage, few: only their
    attribute lists are read.
    """
    if candidates.height == 0:
        return candidates
    recorded = (
        spans.join(candidates.lazy(), on=_KEY, how="semi")
        .select(*_KEY, conv.made_request().alias("_sent"))
        .collect()
    )
    return recorded.filter(~pl.col("_sent").fill_null(False)).select(_KEY)
