"""A test judged as a regression check: did the current trials get worse than the baseline?"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import polars as pl

from assay.analysis import columns as tc
from assay.judgement._figures import per_trial_scores, primary_score
from assay.judgement._options import AnalyzeOptions
from assay.judgement._reasons import regression_reason, with_errors
from assay.verdict import (
    RegressionResult,
    ScoreRegressionResult,
    TestResult,
    Verdict,
    regression_test,
    score_regression_test,
)


def regression_result(
    baseline: pl.DataFrame, current: pl.DataFrame, options: AnalyzeOptions, errors: str
) -> tuple[RegressionResult | None, ScoreRegressionResult | None]:
    """The regression verdicts of one test (current worse than baseline)."""

    def counts(trials: pl.DataFrame) -> tuple[int, int]:
        kept = trials.filter(~pl.col(tc.ERROR)) if errors == "exclude" else trials
        return int(kept[tc.PASSED].sum()), kept.height

    baseline_passed, baseline_n = counts(baseline)
    current_passed, current_n = counts(current)
    rate = None
    if baseline_n and current_n:
        rate = regression_test(
            baseline_passed,
            baseline_n,
            current_passed,
            current_n,
            test=options.regression_test,
            alpha=options.alpha,
            delta=options.delta,
            power=options.power,
        )
    scores = None
    old, new = per_trial_scores(baseline), per_trial_scores(current)
    name = primary_score(new)
    if name is not None and name in old:
        a, b = old[name][~np.isnan(old[name])], new[name][~np.isnan(new[name])]
        if a.size and b.size:
            scores = score_regression_test(a, b, alpha=options.alpha)
    return rate, scores


def with_regression(
    result: TestResult,
    regression: RegressionResult | None,
    score_regression: ScoreRegressionResult | None,
) -> TestResult:
    """The test's result judged as a regression check.

    With a baseline the question is "did it get worse?", so the test's verdict becomes the
    regression verdict (a score regression FAIL fails it too); the threshold verdict is kept
    in ``threshold_verdict``.
    """
    if regression is None:
        return result
    verdict = regression.verdict
    notes = list(result.notes)
    if score_regression is not None and score_regression.verdict is Verdict.FAIL:
        verdict = Verdict.FAIL
        notes.append(
            f"scores dropped: one-sided Mann–Whitney p = {score_regression.shift.p_value:.3g}"
        )
    judged = replace(
        result,
        verdict=verdict,
        regression=regression,
        score_regression=score_regression,
        threshold_verdict=result.verdict,
        notes=tuple(notes),
    )
    return replace(
        judged, verdict_reason=with_errors(regression_reason(judged, regression), result.errors)
    )
