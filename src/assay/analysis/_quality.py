"""What the analysis noticed about its input, as :class:`assay.quality.Finding` values.

Never silently wrong: a mapping whose trials nest, trials without work beside traces full of
it, traces with missing parents, NaN scores, trials that end before they start or start before
2000 (a time in another unit), and outcomes
that nothing but errors decided are all said, in the console, the JSON and the reports.
"""

from __future__ import annotations

import polars as pl

from assay import conventions as c
from assay.analysis import _columns as tc
from assay.analysis._describe import ranked_candidates
from assay.analysis._evaluations import UnusedEvaluation, unused_finding
from assay.analysis._passwhen import PassRule
from assay.quality import DataQuality, Finding
from assay.store import promoted_column

_EXAMPLES = 3
_HINTS = 5
_TEST = promoted_column(c.TEST_ID)


def _examples(series: pl.Series) -> tuple[str, ...]:
    return tuple(str(v) for v in series.unique(maintain_order=True).head(_EXAMPLES).to_list())


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def no_trials_message(spans: pl.LazyFrame, test_attribute: str) -> str:
    """The error for a trace set where nothing carries the test attribute, with hints.

    The hints are the attributes most like a test name, as ``assay describe`` ranks them
    (:func:`ranked_candidates`: on the roots, several values, far fewer than traces), each
    with its number of values and traces; a constant is named as one.
    """
    total = spans.select(pl.len()).collect().item()
    message = f"no trial spans: none of the {total} spans read carries {test_attribute}"
    hints = [k for k in ranked_candidates(spans, top=_HINTS) if k.on_roots]
    if hints:
        listed = ", ".join(
            f"{k.attribute} ({_plural(k.values, 'value')} in {_plural(k.traces, 'trace')}"
            + (": one test" if k.constant else "")
            + ")"
            for k in hints
        )
        message += f"; root spans carry {listed}: try --test-attribute with the first"
    return message


def findings(
    *,
    test_attribute: str,
    table: pl.DataFrame,
    per_trace: pl.DataFrame,
    owned: pl.DataFrame | None,
    located: pl.DataFrame,
    rule: PassRule | None,
    min_score: float | None,
    unused: tuple[list[UnusedEvaluation], pl.DataFrame],
    rootless: pl.Series | None = None,
) -> DataQuality:
    """Every finding about one trials table.

    Args:
        test_attribute: The attribute that names the test.
        table: The trials being built (with ``_trial_span_id``, ``_explicit`` and, with a
            rule, ``_rule_pass`` / ``_rule_missing``).
        per_trace: Work aggregated per whole trace (every trace read).
        owned: The spans carrying the test attribute, with the ``_trial_span_id`` owning them;
            None for assay's own attribute (a span carrying it is always a trial).
        located: Score and check events of the trials.
        rule: The ``--pass-when`` rule, if any.
        min_score: ``--min-score``, if any.
        unused: The evaluations no rule reads and the trials carrying them
            (:func:`assay.analysis.unused_evaluations`).
        rootless: Traces whose root was never recorded, each read as one trial.
    """
    out: list[Finding] = []
    if owned is not None:
        out += _nesting(test_attribute, owned)
    out += _without_work(test_attribute, table, per_trace)
    out += _incomplete(table, per_trace, rootless)
    out += _usage_unknown(table)
    out += _nan_scores(located, min_score)
    out += _negative_durations(table)
    out += _times_before_2000(table)
    out += _outcome_basis(test_attribute, table, located, rule)
    out += unused_finding(*unused, rule)
    return DataQuality(tuple(out))


