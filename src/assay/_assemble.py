"""Every figure of one test, from its rows of the trials table.

The bridge from the Polars tables of ``assay.analysis`` to the pure functions of
``assay.stats`` and ``assay.verdict``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import polars as pl

from assay._options import AnalyzeOptions
from assay.analysis import columns as tc
from assay.analysis._features import trial_features
from assay.stats import (
    explain_failures,
    flakiness,
    pass_at_ks,
    pass_hat_ks,
    score_summary,
    tool_consistency,
)
from assay.verdict import (
    BehaviourResult,
    DurationSummary,
    FailOn,
    RegressionResult,
    ScoreRegressionResult,
    TestResult,
    Usage,
    Verdict,
    gate_failures,
    regression_test,
    score_regression_test,
    threshold_test,
    variance_checks,
)


def per_trial_scores(trials: pl.DataFrame) -> dict[str, np.ndarray]:
    """Score name → one value per trial (the mean of the trial's values; NaN where absent)."""
    rows = (
        trials.select(tc.SCORES)
        .with_row_index("_trial")
        .explode(tc.SCORES)
        .unnest(tc.SCORES)
        .drop_nulls("name")
    )
    if rows.height == 0:
        return {}
    means = rows.group_by("_trial", "name").agg(pl.col("value").mean())
    out: dict[str, np.ndarray] = {}
    for (name,), group in means.group_by("name", maintain_order=True):
        values = np.full(trials.height, np.nan)
        values[group["_trial"].to_numpy()] = group["value"].to_numpy()
        out[str(name)] = values
    return dict(sorted(out.items()))


def primary_score(scores: dict[str, np.ndarray]) -> str | None:
    """The score reported as ``score``: the one recorded in most trials (ties: by name)."""
    if not scores:
        return None
    return max(sorted(scores), key=lambda name: int(np.sum(~np.isnan(scores[name]))))


def _k_values(results: dict[int, Any], label: str, notes: list[str]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for k, result in results.items():
        out[str(k)] = result.value
        if result.value is None and result.reason:
            notes.append(f"{label}@{k} not reported: {result.reason}")
    return out


def test_result(test_id: str, trials: pl.DataFrame, options: AnalyzeOptions) -> TestResult:
    """Every figure of one test, and its threshold verdict."""
    errors = trials[tc.ERROR].to_numpy()
    counted = trials.filter(~pl.col(tc.ERROR)) if options.errors == "exclude" else trials
    n = counted.height
    passed = int(counted[tc.PASSED].sum())
    durations = trials[tc.DURATION_S].drop_nulls().to_numpy()
    usage = Usage(
        llm_calls=int(trials[tc.LLM_CALLS].sum()),
        input_tokens=int(trials[tc.INPUT_TOKENS].sum()),
        output_tokens=int(trials[tc.OUTPUT_TOKENS].sum()),
    )
    duration = DurationSummary.of(durations)
    if n == 0:
        return TestResult(
            test_id=test_id,
            n=0,
            passed=0,
            errors=int(errors.sum()),
            pass_rate=None,
            interval=None,
            threshold=options.threshold,
            verdict=Verdict.INCONCLUSIVE,
            usage=usage,
            duration_s=duration,
            notes=("no trials left to judge: every trial was an error and errors are excluded",),
        )
    notes: list[str] = []
    decided = threshold_test(passed, n, options.threshold, options.confidence, options.ci_method)
    if decided.note:
        notes.append(decided.note)
    if decided.verdict is Verdict.INCONCLUSIVE and decided.more_trials_needed is not None:
        notes.append(
            f"about {decided.more_trials_needed} more trials would likely settle it "
            f"(if the true rate is the observed {passed / n:.1%})"
        )
    extra: dict[str, Any] = {
        "more_trials_needed": decided.more_trials_needed,
        "min_trials_for_pass": decided.min_trials_for_pass,
    }
    verdict = decided.verdict

    scores = per_trial_scores(trials)
    counted_scores = scores if counted is trials else per_trial_scores(counted)
    primary = primary_score(counted_scores)
    summaries = {
        name: score_summary(
            values[~np.isnan(values)], options.confidence, ci=options.score_ci, seed=options.seed
        )
        for name, values in counted_scores.items()
        if np.any(~np.isnan(values))
    }
    if summaries:
        extra["scores"] = summaries
        extra["primary_score"] = primary
    summary = summaries.get(primary) if primary is not None else None
    if options.min_mean_score is not None or options.max_std_dev is not None:
        checks = variance_checks(
            passed / n,
            summary.mean if summary else None,
            summary.std if summary else None,
            min_mean_score=options.min_mean_score,
            max_std_dev=options.max_std_dev,
        )
        extra["variance_checks"] = checks
        for check in checks:
            if not check.passed:
                notes.append(check.reason)
                verdict = Verdict.FAIL

    sequences = [tuple(s) for s in trials[tc.TOOL_SEQUENCE].to_list()]
    consistency = tool_consistency(sequences) if len(sequences) >= 2 else None
    primary_values = scores.get(primary) if primary is not None else None
    flaky = flakiness(
        trials[tc.PASSED].to_numpy(),
        errors=errors,
        scores=primary_values,
        tool_sequences=sequences,
        step_counts=trials[tc.TOOL_CALLS].to_numpy(),
        latencies=trials[tc.DURATION_S].to_numpy(),
    )
    ok = counted[tc.PASSED].to_numpy()
    if 0 < ok.sum() < ok.size:
        features = trial_features(counted)
        extra["failure_explanations"] = explain_failures(
            ok,
            {f.name: f.values for f in features},
            kinds={f.name: f.kind for f in features},
            labels={f.name: f.label for f in features},
            alpha=options.alpha,
        )
    return TestResult(
        test_id=test_id,
        n=n,
        passed=passed,
        errors=int(errors.sum()),
        pass_rate=passed / n,
        interval=decided.interval,
        threshold=options.threshold,
        verdict=verdict,
        usage=usage,
        duration_s=duration,
        pass_at_k=_k_values(pass_at_ks(n, passed, options.ks), "pass", notes),
        pass_hat_k=_k_values(pass_hat_ks(n, passed, options.ks), "pass^", notes),
        score=summary,
        tool_consistency=consistency,
        flakiness=flaky,
        notes=tuple(notes),
        extra=extra,
    )


def regression_result(
    baseline: pl.DataFrame, current: pl.DataFrame, options: AnalyzeOptions
) -> tuple[RegressionResult | None, ScoreRegressionResult | None]:
    """The regression verdicts of one test (current worse than baseline)."""

    def counts(trials: pl.DataFrame) -> tuple[int, int]:
        kept = trials.filter(~pl.col(tc.ERROR)) if options.errors == "exclude" else trials
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
    in ``extra["threshold_verdict"]``.
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
    extra = {
        **result.extra,
        "threshold_verdict": result.verdict,
        "score_regression": score_regression,
    }
    return replace(result, verdict=verdict, regression=regression, notes=tuple(notes), extra=extra)


def with_behaviour(
    result: TestResult, behaviour: BehaviourResult, rules: Sequence[FailOn]
) -> TestResult:
    """The test's result with its behaviour diff; a FAIL when a ``--fail-on`` rule is broken.

    Behaviour changes inform by default; only the user's rules make them decide the verdict.
    """
    broken = gate_failures(behaviour, rules)
    if not broken:
        return replace(result, behaviour=behaviour)
    extra = {**result.extra, "behaviour_gate": list(broken)}
    return replace(result, verdict=Verdict.FAIL, behaviour=behaviour, extra=extra)
