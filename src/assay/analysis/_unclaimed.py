"""Spans that look like work but that no convention assay reads claims: never silently blind.

A trace set in a convention assay does not know (a framework's own span names and attributes)
would otherwise show no tool and no LLM call at all — "1 distinct tool path, 100% agreement",
cost 0 — and say nothing. A span looks like work when its name looks like a tool call
(``tool``, ``function call``) or it carries usage or token attributes (``*.usage.*``,
``*tokens*``, ``*token_count*``); a set where no trace holds recognised work but traces hold
many spans is suspect too. ``assay describe`` lists such spans, and the analysis reports them
as a warning finding (``unclaimed_work``) naming the span names and counts.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from assay.analysis import _columns as tc
from assay.analysis import _conventions as conv
from assay.quality import Finding

__all__ = ["SAMPLE_TRACES", "Unclaimed", "unclaimed_finding", "unclaimed_work"]

SAMPLE_TRACES = 2000
"""Traces looked at, at most: reading every attribute key of a large set would cost more than
the analysis; the first traces by id are a fair sample of one agent's traces."""
_TOOL_NAME = r"(?i)tool|function[ _.]?call"
_USAGE_KEY = r"(?i)(^|\.)usage(\.|$)|tokens|token_count"
_MANY_SPANS = 4.0
"""Spans per trace from which traces with no recognised work are suspect on that alone."""
_NAMES = 5


@dataclass(frozen=True, slots=True)
class Unclaimed:
    """Work-like spans no convention claims, in the traces looked at."""

    names: tuple[tuple[str, int], ...]
    """The most common such span names, with their counts."""
    spans: int
    """Such spans."""
    traces: int
    """Traces holding one."""
    looked_at: int
    """Traces looked at (at most :data:`SAMPLE_TRACES`)."""
    of: int
    """Traces they were taken from."""
    examples: tuple[str, ...]
    """A few of the traces holding one."""


def _claimed() -> pl.Expr:
    return (
        conv.tool_name().is_not_null()
        | conv.is_llm_call()
        | conv.is_agent_invocation()
        | conv.handoff_target().is_not_null()
    )


def unclaimed_work(spans: pl.LazyFrame, traces: pl.Series | None = None) -> Unclaimed | None:
    """The work-like spans that no convention claims, or None when there are none.

    Args:
        spans: A lazy scan of the spans table.
        traces: Look only at these traces (e.g. the traces without recognised work); all by
            default. At most :data:`SAMPLE_TRACES` of them are looked at.
    """
    ids = spans.select(pl.col("trace_id").unique()) if traces is None else None
    pool = ids.collect()["trace_id"] if ids is not None else traces
    assert pool is not None
    sample = pool.sort().head(SAMPLE_TRACES)
    if sample.len() == 0:
        return None
    keys = pl.col("attributes").list.eval(pl.element().struct.field("key"))
    suspects = (
        spans.filter(pl.col("trace_id").is_in(sample.implode()))
        .select(conv.SPAN_COLUMNS + ["attributes"])
        .filter(~_claimed())
        .filter(
            pl.col("name").str.contains(_TOOL_NAME)
            | keys.list.eval(pl.element().str.contains(_USAGE_KEY)).list.any()
        )
        .select("trace_id", "name")
        .collect()
    )
    if suspects.height == 0:
        return None
    names = suspects.group_by("name").len().sort(["len", "name"], descending=[True, False])
    return Unclaimed(
        names=tuple((str(n), int(k)) for n, k in names.head(_NAMES).rows()),
        spans=suspects.height,
        traces=suspects["trace_id"].n_unique(),
        looked_at=sample.len(),
        of=pool.len(),
        examples=tuple(suspects["trace_id"].unique(maintain_order=True).head(3).to_list()),
    )


def unclaimed_finding(spans: pl.LazyFrame, per_trace: pl.DataFrame) -> list[Finding]:
    """The ``unclaimed_work`` warning for the traces where no tool or LLM call was recognised.

    Args:
        spans: The spans read.
        per_trace: Work per whole trace (:func:`aggregate_work`, derived), every trace read.
    """
    idle = per_trace.filter((pl.col(tc.TOOL_CALLS) + pl.col(tc.LLM_CALLS)) == 0)
    if idle.height == 0:
        return []
    found = unclaimed_work(spans, idle["trace_id"])
    if found is None:
        if idle.height < per_trace.height:
            return []  # the others hold recognised work: these are likely not agent runs
        counts = spans.group_by("trace_id").len().select(pl.col("len").mean()).collect()
        mean = float(counts.item() or 0)
        if mean < _MANY_SPANS:
            return []
        names = spans.group_by("name").len().sort(["len", "name"], descending=[True, False])
        top = names.head(_NAMES).collect().rows()
        listed = ", ".join(f"{n} ({k})" for n, k in top)
        message = (
            f"no tool or LLM call was recognised in any of the {per_trace.height} traces, which "
            f"hold {mean:.1f} spans each ({listed}): if they are an agent's, their convention is "
            "not one assay reads, and the tool and LLM figures (tool paths, calls, tokens, cost, "
            "tool errors) are unknown, not zero (docs/integrations.md)"
        )
        return [Finding("unclaimed_work", message, count=per_trace.height)]
    if found.looked_at < found.of:
        where = f"the first {found.looked_at} of the {found.of} traces without recognised work"
    else:
        where = f"{found.traces} trace{'s' if found.traces != 1 else ''} without recognised work"
    listed = ", ".join(f"{n} ({k})" for n, k in found.names)
    message = (
        f"{found.spans} spans in {where} look like tool or LLM calls ({listed}) but no "
        "convention assay reads claims them: the tool and LLM figures (tool paths, calls, "
        "tokens, cost, tool errors) leave them out — for those traces they are unknown, not "
        "zero (docs/integrations.md lists the conventions read)"
    )
    return [Finding("unclaimed_work", message, count=found.spans, examples=found.examples)]
