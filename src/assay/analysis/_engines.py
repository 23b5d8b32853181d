"""Engines: where the spans → trials function runs over a trace set.

Both engines run the same function (:func:`assay.analysis.read_trials`) on whole traces, one
bucket of the trace set at a time, and concatenate the trials tables and their data-quality
findings; statistics are then computed from the trials table on this machine, whichever engine
made it.

* ``local``: here, bucket by bucket, so memory is bounded by a bucket, not by the trace set.
* ``spark``: inside Spark (``groupBy(bucket).applyInArrow``), see ``_spark.py``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from typing import Final, TypeVar

import polars as pl

from assay import conventions as c
from assay.analysis import _columns as tc
from assay.analysis._ownership import only_cycles_message
from assay.analysis._passwhen import PassRule
from assay.analysis._per_bucket import (
    COMPACT_TOOLS,
    TrialsFunction,
    bucket_trials,
    concat_trials,
    tools_as_strings,
)
from assay.analysis._trials import (
    NoTrialSpans,
    SpansMayRepeat,
    Trials,
    in_trials_order,
    read_trials,
)
from assay.analysis._waiting import Packed, Waiting
from assay.choices import Engine
from assay.errors import ConfigError
from assay.quality import Finding
from assay.store import (
    DUPLICATE_SPANS,
    Bucket,
    EventsColumn,
    SpanContents,
    TraceSet,
    bucket_events,
    duplicate_spans,
    existing_buckets,
    made_buckets,
    row_group_buckets,
    scan_bucket,
)

SPANS_PER_BUCKET: Final = 2_000_000
"""Spans per bucket the engines aim at when they make buckets (``ASSAY_SPANS_PER_BUCKET``).

2M, not more: a bucket's work at its peak holds about 0.35 GiB per million spans, and buckets
of 2M spans cost no more CPU than buckets of 4M (docs/scale.md, "Fourth phase"), while the
peak of a 20M-span analysis falls from about 2.0-2.5 GiB to 1.4-1.6 GiB."""
SPANS_PER_BUCKET_ENV: Final = "ASSAY_SPANS_PER_BUCKET"
BUCKETS_AT_ONCE: Final = 2
"""Buckets the local engine makes are read this many at a time, each of this share of the
bucket size, so the spans in memory stay about one bucket's. Two at once keep both cores
busy where one bucket alone leaves one idle (its Python steps, its single-threaded Polars
steps): about 10% less wall time at 20M spans for the same peak (docs/scale.md). A set laid
out in buckets by its writers is read one bucket at a time: their size is the writer's."""


def trials_function(
    min_score: float | None,
    test_attribute: str,
    pass_when: str | PassRule | None = None,
    contents: SpanContents | None = None,
    ordered: bool = True,
    suite_attribute: str = c.SUITE,
) -> TrialsFunction:
    """The spans → trials function with the analysis' options bound.

    ``contents`` is what the whole trace set may hold (``TraceSet.contents()``); every bucket
    holds at most that. Without ``ordered`` the tables come unsorted: the engines sort the
    set's table once, not every bucket's (see :func:`read_trials`).
    """

    def build(
        spans: pl.LazyFrame, *, screen_repeats: bool = False, events: EventsColumn | None = None
    ) -> Trials:
        return read_trials(
            spans,
            min_score=min_score,
            test_attribute=test_attribute,
            suite_attribute=suite_attribute,
            pass_when=pass_when,
            contents=contents,
            ordered=ordered,
            screen_repeats=screen_repeats,
            events=events,
        )

    return build


