"""A span stored more than once is counted once: which copy, by a rule blind to row order.

Copies of a span (the same ``trace_id`` and ``span_id``) are usually identical — an import run
twice, an exporter that retried a request whose answer was lost — and then any copy will do.
Copies that *differ* (two writers reusing ids, a record edited and stored again) are a conflict:
keeping the first in file order once made a verdict flip between 5/5 PASS and FAIL on the order
of two rows. The copy kept is therefore chosen by its content, never its place:

1. the worst recorded trial outcome: ``assay.trial.outcome`` ``error``, then ``fail``, then any
   other value, then none (a disputed pass is never a pass);
2. then an ERROR status (the outcome of a trial that records none);
3. then the latest end;
4. then the largest hash of the span's own fields (every column but the resource's): arbitrary,
   but the same whatever the order of the rows or files.

The OpenTelemetry Collector and Jaeger store both copies and leave the choice to the reader;
this is assay's, documented in docs/reliability.md.
"""

from __future__ import annotations

import polars as pl

from assay import conventions as c
from assay.quality import Finding
from assay.store import _schema as s

__all__ = ["CONFLICTING_SPANS", "conflicting_copies", "rule_rank", "one_copy_each"]

CONFLICTING_SPANS = "conflicting_spans"
"""The kind of the finding about copies of a span whose content differs."""

_IDS = [s.TRACE_ID, s.SPAN_ID]
_OUTCOME = s.promoted_column(c.TRIAL_OUTCOME)
_EXAMPLES = 5
_NO_OUTCOME = "no outcome"


def _severity() -> pl.Expr:
    outcome = pl.col(_OUTCOME).cast(pl.String).str.to_lowercase()
    return (
        pl.when(outcome == c.OUTCOME_ERROR)
        .then(pl.lit(3, pl.Int8))
        .when(outcome == c.OUTCOME_FAIL)
        .then(pl.lit(2, pl.Int8))
        .when(outcome.is_not_null())
        .then(pl.lit(1, pl.Int8))
        .otherwise(pl.lit(0, pl.Int8))
    )


def _content() -> pl.Expr:
    """A hash of the span's own fields: the resource (the import's format, a host) is not one."""
    return pl.struct(pl.all().exclude(s.RESOURCE_ATTRIBUTES)).hash(seed=0)


def _error() -> pl.Expr:
    return (pl.col(s.STATUS_CODE) == "ERROR").fill_null(False)


def _rule() -> list[pl.Expr]:
    """The copy kept sorts first by these, all descending (the module's rule, in its order)."""
    return [_severity(), _error(), pl.col(s.END_TIME), _content()]


def rule_rank() -> pl.Expr:
    """The rule's first three keys packed into one unsigned 64-bit number: larger is kept.

    The outcome's severity in the top 2 bits, an ERROR status in the next, the end in units of
    4 ns in the low 61 (the whole int64 range of the table). Of two copies, the one of larger
    rank is the one :func:`one_copy_each` keeps; equal ranks (the same outcome class and status,
    ends within 4 ns) go to the tie-break, which the rank does not hold. ``assay watch`` keeps
    the rank of the copy it counted, to tell whether a copy arriving after its trace was judged
    is one ``analyze`` would count instead: three small columns, where the content hash reads
    the whole span (holding it doubled the memory of a watch's first look).
    """
    end = (pl.col(s.END_TIME).clip(lower_bound=0) // 4).cast(pl.UInt64)
    return (
        _severity().cast(pl.UInt64) * pl.lit(1 << 62, pl.UInt64)
        + _error().cast(pl.UInt64) * pl.lit(1 << 61, pl.UInt64)
        + end
    )


def one_copy_each(scan: pl.LazyFrame) -> pl.LazyFrame:
    """``scan`` with each ``(trace_id, span_id)`` once, the copy kept chosen by the rule above.

    Spans stored once pass as they are; only the repeated ones are sorted.
    """
    key = pl.struct(*_IDS)
    repeated = key.is_duplicated()
    rule = _rule()
    chosen = (
        scan.filter(repeated)
        .sort(rule, descending=[True] * len(rule), nulls_last=True, maintain_order=True)
        .filter(key.is_first_distinct())
    )
    return pl.concat([scan.filter(~repeated), chosen], how="vertical")


def _said() -> pl.Expr:
    """What a copy says of its trial, in words: its outcome, else an ERROR status, else none."""
    return pl.coalesce(
        pl.col(_OUTCOME).cast(pl.String).str.to_lowercase(),
        pl.when(pl.col(s.STATUS_CODE) == "ERROR").then(pl.lit("ERROR status")),
        pl.lit(_NO_OUTCOME),
    )


def conflicting_copies(scan: pl.LazyFrame, repeated: pl.DataFrame) -> Finding | None:
    """The finding naming the spans of ``repeated`` whose copies differ, else None.

    Args:
        scan: Every span of the set, copies included.
        repeated: The ``(trace_id, span_id)`` pairs stored more than once.
    """
    rule = _rule()
    names = [f"_rule{i}" for i in range(len(rule))]
    differing = (
        scan.join(repeated.lazy().select(_IDS), on=_IDS, how="semi")
        .select(
            *_IDS, _said().alias("_said"), *(r.alias(n) for r, n in zip(rule, names, strict=True))
        )
        .group_by(_IDS)
        .agg(
            pl.col(names[-1]).n_unique().alias("_versions"),
            pl.col("_said").unique().sort().alias("_all"),
            pl.col("_said").sort_by(names, descending=[True] * len(names)).first().alias("_kept"),
        )
        .filter(pl.col("_versions") > 1)
        .sort(_IDS)
        .collect()
    )
    if differing.height == 0:
        return None
    disputed = differing.filter(pl.col("_all").list.len() > 1).height
    examples = tuple(
        f"span {row[s.SPAN_ID]} of trace {row[s.TRACE_ID]}: copies say "
        f"{' / '.join(row['_all'])}, counted as {row['_kept']}"
        for row in differing.head(_EXAMPLES).iter_rows(named=True)
    )
    return Finding(
        CONFLICTING_SPANS,
        f"{differing.height} span(s) are stored as copies that differ (same trace_id and "
        f"span_id, different content: not an import run twice), {disputed} of them with "
        "different outcomes; each is counted once, as its copy with the worst outcome, then an "
        "ERROR status, then the latest end (docs/reliability.md), whatever the order of the rows",
        differing.height,
        examples,
    )
