"""What an unknown trace set holds: span names, conventions, attributes that could name a test.

``assay describe PATH`` prints it, so that a user finds the ``--test-attribute`` mapping of a
trace set in one step.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from assay import conventions as c
from assay.analysis._evaluations import EvaluationSeen, evaluations_seen
from assay.analysis._unclaimed import Unclaimed, unclaimed_work
from assay.store import PROMOTED_ATTRIBUTES, promoted_column

_TOP = 15

#: Convention → the promoted attribute whose presence shows it.
_CONVENTIONS = {
    "assay trial contract": c.TEST_ID,
    "OpenTelemetry GenAI": c.GENAI_OPERATION,
    "OpenInference": c.OPENINFERENCE_KIND,
    "OpenLLMetry (traceloop)": c.TRACELOOP_KIND,
    "OpenAI Agents (openai-agents-opentelemetry)": c.OPENAI_AGENTS_SPAN_TYPE,
    "Vercel AI SDK (ai.*)": c.AI_SDK_OPERATION,
}


@dataclass(frozen=True, slots=True)
class Candidate:
    """An attribute that could name the test (``--test-attribute``)."""

    attribute: str
    """The attribute name."""
    traces: int
    """Traces with a span carrying it."""
    values: int
    """Distinct values (the number of tests it would make)."""
    spans: int
    """Spans carrying it (far more than traces: instrumentations copy it onto children)."""
    on_roots: int
    """Root spans carrying it."""

    @property
    def known(self) -> bool:
        """A mapping attribute of a known framework (``conventions.MAPPING_CANDIDATES``)."""
        return self.attribute in (c.TEST_ID, *c.MAPPING_CANDIDATES) or self.attribute.startswith(
            c.MAPPING_CANDIDATE_PREFIXES
        )

    @property
    def constant(self) -> bool:
        """One value over several traces: mapped by it, every run would be one test."""
        return self.values == 1 and self.traces > 1

    def fit(self) -> tuple[bool, bool, bool, bool, float, int]:
        """How well it looks like a test name, for sorting (larger first).

        On root spans (a trial is the top-most span carrying it), more than one value, far
        fewer values than traces (a value per trace is an id, a prompt or a timestamp, not a
        test; at most half as many values as traces, or two traces a test on average), then a
        known framework attribute, the share of traces whose root carries it, and traces.
        """
        few = self.values * 2 <= self.traces
        share = self.on_roots / self.traces if self.traces else 0.0
        return (self.on_roots > 0, not self.constant, few, self.known, share, self.traces)


@dataclass(frozen=True, slots=True)
class Description:
    """A summary of a trace set."""

    spans: int
    """Spans read."""
    traces: int
    """Distinct traces."""
    span_names: tuple[tuple[str, int], ...]
    """The most common span names, with their counts."""
    conventions: tuple[tuple[str, int], ...]
    """Conventions detected, with the number of spans in each."""
    candidates: tuple[Candidate, ...]
    """Attributes that could name the test, best first (:meth:`Candidate.fit`)."""
    unclaimed: Unclaimed | None = None
    """Spans that look like work but that no convention assay reads claims (a sample)."""
    evaluations: tuple[EvaluationSeen, ...] = ()
    """Evaluation, score and check names, with their labels and counts (``--pass-when``)."""
    sources: tuple[SourceSeen, ...] = ()
    """The formats ``assay import`` read the traces from (none for OTLP and assay's own)."""


@dataclass(frozen=True, slots=True)
class SourceSeen:
    """A format some traces were imported from (``assay.import.format`` on their resource)."""

    format: str
    """The format's key (``jaeger``, ``zipkin``, ``tempo``, …)."""
    label: str
    """Its name for people."""
    traces: int
    """Traces whose root span was read from it."""
    not_recorded: tuple[str, ...]
    """What the format does not record, so that these traces cannot show it."""


def _sources(spans: pl.LazyFrame) -> tuple[SourceSeen, ...]:
    """The import formats of the root spans (a root is enough: a trace comes from one file)."""
    from assay.ingest import FORMAT_ATTRIBUTE, format_named

    marked = (
        spans.filter(pl.col("parent_span_id").is_null())
        .select(
            "trace_id",
            pl.col("resource_attributes")
            .list.eval(
                pl.element()
                .filter(pl.element().struct.field("key") == FORMAT_ATTRIBUTE)
                .struct.field("string_value")
            )
            .list.first()
            .alias("format"),
        )
        .drop_nulls("format")
        .group_by("format")
        .agg(pl.col("trace_id").n_unique().alias("traces"))
        .sort("format")
        .collect()
    )
    out = []
    for key, traces in marked.rows():
        known = format_named(str(key))
        label = known.label if known is not None else str(key)
        missing = known.cannot_tell if known is not None else ()
        out.append(SourceSeen(str(key), label, int(traces), missing))
    return tuple(out)


def _known_candidates(spans: pl.LazyFrame) -> list[Candidate]:
    # Those not promoted (gen_ai.workflow.name) are read on root spans by _root_candidates,
    # where their frameworks put them, and ranked as known there.
    attributes = [a for a in (c.TEST_ID, *c.MAPPING_CANDIDATES) if a in PROMOTED_ATTRIBUTES]
    figures = []
    for i, attribute in enumerate(attributes):
        column = pl.col(promoted_column(attribute))
        carried = column.is_not_null()
        figures += [
            pl.col("trace_id").filter(carried).n_unique().alias(f"{i}:traces"),
            column.drop_nulls().n_unique().alias(f"{i}:values"),
            carried.sum().alias(f"{i}:spans"),
            (carried & pl.col("parent_span_id").is_null()).sum().alias(f"{i}:on_roots"),
        ]
    row = spans.select(figures).collect().row(0)
    out = []
    for i, attribute in enumerate(attributes):
        traces, values, n, on_roots = (int(v) for v in row[4 * i : 4 * i + 4])
        if n:
            out.append(Candidate(attribute, traces, values, n, on_roots))
    return out


def _root_candidates(spans: pl.LazyFrame, known: set[str]) -> list[Candidate]:
    """String attributes of root spans, not already listed."""
    rows = (
        spans.filter(pl.col("parent_span_id").is_null())
        .select("trace_id", "attributes")
        .explode("attributes")
        .unnest("attributes")
        .filter(pl.col("string_value").is_not_null() & ~pl.col("key").is_in(list(known)))
        .group_by("key")
        .agg(
            pl.col("trace_id").n_unique().alias("traces"),
            pl.col("string_value").n_unique().alias("values"),
            pl.len().alias("spans"),
        )
        .collect()
    )
    return [
        Candidate(key, int(traces), int(values), int(n), int(n))
        for key, traces, values, n in rows.select("key", "traces", "values", "spans").rows()
    ]


def ranked_candidates(spans: pl.LazyFrame, top: int = _TOP) -> list[Candidate]:
    """The ``top`` attributes most like a test name, best first (:meth:`Candidate.fit`).

    They are the known mapping attributes (wherever they are) and the string attributes of
    root spans; ties go alphabetically.
    """
    known = _known_candidates(spans)
    found = sorted(known + _root_candidates(spans, {k.attribute for k in known}), key=_name)
    return sorted(found, key=Candidate.fit, reverse=True)[:top]  # stable: ties keep names' order


def _name(candidate: Candidate) -> str:
    return candidate.attribute


def describe_spans(spans: pl.LazyFrame) -> Description:
    """Describe a trace set: its span names, conventions and candidate test attributes.

    Args:
        spans: A lazy scan of the spans table.
    """
    totals = spans.select(pl.len(), pl.col("trace_id").n_unique()).collect().row(0)
    names = (
        spans.group_by("name")
        .agg(pl.len().alias("n"))
        .sort(["n", "name"], descending=[True, False])
        .head(_TOP)
        .collect()
    )
    counts = (
        spans.select(
            pl.col(promoted_column(attr)).is_not_null().sum().alias(label)
            for label, attr in _CONVENTIONS.items()
            if attr in PROMOTED_ATTRIBUTES
        )
        .collect()
        .row(0, named=True)
    )
    return Description(
        spans=int(totals[0]),
        traces=int(totals[1]),
        span_names=tuple((str(n), int(k)) for n, k in names.rows()),
        conventions=tuple((label, int(n)) for label, n in counts.items() if n),
        candidates=tuple(ranked_candidates(spans)),
        unclaimed=unclaimed_work(spans),
        evaluations=evaluations_seen(spans),
        sources=_sources(spans),
    )
