"""The judgement a trace set records, and how the options of an analysis override it.

``assay run`` and the pytest plugin write each test's threshold, confidence, error policy,
variance limits and sequential design on every trial span (``assay.judgement.*``). A test is
judged with what its trials record; an option given to the analysis overrides a recorded value
and a note says so. The recorded sequential design is replayed only where it still describes
how the trials were collected: one run, trial indexes known, threshold and error policy as
recorded.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TypeVar

import polars as pl

from assay import conventions as c
from assay.analysis import columns as tc
from assay.choices import ErrorPolicy, SequentialMethod
from assay.errors import SchemaError
from assay.judge._options import DEFAULT_CONFIDENCE, DEFAULT_THRESHOLD, AnalyzeOptions
from assay.judge._reasons import method_name
from assay.judge._sequential import SequentialDesign
from assay.store import decode_value

T = TypeVar("T")

AttributeValue = str | bool | int | float
"""A value of a span attribute as the judgement writes it."""

_SPAN_ID = "span_id"
_ATTRIBUTES = "attributes"


@dataclass(frozen=True, slots=True)
class Judgement:
    """Everything a test's verdict is decided with (docs/spans-table.md: a trace set carries it)."""

    threshold: float
    """Required pass rate."""
    confidence: float
    """Two-sided confidence of the pass-rate interval."""
    errors: ErrorPolicy = ErrorPolicy.COUNT
    """``count`` error trials as failures, or ``exclude`` them from n."""
    min_mean_score: float | None = None
    """Variance check: the mean score must reach this."""
    max_std_dev: float | None = None
    """Variance check: the scores' standard deviation must not exceed this."""
    sequential: SequentialDesign | None = None
    """The sequential test that decided when to stop; None for a fixed number of trials."""

    @property
    def excludes_errors(self) -> bool:
        """Error trials are left out of n (``errors="exclude"``)."""
        return self.errors == ErrorPolicy.EXCLUDE

    def to_attributes(self) -> dict[str, AttributeValue]:
        """The judgement as trial-span attributes (absent values left out)."""
        out: dict[str, AttributeValue] = {
            c.JUDGEMENT_THRESHOLD: self.threshold,
            c.JUDGEMENT_CONFIDENCE: self.confidence,
            c.JUDGEMENT_ERRORS: str(self.errors),
        }
        if self.min_mean_score is not None:
            out[c.JUDGEMENT_MIN_MEAN_SCORE] = self.min_mean_score
        if self.max_std_dev is not None:
            out[c.JUDGEMENT_MAX_STD_DEV] = self.max_std_dev
        seq = self.sequential
        if seq is not None:
            design: dict[str, float | int | str | None] = {
                c.SEQUENTIAL_METHOD: seq.method,
                c.SEQUENTIAL_P0: seq.p0,
                c.SEQUENTIAL_P1: seq.p1,
                c.SEQUENTIAL_DELTA: seq.delta,
                c.SEQUENTIAL_ALPHA: seq.alpha,
                c.SEQUENTIAL_BETA: seq.beta,
                c.SEQUENTIAL_MAX_TRIALS: seq.max_trials,
                c.SEQUENTIAL_PRIOR_STRENGTH: seq.prior_strength,
            }
            out.update({key: value for key, value in design.items() if value is not None})
        return out

    @classmethod
    def from_attributes(cls, attributes: Mapping[str, object]) -> Judgement | None:
        """The judgement recorded in these attributes; None when none was recorded.

        Raises:
            ValueError: A recorded value has the wrong type (the caller names the trace set).
        """
        if c.JUDGEMENT_THRESHOLD not in attributes:
            return None

        def number(key: str) -> float | None:
            value = attributes.get(key)
            if value is None:
                return None
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"{key} must be a number (got {value!r})")
            return float(value)

        def required(key: str) -> float:
            value = number(key)
            if value is None:
                raise ValueError(f"{key} is missing")
            return value

        design = None
        if c.SEQUENTIAL_METHOD in attributes:
            # The SPRT (and an earlier version's confidence sequence) records its zone and
            # error rates; the confidence sequence its prior strength.
            design = SequentialDesign(
                str(attributes[c.SEQUENTIAL_METHOD]),
                required(c.SEQUENTIAL_P0),
                number(c.SEQUENTIAL_P1),
                number(c.SEQUENTIAL_DELTA),
                required(c.SEQUENTIAL_ALPHA),
                number(c.SEQUENTIAL_BETA),
                int(required(c.SEQUENTIAL_MAX_TRIALS)),
                number(c.SEQUENTIAL_PRIOR_STRENGTH),
            )
            if design.p1 is None and (
                design.method == SequentialMethod.SPRT or design.prior_strength is None
            ):
                raise ValueError(
                    f"{c.SEQUENTIAL_P1} is missing (the {design.method} design needs its zone)"
                )
        return cls(
            threshold=required(c.JUDGEMENT_THRESHOLD),
            confidence=required(c.JUDGEMENT_CONFIDENCE),
            errors=ErrorPolicy(str(attributes.get(c.JUDGEMENT_ERRORS, ErrorPolicy.COUNT))),
            min_mean_score=number(c.JUDGEMENT_MIN_MEAN_SCORE),
            max_std_dev=number(c.JUDGEMENT_MAX_STD_DEV),
            sequential=design,
        )


