"""Every figure of one test, from its rows of the trials table (verdicts aside).

The bridge from the Polars tables of ``assay.analysis`` to the pure functions of
``assay.stats``: scores, pass@k and pass^k, tool consistency, flakiness, what failing trials
do differently, usage and durations.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import polars as pl

from assay.analysis import columns as tc
from assay.analysis import is_work_feature, tool_paths, trial_features, work_unknown
from assay.judge._tool_errors import ToolErrors, tool_errors
from assay.stats import (
    FailureFactor,
    Flakiness,
    PassAtK,
    ScoreSummary,
    ToolConsistency,
    explain_failures,
    flakiness,
    pass_at_ks,
    pass_hat_ks,
    score_summary,
    tool_consistency,
)


@dataclass(frozen=True, slots=True)
class Usage:
    """LLM usage summed over a test's trials."""

    llm_calls: int
    """Number of LLM calls."""
    input_tokens: int | None
    """Input (prompt) tokens; None when some trial's are unknown (a call recorded no usage)."""
    output_tokens: int | None
    """Output (completion) tokens; None when some trial's are unknown."""


def _known_total(tokens: pl.Series) -> int | None:
    """A test's tokens: the trials' sum, or None when some trial's are unknown (null)."""
    return None if tokens.null_count() else int(tokens.sum())


@dataclass(frozen=True, slots=True)
class DurationSummary:
    """Wall-clock duration of a test's trials, in seconds."""

    mean: float | None
    """Mean duration."""
    p90: float | None
    """90th percentile (linear interpolation)."""

    @classmethod
    def of(cls, durations: npt.ArrayLike) -> DurationSummary:
        """Mean and p90 of durations in seconds (None for none); NaN values are left out."""
        values = np.asarray(durations, dtype=np.float64)
        values = values[~np.isnan(values)]
        if values.size == 0:
            return cls(None, None)
        return cls(float(values.mean()), float(np.percentile(values, 90)))


_IN_PYTHON = 500
"""Trials up to which :func:`per_trial_scores` reads the scores in Python: below, Polars'
explode and two group-bys cost more than the reading (a set of thousands of small tests)."""


def score_rows(trials: pl.DataFrame) -> pl.DataFrame:
    """One row per recorded score: ``_trial`` (the trial's row), ``name`` and ``value``."""
    return (
        trials.select(tc.SCORES)
        .with_row_index("_trial")
        .explode(tc.SCORES)
        .unnest(tc.SCORES)
        .drop_nulls("name")
    )


def trial_means(rows: pl.DataFrame) -> pl.DataFrame:
    """:func:`score_rows` with one row per trial and name: the mean of the trial's values."""
    return rows.group_by("_trial", "name").agg(pl.col("value").mean())


def per_trial_scores(trials: pl.DataFrame) -> dict[str, npt.NDArray[np.float64]]:
    """Score name → one value per trial (the mean of the trial's values; NaN where absent)."""
    if trials.height <= _IN_PYTHON:
        read = _scores_in_python(trials)
        if read is not None:
            return read
    rows = score_rows(trials)
    if rows.height == 0:
        return {}
    means = trial_means(rows)
    out: dict[str, npt.NDArray[np.float64]] = {}
    for (name,), group in means.group_by("name", maintain_order=True):
        values = np.full(trials.height, np.nan)
        values[group["_trial"].to_numpy()] = group["value"].to_numpy()
        out[str(name)] = values
    return dict(sorted(out.items()))


def _scores_in_python(trials: pl.DataFrame) -> dict[str, npt.NDArray[np.float64]] | None:
    """:func:`per_trial_scores` of a few trials, read in Python.

    None when a trial holds a name twice: its mean is then left to Polars, so that it is the
    same mean whatever the number of trials.
    """
    out: dict[str, npt.NDArray[np.float64]] = {}
    for row, recorded in enumerate(trials[tc.SCORES].to_list()):
        names: set[str] = set()
        for score in recorded or ():
            name = score["name"] if score is not None else None
            if name is None:
                continue
            if name in names:
                return None
            names.add(name)
            values = out.get(name)
            if values is None:
                values = out[name] = np.full(trials.height, np.nan)
            value = score["value"]
            values[row] = np.nan if value is None else value
    return dict(sorted(out.items()))


def primary_score(scores: Mapping[str, npt.NDArray[np.float64]]) -> str | None:
    """The score reported as ``score``: the one recorded in most trials (ties: by name)."""
    if len(scores) < 2:
        return next(iter(scores), None)
    return max(sorted(scores), key=lambda name: int(np.sum(~np.isnan(scores[name]))))


