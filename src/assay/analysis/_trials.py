"""Spans → the trials table: one row per trial with its outcome and what it did."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from assay import conventions as c
from assay.analysis import _columns as tc
from assay.analysis import _quality as quality
from assay.analysis._agent_version import read_agent_versions
from assay.analysis._attribute import attribute_as_string
from assay.analysis._calls import settle_calls, work_per_trace
from assay.analysis._evaluations import UnusedEvaluation, unused_evaluations
from assay.analysis._events import explode_events
from assay.analysis._outcomes import read_outcomes
from assay.analysis._ownership import (
    classify_traces,
    cycle_finding,
    resolve_nested,
    resolve_topmost,
)
from assay.analysis._passwhen import PassRule, parse_pass_when, rule_outcomes
from assay.analysis._tool_messages import with_exception_messages
from assay.analysis._unclaimed import unclaimed_trials
from assay.analysis._unwritten import with_unwritten_columns
from assay.analysis._work import (
    WorkShape,
    aggregate_work,
    count_orphans,
    derive_work_columns,
    list_models,
    name_handoff_targets,
    scores_and_checks,
    unnamed_calls,
    with_work_columns,
    work_columns_read,
)
from assay.errors import SchemaError
from assay.quality import DataQuality
from assay.store import (
    DUPLICATE_SPANS,
    EventsColumn,
    SpanContents,
    promoted_column,
    span_ids_may_repeat,
)

_P = promoted_column
_KEYS = ["trace_id", tc.TRIAL_SPAN_ID]
_KEY_SPAN = ["trace_id", "span_id"]
_CARRIED = [
    "trace_id",
    "span_id",
    "parent_span_id",
    *(_P(a) for a in (c.TEST_ID, c.SUITE, c.RUN_ID, c.AGENT_VERSION, c.TRIAL_INDEX)),
    _P(c.TRIAL_OUTCOME),
    _P(c.GENAI_OPERATION),  # a workflow trial's agents name themselves (_quality._nesting)
    "status_code",
    "status_message",
    "start_time_unix_nano",
    "end_time_unix_nano",
]
"""What the trial spans are read for (the trials table's own columns, their place in the trace)."""


class SpansMayRepeat(Exception):
    """Some span id of the spans read repeats (``read_trials(screen_repeats=True)``).

    A span stored twice, or an id reused in another trace, or a hash collision: the caller
    screens the spans exactly (``assay.store.duplicate_spans``) and reads them again.
    """


class NoTrialSpans(SchemaError):
    """The spans read hold no trial span (no span carries the test attribute).

    A :class:`SchemaError` like every other refusal of :func:`read_trials`; raised apart so
    that a caller following a growing set (``assay watch``) can tell spans of no trial (late
    spans, another service's) from a trial that breaks the contract.
    """


@dataclass(frozen=True, slots=True)
class Trials:
    """The trials table and what assay noticed while building it."""

    table: pl.DataFrame
    """One row per trial; columns are named in ``assay.analysis.columns``."""
    data_quality: DataQuality
    """Findings about the input: nesting mappings, incomplete traces, NaN scores, ..."""
    unnamed_calls: pl.Series | None = None
    """The traces holding an LLM call that names no model (cost needs them: see
    ``with_cost``); None when not known (a trials table made in Spark)."""
    unused_evaluations: tuple[UnusedEvaluation, ...] = ()
    """The evaluations, scores and checks no rule reads, which leave the trials carrying them
    passing (the ``unused_evaluations`` finding; ``pass_when_text`` spells a rule reading them)."""

    @property
    def repeated_spans(self) -> bool:
        """Some span is stored more than once: the set must be read with repeats collapsed."""
        return any(f.kind == DUPLICATE_SPANS for f in self.data_quality.findings)


def trials_from_spans(
    spans: pl.LazyFrame,
    *,
    min_score: float | None = None,
    test_attribute: str = c.TEST_ID,
    pass_when: str | PassRule | None = None,
    contents: SpanContents | None = None,
) -> pl.DataFrame:
    """Build the trials table from a lazy scan of the spans table.

    The same as :func:`read_trials`, without the findings.
    """
    return read_trials(
        spans,
        min_score=min_score,
        test_attribute=test_attribute,
        pass_when=pass_when,
        contents=contents,
    ).table


def read_trials(
    spans: pl.LazyFrame,
    *,
    min_score: float | None = None,
    test_attribute: str = c.TEST_ID,
    pass_when: str | PassRule | None = None,
    contents: SpanContents | None = None,
    ordered: bool = True,
    screen_repeats: bool = False,
    suite_attribute: str = c.SUITE,
    events: EventsColumn | None = None,
) -> Trials:
    """Build the trials table from a lazy scan of the spans table, with its data quality.

    A trial's outcome is ``assay.trial.outcome`` when present. Otherwise it is ``error`` when
    its span is ERROR or an exception escaped an agent invocation inside it (a failed tool the
    agent recovered from is not an error); else it fails when a check failed, a score is
    below ``min_score`` (NaN counts as below) or ``pass_when`` does not hold; else it passes.

    Args:
        spans: A lazy scan of spans (``assay.store.scan_spans``).
        min_score: Scores below this fail a trial that has no explicit outcome.
        test_attribute: The attribute that names the test. ``assay.test.id`` by default (a
            trial is every span carrying it). Another one maps traces assay did not frame:
            a trial is then the top-most span of a subtree carrying it, and the spans below
            are its work even when they carry it too.
        pass_when: A rule over the trial's evaluations, scores and checks
            (:func:`assay.analysis.parse_pass_when`).
        suite_attribute: The attribute of the trial's span that names its suite
            (``assay.suite`` by default; another one groups traces assay did not frame).
        contents: What the spans may hold, from their files' footers
            (``TraceSet.contents()``): parts they cannot hold are not read. None: read all.
        ordered: Sort the rows as :func:`in_trials_order` does. False when the caller sorts
            the tables of several buckets together (``assay.analysis.concat_trials``).
        screen_repeats: Check, on the span ids read anyway, that no span id repeats, for a
            caller that would otherwise read them once more to screen for spans stored twice.
        events: Reads the ``events`` column of ``spans``, every span in the scan's order
            (:func:`assay.store.events_column`), faster than the scan; None, or a reader that
            answers None: the scan's own.

    Returns:
        The trials table and its findings.

    Raises:
        SchemaError: No trial spans (naming root-span attributes that would map), an unknown
            outcome value, or a non-numeric score.
        ConfigError: A ``pass_when`` rule that does not parse.
        SpansMayRepeat: With ``screen_repeats``, some span id repeats.
    """
    rule = parse_pass_when(pass_when) if isinstance(pass_when, str) else pass_when
    mapped = test_attribute != c.TEST_ID
    if mapped:
        # The mapped attribute stands in for assay.test.id everywhere downstream.
        spans = spans.with_columns(attribute_as_string(test_attribute).alias(_P(c.TEST_ID)))
    computed = {_P(c.TEST_ID)} if mapped else set()
    if suite_attribute != c.SUITE:
        # Read from the trial's own span, like assay.suite: it stands in for it downstream.
        spans = spans.with_columns(attribute_as_string(suite_attribute).alias(_P(c.SUITE)))
        computed.add(_P(c.SUITE))
    no_trials = spans
    # Within this call a trace is keyed by a dictionary code of its id, not the id itself:
    # every group-by and join below then hashes and compares a 4-byte code instead of a
    # 32-character string (the per-trace group-by alone costs half as much). The dictionary
    # is this call's own, so it is freed with its tables; the ids are strings again at the end.
    trace_key = pl.Categorical(pl.Categories.random())
    spans = spans.with_columns(pl.col("trace_id").cast(trace_key))
    # The mapped attribute's column is computed here, whatever the footers say of it. The
    # columns are read once, into memory: every step below but the events takes them from there.
    read = work_columns_read(spans, contents, computed=computed)
    if screen_repeats and span_ids_may_repeat(read, streaming=False):
        raise SpansMayRepeat
    carriers = read.filter(pl.col(_P(c.TEST_ID)).is_not_null()).select(_CARRIED).collect()
    if carriers.height == 0:
        raise NoTrialSpans(quality.no_trials_message(no_trials, test_attribute))
    carriers = read_outcomes(spans, carriers, contents)
    carriers = read_agent_versions(spans, carriers, contents)
    shapes = classify_traces(carriers, topmost=mapped, spans=read)
    if shapes.rootless.height:
        # The stand-in span of a run whose root was never recorded covers the whole run.
        carriers = carriers.update(
            shapes.rootless.rename({tc.TRIAL_SPAN_ID: "span_id"}), on=_KEY_SPAN
        )
    # Work is aggregated per trace in one pass (in memory: a bucket at a time, it is faster
    # than the streaming engine at the same peak); a trace whose one trial is its root belongs
    # wholly to that trial, so only the small per-trace frame is joined (fast path).
    shape = WorkShape.of(contents)
    worked = with_work_columns(read)
    per_trace = work_per_trace(worked, spans, shape)
    per_trace = count_orphans(read, per_trace)
    unnamed = unnamed_calls(per_trace)
    per_trial = [_simple_work(per_trace, shapes.simple)]
    per_trace = derive_work_columns(per_trace)
    # Which trial owns each span carrying the attribute matters only to a mapped attribute's
    # findings (spans inside a trial carrying it too).
    owners = [carriers.join(shapes.simple, on="trace_id", how="inner")] if mapped else []
    owner_spans: list[pl.DataFrame] = []
    cycles = None
    if shapes.nested.len():
        nested_spans = read.filter(pl.col("trace_id").is_in(shapes.nested.implode())).collect()
        # With assay.test.id every span carrying it is a trial wherever it sits, so a parent
        # cycle changes no count; a mapped attribute's trials are found by ancestry.
        nested, cyclic = (
            resolve_topmost(nested_spans) if mapped else (resolve_nested(nested_spans), None)
        )
        cycles = cycle_finding(cyclic, test_attribute) if cyclic is not None else None
        nested_work = settle_calls(with_work_columns(nested.lazy()), spans)
        aggregated = aggregate_work(nested_work, _KEYS, shape, orphans=False).collect()
        per_trial.append(list_models(nested_work, aggregated, _KEYS))
        owner_spans.append(nested.select("trace_id", "span_id", tc.TRIAL_SPAN_ID))
        if mapped:
            owners.append(nested.filter(pl.col(_P(c.TEST_ID)).is_not_null()))
    work = name_handoff_targets(derive_work_columns(pl.concat(per_trial, how="diagonal_relaxed")))
    owned = pl.concat(owners, how="diagonal_relaxed") if owners else None
    # Where every trace is one trial (the usual case) a trial is known by its trace alone, so
    # the per-trial joins take one key, not two; and unless a mapped attribute is also on spans
    # inside the trials, every span carrying it is a trial.
    keys = ["trace_id"] if shapes.nested.len() == 0 else _KEYS
    trial_spans = (
        carriers
        if keys != _KEYS and not mapped
        else carriers.join(
            work.select("trace_id", pl.col(tc.TRIAL_SPAN_ID).alias("span_id")),
            on=["trace_id", "span_id"],
            how="semi",
        )
    )
    none_held = contents is not None and not contents.events  # no file holds an event
    reader = None if none_held else events
    # The span ids stay where the reader's events come beside them: the events' owners.
    ids = read.select("trace_id", "span_id").collect() if reader is not None else None
    # The work columns are done with: let them go before the events are decoded, so the peak is
    # the larger of the two steps, not their sum.
    del read, worked
    if shapes.nested.len():
        del nested, nested_work, nested_spans
    evented = _evented(no_trials, ids, reader, trace_key)
    if none_held:
        evented = evented.head(0)  # nothing to decode
    del ids
    events_read = explode_events(evented.collect())
    located = pl.concat(
        [
            events_read.join(shapes.simple, on="trace_id", how="inner"),
            *(events_read.join(o, on=["trace_id", "span_id"], how="inner") for o in owner_spans),
        ],
        how="diagonal_relaxed",
    )
    trial_keys = work.select(_KEYS)
    scored = scores_and_checks(located, trial_keys, keys)
    if rule is not None:
        scored = scored.join(rule_outcomes(located, rule), on=_KEYS, how="left")
    table = _assemble(trial_spans, work, scored, min_score, rule, keys)
    table = with_exception_messages(table, spans, shapes.simple, owner_spans, contents)
    table, unclaimed = unclaimed_trials(spans, per_trace, table)
    unused = unused_evaluations(table, located, rule, min_score)
    findings = quality.findings(
        test_attribute=test_attribute,
        table=table,
        per_trace=per_trace,
        rootless=shapes.rootless["trace_id"],
        owned=owned,
        located=located,
        rule=rule,
        min_score=min_score,
        unused=unused,
    ).merged(unclaimed, [cycles] if cycles else [])
    table = _finish(table)
    return Trials(in_trials_order(table) if ordered else table, findings, unnamed, tuple(unused[0]))


def _evented(
    spans: pl.LazyFrame,
    ids: pl.DataFrame | None,
    events: EventsColumn | None,
    trace_key: pl.DataType,
) -> pl.LazyFrame:
    """The spans holding events: trace id (as a key), span id and events.

    Read by ``events`` where it can (``ids``: the trace and span ids of the spans read, in the
    scan's order), else from the scan, where only the trace ids of spans holding events are
    made keys (most spans hold none).
    """
    held = events() if events is not None else None
    if held is not None and ids is not None and held.spans == ids.height:
        return ids[held.rows].with_columns(held.events).lazy()
    return (
        spans.filter(pl.col("events").list.len() > 0)
        .select("trace_id", "span_id", "events")
        .with_columns(pl.col("trace_id").cast(trace_key))
    )


def _simple_work(per_trace: pl.DataFrame, simple: pl.DataFrame) -> pl.DataFrame:
    """The work of the traces whose one trial is their root, with that trial's span id.

    The span ids are looked up for the trace ids alone and added to ``per_trace`` as it is:
    a join of the whole table gathers every column, its lists too, in a new order (200k
    traces: 0.08 s, against 0.01 s). Traces holding no such trial are then left out.
    """
    keys = per_trace.select("trace_id").join(
        simple, on="trace_id", how="left", maintain_order="left"
    )
    with_spans = per_trace.with_columns(keys[tc.TRIAL_SPAN_ID])
    held = keys[tc.TRIAL_SPAN_ID].is_not_null()
    return with_spans if held.all() else with_spans.filter(held)


def _assemble(
    trial_spans: pl.DataFrame,
    work: pl.DataFrame,
    scored: pl.DataFrame,
    min_score: float | None,
    rule: PassRule | None,
    keys: list[str],
) -> pl.DataFrame:
    # Joined by the trial's trace alone (``keys``), the right sides' own trial span ids go.
    by_trace = keys != _KEYS
    work = work.drop(tc.TRIAL_SPAN_ID) if by_trace else work
    scored = scored.drop(tc.TRIAL_SPAN_ID) if by_trace else scored
    trials = (
        trial_spans.select(
            pl.col(_P(c.TEST_ID)).alias(tc.TEST_ID),
            pl.col(_P(c.SUITE)).alias(tc.SUITE),
            pl.col(_P(c.RUN_ID)).alias(tc.RUN_ID),
            pl.col(_P(c.AGENT_VERSION)).alias(tc.AGENT_VERSION),
            pl.col(_P(c.TRIAL_INDEX)).alias(tc.TRIAL_INDEX),
            "trace_id",
            pl.col("span_id").alias(tc.TRIAL_SPAN_ID),
            pl.col(_P(c.TRIAL_OUTCOME)).str.to_lowercase().alias("_outcome"),
            pl.col("status_code"),
            pl.col("status_message").alias(tc.STATUS_MESSAGE),
            pl.col("start_time_unix_nano").alias(tc.START_TIME),
            (pl.col("end_time_unix_nano") - pl.col("start_time_unix_nano")).alias(tc.DURATION_S),
        )
        .join(work, on=keys, how="left")
        .join(scored, on=keys, how="left")
    )
    own_error = pl.col("status_code") == "ERROR"
    low_score = (
        pl.col(tc.SCORES)
        .list.eval(
            (pl.element().struct.field("value") < min_score)
            | pl.element().struct.field("value").is_nan()
        )
        .list.any()
        if min_score is not None
        else pl.lit(False)
    )
    failed = (pl.col(tc.FAILED_CHECKS) > 0) | low_score.fill_null(False)
    if rule is not None:
        failed = failed | ~pl.col("_rule_pass").fill_null(False)
    outcome = (
        pl.when(pl.col("_outcome").is_not_null())
        .then(pl.col("_outcome"))
        .when(own_error | (pl.col(tc.AGENT_ERRORS) > 0))
        .then(pl.lit(c.OUTCOME_ERROR))
        .when(failed)
        .then(pl.lit(c.OUTCOME_FAIL))
        .otherwise(pl.lit(c.OUTCOME_PASS))
    )
    # Seconds by numpy's correctly rounded division: Polars' division by a constant rounds
    # differently with the length of the column, and a bucketed read must give the same table.
    seconds = trials[tc.DURATION_S].to_numpy() / 1e9
    trials = trials.with_columns(pl.Series(tc.DURATION_S, seconds, dtype=pl.Float64))
    return trials.with_columns(
        outcome.alias(tc.OUTCOME),
        # The trial span is ERROR spans' only one that is not work: subtract it (see _work).
        (pl.col(tc.ALL_ERRORS) - own_error.cast(pl.Int64)).alias(tc.ERROR_SPANS),
        pl.coalesce(tc.STATUS_MESSAGE, tc.AGENT_ERROR_MESSAGE).alias(tc.STATUS_MESSAGE),
        # A trial that ends before it starts has no duration (reported, left out of latency).
        pl.when(pl.col(tc.DURATION_S) >= 0).then(pl.col(tc.DURATION_S)).alias(tc.DURATION_S),
        pl.col("_outcome").is_not_null().alias("_explicit"),
    ).with_columns(
        (pl.col(tc.OUTCOME) == c.OUTCOME_PASS).alias(tc.PASSED),
        (pl.col(tc.OUTCOME) == c.OUTCOME_ERROR).alias(tc.ERROR),
    )


def _finish(trials: pl.DataFrame) -> pl.DataFrame:
    # Columns that say nothing of this set (no suite, no retries…) are held in no memory.
    return with_unwritten_columns(
        trials.rename({tc.TRIAL_SPAN_ID: tc.SPAN_ID})
        .with_columns(
            pl.col(tc.TRACE_ID).cast(pl.String),
            # A trial's span id is a view into the buffer of every span id the scan read; kept
            # so, the ids of a bucket's 2M spans would live as long as its 400k trials. Appending
            # "" writes the trials' own ids to a buffer of their own.
            pl.col(tc.SPAN_ID) + "",
        )
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
            tc.AGENTS,
            tc.HANDOFFS,
            tc.TOOL_ERRORS,
            tc.TOOL_ERROR_MESSAGES,
            tc.RETRIES,
            tc.START_TIME,
            tc.DURATION_S,
            tc.STATUS_MESSAGE,
            tc.WORK_UNKNOWN,
        )
    )


def in_trials_order(trials: pl.DataFrame) -> pl.DataFrame:
    """The trials table in its documented order: by test, start time and trial index."""
    return trials.sort(tc.TEST_ID, tc.START_TIME, tc.TRIAL_INDEX, nulls_last=True)
