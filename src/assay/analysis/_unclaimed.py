"""Spans that look like work but that no convention assay reads claims: never silently blind.

A trace set in a convention assay does not know (a framework's own span names and attributes)
would otherwise show no tool and no LLM call at all — "1 distinct tool path, 100% agreement",
cost 0 — and say nothing. A span looks like work when its name looks like a tool call
(``tool``, ``function call``) or it carries usage or token attributes (``*.usage.*``,
``*tokens*``, ``*token_count*``); a set where no trace holds recognised work but traces hold
many spans is suspect too. ``assay describe`` lists such spans, and the analysis reports them
as a warning finding (``unclaimed_work``) naming the span names, counts and tests; the trials
of such traces are marked (``work_unknown``), and the judge reports their tool and LLM figures
as unknown rather than as "0 tools, 100% agreement, $0".
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import polars as pl

from assay.analysis import _columns as tc
from assay.analysis import _conventions as conv
from assay.quality import Finding

__all__ = [
    "SAMPLE_TRACES",
    "Unclaimed",
    "is_work_feature",
    "unclaimed_trials",
    "unclaimed_work",
    "work_unknown",
]

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
        | conv.is_step()
    )


def _suspects(spans: pl.LazyFrame, sample: pl.Series) -> pl.DataFrame:
    """``trace_id`` and ``name`` of the unclaimed work-like spans of the sampled traces."""
    keys = pl.col("attributes").list.eval(pl.element().struct.field("key"))
    return (
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


def _sample(pool: pl.Series) -> pl.Series:
    return pool.sort().head(SAMPLE_TRACES)


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
    sample = _sample(pool)
    if sample.len() == 0:
        return None
    return _summary(_suspects(spans, sample), sample.len(), pool.len())


def _summary(suspects: pl.DataFrame, looked_at: int, of: int) -> Unclaimed | None:
    if suspects.height == 0:
        return None
    names = suspects.group_by("name").len().sort(["len", "name"], descending=[True, False])
    return Unclaimed(
        names=tuple((str(n), int(k)) for n, k in names.head(_NAMES).rows()),
        spans=suspects.height,
        traces=suspects["trace_id"].n_unique(),
        looked_at=looked_at,
        of=of,
        examples=tuple(suspects["trace_id"].unique(maintain_order=True).head(3).to_list()),
    )


def unclaimed_trials(
    spans: pl.LazyFrame, per_trace: pl.DataFrame, table: pl.DataFrame
) -> tuple[pl.DataFrame, list[Finding]]:
    """Mark the trials whose tool and LLM work is unknown, and say why.

    A trial's work is unknown when its trace holds no recognised tool or LLM call and either
    holds unclaimed work-like spans, lies beyond the sample looked at (it may hold some), or the
    whole set is suspect (no recognised work anywhere, many spans per trace). Its tool and LLM
    figures would otherwise read as zero; the judge reports them as unknown instead.

    Args:
        spans: The spans read.
        per_trace: Work per whole trace (:func:`aggregate_work`, derived), every trace read.
        table: The trials being built (``trace_id``, ``test_id``).

    Returns:
        ``table`` with the boolean ``work_unknown`` column, and the ``unclaimed_work`` warning
        naming the tests concerned (none when every trial's work is known).
    """
    findings, unknown = _unclaimed(spans, per_trace)
    flagged = pl.col("trace_id").is_in(unknown.implode())
    table = table.with_columns(flagged.fill_null(False).alias(tc.WORK_UNKNOWN))
    tests = tuple(sorted(str(t) for t in table.filter(flagged)[tc.TEST_ID].unique().to_list()))
    return table, [replace(f, tests=tests) for f in findings]


def work_unknown(trials: pl.DataFrame) -> int:
    """How many of these trials' tool and LLM work is unknown (0 without the column)."""
    if tc.WORK_UNKNOWN not in trials.columns:
        return 0
    return int(trials[tc.WORK_UNKNOWN].sum())


def is_work_feature(name: str) -> bool:
    """Whether a trial feature is read from the tool and LLM work (unknown where it is).

    Every feature of the failure explanations and the behaviour diff is, but latency and error
    spans.
    """
    return name not in _KNOWN_WITHOUT_WORK


_KNOWN_WITHOUT_WORK = frozenset({"latency", "has_error_spans", "error_spans"})


def _unclaimed(spans: pl.LazyFrame, per_trace: pl.DataFrame) -> tuple[list[Finding], pl.Series]:
    """The ``unclaimed_work`` warning and the traces whose work is unknown."""
    none = pl.Series("trace_id", [], dtype=pl.String)
    idle = per_trace.filter((pl.col(tc.TOOL_CALLS) + pl.col(tc.LLM_CALLS)) == 0)
    if idle.height == 0:
        return [], none
    pool = idle["trace_id"]
    sample = _sample(pool)
    suspects = _suspects(spans, sample)
    found = _summary(suspects, sample.len(), pool.len())
    if found is None:
        if idle.height < per_trace.height:
            return [], none  # the others hold recognised work: these are likely not agent runs
        counts = spans.group_by("trace_id").len().select(pl.col("len").mean()).collect()
        mean = float(counts.item() or 0)
        if mean < _MANY_SPANS:
            return [], none
        names = spans.group_by("name").len().sort(["len", "name"], descending=[True, False])
        top = names.head(_NAMES).collect().rows()
        listed = ", ".join(f"{n} ({k})" for n, k in top)
        message = (
            f"no tool or LLM call was recognised in any of the {per_trace.height} traces, which "
            f"hold {mean:.1f} spans each ({listed}): if they are an agent's, their convention is "
            "not one assay reads, and the tool and LLM figures (tool paths, calls, tokens, cost, "
            "tool errors) are unknown, not zero (docs/integrations.md)"
        )
        return [Finding("unclaimed_work", message, count=per_trace.height)], pool
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
    # Traces beyond the sample were not looked at: they may hold such spans too.
    unknown = pl.concat([suspects["trace_id"].unique(), pool.filter(~pool.is_in(sample.implode()))])
    finding = Finding("unclaimed_work", message, count=found.spans, examples=found.examples)
    return [finding], unknown
