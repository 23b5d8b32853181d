"""What a test's figures are (:class:`Figures`), and each trial's scores.

The figures themselves — scores, pass@k and pass^k, tool consistency, flakiness, what failing
trials do differently, usage and durations — are computed in one place,
:func:`assay.judge._all_figures.figures_by_test`, for every test of a trials table at once; one
test is one range of rows of it. Here: the types they are held in, and the reading of the
trials' scores that the figures and the regression verdicts share (:func:`score_columns`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import polars as pl

from assay.analysis import columns as tc
from assay.judge._tool_errors import ToolErrors
from assay.stats import (
    FailureFactor,
    Flakiness,
    Moments,
    PassAtK,
    ScoreSummary,
    ToolConsistency,
    sample_moments,
)

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class Usage:
    """LLM usage summed over a test's trials."""

    llm_calls: int
    """Number of LLM calls."""
    input_tokens: int | None
    """Input (prompt) tokens; None when some trial's are unknown (a call recorded no usage)."""
    output_tokens: int | None
    """Output (completion) tokens; None when some trial's are unknown."""


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
        values = np.asarray(durations, dtype=np.float64).ravel()
        return cls.of_moments(sample_moments([values[~np.isnan(values)]], spread=False), 0)

    @classmethod
    def of_moments(cls, moments: Moments, at: int) -> DurationSummary:
        """The summary of sample ``at`` of ``moments`` (its durations, NaN left out)."""
        if not moments.n[at]:
            return cls(None, None)
        return cls(float(moments.mean[at]), float(moments.p90[at]))


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


def score_columns(trials: pl.DataFrame) -> tuple[dict[str, FloatArray], dict[str, BoolArray]]:
    """Every score name's value per trial, and whether the trial records that name.

    A trial's value of a name is the mean of its values of it (evaluations often repeat a
    name), NaN where it records none or only nulls. Names sorted.

    Returns:
        ``(values, present)``: name → one float per trial; name → one flag per trial.
    """
    rows = score_rows(trials)
    longest = trials[tc.SCORES].list.len().max()
    if isinstance(longest, int) and longest > 1 and _names_twice(rows, longest):
        rows = trial_means(rows)
    values: dict[str, FloatArray] = {}
    present: dict[str, BoolArray] = {}
    for (name,), part in rows.group_by("name"):
        trial = part["_trial"].to_numpy()
        values[str(name)] = np.full(trials.height, np.nan)
        values[str(name)][trial] = part["value"].to_numpy()
        present[str(name)] = np.zeros(trials.height, dtype=bool)
        present[str(name)][trial] = True
    names = sorted(values)
    return {k: values[k] for k in names}, {k: present[k] for k in names}


def _names_twice(rows: pl.DataFrame, longest: int) -> bool:
    """Whether a trial of :func:`score_rows` ``rows`` names a score twice.

    A trial's rows are consecutive, at most ``longest`` of them, so two rows of one trial and
    name lie fewer than ``longest`` rows apart: a few comparisons of shifted numeric keys
    (4M rows: 0.09 s, against 0.34 s for a hash of every (trial, name) pair).
    """
    names = rows["name"].unique().sort()
    code = rows["name"].cast(pl.Enum(names.to_list())).to_physical().to_numpy()
    key = rows["_trial"].to_numpy().astype(np.int64) * names.len() + code
    return any(bool((key[apart:] == key[:-apart]).any()) for apart in range(1, longest))


def per_trial_scores(trials: pl.DataFrame) -> dict[str, FloatArray]:
    """Score name → one value per trial (the mean of the trial's values; NaN where absent).

    The values of :func:`score_columns`; a few trials are read in Python.
    """
    if trials.height <= _IN_PYTHON:
        read = _scores_in_python(trials)
        if read is not None:
            return read
    return score_columns(trials)[0]


def _scores_in_python(trials: pl.DataFrame) -> dict[str, FloatArray] | None:
    """:func:`per_trial_scores` of a few trials, read in Python.

    None when a trial holds a name twice: its mean is then left to Polars, so that it is the
    same mean whatever the number of trials.
    """
    out: dict[str, FloatArray] = {}
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