def engine_trials(
    trace_set: TraceSet,
    *,
    engine: Engine | str = Engine.LOCAL,
    min_score: float | None = None,
    test_attribute: str = c.TEST_ID,
    pass_when: str | PassRule | None = None,
    spark_master: str | None = None,
    spans_per_bucket: int | None = None,
    contents: SpanContents | None = None,
    compact_tools: bool = False,
    suite_attribute: str = c.SUITE,
) -> Trials:
    """The trials table of a trace set and its findings, made by ``engine``.

    Args:
        trace_set: The checked files to read.
        engine: ``local`` (here, bucket by bucket) or ``spark``.
        min_score: As for :func:`read_trials`.
        test_attribute: As for :func:`read_trials`.
        pass_when: As for :func:`read_trials`.
        suite_attribute: As for :func:`read_trials`.
        spark_master: The Spark master URL (``spark`` only; default: Spark's own setting).
        spans_per_bucket: Bucket size the engine aims at when the set has no buckets; default
            ``ASSAY_SPANS_PER_BUCKET`` or :data:`SPANS_PER_BUCKET`.
        contents: ``trace_set.contents()`` when the caller has it (it reads every footer).
        compact_tools: Tool sequences may come as held while the buckets waited, a list of
            dictionary strings (``List(Categorical)``), for a caller that makes the strings
            only if asked (:func:`tools_as_strings`); by default, lists of strings.

    Raises:
        ConfigError: An unknown engine, or ``spark`` without pyspark installed.
        SchemaError: No trial spans in the whole set (:class:`NoTrialSpans` too when the only
            traces carrying the test attribute were dropped as parent cycles), or a bucket
            breaks the trial contract.
    """
    try:
        chosen = Engine(engine)
    except ValueError:
        names = ", ".join(e.value for e in Engine)
        raise ConfigError(f"--engine {engine}: unknown engine (use one of {names})") from None
    if spans_per_bucket is None:
        spans_per_bucket = bucket_size()
    if contents is None:
        contents = trace_set.contents()
    build = trials_function(
        min_score,
        test_attribute,
        pass_when,
        contents,
        ordered=False,
        suite_attribute=suite_attribute,
    )
    if chosen is Engine.SPARK:
        trace_set = trace_set.screen()
        from assay.analysis._spark import spark_trials

        tables, spans = spark_trials(
            trace_set,
            build,
            spans_per_bucket=spans_per_bucket,
            master=spark_master,
            test_attribute=test_attribute,
        )
        read = concat_trials(tables, lambda: spans, test_attribute)
    else:
        read = local_trials(trace_set, build, test_attribute, spans_per_bucket)
    if read.table.height == 0:
        # Every trace carrying the attribute was dropped as a parent cycle: "0 tests" would
        # look like a result; it is unreadable data, refused as a set without trial spans.
        cycles_only = only_cycles_message(read.data_quality.findings, test_attribute)
        if cycles_only is not None:
            raise NoTrialSpans(cycles_only)
    return read if compact_tools else replace(read, table=tools_as_strings(read.table))


def bucket_size() -> int:
    """Spans per bucket the engines aim at: ``ASSAY_SPANS_PER_BUCKET``, else the default."""
    text = os.environ.get(SPANS_PER_BUCKET_ENV)
    if text is None:
        return SPANS_PER_BUCKET
    try:
        value = int(text.replace("_", ""))
    except ValueError:
        value = 0
    if value <= 0:
        raise ConfigError(f"{SPANS_PER_BUCKET_ENV}={text}: not a positive number of spans")
    return value


