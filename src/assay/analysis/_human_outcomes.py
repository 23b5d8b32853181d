"""Each labelled trial's outcome twice: as the judge decided it, and as people's labels decide it.

A trial whose outcome a ``--pass-when`` rule reads from an evaluation is judged again with
people's label in the judge's place: its spans are read once more with the judge's records of
the labelled evaluations replaced by one record of the person's label, by the same
:func:`read_trials` (so a rule with other clauses, a failed check or an error decides exactly as
for the judge). A trial whose outcome is recorded (``assay.trial.outcome``, set by a harness
from its judge) or that no rule reads the evaluation for takes the label itself as its outcome:
``pass``/``true`` pass, ``fail``/``false`` fail. A label on a trial no trace holds, for an
evaluation none of the labelled trials carries, or ambiguous, is named in a finding, never
dropped in silence (docs/analysis.md, "Human labels").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import polars as pl

from assay import conventions as c
from assay.analysis import _columns as tc
from assay.analysis._events import explode_events
from assay.analysis._passwhen import PassRule
from assay.quality import Finding
from assay.store import promoted_column

PASSING: Final = frozenset({"pass", "passed", "true", "yes", "correct", "1"})
"""Labels read as a pass where a label decides the outcome itself."""
FAILING: Final = frozenset({"fail", "failed", "false", "no", "incorrect", "0"})
"""Labels read as a fail."""

_EXAMPLES = 3


@dataclass(frozen=True, slots=True)
class Grader:
    """One judge of an evaluation, as its records name it, and how many records it made."""

    evaluation: str
    """The evaluation graded."""
    model: str | None
    """The model (``assay.evaluation.judge.model``, else ``gen_ai.response.model`` or
    ``gen_ai.request.model`` on the record, else an MLflow LLM judge's ``source_id``)."""
    prompt_version: str | None
    """``assay.evaluation.judge.prompt_version``, when recorded."""
    records: int
    """Records of the labelled trials it made."""


_MODEL_KEYS: Final = (
    c.EVALUATION_JUDGE_MODEL,
    "gen_ai.response.model",
    "gen_ai.request.model",
    "mlflow.assessment.source_id",
)


def graders(spans: pl.DataFrame, names: Sequence[str]) -> tuple[Grader, ...]:
    """Who graded ``names`` in ``spans`` (a few labelled traces), from the judge's records."""
    counted: Counter[tuple[str, str | None, str | None]] = Counter()
    wanted = set(names)
    for events in spans["events"].to_list():
        for event in events or []:
            if event.get("name") != c.EVALUATION_EVENT:
                continue
            values = {a["key"]: a["string_value"] or "" for a in event.get("attributes") or []}
            if values.get(c.EVALUATION_SOURCE, "").lower() == c.EVALUATION_SOURCE_HUMAN:
                continue
            name = values.get(c.EVALUATION_NAME)
            if name not in wanted:
                continue
            judged_by_code = values.get("mlflow.assessment.source_type", "").upper() == "CODE"
            model = next((values[k] for k in _MODEL_KEYS if values.get(k)), None)
            if judged_by_code and model == values.get("mlflow.assessment.source_id"):
                model = None
            counted[(str(name), model, values.get(c.EVALUATION_JUDGE_PROMPT) or None)] += 1
    return tuple(
        Grader(name, model, prompt, n)
        for (name, model, prompt), n in sorted(counted.items(), key=lambda kv: -kv[1])
    )


@dataclass(frozen=True, slots=True)
class LabelledTrials:
    """The labelled trials with both outcomes, and what matching the labels noticed."""

    table: pl.DataFrame
    """One row per labelled trial: ``test_id``, ``trace_id``, ``span_id``, ``evaluation``
    (the labelled evaluations, joined by ``,``), ``judge_passed``, ``human_passed``, ``error``
    and ``labellers`` (people who labelled it)."""
    findings: tuple[Finding, ...]
    """Labels that name no trial or no evaluation, ambiguous ones, ties, unreadable labels."""
    notes: tuple[str, ...]
    """How labels were read (a ``true`` read as the judge's ``pass``, ...)."""
    labels: int
    """Labels read from the file."""
    repeats: tuple[Repeats, ...] = ()
    """Per labelled evaluation, the trials the judge graded more than once (its flips)."""
    graders: tuple[Grader, ...] = ()
    """Which judge graded the labelled trials, as its records say."""
    scores: pl.DataFrame | None = None
    """People's scores of evaluations the judge scores: ``trace_id``, ``span_id``,
    ``test_id``, ``evaluation``, ``human_score``; None when none."""


_OUT_SCHEMA: Final = {
    tc.TEST_ID: pl.String,
    "trace_id": pl.String,
    "span_id": pl.String,
    "evaluation": pl.String,
    "judge_passed": pl.Boolean,
    "human_passed": pl.Boolean,
    "error": pl.Boolean,
    "labellers": pl.Int64,
}


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _one_label(labels: pl.DataFrame) -> tuple[pl.DataFrame, list[Finding]]:
    """One label per trace, span and evaluation: the majority of its labellers'."""
    keys = ["trace_id", "span_id", "evaluation"]
    grouped = labels.group_by(keys, maintain_order=True).agg(
        pl.col("label"), pl.col("labeller").n_unique().alias("labellers")
    )
    rows, ties = [], []
    for row in grouped.iter_rows(named=True):
        counted = Counter(row["label"]).most_common()
        if len(counted) > 1 and counted[0][1] == counted[1][1]:
            ties.append(row["trace_id"])
            continue
        rows.append(
            {**{k: row[k] for k in keys}, "label": counted[0][0], "labellers": row["labellers"]}
        )
    findings = []
    if ties:
        findings.append(
            Finding(
                "labels_tied",
                f"{_plural(len(ties), 'trial')} left unlabelled: their labellers disagree with no "
                "majority",
                len(ties),
                tuple(ties[:_EXAMPLES]),
            )
        )
    schema = {k: labels.schema[k] for k in keys} | {"label": pl.String, "labellers": pl.Int64}
    return pl.DataFrame(rows, schema=schema, orient="row"), findings


def _matched(labels: pl.DataFrame, trials: pl.DataFrame) -> tuple[pl.DataFrame, list[Finding]]:
    """Each label with its trial (``_trial`` span id, ``test_id``); unmatched ones named."""
    per_trace = trials.group_by("trace_id").agg(
        pl.len().alias("_trials"), pl.col(tc.SPAN_ID).first().alias("_only")
    )
    spans = trials.select("trace_id", pl.col(tc.SPAN_ID).alias("_span_hit"))
    joined = (
        labels.join(per_trace, on="trace_id", how="left")
        .join(
            spans,
            left_on=["trace_id", "span_id"],
            right_on=["trace_id", "_span_hit"],
            how="left",
            coalesce=False,
        )
        .with_columns(
            pl.when(pl.col("_span_hit").is_not_null())
            .then(pl.col("_span_hit"))
            .when(pl.col("_trials") == 1)
            .then(pl.col("_only"))
            .alias("_trial")
        )
    )
    findings = []
    nowhere = joined.filter(pl.col("_trials").is_null())
    if nowhere.height:
        ids = nowhere["trace_id"].unique(maintain_order=True)
        findings.append(
            Finding(
                "labels_without_trial",
                f"{_plural(nowhere.height, 'label')} name{'s' if nowhere.height == 1 else ''} "
                f"{_plural(ids.len(), 'trace')} the trace set holds no trial of: not used",
                nowhere.height,
                tuple(ids.head(_EXAMPLES).to_list()),
            )
        )
    ambiguous = joined.filter(pl.col("_trials").is_not_null() & pl.col("_trial").is_null())
    if ambiguous.height:
        findings.append(
            Finding(
                "labels_ambiguous",
                f"{_plural(ambiguous.height, 'label')} name a trace holding several trials "
                "without the span_id of one: not used (give the trial's span_id)",
                ambiguous.height,
                tuple(ambiguous["trace_id"].unique(maintain_order=True).head(_EXAMPLES).to_list()),
            )
        )
    found = joined.filter(pl.col("_trial").is_not_null()).join(
        trials.select(
            "trace_id", pl.col(tc.SPAN_ID).alias("_trial"), tc.TEST_ID, tc.PASSED, tc.ERROR
        ),
        on=["trace_id", "_trial"],
        how="left",
    )
    return found, findings


def _vocabulary(rule: PassRule | None, records: pl.DataFrame, name: str) -> set[str]:
    """The judge's words for an evaluation: its labels in the labelled traces, the rule's."""
    seen = set(records.filter(pl.col("name") == name)["label"].drop_nulls().to_list())
    if rule is not None:
        seen |= {str(cl.value) for cl in rule.clauses if cl.name == name and cl.field == "label"}
    return seen


def _in_vocabulary(label: str, words: set[str]) -> str:
    """The label in the judge's words: a synonym of pass or fail becomes the judge's one word."""
    if label in words or not words:
        return label
    lowered = label.lower()
    for side in (PASSING, FAILING):
        if lowered in side:
            same = [w for w in words if w.lower() in side]
            if len(same) == 1:
                return same[0]
    return label


def _human_event(kind: str, name: str, label: str, time: int) -> dict[str, Any] | None:
    """The record of a person's label, of the kind the judge recorded (None: unreadable)."""

    def attribute(key: str, value: object) -> dict[str, Any]:
        out: dict[str, Any] = {
            "key": key,
            "type": "string",
            "string_value": None,
            "bool_value": None,
            "int_value": None,
            "double_value": None,
            "bytes_value": None,
            "json_value": None,
        }
        if isinstance(value, bool):
            out.update(type="bool", bool_value=value)
        elif isinstance(value, float):
            out.update(type="double", double_value=value)
        else:
            out.update(string_value=str(value))
        return out

    if kind == "check":
        lowered = label.lower()
        if lowered not in PASSING | FAILING:
            return None
        attributes = [attribute(c.CHECK_NAME, name), attribute(c.CHECK_PASSED, lowered in PASSING)]
        return {"time_unix_nano": time, "name": c.CHECK_EVENT, "attributes": attributes}
    if kind == "value":
        try:
            value = float(label)
        except ValueError:
            return None
        attributes = [attribute(c.EVALUATION_NAME, name), attribute(c.EVALUATION_SCORE, value)]
        return {"time_unix_nano": time, "name": c.EVALUATION_EVENT, "attributes": attributes}
    attributes = [attribute(c.EVALUATION_NAME, name), attribute(c.EVALUATION_LABEL, label)]
    return {"time_unix_nano": time, "name": c.EVALUATION_EVENT, "attributes": attributes}


def _record_name(event: dict[str, Any]) -> str | None:
    keys = {
        c.EVALUATION_EVENT: c.EVALUATION_NAME,
        c.SCORE_EVENT: c.SCORE_NAME,
        c.CHECK_EVENT: c.CHECK_NAME,
    }
    key = keys.get(event.get("name") or "")
    if key is None:
        return None
    for a in event.get("attributes") or []:
        if a["key"] == key:
            return str(a["string_value"]) if a["string_value"] is not None else None
    return None


def _kind(records: pl.DataFrame, name: str) -> str:
    """How the judge recorded an evaluation: ``check``, ``label`` or ``value`` (a number)."""
    mine = records.filter(pl.col("name") == name)
    if mine.height and (mine["kind"] == "check").all():
        return "check"
    if mine.height and mine["label"].null_count() == mine.height:
        return "value"
    return "label"


def _rejudged(
    spans: pl.DataFrame,
    labels: pl.DataFrame,
    records: pl.DataFrame,
    read: Any,
) -> tuple[pl.DataFrame, list[str]]:
    """The trials of ``spans`` judged again with people's labels in place of the judge's."""
    wanted: dict[str, dict[str, str]] = {}
    unreadable: list[str] = []
    by_span: dict[tuple[str, str], list[dict[str, Any]]] = {}
    ends = dict(
        zip(
            zip(spans["trace_id"], spans["span_id"], strict=True),
            spans["end_time_unix_nano"],
            strict=True,
        )
    )
    by_trace = {
        str(key[0]): frame for key, frame in records.group_by("trace_id", maintain_order=True)
    }
    for row in labels.iter_rows(named=True):
        wanted.setdefault(row["trace_id"], {})[row["evaluation"]] = row["label"]
        mine = by_trace.get(row["trace_id"], records.clear())
        kind = _kind(mine, row["evaluation"])
        end = ends.get((row["trace_id"], row["_trial"])) or 0
        event = _human_event(kind, row["evaluation"], row["label"], int(end))
        if event is None:
            unreadable.append(row["trace_id"])
            continue
        by_span.setdefault((row["trace_id"], row["_trial"]), []).append(event)
    rows = []
    for span in spans.iter_rows(named=True):
        names = wanted.get(span["trace_id"], {})
        kept = [e for e in span["events"] or [] if _record_name(e) not in names]
        span["events"] = kept + by_span.get((span["trace_id"], span["span_id"]), [])
        rows.append(span)
    rebuilt = pl.DataFrame(rows, schema=spans.schema, orient="row")
    table = read(rebuilt.lazy())
    return table.select(
        "trace_id", pl.col(tc.SPAN_ID).alias("_trial"), pl.col(tc.PASSED).alias("human_passed")
    ), unreadable


def labelled_trials(
    spans: pl.LazyFrame,
    trials: pl.DataFrame,
    labels: pl.DataFrame,
    *,
    rule: PassRule | None,
    read: Any,
) -> LabelledTrials:
    """Match people's labels to trials and give each labelled trial both outcomes.

    Args:
        spans: The trace set's spans (only the labelled traces are read).
        trials: Its trials table (``trace_id``, ``span_id``, ``test_id``, ``passed``, ``error``).
        labels: People's labels (:func:`assay.analysis.read_labels`).
        rule: The ``--pass-when`` rule the judge's outcomes were read by, if any.
        read: Spans (lazy) → trials table, with the options the set was read by.

    Returns:
        The labelled trials with the judge's and people's outcomes, and the findings.
    """
    chosen, findings = _one_label(labels)
    found, unmatched = _matched(chosen, trials)
    findings += unmatched
    notes: list[str] = []
    empty = pl.DataFrame(schema=_OUT_SCHEMA)
    if found.height == 0:
        return LabelledTrials(empty, tuple(findings), (), labels.height)
    traces = found["trace_id"].unique()
    held = spans.filter(pl.col("trace_id").is_in(traces.implode())).collect()
    evented = held.filter(pl.col("events").list.len() > 0).select("trace_id", "span_id", "events")
    records = explode_events(evented)
    names = sorted(set(found["evaluation"].to_list()))
    unknown = [n for n in names if n not in set(records["name"].to_list())]
    if unknown:
        count = found.filter(pl.col("evaluation").is_in(unknown)).height
        findings.append(
            Finding(
                "labels_unknown_evaluation",
                f"{_plural(count, 'label')} name{'s' if count == 1 else ''} "
                f"{', '.join(unknown)}, which none of the labelled trials carries: the judge "
                "never graded it there, so they are not used (is the evaluation name spelt as "
                "the judge records it?)",
                count,
                tuple(unknown[:_EXAMPLES]),
            )
        )
        found = found.filter(~pl.col("evaluation").is_in(unknown))
    # People's labels in the judge's words.
    translated = []
    for row in found.iter_rows(named=True):
        words = _vocabulary(rule, records, row["evaluation"])
        word = _in_vocabulary(row["label"], words)
        if word != row["label"]:
            notes.append(
                f"labels {row['label']!r} of {row['evaluation']} read as the judge's {word!r}"
            )
        translated.append(word)
    found = found.with_columns(pl.Series("label", translated, dtype=pl.String))
    outcome_column = promoted_column(c.TRIAL_OUTCOME)
    explicit = set(
        held.filter(pl.col(outcome_column).is_not_null())
        .select(pl.concat_str("trace_id", "span_id", separator="/"))
        .to_series()
        .to_list()
    )
    read_names = {cl.name for cl in rule.clauses} if rule is not None else set()
    by_rule = found.with_columns(
        (
            pl.col("evaluation").is_in(sorted(read_names))
            & ~pl.concat_str("trace_id", "_trial", separator="/").is_in(sorted(explicit))
        ).alias("_by_rule")
    )
    ruled = by_rule.filter(pl.col("_by_rule"))
    # A number for an evaluation the judge scores is a person's score: the mean score is
    # corrected by it (PPI); it decides pass/fail only where a rule reads the evaluation.
    scored = [n for n in names if _kind(records, n) == "value"]
    as_number = pl.col("label").cast(pl.Float64, strict=False)
    score_rows = found.filter(pl.col("evaluation").is_in(scored) & as_number.is_not_null())
    scores = score_rows.select(
        "trace_id",
        pl.col("_trial").alias("span_id"),
        tc.TEST_ID,
        "evaluation",
        as_number.alias("human_score"),
    )
    direct = by_rule.filter(~pl.col("_by_rule")).join(
        score_rows.select("trace_id", "_trial", "evaluation"),
        on=["trace_id", "_trial", "evaluation"],
        how="anti",
    )
    human_parts = []
    unreadable: list[str] = []
    if ruled.height:
        again, unread = _rejudged(
            held.filter(pl.col("trace_id").is_in(ruled["trace_id"].implode())), ruled, records, read
        )
        unreadable += unread
        human_parts.append(ruled.join(again, on=["trace_id", "_trial"], how="inner"))
    if direct.height:
        lowered = pl.col("label").str.to_lowercase()
        readable = lowered.is_in(sorted(PASSING | FAILING))
        unreadable += direct.filter(~readable)["trace_id"].to_list()
        human_parts.append(
            direct.filter(readable).with_columns(
                (lowered.is_in(sorted(PASSING)) & ~pl.col(tc.ERROR)).alias("human_passed")
            )
        )
    if unreadable:
        findings.append(
            Finding(
                "labels_unreadable",
                f"{_plural(len(unreadable), 'label')} cannot be read as the judge's outcome "
                "(a recorded outcome or an evaluation no --pass-when reads takes pass/fail or "
                "true/false; a check true/false; a score a number): not used",
                len(unreadable),
                tuple(unreadable[:_EXAMPLES]),
            )
        )
    who = graders(held, names)
    people_scores = scores if scores.height else None
    if not human_parts:
        return LabelledTrials(
            empty,
            tuple(findings),
            tuple(dict.fromkeys(notes)),
            labels.height,
            graders=who,
            scores=people_scores,
        )
    combined = pl.concat([p.select(_columns()) for p in human_parts], how="vertical_relaxed")
    table = (
        combined.group_by(["trace_id", "_trial"], maintain_order=True)
        .agg(
            pl.col(tc.TEST_ID).first(),
            pl.col("evaluation").sort().str.join(","),
            pl.col(tc.PASSED).first().alias("judge_passed"),
            # A trial labelled for several evaluations is judged again with all of them.
            pl.col("human_passed").all(),
            pl.col(tc.ERROR).first().alias("error"),
            pl.col("labellers").max(),
        )
        .rename({"_trial": "span_id"})
        .select(list(_OUT_SCHEMA))
        .cast(_OUT_SCHEMA)  # type: ignore[arg-type]
    )
    return LabelledTrials(
        table,
        tuple(findings),
        tuple(dict.fromkeys(notes)),
        labels.height,
        graders=who,
        scores=people_scores,
    )


def recorded_labels(spans: pl.LazyFrame) -> pl.DataFrame:
    """People's labels recorded in the traces: evaluations whose source is ``human``.

    ``gen_ai.evaluation.result`` events with ``assay.evaluation.source = human`` (importers set
    it for Langfuse scores of source ``ANNOTATION``, Phoenix annotations of annotator kind
    ``HUMAN`` and MLflow assessments of source type ``HUMAN``). The label is the event's label,
    else its score as a number.

    Returns:
        The labels table (:data:`assay.analysis._labels.SCHEMA`; ``line`` null).
    """
    from assay.analysis._labels import SCHEMA

    holds = (
        pl.col("events")
        .list.eval(pl.element().struct.field("name") == c.EVALUATION_EVENT)
        .list.any()
    )
    evented = spans.filter(holds).select("trace_id", "span_id", "events").collect()
    records = explode_events(evented, human=True)
    label = pl.coalesce(
        pl.col("label"), pl.col("value").cast(pl.String), pl.col("passed").cast(pl.String)
    )
    return (
        records.select(
            pl.col("trace_id").cast(pl.String),
            "span_id",
            pl.col("name").alias("evaluation"),
            label.alias("label"),
            "labeller",
            pl.lit(None, dtype=pl.Int64).alias("line"),
        )
        .filter(pl.col("label").is_not_null())
        .cast(SCHEMA)
    )


def _columns() -> Sequence[str]:
    return [
        "trace_id",
        "_trial",
        tc.TEST_ID,
        "evaluation",
        tc.PASSED,
        "human_passed",
        tc.ERROR,
        "labellers",
    ]


@dataclass(frozen=True, slots=True)
class Repeats:
    """The judge grading the same trial more than once: how often it changed its mind."""

    evaluation: str
    """The evaluation."""
    trials: int
    """Trials the judge graded more than once for it."""
    flipped: int
    """Of those, trials whose records disagree (different labels, or scores)."""


def judge_repeats(spans: pl.LazyFrame, names: Sequence[str]) -> tuple[Repeats, ...]:
    """Per evaluation of ``names``: trials the judge graded more than once, and flips.

    A trial is a trace here (its records anywhere in it); people's records are left out.
    """
    if not names:
        return ()
    holds = (
        pl.col("events")
        .list.eval(pl.element().struct.field("name") == c.EVALUATION_EVENT)
        .list.any()
    )
    evented = spans.filter(holds).select("trace_id", "span_id", "events").collect()
    records = explode_events(evented).filter(pl.col("name").is_in(list(names)))
    verdict = pl.coalesce(pl.col("label"), pl.col("value").cast(pl.String))
    per_trial = (
        records.with_columns(verdict.alias("_said"))
        .group_by("trace_id", "name")
        .agg(pl.len().alias("_n"), pl.col("_said").n_unique().alias("_kinds"))
        .filter(pl.col("_n") > 1)
    )
    out = []
    for name in names:
        mine = per_trial.filter(pl.col("name") == name)
        if mine.height:
            out.append(Repeats(name, mine.height, int((mine["_kinds"] > 1).sum())))
    return tuple(out)