@dataclass(frozen=True, slots=True)
class Figures:
    """What a test's trials show, whatever the verdict."""

    usage: Usage | None
    """LLM usage over every trial; None when the trials' work is unknown."""
    duration_s: DurationSummary
    """Trial durations."""
    pass_at_k: dict[str, float | None] | None
    """pass@k by k (as a string)."""
    pass_hat_k: dict[str, float | None] | None
    """pass^k by k (as a string)."""
    scores: dict[str, ScoreSummary]
    """Summary of every score of the counted trials, by name."""
    primary_score: str | None
    """The score summarised as the test's ``score``."""
    tool_consistency: ToolConsistency | None
    """Tool-choice consistency (two trials or more)."""
    flakiness: Flakiness | None
    """Flakiness score and its factors."""
    failure_explanations: tuple[FailureFactor, ...]
    """What failing trials do differently."""
    first_error: str | None
    """``trial <index>: <message>`` of the first error trial."""
    tool_errors: ToolErrors | None
    """The tool calls that failed (None when the trials' work is unknown)."""
    work_unknown: int
    """Trials whose tool and LLM work is unknown (spans of a convention assay does not read):
    the tool and LLM figures are then None and left out of flakiness and explanations."""
    notes: tuple[str, ...]
    """Remarks (a pass@k that cannot be reported, and why)."""

    @property
    def score(self) -> ScoreSummary | None:
        """The primary score's summary."""
        return self.scores.get(self.primary_score) if self.primary_score else None


def _k_values(
    results: Mapping[int, PassAtK], label: str, notes: list[str]
) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for k, result in results.items():
        out[str(k)] = result.value
        if result.value is None and result.reason:
            notes.append(f"{label}{k} not reported: {result.reason}")
    return out


def _first_error(trials: pl.DataFrame) -> str | None:
    if not trials[tc.ERROR].any():
        return None  # most tests: no query
    errors = trials.filter(pl.col(tc.ERROR)).sort(tc.TRIAL_INDEX, nulls_last=True)
    if errors.height == 0:
        return None
    row = errors.row(0, named=True)
    index = row[tc.TRIAL_INDEX]
    message = row[tc.STATUS_MESSAGE] or "error"
    # Traces from production carry no trial index: the trace id is what the user can open.
    where = f"trial {index}" if index is not None else f"trace {row[tc.TRACE_ID]}"
    return f"{where}: {message}"


def test_figures(
    trials: pl.DataFrame,
    counted: pl.DataFrame,
    *,
    confidence: float,
    ks: tuple[int, ...],
    score_ci: str,
    seed: int,
    alpha: float,
) -> Figures:
    """Every figure of one test.

    Args:
        trials: All the test's trials.
        counted: The trials that count towards the pass rate (errors left out if excluded).
        confidence: Confidence of the score intervals.
        ks: The k of pass@k and pass^k.
        score_ci: ``t`` or ``bootstrap``.
        seed: Seed of bootstrap resampling.
        alpha: Significance level of the failure explanations.
    """
    notes: list[str] = []
    n, passed = counted.height, int(counted[tc.PASSED].sum())
    scores = per_trial_scores(trials)
    counted_scores = scores if counted is trials else per_trial_scores(counted)
    primary = primary_score(counted_scores)
    summaries = {
        name: score_summary(values[~np.isnan(values)], confidence, ci=score_ci, seed=seed)
        for name, values in counted_scores.items()
        if np.any(~np.isnan(values))
    }
    paths = tool_paths(trials)
    unknown = work_unknown(trials)
    flaky = None
    if trials.height:
        primary_values = scores.get(primary) if primary is not None else None
        flaky = flakiness(
            trials[tc.PASSED].to_numpy(),
            errors=trials[tc.ERROR].to_numpy(),
            scores=primary_values,
            # Unknown work is not "always the same path": its factors are left out.
            tool_sequences=None if unknown else paths,
            step_counts=None if unknown else trials[tc.TOOL_CALLS].to_numpy(),
            latencies=trials[tc.DURATION_S].to_numpy(),
        )
    explanations: tuple[FailureFactor, ...] = ()
    ok = counted[tc.PASSED].to_numpy()
    if 0 < ok.sum() < ok.size:
        features = trial_features(counted, paths if counted is trials else None)
        if unknown:
            features = [f for f in features if not is_work_feature(f.name)]
        explanations = tuple(
            explain_failures(
                ok,
                {f.name: f.values for f in features},
                kinds={f.name: f.kind for f in features},
                labels={f.name: f.label for f in features},
                alpha=alpha,
            )
        )
    usage = Usage(
        llm_calls=int(trials[tc.LLM_CALLS].sum()),
        input_tokens=_known_total(trials[tc.INPUT_TOKENS]),
        output_tokens=_known_total(trials[tc.OUTPUT_TOKENS]),
    )
    return Figures(
        usage=None if unknown else usage,
        duration_s=DurationSummary.of(trials[tc.DURATION_S].drop_nulls().to_numpy()),
        pass_at_k=_k_values(pass_at_ks(n, passed, ks), "pass@", notes) if n else None,
        pass_hat_k=_k_values(pass_hat_ks(n, passed, ks), "pass^", notes) if n else None,
        scores=summaries,
        primary_score=primary if summaries else None,
        tool_consistency=tool_consistency(paths) if len(paths) >= 2 and not unknown else None,
        flakiness=flaky,
        failure_explanations=explanations,
        first_error=_first_error(trials),
        tool_errors=None if unknown else tool_errors(trials),
        work_unknown=unknown,
        notes=tuple(notes),
    )