def _nesting(test_attribute: str, owned: pl.DataFrame) -> list[Finding]:
    trials = owned.filter(pl.col("span_id") == pl.col(tc.TRIAL_SPAN_ID)).select(
        "trace_id", tc.TRIAL_SPAN_ID, pl.col(_TEST).alias("_trial_value")
    )
    inner = owned.filter(pl.col("span_id") != pl.col(tc.TRIAL_SPAN_ID)).join(
        trials, on=["trace_id", tc.TRIAL_SPAN_ID], how="left"
    )
    if inner.height == 0:
        return []
    out = [
        Finding(
            "nested_mapping",
            f"{test_attribute} is also on {_plural(inner.height, 'span')} inside the "
            f"{_plural(trials.height, 'trial')} carrying it: each trial is the top-most span "
            "carrying it, and those spans are counted as its work",
            count=inner.height,
            examples=_examples(inner["trace_id"]),
            severity="info",
        )
    ]
    other = _workflow_agents_left_out(owned, inner.filter(pl.col(_TEST) != pl.col("_trial_value")))
    if other.height:
        values = ", ".join(_examples(other[_TEST]))
        out.append(
            Finding(
                "nested_mapping_values",
                f"{_plural(other.height, 'span')} inside trials carry another {test_attribute} "
                f"than their trial ({values}): they are work of the trial above them, not trials "
                "of their own",
                count=other.height,
                examples=_examples(other["trace_id"]),
            )
        )
    return out


def _workflow_agents_left_out(owned: pl.DataFrame, other: pl.DataFrame) -> pl.DataFrame:
    """``other`` less the agents a GenAI workflow trial runs, which name themselves by right.

    Since semantic-conventions-genai v0.1.0 a workflow is an ``invoke_workflow`` span naming the
    workflow by ``gen_ai.agent.name``, and the agents it runs are ``invoke_agent`` spans naming
    themselves by the same attribute: the convention's shape, not a mapping that went wrong.
    """
    operation = promoted_column(c.GENAI_OPERATION)
    if other.height == 0 or operation not in owned.columns:
        return other
    trial_operation = owned.filter(pl.col("span_id") == pl.col(tc.TRIAL_SPAN_ID)).select(
        "trace_id", tc.TRIAL_SPAN_ID, pl.col(operation).alias("_trial_operation")
    )
    agent_of_workflow = (pl.col("_trial_operation") == c.GENAI_INVOKE_WORKFLOW) & (
        pl.col(operation) == c.GENAI_INVOKE_AGENT
    )
    return (
        other.join(trial_operation, on=["trace_id", tc.TRIAL_SPAN_ID], how="left")
        .filter(~agent_of_workflow.fill_null(False))
        .drop("_trial_operation")
    )


_HAS_WORK = (pl.col(tc.TOOL_CALLS) + pl.col(tc.LLM_CALLS)) > 0


def _without_work(
    test_attribute: str, table: pl.DataFrame, per_trace: pl.DataFrame
) -> list[Finding]:
    out: list[Finding] = []
    busy = per_trace.filter(_HAS_WORK).select("trace_id")
    idle = table.filter(~_HAS_WORK).join(busy, on="trace_id", how="semi")
    if idle.height:
        out.append(
            Finding(
                "trials_without_work",
                f"{_plural(idle.height, 'trial')} made no tool or LLM call while their traces "
                f"hold some outside them: is {test_attribute} on the span that runs the agent?",
                count=idle.height,
                examples=_examples(idle["trace_id"]),
            )
        )
    unframed = busy.join(table.select("trace_id"), on="trace_id", how="anti")
    if unframed.height:
        out.append(
            Finding(
                "traces_without_trials",
                f"{_plural(unframed.height, 'trace')} hold tool or LLM calls but no span carrying "
                f"{test_attribute}: they are not analysed",
                count=unframed.height,
                examples=_examples(unframed["trace_id"]),
            )
        )
    return out


def _incomplete(
    table: pl.DataFrame, per_trace: pl.DataFrame, rootless: pl.Series | None
) -> list[Finding]:
    # Filtered first: few traces are broken, and a semi join keeps the left order either way.
    broken = per_trace.filter(pl.col(tc.ORPHANS) > 0).join(
        table.select("trace_id"), on="trace_id", how="semi"
    )
    out = []
    unended = broken.head(0)
    if rootless is not None and rootless.len():
        unended = broken.filter(pl.col("trace_id").is_in(rootless.implode()))
        broken = broken.filter(~pl.col("trace_id").is_in(rootless.implode()))
    if unended.height:
        out.append(
            Finding(
                "unended_roots",
                f"{_plural(unended.height, 'trace')} lack their root span: the run's own span "
                "was never ended (the run crashed, or is still running) or never exported. "
                "Each is read as one trial, from the first start to the last end of the spans "
                "recorded, an error when one of its top-level spans is; its figures are those "
                "of the spans recorded",
                count=unended.height,
                examples=_examples(unended["trace_id"]),
            )
        )
    if broken.height == 0:
        return out
    spans = int(broken[tc.ORPHANS].sum())
    return [
        Finding(
            "incomplete_traces",
            f"{_plural(broken.height, 'trace')} with trials hold {_plural(spans, 'span')} whose "
            "parent span is missing (dropped by the exporter, e.g. a BatchSpanProcessor queue "
            "full, or not yet written): those trials' figures may be short",
            count=broken.height,
            examples=_examples(broken["trace_id"]),
        ),
        *out,
    ]


