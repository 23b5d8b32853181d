"""The three-valued regression verdict: is the current version worse than the baseline?"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt
import polars as pl

from assay.analysis import columns as tc
from assay.choices import DEFAULT_REGRESSION_TEST, Adjustment, ErrorPolicy, RegressionTest
from assay.errors import ConfigError
from assay.judge._all_figures import range_sums
from assay.judge._figures import per_trial_scores, primary_score
from assay.judge._options import AnalyzeOptions
from assay.judge._sequential import SequentialDesign
from assay.judge._threshold import Verdict
from assay.stats import (
    MAX_TABLES,
    DropSequence,
    ScoreShift,
    adjust_p_values,
    enumerable,
    regression_p_value,
    regression_power,
    score_shift_test,
)


class _Recorded(Protocol):
    """A recorded judgement (:class:`~assay.judge.Judgement`), named by its shape.

    The module that defines it imports the reasons, which import this one.
    """

    @property
    def sequential(self) -> SequentialDesign | None:
        """The recorded stopping rule; None for a fixed number of trials."""


@dataclass(frozen=True, slots=True)
class RegressionResult:
    """A pass-rate regression verdict with the test and the power it rests on."""

    test: str
    """``boschloo``, ``fisher`` or ``barnard`` (exact, for trial counts fixed in advance), or
    ``anytime`` (valid whatever rule stopped either version; see ``anytime_reason``)."""
    baseline_n: int
    """Baseline trials."""
    baseline_passed: int
    """Passing baseline trials."""
    current_n: int
    """Current trials."""
    current_passed: int
    """Passing current trials."""
    p_value: float
    """One-sided p-value for "current pass rate < baseline pass rate": exact for the fixed-n
    tests; for ``anytime`` ``min(1, 1/e_value)``, valid at any stopping time."""
    power: float
    """Exact power of this test, at these group sizes, to detect a drop of ``delta`` from the
    observed baseline rate — computed without looking at the current result."""
    delta: float
    """The drop the power refers to."""
    alpha: float
    """Significance level."""
    verdict: Verdict
    """FAIL if p < alpha; PASS if not and power ≥ the required power; else INCONCLUSIVE."""
    required_power: float = 0.80
    """The power a PASS needs."""
    p_adjusted: float | None = None
    """The p-value adjusted across the suite (see :func:`adjust_regressions`); None if not
    adjusted. When set, the verdict rests on it instead of ``p_value``."""
    anytime_reason: str | None = None
    """Why the anytime-valid test was used (e.g. "the baseline stopped adaptively after 28 of
    100 trials"); None for the fixed-n tests."""
    e_value: float | None = None
    """``anytime``: the largest value its e-process against "no drop" reached over the pairs
    of trials (a drop is shown once it reaches ``1/alpha``)."""
    drop_low: float | None = None
    """``anytime``: lower end of the confidence sequence of the drop (baseline rate − current
    rate): a one-sided ``1 - alpha`` bound valid at any stopping time, above 0 exactly when
    the test shows a drop."""
    drop_high: float | None = None
    """``anytime``: its upper end, a one-sided ``1 - alpha`` bound ("the drop is at most")."""
    pairs: int | None = None
    """``anytime``: the pairs of trials the test used — the i-th trial of each version in run
    order, ``min(baseline_n, current_n)``; the longer version's other trials wait for
    partners."""
    test_reason: str | None = None
    """Why ``test`` is not the test asked for (None: it is). Boschloo's and Barnard's tests
    enumerate every outcome table, at most :data:`~assay.stats.MAX_TABLES`; above that Fisher's
    exact test — valid at any size, its p-value a hypergeometric tail and its power summed row
    by row — is used and this says so (docs/statistics.md, "Regression at any size")."""


def decide_regression(
    p_value: float, power: float, alpha: float = 0.05, required_power: float = 0.80
) -> Verdict:
    """The regression rule: FAIL if p < alpha; PASS if power ≥ required; else INCONCLUSIVE.

    Use it to re-decide with p-values adjusted across a suite (``adjust_p_values``).
    """
    if p_value < alpha:
        return Verdict.FAIL
    if power >= required_power:
        return Verdict.PASS
    return Verdict.INCONCLUSIVE


def regression_test(
    baseline_passed: int,
    baseline_n: int,
    current_passed: int,
    current_n: int,
    test: str = DEFAULT_REGRESSION_TEST,
    alpha: float = 0.05,
    delta: float = 0.10,
    power: float = 0.80,
    *,
    anytime_reason: str | None = None,
    baseline_outcomes: Sequence[bool] | None = None,
    current_outcomes: Sequence[bool] | None = None,
) -> RegressionResult:
    """Did the pass rate drop from baseline to current? One-sided test, exact power.

    The p-value comes from :func:`assay.stats.regression_p_value` (Boschloo by default:
    uniformly more powerful than Fisher's test at the same level). "Not significant" alone
    would be no evidence of "no regression" with few trials, so a PASS also needs the test's
    exact power to detect a drop of ``delta`` from the observed baseline rate to be at least
    ``power`` (:func:`assay.stats.regression_power`: all outcomes of both groups enumerated,
    rejection region cached per group sizes); otherwise the verdict is INCONCLUSIVE.

    Args:
        baseline_passed: Passing baseline trials.
        baseline_n: Baseline trials (≥ 1).
        current_passed: Passing current trials.
        current_n: Current trials (≥ 1).
        test: ``boschloo``, ``fisher``, ``barnard`` or ``anytime``.
        alpha: One-sided significance level.
        delta: Smallest drop worth detecting, in (0, 1].
        power: Power a PASS requires, in (0, 1).
        anytime_reason: Why the anytime-valid test must be used (None: as ``test`` says).
        baseline_outcomes: Pass or fail of each counted baseline trial in run order: the
            anytime-valid test pairs the versions' trials in that order (needed for it).
        current_outcomes: The same for the current version.

    Returns:
        The result.
    """
    if not 0 < power < 1:
        raise ConfigError(f"power must lie strictly between 0 and 1 (got {power})")
    if test == RegressionTest.ANYTIME or anytime_reason is not None:
        if not 0 < alpha < 1:
            raise ConfigError(f"alpha must lie strictly between 0 and 1 (got {alpha})")
        if baseline_outcomes is None or current_outcomes is None:
            raise ConfigError(
                "the anytime-valid test pairs the two versions' trials in run order: it needs "
                "baseline_outcomes and current_outcomes"
            )
        sequence = DropSequence(1 - alpha)
        found = sequence.test(baseline_outcomes, current_outcomes)
        if (found.baseline_passed, found.baseline_n, found.current_passed, found.current_n) != (
            baseline_passed,
            baseline_n,
            current_passed,
            current_n,
        ):
            raise ConfigError(
                f"the outcomes ({found.baseline_passed}/{found.baseline_n} and "
                f"{found.current_passed}/{found.current_n}) disagree with the counts "
                f"({baseline_passed}/{baseline_n} and {current_passed}/{current_n})"
            )
        achieved = sequence.power(baseline_n, current_n, baseline_passed / baseline_n, delta)
        return RegressionResult(
            RegressionTest.ANYTIME,
            baseline_n,
            baseline_passed,
            current_n,
            current_passed,
            found.p_value,
            achieved,
            delta,
            alpha,
            decide_regression(found.p_value, achieved, alpha, power),
            power,
            anytime_reason=anytime_reason or "asked for with --test anytime",
            e_value=found.e_value,
            drop_low=found.low,
            drop_high=found.high,
            pairs=found.pairs,
        )
    test_reason = None
    if test != RegressionTest.FISHER and not enumerable(baseline_n, current_n):
        test_reason = (
            f"{test} enumerates (n1 + 1)(n2 + 1) outcome tables, at most {MAX_TABLES:,}; "
            f"{baseline_n:,} and {current_n:,} trials make {(baseline_n + 1) * (current_n + 1):,}:"
            " Fisher's exact test is used (valid at any size, a little conservative)"
        )
        test = RegressionTest.FISHER
    p = regression_p_value(baseline_passed, baseline_n, current_passed, current_n, test)
    achieved = regression_power(
        baseline_n, current_n, baseline_passed / baseline_n, delta, alpha, test
    )
    return RegressionResult(
        test,
        baseline_n,
        baseline_passed,
        current_n,
        current_passed,
        p,
        achieved,
        delta,
        alpha,
        decide_regression(p, achieved, alpha, power),
        power,
        test_reason=test_reason,
    )


def adjust_regressions(
    results: Sequence[RegressionResult], method: str = Adjustment.HOLM
) -> list[RegressionResult]:
    """Re-decide a suite's regression verdicts on p-values adjusted for testing many at once.

    The p-values of all results are adjusted together (:func:`assay.stats.adjust_p_values`:
    ``holm`` keeps the chance of any false FAIL at alpha, ``bh`` the expected share of false
    FAILs among FAILs); each verdict is then decided again with the same rule, power
    unchanged. With ``none`` the results come back as they were.

    Args:
        results: One result per test of the suite.
        method: ``none``, ``holm`` or ``bh``.

    Returns:
        New results, in the same order, with ``p_adjusted`` set (except for ``none``).
    """
    adjusted = adjust_p_values([r.p_value for r in results], method)
    if method == Adjustment.NONE:
        return list(results)
    return [
        dataclasses.replace(
            r,
            p_adjusted=float(p),
            verdict=decide_regression(float(p), r.power, r.alpha, r.required_power),
        )
        for r, p in zip(results, adjusted, strict=True)
    ]


@dataclass(frozen=True, slots=True)
class ScoreRegressionResult:
    """A score regression verdict: did a named score drop?"""

    shift: ScoreShift
    """The Mann–Whitney U test and its effect size."""
    alpha: float
    """Significance level."""
    verdict: Verdict
    """FAIL if p < alpha, else PASS ("no significant drop"; no power guarantee for scores)."""


def score_regression_test(
    baseline: npt.ArrayLike, current: npt.ArrayLike, alpha: float = 0.05
) -> ScoreRegressionResult:
    """Did a score drop? One-sided Mann–Whitney U test (see ``assay.stats.score_shift_test``).

    Unlike the pass-rate check there is no delta and no power here, so PASS only means "no
    significant drop"; the pass-rate regression verdict carries the power guarantee.

    Args:
        baseline: Baseline scores.
        current: Current scores.
        alpha: One-sided significance level.

    Returns:
        The result.
    """
    if not 0 < alpha < 1:
        raise ConfigError(f"alpha must lie strictly between 0 and 1 (got {alpha})")
    shift = score_shift_test(baseline, current)
    verdict = Verdict.FAIL if shift.p_value < alpha else Verdict.PASS
    return ScoreRegressionResult(shift, alpha, verdict)


@dataclass(frozen=True, slots=True)
class Tally:
    """What a regression test reads of one version's trials of a test, without reading them."""

    passed: int
    """Counted trials that passed (error trials left out under ``errors="exclude"``)."""
    n: int
    """Counted trials."""
    runs: int
    """Distinct ``assay.run.id`` values over every trial (trials recording none are one)."""
    scored: bool
    """Whether some trial records a score."""


Trials = pl.DataFrame | Callable[[], pl.DataFrame]
"""A test's trials, or how to get them: read only where a tally is not enough."""


def tally(trials: pl.DataFrame, errors: str) -> Tally:
    """One side's :class:`Tally`, read from its trials."""
    kept = trials.filter(~pl.col(tc.ERROR)) if errors == ErrorPolicy.EXCLUDE else trials
    return Tally(
        int(kept[tc.PASSED].sum()),
        kept.height,
        trials[tc.RUN_ID].n_unique(),
        bool(trials[tc.SCORES].list.len().fill_null(0).sum()),
    )


def tallies(
    table: pl.DataFrame, rows: Mapping[str, tuple[int, int]], errors: Mapping[str, str]
) -> dict[str, Tally]:
    """:func:`tally` of each test named in ``errors`` whose trials are ``table``'s ``rows``.

    Every test at once (a few numpy passes and one group-by), not a dozen Polars calls a test:
    the same tallies (``tests/judge/test_regression_verdict.py``).
    """
    names = [name for name in rows if name in errors]
    if not names:
        return {}
    ranges = [rows[name] for name in names]
    passed = table[tc.PASSED].fill_null(False).to_numpy()
    clean = (table[tc.ERROR] == False).fill_null(False).to_numpy()  # noqa: E712 (a column)
    scores = table[tc.SCORES].list.len().fill_null(0).to_numpy()
    every = (range_sums(passed, ranges), [b - a for a, b in ranges])
    kept = (range_sums(passed & clean, ranges), range_sums(clean, ranges))
    scored = range_sums(scores, ranges)
    starts = np.repeat(np.arange(len(names)), [b - a for a, b in ranges])
    runs = (
        pl.DataFrame({"t": starts, "r": _rows_of(table[tc.RUN_ID], ranges)})
        .group_by("t")
        .agg(pl.col("r").n_unique())
        .sort("t")["r"]
        .to_list()
    )
    out = {}
    for i, name in enumerate(names):
        chosen = kept if errors[name] == ErrorPolicy.EXCLUDE else every
        out[name] = Tally(int(chosen[0][i]), int(chosen[1][i]), int(runs[i]), scored[i] > 0)
    return out


def _rows_of(column: pl.Series, ranges: Sequence[tuple[int, int]]) -> pl.Series:
    """The values of ``column`` in ``ranges``, one range after the other."""
    if all(a == b0 for (_, a), (b0, _) in zip(ranges, ranges[1:], strict=False)):
        return column.slice(ranges[0][0], ranges[-1][1] - ranges[0][0])
    return pl.concat([column.slice(a, b - a) for a, b in ranges])


def _trials(trials: Trials) -> pl.DataFrame:
    return trials if isinstance(trials, pl.DataFrame) else trials()


def _adaptive(
    side: str, trials: Trials, n: int, runs: int, recorded: Mapping[str, _Recorded]
) -> str | None:
    """Why one side's trials were not a fixed number (None if they were)."""
    designs = (
        {
            recorded[span].sequential
            for span in _trials(trials)[tc.SPAN_ID].to_list()
            if span in recorded
        }
        if recorded
        else set()
    )
    maxima = [d.max_trials for d in designs if d is not None]
    if maxima:
        most = max(maxima)
        if n < most:
            return f"the {side} stopped adaptively after {n} of {most} trials"
        return f"the {side} ran under an adaptive stopping rule"
    if runs > 1:
        return f"the {side} trials come from {runs} runs"
    return None


def _in_run_order(trials: pl.DataFrame, errors: str) -> list[bool]:
    """Pass or fail of the counted trials in run order.

    Runs by their first start, each run's trials by trial index (then start time). Every key
    is fixed before a trial's outcome, so the order never depends on outcomes: the
    anytime-valid test pairs the two versions' trials in it.
    """
    kept = trials.filter(~pl.col(tc.ERROR)) if errors == ErrorPolicy.EXCLUDE else trials
    ordered = kept.with_columns(
        pl.col(tc.START_TIME).min().over(tc.RUN_ID).alias("_run_start")
    ).sort(["_run_start", tc.RUN_ID, tc.TRIAL_INDEX, tc.START_TIME], nulls_last=True)
    return [bool(passed) for passed in ordered[tc.PASSED].to_list()]


def regression_result(
    baseline: Trials,
    current: Trials,
    options: AnalyzeOptions,
    errors: str,
    recorded: Mapping[str, _Recorded] | None = None,
    tallied: tuple[Tally, Tally] | None = None,
) -> tuple[RegressionResult | None, ScoreRegressionResult | None]:
    """The regression verdicts of one test (current worse than baseline).

    Where either side's trials record an adaptive stopping rule, or come from several runs (a
    number of trials nobody fixed in advance), the pass-rate test is the anytime-valid one and
    its result says why; ``--test anytime`` or ``--anytime`` asks for it always.

    ``tallied``: both sides' :func:`tallies`, read for many tests at once; the trials are then
    read only where they say more (an anytime test's order, recorded designs, scores).
    """
    if tallied is None:
        tallied = (tally(_trials(baseline), errors), tally(_trials(current), errors))
    old_tally, new_tally = tallied
    baseline_passed, baseline_n = old_tally.passed, old_tally.n
    current_passed, current_n = new_tally.passed, new_tally.n
    rate = None
    if baseline_n and current_n:
        reasons = [
            why
            for why in (
                _adaptive("baseline", baseline, baseline_n, old_tally.runs, recorded or {}),
                _adaptive("current", current, current_n, new_tally.runs, recorded or {}),
            )
            if why is not None
        ]
        if options.anytime:  # one flag for every anytime-valid judgement: intervals and tests
            reasons.append("asked for with --anytime")
        anytime = bool(reasons) or options.regression_test == RegressionTest.ANYTIME
        rate = regression_test(
            baseline_passed,
            baseline_n,
            current_passed,
            current_n,
            test=options.regression_test,
            alpha=options.alpha,
            delta=options.delta,
            power=options.power,
            anytime_reason="; ".join(reasons) if reasons else None,
            # Only the anytime-valid test reads the order (it pairs the trials in it).
            baseline_outcomes=_in_run_order(_trials(baseline), errors) if anytime else None,
            current_outcomes=_in_run_order(_trials(current), errors) if anytime else None,
        )
    scores = None
    if old_tally.scored and new_tally.scored:  # else one side has none: nothing to compare
        old, new = per_trial_scores(_trials(baseline)), per_trial_scores(_trials(current))
        name = primary_score(new)
        if name is not None and name in old:
            a, b = old[name][~np.isnan(old[name])], new[name][~np.isnan(new[name])]
            if a.size and b.size:
                scores = score_regression_test(a, b, alpha=options.alpha)
    return rate, scores
