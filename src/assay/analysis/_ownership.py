"""Which trial does each span belong to? Its nearest ancestor-or-self carrying a test id.

For a *mapped* attribute (``--test-attribute``; instrumentations copy such attributes onto every
child span) the owner is instead the **top-most** ancestor-or-self carrying it: the trial is
the top-most span of its subtree carrying the attribute, and its descendants are its work.

Most traces hold one trial at their root; then every span of the trace is that trial's, and a
join on ``trace_id`` answers (fast path). Otherwise — trials nested under a run span, several
trials in one trace — ancestors are resolved by pointer jumping: each round, every unresolved
span looks at its current ancestor; if that ancestor knows its trial the span takes it, else
the span jumps to the ancestor's ancestor. Path lengths halve each round, so a chain of depth d
takes about log2(d) joins.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import polars as pl

from assay.analysis import _columns as tc
from assay.conventions import TEST_ID
from assay.quality import Finding
from assay.store import promoted_column

_IS_TRIAL = pl.col(promoted_column(TEST_ID)).is_not_null()
_MAX_ROUNDS = 64  # 2**64 levels: far beyond any real trace; also stops on a parent cycle


@dataclass(frozen=True, slots=True)
class TraceShapes:
    """How the traces that hold trials are shaped."""

    simple: pl.DataFrame
    """``trace_id`` → ``_trial_span_id`` for traces whose single trial is the root."""
    nested: pl.Series
    """Trace ids holding several trials, or a trial below a parent span."""
    rootless: pl.DataFrame = field(
        default_factory=lambda: pl.DataFrame(schema={"trace_id": pl.String})
    )
    """Mapped framing: the traces of ``simple`` whose root was never recorded (a run span
    never ended), with what their trial span stands in for: ``_trial_span_id``, the start and
    end of their top-most carriers, and ERROR when one of those is ERROR."""


def classify_traces(
    trial_spans: pl.DataFrame, *, topmost: bool = False, spans: pl.LazyFrame | None = None
) -> TraceShapes:
    """Split the traces holding trial spans into simple and nested ones.

    Args:
        trial_spans: The spans carrying the test attribute.
        topmost: Mapped framing: a trace whose root carries the attribute is simple (the root
            is its one trial, whatever spans below it carry the attribute too).
        spans: Every span read (mapped framing): a trace none of whose spans is a root was
            recorded without its root, which these tell from a root that carries no attribute.
    """
    if topmost:
        is_root = pl.col("parent_span_id").is_null()
        roots = trial_spans.group_by("trace_id").agg(
            is_root.sum().alias("_roots"),
            pl.col("span_id").filter(is_root).first().alias(tc.TRIAL_SPAN_ID),
        )
        one_root = pl.col("_roots") == 1
        rootless = _rootless(trial_spans, roots.filter(pl.col("_roots") == 0)["trace_id"], spans)
        return TraceShapes(
            simple=pl.concat(
                [
                    roots.filter(one_root).select("trace_id", tc.TRIAL_SPAN_ID),
                    rootless.select("trace_id", tc.TRIAL_SPAN_ID),
                ]
            ),
            nested=roots.filter(
                ~one_root & ~pl.col("trace_id").is_in(rootless["trace_id"].implode())
            )["trace_id"],
            rootless=rootless,
        )
    per_trace = trial_spans.group_by("trace_id").agg(
        pl.len().alias("_trials"),
        pl.col("span_id").first().alias(tc.TRIAL_SPAN_ID),
        pl.col("parent_span_id").first().is_null().alias("_root"),
    )
    is_simple = (pl.col("_trials") == 1) & pl.col("_root")
    return TraceShapes(
        simple=per_trace.filter(is_simple).select("trace_id", tc.TRIAL_SPAN_ID),
        nested=per_trace.filter(~is_simple)["trace_id"],
    )


def _rootless(
    trial_spans: pl.DataFrame, traces: pl.Series, every: pl.LazyFrame | None
) -> pl.DataFrame:
    """The traces of ``traces`` (no root recorded) that are one trial, and its stand-in span.

    A run whose agent span was never ended (smolagents' OpenInference instrumentation leaves
    it open when the run raises) is exported without its root: its steps are orphans. When
    every top-most carrier of such a trace names one test, the trace is one trial (counted as
    two, its figures would be doubled); its span is the earliest top-most carrier, standing for
    the run from the first start to the last end, ERROR when one of them is.
    """
    if every is not None and traces.len():
        # A root carrying no attribute (a run span of the user's above the framework's) is a
        # root all the same: those traces are nested, not root-less.
        rooted = (
            every.filter(pl.col("trace_id").is_in(traces.implode()))
            .filter(pl.col("parent_span_id").is_null())
            .select("trace_id")
            .unique()
            .collect()
        )
        traces = traces.filter(~traces.is_in(rooted["trace_id"].implode()))
    else:
        traces = traces.head(0)
    spans = trial_spans.filter(pl.col("trace_id").is_in(traces.implode()))
    top = spans.join(
        spans.select("trace_id", pl.col("span_id").alias("parent_span_id")),
        on=["trace_id", "parent_span_id"],
        how="anti",
    ).sort("start_time_unix_nano", maintain_order=True)
    error = pl.col("status_code") == "ERROR"
    per_trace = top.group_by("trace_id").agg(
        pl.col(promoted_column(TEST_ID)).n_unique().alias("_tests"),
        pl.col("span_id").first().alias(tc.TRIAL_SPAN_ID),
        pl.col("start_time_unix_nano").min(),
        pl.col("end_time_unix_nano").max(),
        pl.when(error.any())
        .then(pl.lit("ERROR"))
        .otherwise(pl.col("status_code").first())
        .alias("status_code"),
        pl.col("status_message").filter(error).first(),
    )
    return per_trace.filter(pl.col("_tests") == 1).drop("_tests")


def assign_trials(spans: pl.DataFrame) -> pl.DataFrame:
    """Add ``_trial_span_id`` (the owning trial's span id) to spans; drop spans of no trial.

    Args:
        spans: Spans with ``trace_id``, ``span_id``, ``parent_span_id`` and the test-id column.

    Returns:
        The spans that belong to a trial, with the trial's span id. Spans whose parent chain
        is broken (a missing parent) belong to the trial only when it is the single root trial
        of their trace.
    """
    shapes = classify_traces(spans.filter(_IS_TRIAL))
    owned = spans.join(shapes.simple, on="trace_id", how="inner")
    if shapes.nested.len() == 0:
        return owned
    nested = spans.filter(pl.col("trace_id").is_in(shapes.nested.implode()))
    return pl.concat([owned, resolve_nested(nested)], how="vertical_relaxed")


def resolve_topmost(spans: pl.DataFrame) -> tuple[pl.DataFrame, pl.Series]:
    """Add ``_trial_span_id``: the top-most ancestor-or-self carrying the test attribute.

    Pointer jumping over segments: each span holds the top-most carrier between itself and its
    current ancestor pointer (exclusive); joining segments end to end doubles them each round.
    A chain broken by a missing parent stops there, so its top-most visible carrier owns it.
    Spans with no carrier on their chain belong to no trial and are dropped.

    Returns:
        The spans that belong to a trial, with its span id; and the ids of the traces holding a
        parent cycle (a span its own ancestor), whose spans are left out: in such a trace no
        span is top-most, so any choice of trials would be a guess (:func:`cycle_finding`).
    """
    links = spans.select(
        "trace_id",
        "span_id",
        pl.when(_IS_TRIAL).then(pl.col("span_id")).alias("_top"),
        pl.col("parent_span_id").alias("_anc"),
        pl.len().over("trace_id").alias("_size"),
    )
    reach = 1  # how many steps up every pointer still set points
    # A chain in a trace of n spans has at most n - 1 steps: a pointer still set n or more
    # steps up has gone round a cycle. So the rounds end after log2 of the largest trace.
    while (links["_anc"].is_not_null() & (links["_size"] > reach)).any():
        ancestors = links.select(
            "trace_id",
            pl.col("span_id").alias("_anc"),
            pl.col("_top").alias("_anc_top"),
            pl.col("_anc").alias("_anc_anc"),
        )
        links = (
            links.join(ancestors, on=["trace_id", "_anc"], how="left")
            .with_columns(
                pl.coalesce("_anc_top", "_top").alias("_top"),
                pl.col("_anc_anc").alias("_anc"),
            )
            .drop("_anc_top", "_anc_anc")
        )
        reach *= 2
    cyclic = links.filter(pl.col("_anc").is_not_null())["trace_id"].unique()
    owners = links.filter(
        pl.col("_top").is_not_null() & ~pl.col("trace_id").is_in(cyclic.implode())
    ).select("trace_id", "span_id", pl.col("_top").alias(tc.TRIAL_SPAN_ID))
    return spans.join(owners, on=["trace_id", "span_id"], how="inner"), cyclic


PARENT_CYCLES = "parent_cycles"
"""The kind of the finding about traces whose parent links go round in a cycle."""


def cycle_finding(cyclic: pl.Series, test_attribute: str) -> Finding | None:
    """The finding naming the traces :func:`resolve_topmost` left out for a parent cycle."""
    if cyclic.len() == 0:
        return None
    ids = cyclic.cast(pl.String).sort()
    return Finding(
        PARENT_CYCLES,
        f"{ids.len()} trace(s) are malformed: some span is its own ancestor (its parent links "
        f"go round in a cycle), so no span carrying {test_attribute} is top-most; their spans "
        "are not made into trials",
        ids.len(),
        tuple(ids.head(5).to_list()),
    )


def only_cycles_message(findings: Sequence[Finding], test_attribute: str) -> str | None:
    """Why a set gives no trial when its only traces carrying the attribute are cycles.

    ``findings`` are the set's; None when they name no parent cycle (the set gives no trial
    for another reason, or gives some). A set of parent cycles alone is no result to judge:
    the caller refuses it as it refuses a set without trial spans.
    """
    cycles = next((f for f in findings if f.kind == PARENT_CYCLES), None)
    if cycles is None:
        return None
    return (
        f"no trial spans: the spans carrying {test_attribute} lie only in {cycles.count} "
        "trace(s) dropped as parent cycles (some span is its own ancestor, so none is "
        f"top-most), e.g. {', '.join(cycles.examples[:3])}: see parent_cycles in "
        "docs/reliability.md"
    )


def resolve_nested(spans: pl.DataFrame) -> pl.DataFrame:
    """Add ``_trial_span_id`` to the spans of nested traces by pointer jumping."""
    links = spans.select(
        "trace_id",
        "span_id",
        pl.when(_IS_TRIAL).then(pl.col("span_id")).alias("_owner"),
        pl.col("parent_span_id").alias("_anc"),
    )
    for _ in range(_MAX_ROUNDS):
        pending = links["_owner"].is_null() & links["_anc"].is_not_null()
        if not pending.any():
            break
        ancestors = links.select(
            "trace_id",
            pl.col("span_id").alias("_anc"),
            pl.col("_owner").alias("_anc_owner"),
            pl.col("_anc").alias("_anc_anc"),
        )
        links = (
            links.join(ancestors, on=["trace_id", "_anc"], how="left")
            .with_columns(
                pl.when(pl.col("_owner").is_not_null())
                .then(pl.col("_owner"))
                .otherwise(pl.col("_anc_owner"))
                .alias("_owner"),
                pl.when(pl.col("_owner").is_not_null() | pl.col("_anc_owner").is_not_null())
                .then(pl.col("_anc"))
                .otherwise(pl.col("_anc_anc"))
                .alias("_anc"),
            )
            .drop("_anc_owner", "_anc_anc")
        )
    owners = links.filter(pl.col("_owner").is_not_null()).select(
        "trace_id", "span_id", pl.col("_owner").alias(tc.TRIAL_SPAN_ID)
    )
    return spans.join(owners, on=["trace_id", "span_id"], how="inner")
