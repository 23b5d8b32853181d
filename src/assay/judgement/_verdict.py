"""One test's verdict: the sequential test replayed, else the interval against the threshold.

Then the variance limits (mean score, score std), each of which can turn the verdict into FAIL.
This is the one place a test is judged: ``assay analyze``, ``assay compare``, ``assay run`` and
the pytest plugin all come here.
"""

from __future__ import annotations

import polars as pl

from assay.analysis import columns as tc
from assay.judgement import _reasons as why
from assay.judgement._figures import Figures, test_figures
from assay.judgement._options import AnalyzeOptions
from assay.stats import SequentialDecision
from assay.verdict import (
    Judgement,
    SequentialDesign,
    SequentialOutcome,
    SequentialTracker,
    TestResult,
    VarianceCheck,
    Verdict,
    threshold_test,
    variance_checks,
)


def replay(
    trials: pl.DataFrame, design: SequentialDesign, exclude_errors: bool
) -> SequentialOutcome:
    """Feed the trials to the design's sequential test in trial-index order, as the run did."""
    tracker = SequentialTracker(design.build(), exclude_errors=exclude_errors)
    ordered = trials.sort(tc.TRIAL_INDEX, nulls_last=True)
    for passed, error in zip(
        ordered[tc.PASSED].to_list(), ordered[tc.ERROR].to_list(), strict=True
    ):
        tracker.feed(bool(passed), bool(error))
    low, high = (tracker.last.low, tracker.last.high) if tracker.last else (0.0, 1.0)
    verdict = {
        SequentialDecision.PASS: Verdict.PASS,
        SequentialDecision.FAIL: Verdict.FAIL,
    }.get(tracker.decision or SequentialDecision.CONTINUE, Verdict.INCONCLUSIVE)
    decided_at = tracker.decided_at if verdict is not Verdict.INCONCLUSIVE else None
    return SequentialOutcome(design, verdict, decided_at, tracker.fed, low, high)


def judge_test(
    test_id: str,
    trials: pl.DataFrame,
    judgement: Judgement,
    options: AnalyzeOptions,
    *,
    sequential: SequentialOutcome | None = None,
    notes: tuple[str, ...] = (),
) -> TestResult:
    """Every figure of one test and its verdict.

    Args:
        test_id: The test case.
        trials: Its rows of the trials table.
        judgement: Threshold, confidence, error policy and variance limits to judge with.
        options: The rest of the analysis options (interval method, ks, ...).
        sequential: The replayed sequential test, when it decides the verdict.
        notes: Remarks to keep with the result (e.g. an option that overrode the recording).
    """
    exclude = judgement.errors == "exclude"
    counted = trials.filter(~pl.col(tc.ERROR)) if exclude else trials
    n, passed = counted.height, int(counted[tc.PASSED].sum())
    errors = int(trials[tc.ERROR].sum())
    figures = test_figures(
        trials,
        counted,
        confidence=judgement.confidence,
        ks=options.ks,
        score_ci=options.score_ci,
        seed=options.seed,
        alpha=options.alpha,
    )
    remarks = [*notes, *figures.notes]
    interval, verdict, more_trials, min_for_pass = None, Verdict.INCONCLUSIVE, None, None
    checks: tuple[VarianceCheck, ...] = ()
    if n == 0:
        reason = "no trials left to judge: every trial was an error and errors are excluded"
    else:
        decided = threshold_test(
            passed, n, judgement.threshold, judgement.confidence, options.ci_method
        )
        interval, min_for_pass = decided.interval, decided.min_trials_for_pass
        if decided.note:
            remarks.append(decided.note)
        if sequential is not None:
            verdict = sequential.verdict
            reason = why.sequential_reason(
                sequential.design, verdict, sequential.decided_at, sequential.trials
            )
        else:
            verdict = decided.verdict
            reason = why.threshold_reason(verdict, passed, n, interval, judgement.threshold)
            more_trials = decided.more_trials_needed
            if verdict is Verdict.INCONCLUSIVE and more_trials is not None:
                remarks.append(
                    f"about {more_trials} more trials would likely settle it "
                    f"(if the true rate is the observed {passed / n:.1%})"
                )
        checks = _variance(judgement, passed / n, figures)
        for check in checks:
            if not check.passed:
                verdict = Verdict.FAIL
                reason += f"; {check.reason}"
    return TestResult(
        test_id=test_id,
        n=n,
        passed=passed,
        errors=errors,
        pass_rate=passed / n if n else None,
        interval=interval,
        threshold=judgement.threshold,
        verdict=verdict,
        usage=figures.usage,
        duration_s=figures.duration_s,
        verdict_reason=why.with_errors(reason, errors),
        trials=trials.height,
        pass_at_k=figures.pass_at_k,
        pass_hat_k=figures.pass_hat_k,
        score=figures.score,
        primary_score=figures.primary_score,
        scores=figures.scores,
        tool_consistency=figures.tool_consistency,
        flakiness=figures.flakiness,
        failure_explanations=figures.failure_explanations,
        variance_checks=checks,
        more_trials_needed=more_trials,
        min_trials_for_pass=min_for_pass,
        sequential=sequential,
        first_error=figures.first_error,
        notes=tuple(remarks),
    )


def _variance(
    judgement: Judgement, pass_rate: float, figures: Figures
) -> tuple[VarianceCheck, ...]:
    """The configured variance limits, checked on the primary score."""
    if judgement.min_mean_score is None and judgement.max_std_dev is None:
        return ()
    score = figures.score
    return tuple(
        variance_checks(
            pass_rate,
            score.mean if score else None,
            score.std if score else None,
            min_mean_score=judgement.min_mean_score,
            max_std_dev=judgement.max_std_dev,
        )
    )
