"""What a trial did, aggregated from its spans: tools, LLM calls, usage, agents, errors, events."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from assay import conventions as c
from assay.analysis import _columns as tc
from assay.analysis import _conventions as conv
from assay.store import SpanContents
from assay.store import promoted_column as col_of

_TOOL_ERROR_MESSAGES = 3
_TOOL_CALLS = "_tool_calls"
_AGENT_CALLS = "_agent_calls"
_STRUCT_SCORES = pl.List(pl.Struct({"name": pl.String, "value": pl.Float64}))
_STRUCT_CHECKS = pl.List(pl.Struct({"name": pl.String, "passed": pl.Boolean}))


def with_work_columns(spans: pl.LazyFrame) -> pl.LazyFrame:
    """Add what each span is: the tool it calls, LLM call or not, usage, model, agent, handoff."""
    return spans.with_columns(
        conv.tool_name().alias(tc.TOOL),
        conv.is_llm_call().alias(tc.IS_LLM),
        conv.model_name().alias(tc.MODEL),
        conv.input_tokens().alias(tc.IN_TOK),
        conv.output_tokens().alias(tc.OUT_TOK),
        conv.agent_name().alias(tc.AGENT),
        conv.is_agent_invocation().alias(tc.IS_AGENT),
        conv.handoff_target().alias(tc.HANDOFF),
    )


@dataclass(frozen=True, slots=True)
class _InOrder:
    """A list per group: ``value`` of the spans ``keep``, in start-time order."""

    alias: str
    keep: pl.Expr
    value: pl.Expr


def _calls(keep: pl.Expr, name: str, alias: str) -> _InOrder:
    """One sorted list of {name, failed, message} structs per group for the spans ``keep``.

    The per-trial figures are derived from these short lists afterwards
    (:func:`derive_work_columns`), which is much cheaper than sorting once per figure.
    """
    calls = pl.struct(
        pl.col(name).alias("name"),
        (pl.col("status_code") == "ERROR").alias("failed"),
        pl.col("status_message").alias("message"),
    )
    return _InOrder(alias, keep, calls)


def _in_order(column: str, keep: pl.Expr, alias: str) -> _InOrder:
    return _InOrder(alias, keep, pl.col(column))


@dataclass(frozen=True, slots=True)
class WorkShape:
    """Which kinds of span the spans may hold; what they cannot hold is not aggregated.

    Aggregating a kind of span costs per trace even where no trace has one (a sorted list
    per group), so the columns of a kind the files' footers rule out are constants instead.
    """

    errors: bool = True
    """Some span may have status ERROR (then tool calls keep their status and message)."""
    agents: bool = True
    """Some span may be an agent invocation."""
    handoffs: bool = True
    """Some span may be a handoff."""
    models: bool = True
    """Some span may name a model."""

    @classmethod
    def of(cls, contents: SpanContents | None) -> WorkShape:
        """What ``contents`` (the footers' word) allows; everything when unknown."""
        if contents is None:
            return cls()

        def any_of(*attributes: str) -> bool:
            return any(col_of(a) not in contents.null_columns for a in attributes)

        operation = col_of(c.GENAI_OPERATION)
        return cls(
            errors=contents.may_hold("status_code", "ERROR"),
            agents=contents.may_hold(operation, c.GENAI_INVOKE_AGENT)
            or any_of(c.OPENINFERENCE_KIND, c.OPENAI_AGENTS_SPAN_TYPE, c.TRACELOOP_KIND),
            handoffs=any_of(c.OPENINFERENCE_KIND, c.OPENAI_AGENTS_SPAN_TYPE),
            models=any_of(c.GENAI_RESPONSE_MODEL, c.GENAI_REQUEST_MODEL, c.OPENINFERENCE_MODEL),
        )


def work_columns_read(
    spans: pl.LazyFrame, contents: SpanContents | None, computed: set[str]
) -> pl.LazyFrame:
    """The span columns the conventions read, read once; those no file holds a value in: nulls.

    Most sets follow one convention, so most convention columns are null in every file: a
    typed null constant costs nothing to read or decode (about a sixth of the group-by).
    Columns in ``computed`` are made by the scan, not read, so the footers say nothing of them.

    The columns read are held in memory (the in-memory group-by holds them anyway), so that
    the trial spans, the per-trace group-by, the orphan screen and the nested traces are taken
    from one scan of the files instead of four; the constants are added lazily, so they take no
    memory.
    """
    columns = spans.select(conv.SPAN_COLUMNS)
    schema = columns.collect_schema()
    absent = [
        name
        for name in conv.SPAN_COLUMNS
        if contents is not None and name in contents.null_columns and name not in computed
    ]
    held = columns.drop(absent).collect()
    constants = [pl.lit(None, schema[name]).alias(name) for name in absent]
    return held.lazy().with_columns(constants).select(conv.SPAN_COLUMNS)


_TOOL_NAMES = "_tool_names"
_EMPTY_NAMES = pl.lit([], dtype=pl.List(pl.String))


def aggregate_work(
    spans: pl.LazyFrame, keys: list[str], shape: WorkShape = WorkShape(), *, orphans: bool = True
) -> pl.LazyFrame:
    """Per trial (or per trace): what its spans did (finish with :func:`derive_work_columns`).

    ``spans`` carries the work columns (:func:`with_work_columns`). ``_errors`` counts every
    ERROR span of the group, the trial span included; the caller subtracts the trial span's own
    status, so no join over every span is needed to tell them apart. With ``orphans``, the
    smallest and largest parent id of the group are kept: in a whole trace,
    :func:`count_orphans` turns them into the count of spans whose parent was never recorded
    (dropped, or still in flight).

    The lists in start-time order (tool calls, agent runs, handoffs) are built from one stable
    sort of the spans they hold, grouped in that order, and joined to the group's other
    figures: cheaper than a sort inside every group. Spans starting at the same instant keep
    the order they were stored in, which bucketing keeps too.

    Args:
        spans: The spans, with their work columns.
        keys: What a group is: ``trace_id``, or ``trace_id`` and the trial span.
        shape: Which kinds of span can occur; the others give constant columns.
        orphans: Add what :func:`count_orphans` and :func:`calls_may_settle` read (per whole
            trace only).
    """
    is_error = pl.col("status_code") == "ERROR"
    is_tool = pl.col(tc.TOOL).is_not_null()
    in_order = [
        _calls(is_tool, tc.TOOL, _TOOL_CALLS)
        if shape.errors
        else _in_order(tc.TOOL, is_tool, _TOOL_NAMES)
    ]
    constants = []
    if shape.agents:
        in_order.append(_calls(pl.col(tc.IS_AGENT), tc.AGENT, _AGENT_CALLS))
    else:
        constants.append(pl.lit(None, pl.Null).alias(_AGENT_CALLS))
    if shape.handoffs:
        in_order.append(_in_order(tc.HANDOFF, pl.col(tc.HANDOFF).is_not_null(), tc.HANDOFFS))
    else:
        constants.append(_EMPTY_NAMES.alias(tc.HANDOFFS))
    figures = [
        pl.col(tc.IS_LLM).sum().cast(pl.Int64).alias(tc.LLM_CALLS),
        _tokens(tc.IN_TOK).alias(tc.INPUT_TOKENS),
        _tokens(tc.OUT_TOK).alias(tc.OUTPUT_TOKENS),
        is_error.sum().cast(pl.Int64).alias(tc.ALL_ERRORS),
        pl.len().cast(pl.Int64).alias(tc.SPAN_COUNT),
    ]
    # The models' list is finished by list_models: most groups call one model.
    figures += (
        [
            _llm_model().min().alias(_MODEL_LOW),
            _llm_model().max().alias(_MODEL_HIGH),
            (pl.col(tc.IS_LLM) & pl.col(tc.MODEL).is_null()).any().alias(_UNNAMED),
        ]
        if shape.models
        else [_EMPTY_NAMES.alias(tc.MODELS)]
    )
    if orphans:
        figures += [*parent_range(), *call_screen()]
    work = spans.group_by(keys).agg(figures)
    for lists in in_order:
        ordered = (
            spans.filter(lists.keep)
            .select(*keys, "start_time_unix_nano", lists.value.alias(lists.alias))
            .sort("start_time_unix_nano", maintain_order=True)
            .group_by(keys, maintain_order=True)
            .agg(lists.alias)
        )
        empty = pl.lit([], dtype=ordered.collect_schema()[lists.alias])
        work = work.join(ordered, on=keys, how="left", nulls_equal=True).with_columns(
            pl.col(lists.alias).fill_null(empty)
        )
    return work.with_columns(constants) if constants else work


def _tokens(column: str) -> pl.Expr:
    """A group's tokens: the sum over its LLM calls, null when a call recorded no count.

    A call without usage (a streamed answer without ``stream_options.include_usage``) makes the
    total unknown, not smaller: it is null, never 0, and the findings say which tests. A failed
    call (ERROR) without usage does not: the provider answered with an error, which reports and
    bills no tokens.
    """
    unknown = pl.col(tc.IS_LLM) & pl.col(column).is_null() & (pl.col("status_code") != "ERROR")
    counts = pl.col(column).filter(pl.col(tc.IS_LLM)).sum().cast(pl.Int64)
    return pl.when(~unknown.fill_null(True).any()).then(counts)


_MODEL_LOW = "_model_low"
_MODEL_HIGH = "_model_high"
_UNNAMED = "_unnamed_calls"


def unnamed_calls(per_trace: pl.DataFrame) -> pl.Series:
    """The traces of a per-trace :func:`aggregate_work` holding an LLM call naming no model.

    Where no span names a model (no ``_model_low`` column), no trial lists one, and cost asks
    only about trials that list one: no trace is needed then.
    """
    if _UNNAMED not in per_trace.columns:
        return pl.Series(tc.TRACE_ID, [], pl.String)
    found = per_trace.filter(pl.col(_UNNAMED))[tc.TRACE_ID]
    return found.cast(pl.String)


def _llm_model() -> pl.Expr:
    return pl.col(tc.MODEL).filter(pl.col(tc.IS_LLM) & pl.col(tc.MODEL).is_not_null())


def list_models(spans: pl.LazyFrame, work: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """Add ``models`` to the group-by's ``work``: each group's LLM calls' models, in order.

    Each model is listed once. Most groups call one model (or none): then the smallest and the
    largest model name, which the group-by takes cheaply, are one, and the list is that name.
    Only the groups naming several are grouped again, for their models in call order: a list of
    distinct values for every group costs about a third of the group-by.

    Args:
        spans: The spans the group-by read, with their work columns.
        work: :func:`aggregate_work`'s table, collected.
        keys: Its keys.
    """
    if _MODEL_LOW not in work.columns:
        return work
    low, high = pl.col(_MODEL_LOW), pl.col(_MODEL_HIGH)
    one = pl.when(low.is_null()).then(_EMPTY_NAMES).otherwise(pl.concat_list(low))
    several = work.filter(low != high)["trace_id"]
    if several.len() == 0:
        return work.with_columns(one.alias(tc.MODELS)).drop(_MODEL_LOW, _MODEL_HIGH)
    listed = (
        spans.filter(pl.col("trace_id").is_in(several.implode()))
        .group_by(keys)
        .agg(_llm_model().unique(maintain_order=True).alias("_listed"))
        .collect()
    )
    return (
        work.join(listed, on=keys, how="left", maintain_order="left")
        .with_columns(pl.when(low != high).then(pl.col("_listed")).otherwise(one).alias(tc.MODELS))
        .drop(_MODEL_LOW, _MODEL_HIGH, "_listed")
    )


_PARENT_LOW = "_parent_low"
_PARENT_HIGH = "_parent_high"


def id_key(column: str) -> pl.Expr:
    """A span id as a 64-bit hash (null stays null): what the orphan screen and count compare.

    Comparing and looking up fixed-width keys costs a fraction of 16-character strings (the
    exact count over a nested 4M-span bucket: 1.0 → 0.4 CPU-s). Two ids of one trace share a
    key with probability about 2⁻⁶⁴ per pair; that would count a span whose parent is missing
    as having it (one incomplete trace not reported), never the other way round. Within one
    process the hash is fixed, which is all the lookups need.
    """
    ids = pl.col(column)
    return pl.when(ids.is_not_null()).then(ids.hash(seed=0))


_ROOT_LOW = "_root_low"
_ROOT_HIGH = "_root_high"
_ROOT_CALL = "_root_call"
_CALL_PARENT_LOW = "_call_parent_low"
_CALL_PARENT_HIGH = "_call_parent_high"
CALL_SCREEN = (_CALL_PARENT_LOW, _CALL_PARENT_HIGH, _ROOT_CALL)
"""The columns of :func:`call_screen` (a per-trace :func:`aggregate_work`'s)."""


def parent_range() -> list[pl.Expr]:
    """Per group, the least and greatest parent key and root key (read by :func:`count_orphans`)."""
    parent = id_key("parent_span_id")
    root = id_key("span_id").filter(pl.col("parent_span_id").is_null())
    return [
        parent.min().alias(_PARENT_LOW),
        parent.max().alias(_PARENT_HIGH),
        root.min().alias(_ROOT_LOW),
        root.max().alias(_ROOT_HIGH),
    ]


def call_screen() -> list[pl.Expr]:
    """Per group, what :func:`calls_may_settle` reads.

    Its LLM spans' least and greatest parent key, and whether some LLM span is a root or its own
    parent, or some span a call without usage.
    """
    call = pl.col(tc.IS_LLM)
    parent = id_key("parent_span_id").filter(call)
    loop = pl.col("parent_span_id").is_null() | (pl.col("parent_span_id") == pl.col("span_id"))
    return [
        parent.min().alias(_CALL_PARENT_LOW),
        parent.max().alias(_CALL_PARENT_HIGH),
        ((call & loop.fill_null(False)) | call_without_usage()).any().alias(_ROOT_CALL),
    ]


def count_orphans(spans: pl.LazyFrame, per_trace: pl.DataFrame) -> pl.DataFrame:
    """Add ``_orphans`` to ``per_trace``: per trace, the spans whose parent is missing.

    A screen first: a trace whose spans all name one parent, and that parent is its smallest
    or largest root span, has none (a minimum and maximum of keys per trace, read in the
    per-trace group-by, cost far less than a comparison of every span with its trace's root;
    a trace of three roots or more whose parent is another is counted exactly). Only the traces
    left (nested traces among them) are read again, their three id columns, and their spans'
    parents looked up in one join. Span ids are compared by their keys (:func:`id_key`).
    """
    low, high = pl.col(_PARENT_LOW), pl.col(_PARENT_HIGH)
    under_a_root = (low == high) & ((low == pl.col(_ROOT_LOW)) | (low == pl.col(_ROOT_HIGH)))
    screened = per_trace.with_columns(
        (low.is_not_null() & ~under_a_root.fill_null(False)).cast(pl.Int64).alias(tc.ORPHANS)
    ).drop(_PARENT_LOW, _PARENT_HIGH, _ROOT_LOW, _ROOT_HIGH)
    return _exact_orphans(spans, screened)


def call_without_usage() -> pl.Expr:
    """On the work columns: an OpenInference ``LLM`` span recording no token count.

    Such a span may have made no request (``assay.analysis._calls``), or share a call with the
    span around it.
    """
    return conv.is_openinference_llm() & pl.col(tc.IN_TOK).is_null() & pl.col(tc.OUT_TOK).is_null()


def calls_may_settle() -> pl.Expr:
    """On a per-trace :func:`aggregate_work`'s columns: the trace may hold spans of one call.

    False only where no LLM span can sit directly inside another and no OpenInference LLM span
    lacks usage: every LLM span with a parent has the same parent, and no LLM span is a root or
    its own parent. That parent is then no LLM span (were it one, its own parent would be
    itself), so no call is inside another. Parents are compared by their keys
    (:func:`id_key`): two ids sharing one (about 2⁻⁶⁴ a pair) could hide a chain, as they could
    hide a missing parent from the orphan count.
    """
    several = (pl.col(_CALL_PARENT_LOW) != pl.col(_CALL_PARENT_HIGH)).fill_null(False)
    return several | pl.col(_ROOT_CALL)


ORPHAN_CHUNK_SPANS = 1_000_000
"""Spans looked up at once when counting orphans: the join's memory is bounded by a chunk."""


def _exact_orphans(spans: pl.LazyFrame, per_trace: pl.DataFrame) -> pl.DataFrame:
    """Replace the ``_orphans`` flags of ``per_trace`` by the count of spans without a parent.

    A nested set flags every trace (its spans name several parents), so the lookup covers every
    span of the bucket: it is made a chunk of whole traces at a time, by a hash of the trace id,
    so that its hash tables stay a fraction of the bucket (about 0.9 GiB less at 4M spans).
    """
    flagged = per_trace.filter(pl.col(tc.ORPHANS) > 0).select("trace_id")
    if flagged.height == 0:
        return per_trace
    ids = spans.select(
        "trace_id",
        in_trace_key("span_id").alias("_span"),
        in_trace_key("parent_span_id").alias("_parent"),
    )
    if flagged.height < per_trace.height:
        ids = ids.join(flagged.lazy(), on="trace_id", how="semi")
    held = ids.collect()
    chunks = -(-held.height // ORPHAN_CHUNK_SPANS)
    part = held["trace_id"].hash(seed=0) % chunks if chunks > 1 else None
    counted = [
        _missing_parents(held if part is None else held.filter(part == i)) for i in range(chunks)
    ]
    missing = pl.concat(counted)
    return (
        per_trace.join(missing, on="trace_id", how="left", maintain_order="left")
        .with_columns(
            pl.when(pl.col(tc.ORPHANS) > 0)
            .then(pl.col("_missing").fill_null(0))
            .otherwise(pl.col(tc.ORPHANS))
            .alias(tc.ORPHANS)
        )
        .drop("_missing")
    )


def in_trace_key(column: str) -> pl.Expr:
    """A span id and its trace id as one 64-bit key (null stays null): one column to look up.

    The XOR of two hashes; two (trace, span) pairs of one lookup share a key with probability
    about 2⁻⁶⁴ per pair, as for :func:`id_key`. One fixed-width column is looked up in half the
    time of the pair of columns.
    """
    return id_key(column) ^ pl.col("trace_id").hash(seed=1)


def _missing_parents(ids: pl.DataFrame) -> pl.DataFrame:
    """Per trace of ``ids`` (whole traces), its spans whose parent is not among them."""
    return (
        ids.filter(pl.col("_parent").is_not_null())
        .join(ids.select(pl.col("_span").alias("_parent")), on="_parent", how="anti")
        .group_by("trace_id")
        .agg(pl.len().cast(pl.Int64).alias("_missing"))
    )


def _field(name: str) -> pl.Expr:
    return pl.element().struct.field(name)


def derive_work_columns(work: pl.DataFrame) -> pl.DataFrame:
    """The tool and agent columns of the trials table, from the call lists of the group-by.

    Without tool statuses (no span can be ERROR) the tool calls are their names alone: no
    errors, messages or retries. Without agent calls (no span can be one) the agent columns
    are empty.
    """
    failed = _field("failed")
    if _TOOL_CALLS in work.columns:
        tools = pl.col(_TOOL_CALLS)
        tool_columns = [
            tools.list.eval(_field("name")).alias(tc.TOOL_SEQUENCE),
            tools.list.len().cast(pl.Int64).alias(tc.TOOL_CALLS),
            tools.list.eval(failed.cast(pl.Int64)).list.sum().cast(pl.Int64).alias(tc.TOOL_ERRORS),
            tools.list.eval(pl.element().filter(failed & _field("message").is_not_null()))
            .list.eval(_field("message"))
            .list.head(_TOOL_ERROR_MESSAGES)
            .alias(tc.TOOL_ERROR_MESSAGES),
            tools.list.eval(
                ((_field("name") == _field("name").shift(1)) & failed.shift(1)).cast(pl.Int64)
            )
            .list.sum()
            .cast(pl.Int64)
            .alias(tc.RETRIES),
        ]
    else:
        names = pl.col(_TOOL_NAMES)
        tool_columns = [
            names.alias(tc.TOOL_SEQUENCE),
            names.list.len().cast(pl.Int64).alias(tc.TOOL_CALLS),
            pl.lit(0, pl.Int64).alias(tc.TOOL_ERRORS),
            _EMPTY_NAMES.alias(tc.TOOL_ERROR_MESSAGES),
            pl.lit(0, pl.Int64).alias(tc.RETRIES),
        ]
    agents = pl.col(_AGENT_CALLS)
    if work.schema.get(_AGENT_CALLS) == pl.Null:
        agent_columns = [
            _EMPTY_NAMES.alias(tc.AGENT_RUNS),
            _EMPTY_NAMES.alias(tc.AGENTS),
            pl.lit(0, pl.Int64).alias(tc.AGENT_ERRORS),
            pl.lit(None, pl.String).alias(tc.AGENT_ERROR_MESSAGE),
        ]
    else:
        agent_columns = [
            agents.list.eval(_field("name").drop_nulls()).alias(tc.AGENT_RUNS),
            agents.list.eval(_field("name").drop_nulls().unique(maintain_order=True)).alias(
                tc.AGENTS
            ),
            agents.list.eval(failed.cast(pl.Int64))
            .list.sum()
            .cast(pl.Int64)
            .alias(tc.AGENT_ERRORS),
            agents.list.eval(pl.element().filter(failed))
            .list.first()
            .struct.field("message")
            .alias(tc.AGENT_ERROR_MESSAGE),
        ]
    return work.with_columns(*tool_columns, *agent_columns).drop(
        _TOOL_CALLS, _TOOL_NAMES, _AGENT_CALLS, strict=False
    )


def name_handoff_targets(work: pl.DataFrame) -> pl.DataFrame:
    """Give each handoff whose target was not recorded the agent run it led to.

    The n-th handoff of a trial leads to its (n+1)-th agent run: the first run is the agent
    that started, each handoff starts the next. Works on one row per trial, not per span.
    """
    unknown = pl.col(tc.HANDOFFS).list.eval(pl.element() == "").list.any().fill_null(False)
    if not work.select(unknown.any()).item():
        return work.drop(tc.AGENT_RUNS)
    indexed = work.with_row_index("_row")
    named = (
        indexed.filter(unknown)
        .select("_row", tc.HANDOFFS, tc.AGENT_RUNS)
        .explode(tc.HANDOFFS)
        .with_columns(pl.int_range(pl.len()).over("_row").alias("_n"))
        .with_columns(
            pl.when(pl.col(tc.HANDOFFS) == "")
            .then(pl.col(tc.AGENT_RUNS).list.get(pl.col("_n") + 1, null_on_oob=True))
            .otherwise(pl.col(tc.HANDOFFS))
            .alias(tc.HANDOFFS)
        )
        .group_by("_row", maintain_order=True)
        .agg(pl.col(tc.HANDOFFS).alias("_named"))
    )
    return (
        indexed.join(named, on="_row", how="left")
        .with_columns(pl.coalesce("_named", tc.HANDOFFS).alias(tc.HANDOFFS))
        .drop("_row", "_named", tc.AGENT_RUNS)
    )


def scores_and_checks(
    located: pl.DataFrame, trial_keys: pl.DataFrame, keys: list[str] | None = None
) -> pl.DataFrame:
    """Per trial: its scores (from any span of the trial) and its checks (trial span only).

    Args:
        located: Score and check events with the ``_trial_span_id`` that owns them.
        trial_keys: ``trace_id`` and ``_trial_span_id`` of every trial.
        keys: What tells trials apart: both columns (the default), or ``trace_id`` alone
            where every trace holds one trial.
    """
    located = located.sort("time")
    keys = keys or ["trace_id", tc.TRIAL_SPAN_ID]
    scores = (
        located.filter((pl.col("kind") == "score") & pl.col("value").is_not_null())
        .group_by(keys)
        .agg(pl.struct("name", "value").alias(tc.SCORES))
    )
    checks = (
        located.filter(
            (pl.col("kind") == "check") & (pl.col("span_id") == pl.col(tc.TRIAL_SPAN_ID))
        )
        .group_by(keys)
        .agg(
            pl.struct("name", "passed").alias(tc.CHECKS),
            (~pl.col("passed")).sum().cast(pl.Int64).alias(tc.FAILED_CHECKS),
        )
    )
    return (
        trial_keys.join(scores, on=keys, how="left")
        .join(checks, on=keys, how="left")
        .with_columns(
            pl.col(tc.SCORES).fill_null(pl.lit([], dtype=_STRUCT_SCORES)),
            pl.col(tc.CHECKS).fill_null(pl.lit([], dtype=_STRUCT_CHECKS)),
            pl.col(tc.FAILED_CHECKS).fill_null(0),
        )
    )
