"""Evaluations the trials carry that no rule reads: named, with the ``--pass-when`` that would.

A trial without ``assay.trial.outcome`` passes unless an error, a failed check on its span, a
score below ``--min-score`` or a ``--pass-when`` rule says otherwise. An evaluation's label
(``gen_ai.evaluation.score.label``) is read by ``--pass-when`` only, a score by ``--min-score``
or ``--pass-when``, a check on another span than the trial's by ``--pass-when``. Such records
that nothing reads would leave a silent 100%: the traces say "correctness: fail" and the
verdict says PASS. assay does not guess what a label or a score means (``fail`` is bad,
``toxic`` too, ``relevant`` good; a hallucination score is better low), so it does not judge by
them uninvited: it names them in the ``unused_evaluations`` warning, with their labels and
counts, the trials and tests carrying them, and a ``--pass-when`` that reads them
(docs/analysis.md, "Evaluations no rule reads").
"""

from __future__ import annotations

import re
import shlex
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from assay import conventions as c
from assay.analysis import _columns as tc
from assay.analysis._events import explode_events
from assay.analysis._passwhen import PassRule
from assay.quality import Finding

__all__ = [
    "UNUSED_EVALUATIONS",
    "EvaluationSeen",
    "UnusedEvaluation",
    "evaluations_seen",
    "pass_when_text",
    "unused_evaluations",
    "unused_finding",
]

UNUSED_EVALUATIONS = "unused_evaluations"
"""The finding's kind."""

_KEYS = ["trace_id", tc.TRIAL_SPAN_ID]
_PASSING = (
    "pass passed correct true yes good success ok valid relevant grounded faithful accurate "
    "safe compliant resolved supported"
).split()
_FAILING = (
    "fail failed failure incorrect false no bad error wrong invalid irrelevant hallucinated "
    "unsafe toxic unsupported"
).split()
_NAME = re.compile(r"^[^\s=!<>\"']+$")
"""A name ``--pass-when`` can spell (its grammar reads a name up to a space or an operator)."""
_LABELS = 5


@dataclass(frozen=True, slots=True)
class UnusedEvaluation:
    """One evaluation (or score, or check) name that no rule reads."""

    name: str
    """The evaluation, score or check name."""
    trials: int
    """Trials carrying it."""
    labels: tuple[tuple[str, int], ...]
    """Labels by trials (the trial's last record), most common first; empty without labels."""
    median: float | None
    """Median score over the trials, when it carries numbers and no label."""
    check: bool
    """A check (``assay.check`` on a span below the trial span)."""

    @property
    def clause(self) -> str | None:
        """A ``--pass-when`` clause that reads it, or None when its name cannot be spelt."""
        if not _NAME.match(self.name):
            return None
        if self.labels:
            seen = [label for label, _ in self.labels]
            lowered = {label.lower(): label for label in seen}
            good = next((lowered[w] for w in _PASSING if w in lowered), None)
            if good is not None:
                return f"{self.name}.label == {shlex.quote(good)}"
            bad = next((lowered[w] for w in _FAILING if w in lowered), None)
            if bad is not None:
                return f"{self.name}.label != {shlex.quote(bad)}"
            return f"{self.name}.label == {shlex.quote(seen[0])}"
        if self.check:
            return f"{self.name}.passed == true"
        return f"{self.name}.score >= {self.median:.3g}" if self.median is not None else None

    def describe(self) -> str:
        """``correctness in 30 trials (labels fail 10, pass 20)``."""
        if self.labels:
            shown = ", ".join(f"{label} {n}" for label, n in self.labels[:_LABELS])
            more = len(self.labels) - _LABELS
            detail = f"labels {shown}" + (f", {more} more" if more > 0 else "")
        elif self.check:
            detail = "a check below the trial span"
        elif self.median is not None:
            detail = f"scores, median {self.median:.3g}"
        else:
            detail = "NaN scores"
        return f"{self.name} in {self.trials} trial{'s' if self.trials != 1 else ''} ({detail})"


def _unread(records: pl.DataFrame, rule: PassRule | None, min_score: float | None) -> pl.Expr:
    named = sorted({clause.name for clause in rule.clauses}) if rule is not None else []
    labelled = pl.col("label").is_not_null()
    scored = pl.col("value").is_not_null()
    # --min-score reads every score: a labelled record with a score is then read too.
    score_read = pl.lit(min_score is not None)
    unread = (
        ((pl.col("kind") == "score") & labelled & ~(scored & score_read))
        | ((pl.col("kind") == "score") & ~labelled & scored & ~score_read)
        | ((pl.col("kind") == "check") & (pl.col("span_id") != pl.col(tc.TRIAL_SPAN_ID)))
    )
    return unread & ~pl.col("name").is_in(named)