def _usage_unknown(table: pl.DataFrame) -> list[Finding]:
    unknown = table.filter(
        (pl.col(tc.LLM_CALLS) > 0)
        & (pl.col(tc.INPUT_TOKENS).is_null() | pl.col(tc.OUTPUT_TOKENS).is_null())
    )
    if unknown.height == 0:
        return []
    tests = unknown[tc.TEST_ID].unique(maintain_order=True)
    return [
        Finding(
            "usage_unknown",
            f"{_plural(unknown.height, 'trial')} of {_plural(tests.len(), 'test')} "
            f"({', '.join(_examples(tests))}) made LLM calls that recorded no token usage "
            "(e.g. streamed without stream_options.include_usage): their tokens are unknown "
            "(null, not 0), and token totals and cost leave them out",
            count=unknown.height,
            examples=_examples(unknown["trace_id"]),
        )
    ]


def _nan_scores(located: pl.DataFrame, min_score: float | None) -> list[Finding]:
    nan = located.filter((pl.col("kind") == "score") & pl.col("value").is_nan())
    if nan.height == 0:
        return []
    effect = (
        f"each fails --min-score {min_score:g}"
        if min_score is not None
        else "they fail any --min-score and meet no --pass-when comparison"
    )
    return [
        Finding(
            "nan_scores",
            f"{_plural(nan.height, 'score')} are NaN ({', '.join(_examples(nan['name']))}): "
            f"{effect}",
            count=nan.height,
            examples=_examples(nan["trace_id"]),
        )
    ]


def _negative_durations(table: pl.DataFrame) -> list[Finding]:
    negative = table.filter(pl.col(tc.DURATION_S).is_null())
    if negative.height == 0:
        return []
    return [
        Finding(
            "negative_durations",
            f"{_plural(negative.height, 'trial')} end before they start (clock skew?): their "
            "duration is left out of the latency figures",
            count=negative.height,
            examples=_examples(negative["trace_id"]),
        )
    ]


def _times_before_2000(table: pl.DataFrame) -> list[Finding]:
    early = table.filter(pl.col(tc.START_TIME) < c.EARLIEST_START)
    if early.height == 0:
        return []
    from assay.ingest import moment  # the one way a span time is written in a message

    first = early[tc.START_TIME].min()
    assert isinstance(first, int)
    return [
        Finding(
            "times_before_2000",
            f"{_plural(early.height, 'trial')} start before 2000 (the earliest "
            f"{moment(first)}): OTLP times are nanoseconds since 1970, so "
            "these are likely in another unit (ms, µs or s), which puts their durations and "
            "the latency figures off by that factor",
            count=early.height,
            examples=_examples(early["trace_id"]),
        )
    ]


def _outcome_basis(
    test_attribute: str, table: pl.DataFrame, located: pl.DataFrame, rule: PassRule | None
) -> list[Finding]:
    if rule is not None:
        lacking = table.filter(
            pl.col("_rule_pass").is_null() | pl.col("_rule_missing").fill_null(True)
        )
        names = ", ".join(sorted({clause.name for clause in rule.clauses}))
        if lacking.height == 0:
            return []
        return [
            Finding(
                "pass_when_unrecorded",
                f"{_plural(lacking.height, 'trial')} recorded no {names} for --pass-when "
                f"{rule.text!r}: they fail it",
                count=lacking.height,
                examples=_examples(lacking["trace_id"]),
            )
        ]
    judged = table["_explicit"].any() or located.height > 0
    if judged:
        return []
    return [
        Finding(
            "outcome_from_errors_only",
            f"no trial carries {c.TRIAL_OUTCOME}, a check, a score or an evaluation, and no "
            "--pass-when was given: pass rates only reflect errors (every trial that did not "
            "error passed)",
            count=table.height,
        )
    ]