def read_judgements(spans: pl.LazyFrame, trials: pl.DataFrame) -> dict[str, Judgement]:
    """Trial span id → the judgement recorded on that span (spans without one left out)."""
    if trials.height == 0:
        return {}
    ids = trials[tc.SPAN_ID].unique()
    rows = (
        spans.select(_SPAN_ID, _ATTRIBUTES)
        .filter(pl.col(_SPAN_ID).is_in(ids.implode()))
        .explode(_ATTRIBUTES)
        .filter(pl.col(_ATTRIBUTES).struct.field("key").str.starts_with(c.JUDGEMENT_PREFIX))
        .collect()
    )
    per_span: dict[str, dict[str, object]] = {}
    for span_id, attribute in rows.iter_rows():
        per_span.setdefault(span_id, {})[attribute["key"]] = decode_value(attribute)
    out: dict[str, Judgement] = {}
    for span_id, attributes in per_span.items():
        try:
            judgement = Judgement.from_attributes(attributes)
        except ValueError as exc:
            raise SchemaError(f"trial span {span_id}: {exc}") from None
        if judgement is not None:
            out[span_id] = judgement
    return out


@dataclass(frozen=True, slots=True)
class Resolved:
    """How one test is judged: the judgement, whether to replay its design, and why."""

    judgement: Judgement
    """Threshold, confidence, error policy, variance limits (and the recorded design)."""
    replay: bool
    """Replay the stopping rule in trial-index order, to say when it stopped."""
    notes: tuple[str, ...]
    """What overrode the recording, and why a recorded design does not apply."""


def _pick(given: T | None, recorded: T) -> T:
    return recorded if given is None else given


def _shown(value: object) -> str:
    if value is None:
        return "none"
    return f"{value:g}" if isinstance(value, float) else str(value)


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def resolve(
    trials: pl.DataFrame, recorded: Mapping[str, Judgement], options: AnalyzeOptions
) -> Resolved:
    """The judgement of one test's trials under these options."""
    # Most sets record no judgement: no trial's span id need become a Python string then.
    found = {recorded.get(span) for span in trials[tc.SPAN_ID].to_list()} if recorded else {None}
    notes: list[str] = []
    base = next(iter(found)) if len(found) == 1 else None
    if len(found) > 1:
        notes.append(
            f"its trials record {len(found - {None})} different judgements"
            + (" (some none)" if None in found else "")
            + ": judged with the options given, else the defaults"
        )
    judgement = base or Judgement(DEFAULT_THRESHOLD, DEFAULT_CONFIDENCE)
    chosen = Judgement(
        threshold=_pick(options.threshold, judgement.threshold),
        confidence=_pick(options.confidence, judgement.confidence),
        errors=_pick(options.errors, judgement.errors),
        min_mean_score=_pick(options.min_mean_score, judgement.min_mean_score),
        max_std_dev=_pick(options.max_std_dev, judgement.max_std_dev),
        sequential=judgement.sequential,
    )
    if base is not None:
        for name in ("threshold", "confidence", "errors", "min_mean_score", "max_std_dev"):
            given, was = getattr(options, name), getattr(base, name)
            if given is not None and given != was:
                notes.append(f"{_flag(name)} {_shown(given)} overrides the recorded {_shown(was)}")
    design = chosen.sequential
    if design is None:
        looked = _looked_again(trials, options)
        if looked is None or not 0 < chosen.threshold < 1:
            return Resolved(chosen, False, tuple(notes))
        notes.append(
            f"judged with the anytime-valid interval ({looked}): a fixed-n interval would not "
            "keep its stated error when the trials were looked at before"
        )
        follow_up = SequentialDesign.follow_up(chosen.threshold, chosen.confidence)
        return Resolved(replace(chosen, sequential=follow_up), False, tuple(notes))
    why_not = _why_not_replayed(trials, judgement, chosen)
    if why_not is not None:
        notes.append(
            f"the recorded {method_name(design.method)} design is not replayed ({why_not}): "
            "when it stopped is not reported; the verdict is still its anytime-valid interval"
        )
        return Resolved(chosen, False, tuple(notes))
    return Resolved(chosen, True, tuple(notes))


def _looked_again(trials: pl.DataFrame, options: AnalyzeOptions) -> str | None:
    """Why a fixed-n test's trials need the anytime-valid interval; None if they do not.

    Trials from several runs were looked at after each run (a second run is what "more trials
    would settle it" asks for), so only an interval valid at every n keeps its error;
    ``--anytime`` asks for it whatever the trials record.
    """
    if options.anytime:
        return "--anytime"
    runs = trials[tc.RUN_ID].n_unique()
    return f"its trials come from {runs} runs" if runs > 1 else None


def _why_not_replayed(trials: pl.DataFrame, recorded: Judgement, chosen: Judgement) -> str | None:
    if chosen.threshold != recorded.threshold:
        return "another threshold"
    if chosen.errors != recorded.errors:
        return "another error policy"
    runs = trials[tc.RUN_ID].n_unique()
    if runs > 1:
        return f"the trials come from {runs} runs"
    indexes = trials[tc.TRIAL_INDEX]
    if indexes.null_count() or indexes.n_unique() != trials.height:
        return "trial indexes missing or repeated"
    return None