def unused_evaluations(
    table: pl.DataFrame,
    located: pl.DataFrame,
    rule: PassRule | None,
    min_score: float | None,
) -> tuple[list[UnusedEvaluation], pl.DataFrame]:
    """The evaluation names no rule reads in the trials whose outcome assay derives.

    Args:
        table: The trials being built (``trace_id``, ``_trial_span_id``, ``test_id``,
            ``_explicit``).
        located: Score, check and evaluation records with the ``_trial_span_id`` owning them.
        rule: The ``--pass-when`` rule, if any.
        min_score: ``--min-score``, if any.

    Returns:
        The names, most trials first, and the trials carrying one (``trace_id``, ``test_id``).
    """
    derived = table.filter(~pl.col("_explicit")).select(*_KEYS, tc.TEST_ID)
    records = located.join(derived, on=_KEYS, how="inner")
    records = records.filter(_unread(records, rule, min_score))
    if records.height == 0:
        return [], derived.head(0).select("trace_id", tc.TEST_ID)
    last = records.sort("time").group_by([*_KEYS, "name"], maintain_order=True).last()
    found: list[UnusedEvaluation] = []
    for (name,), group in last.group_by("name", maintain_order=True):
        labels = Counter(str(v) for v in group["label"].drop_nulls().to_list())
        values = group["value"].drop_nulls().drop_nans()
        median = values.median() if not labels and values.len() else None
        found.append(
            UnusedEvaluation(
                name=str(name),
                trials=group.height,
                labels=tuple(sorted(labels.items(), key=lambda kv: (-kv[1], kv[0]))),
                median=float(median) if isinstance(median, int | float) else None,
                check=bool((group["kind"] == "check").all()),
            )
        )
    found.sort(key=lambda u: (-u.trials, u.name))
    carriers = last.select(*_KEYS, tc.TEST_ID).unique(maintain_order=True)
    return found, carriers.select("trace_id", tc.TEST_ID)


def pass_when_text(found: Sequence[UnusedEvaluation], rule: PassRule | None) -> str | None:
    """The ``--pass-when`` rule that reads ``found`` too (``rule``'s clauses first).

    None when no name of ``found`` can be spelt.
    """
    clauses = [u.clause for u in found if u.clause is not None]
    if not clauses:
        return None
    return " and ".join([rule.text, *clauses] if rule is not None else clauses)


def unused_finding(
    found: Sequence[UnusedEvaluation], carriers: pl.DataFrame, rule: PassRule | None
) -> list[Finding]:
    """The ``unused_evaluations`` warning, or nothing when every record is read by a rule.

    Args:
        found: The names no rule reads (:func:`unused_evaluations`).
        carriers: The trials carrying one (``trace_id``, ``test_id``).
        rule: The ``--pass-when`` rule, if any.
    """
    if not found:
        return []
    named = "; ".join(u.describe() for u in found)
    n = carriers.height
    message = (
        f"{n} trial{'s' if n != 1 else ''} without a recorded outcome carry evaluations that no "
        f"rule reads, so their pass/fail leaves them out: {named}"
    )
    text = pass_when_text(found, rule)
    if text is not None:
        message += f"; to judge by them: --pass-when {shlex.quote(text)}"
    unspelt = [u.name for u in found if u.clause is None]
    if unspelt:
        message += f" (no clause for {', '.join(unspelt)}: --pass-when cannot spell the name)"
    return [
        Finding(
            UNUSED_EVALUATIONS,
            message,
            count=n,
            examples=tuple(carriers["trace_id"].unique(maintain_order=True).head(3).to_list()),
            tests=tuple(sorted(carriers[tc.TEST_ID].unique().to_list())),
        )
    ]


@dataclass(frozen=True, slots=True)
class EvaluationSeen:
    """One evaluation, score or check name found in a trace set (``assay describe``)."""

    name: str
    """The evaluation, score or check name."""
    kind: str
    """``check`` (an ``assay.check``), ``evaluation`` (a ``gen_ai.evaluation.result`` or an
    ``assay.score``) or ``human label`` (a person's evaluation: ``assay.evaluation.source =
    human``, read by ``--labels traces``)."""
    records: int
    """Records of it."""
    traces: int
    """Traces holding one."""
    labels: tuple[tuple[str, int], ...]
    """Its labels with their counts (records), most common first; empty without labels."""


def evaluations_seen(spans: pl.LazyFrame) -> tuple[EvaluationSeen, ...]:
    """Every evaluation, score and check name of a trace set, most records first."""
    wanted = [c.SCORE_EVENT, c.CHECK_EVENT, c.EVALUATION_EVENT]
    # Only spans holding such an event are collected (exception events may be everywhere).
    holds = pl.col("events").list.eval(pl.element().struct.field("name").is_in(wanted)).list.any()
    evented = spans.filter(holds).select("trace_id", "span_id", "events")
    collected = evented.collect()
    judged = explode_events(collected)
    people = explode_events(collected, human=True).drop("labeller")
    records = pl.concat([judged, people.with_columns(pl.lit("human label").alias("kind"))])
    if records.height == 0:
        return ()
    out = []
    for (name, kind), group in records.group_by("name", "kind", maintain_order=True):
        labels = Counter(str(v) for v in group["label"].drop_nulls().to_list())
        out.append(
            EvaluationSeen(
                name=str(name),
                kind={"check": "check", "human label": "human label"}.get(str(kind), "evaluation"),
                records=group.height,
                traces=group["trace_id"].n_unique(),
                labels=tuple(sorted(labels.items(), key=lambda kv: (-kv[1], kv[0]))),
            )
        )
    return tuple(sorted(out, key=lambda e: (-e.records, e.name, e.kind)))