def local_trials(
    trace_set: TraceSet,
    build: TrialsFunction,
    test_attribute: str = c.TEST_ID,
    spans_per_bucket: int = SPANS_PER_BUCKET,
) -> Trials:
    """Trials bucket by bucket: the set's own buckets, else made ones when it is large.

    A set small enough for one bucket is read in one pass, exactly as without buckets.
    """
    buckets = existing_buckets(trace_set.files)
    if buckets is not None and len(buckets) > 1:
        return _over_buckets(buckets, build, trace_set, test_attribute)
    spans = trace_set_spans(trace_set)
    if spans <= 2 * spans_per_bucket:
        return _one_pass(trace_set, build)
    # Made buckets are read BUCKETS_AT_ONCE at a time, each of that share of the bucket size;
    # row groups sharing traces may still make one bucket of up to two whole ones.
    share = max(1, spans_per_bucket // BUCKETS_AT_ONCE)
    grouped = row_group_buckets(trace_set.files, share, largest=2 * spans_per_bucket)
    if grouped is not None:
        return _over_buckets(grouped, build, trace_set, test_attribute, BUCKETS_AT_ONCE)
    if trace_set.rebuilt:
        # The hashed copy is made from the files as stored; columns rebuilt from
        # ``attributes`` exist only in the reader's scan, so such a set is read in one pass.
        return _one_pass(trace_set, build)
    with made_buckets(trace_set.files, math.ceil(spans / share)) as made:
        return _over_buckets(made, build, trace_set, test_attribute, BUCKETS_AT_ONCE)


def _one_pass(trace_set: TraceSet, build: TrialsFunction) -> Trials:
    screened = trace_set.screen()
    read = build(screened.scan(), events=bucket_events(Bucket(0, screened.files), screened))
    trials = Trials(in_trials_order(read.table), read.data_quality, read.unnamed_calls)
    found = [f for f in screened.quality.findings if f.kind == DUPLICATE_SPANS]
    if trace_set.screened or not found:
        return trials
    return replace(trials, data_quality=trials.data_quality.merged(found))


def _over_buckets(
    buckets: Sequence[Bucket],
    build: TrialsFunction,
    whole: TraceSet,
    test_attribute: str,
    at_once: int = 1,
) -> Trials:
    compact = len(buckets) > COMPACT_FROM_BUCKETS
    waiting = Waiting()

    def one(bucket: Bucket) -> Trials | Packed | None:
        return waiting.hold(_bucket(bucket, build, whole, test_attribute, compact))

    if at_once == 1 or len(buckets) == 1:
        held = [one(b) for b in buckets]
    else:
        held = _at_once(one, buckets, at_once)
    return concat_trials(held, lambda: trace_set_spans(whole), test_attribute)


_Held = TypeVar("_Held")


def _at_once(
    one: Callable[[Bucket], _Held], buckets: Sequence[Bucket], workers: int
) -> list[_Held]:
    """``one`` of every bucket, ``workers`` at a time, in the buckets' order.

    Polars releases Python's lock while it works, so threads suffice. A bucket that fails
    fails the whole as it would one at a time: the first failure in the buckets' order is
    raised, and buckets not yet started are not read.
    """
    with ThreadPoolExecutor(workers, thread_name_prefix="assay-bucket") as pool:
        futures: list[Future[_Held]] = [pool.submit(one, b) for b in buckets]
        try:
            return [f.result() for f in futures]
        except BaseException:
            pool.shutdown(wait=True, cancel_futures=True)
            raise


COMPACT_FROM_BUCKETS: Final = 8
"""Above this many buckets, the buckets' tool sequences wait as a dictionary (see _bucket)."""


def _bucket(
    bucket: Bucket,
    build: TrialsFunction,
    whole: TraceSet,
    test_attribute: str,
    compact: bool = False,
) -> Trials | None:
    """One bucket's trials, kept compact (with ``compact``) until the set's table is made.

    A set not screened as a whole for repeated spans is screened here, bucket by bucket.
    """
    found: tuple[Finding, ...] = ()
    scan = scan_bucket(bucket, whole)
    try:
        # A set not screened as a whole is screened here: first on the span ids the bucket's
        # build reads anyway (a read of its files less, 5–9% of a bucket), and only where some
        # id repeats by the exact screen, and the bucket read again with repeats collapsed.
        trials = bucket_trials(
            scan,
            build,
            test_attribute,
            screen_repeats=not whole.screened,
            events=bucket_events(bucket, whole),
        )
    except SpansMayRepeat:
        found = duplicate_spans(scan)
        scan = scan_bucket(bucket, replace(whole, deduplicate=True)) if found else scan
        trials = bucket_trials(scan, build, test_attribute)
    if trials is None:
        return None
    table = trials.table
    if compact:
        # Tool names repeat in every trial: while many buckets wait, they are held as a
        # dictionary (4 bytes a call, not 16) until a reader asks for strings
        # (tools_as_strings). The casts cost about 0.1 s per million trials, so a few buckets
        # are not compacted.
        table = table.with_columns(pl.col(tc.TOOL_SEQUENCE).cast(COMPACT_TOOLS))
    quality = trials.data_quality.merged(found)
    return Trials(table, quality, trials.unnamed_calls)


def trace_set_spans(trace_set: TraceSet) -> int:
    """How many spans the set holds (Polars reads this from the Parquet footers)."""
    count = trace_set.scan().select(pl.len()).collect().item()
    return int(count)
