"""Verdicts that carry the judge's error: each test's pass rate corrected by people's labels.

With ``--labels``, the judge (the ``--pass-when`` rule over an LLM's evaluations, or the harness
that recorded outcomes from one) is measured against people on the labelled trials: its
sensitivity and specificity, pooled over every labelled trial of the analysis — one judge, one
agreement, the same correction for every test and every version it graded. Each test's pass
rate is then the Rogan–Gladen rate with the interval that carries the sampling of both its
trials and the labels (:func:`assay.stats.judges.corrected_rate`); the verdict reads that
interval with the one meaning of PASS / FAIL / INCONCLUSIVE; the judge's own figure stays beside
it, labelled (``judge_error``). Error trials are not graded by the judge: the correction is of
the rate among the other trials, scaled by their observed share when errors count as failures
(docs/statistics.md, "When the judge is wrong").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import polars as pl

from assay.analysis import Grader
from assay.analysis import columns as tc
from assay.choices import IntervalMethod
from assay.judge import _reasons as why
from assay.judge._judge_error_result import (
    JudgeAgreement,
    JudgeError,
    JudgeReport,
    ScoreCorrection,
    SelfAgreement,
)
from assay.judge._regression import RegressionResult, regression_test
from assay.judge._results import TestResult
from assay.judge._sequential import ANYTIME_METHOD
from assay.judge._suite_result import SuiteComparison, SuiteResult
from assay.judge._threshold import Verdict, threshold_verdict
from assay.quality import Finding
from assay.stats import TESTS, Interval, proportion_interval
from assay.stats.judges import (
    Agreement,
    CorrectedRate,
    corrected_mean,
    corrected_rate,
    ppi_mean,
    youden_lower,
)


def agreement_of(labelled: pl.DataFrame, confidence: float) -> Agreement:
    """The 2×2 table of the judge's and people's outcomes of labelled trials (errors apart)."""
    graded = labelled.filter(~pl.col("error"))
    judge, human = graded["judge_passed"], graded["human_passed"]
    return Agreement(
        true_pass=int((judge & human).sum()),
        false_fail=int((~judge & human).sum()),
        false_pass=int((judge & ~human).sum()),
        true_fail=int((~judge & ~human).sum()),
        confidence=confidence,
    )


def judge_report(
    labelled: pl.DataFrame,
    labels: int,
    confidence: float,
    repeats: Sequence[tuple[str, int, int]] = (),
    min_agreement: float | None = None,
    graders: Sequence[Grader] = (),
) -> JudgeReport:
    """The judge's agreement overall and per evaluation, and with itself.

    Args:
        labelled: The labelled trials with both outcomes.
        labels: Labels read.
        confidence: Two-sided confidence of the intervals.
        repeats: Per evaluation ``(name, trials graded more than once, trials flipped)``.
        min_agreement: The kappa the judge must reach (``--min-agreement``), if asked.
        graders: Which judge graded the labelled trials, from its records.
    """
    names = sorted({n for joined in labelled["evaluation"].to_list() for n in joined.split(",")})
    by_evaluation = {
        name: agreement_of(
            labelled.filter(pl.col("evaluation").str.split(",").list.contains(name)), confidence
        )
        for name in names
    }
    overall = JudgeAgreement(agreement_of(labelled, confidence), tuple(names))
    own = tuple(
        SelfAgreement(
            name,
            trials,
            flipped,
            flipped / trials,
            proportion_interval(flipped, trials, confidence, IntervalMethod.CLOPPER_PEARSON),
        )
        for name, trials, flipped in repeats
        if trials
    )
    return JudgeReport(
        overall, by_evaluation, labels, labelled.height, own, min_agreement, tuple(graders)
    )


def agreement_findings(report: JudgeReport) -> list[Finding]:
    """A judge below ``--min-agreement`` (its kappa), as a finding; none when not asked."""
    floor = report.min_agreement
    kappa = report.overall.agreement.kappa
    if floor is None or not kappa.estimate < floor:
        return []
    shown = kappa.interval is not None and kappa.interval.high < floor
    where = (
        "its whole interval lies below it"
        if shown
        else "its interval reaches it, so it may still meet it"
    )
    bounds = f" [{kappa.interval.low:.2f}, {kappa.interval.high:.2f}]" if kappa.interval else ""
    return [
        Finding(
            "judge_below_agreement",
            f"the judge agrees with people below --min-agreement {floor:g}: kappa "
            f"{kappa.estimate:.2f}{bounds} over {report.overall.agreement.labelled} labelled "
            f"trials; {where}",
            report.overall.agreement.labelled,
        )
    ]


def _graded(result: TestResult) -> int:
    """Trials of ``n`` the judge graded: error trials counted in n were not."""
    counted_errors = result.errors if result.n == result.trials else 0
    return result.n - counted_errors


def corrected_result(
    result: TestResult, used: Agreement, test_agreement: Agreement | None
) -> TestResult:
    """The test's result with its verdict read on the corrected rate.

    The judge's rate, interval and verdict move to ``judge_error``; ``pass_rate``, ``interval``
    and ``verdict`` become the corrected ones. With a baseline, the verdict is the worse of the
    corrected threshold verdict and the verdict against the baseline, as without labels.
    """
    if result.interval is None or result.n == 0:
        return result
    graded = _graded(result)
    confidence = result.interval.confidence
    judged_verdict = result.threshold_verdict or result.verdict
    if graded == 0:
        return result
    corrected = corrected_rate(result.passed, graded, used, confidence)
    share = graded / result.n
    low, high = corrected.interval.low * share, corrected.interval.high * share
    if not corrected.identifiable:
        low, high = 0.0, 1.0
    interval = Interval(low, high, confidence, corrected.interval.method)
    threshold = threshold_verdict(interval, result.threshold).verdict
    estimate = corrected.estimate * share if corrected.estimate is not None else None
    judge = JudgeError(
        corrected=corrected,
        judge_rate=result.pass_rate,
        judge_interval=result.interval,
        judge_verdict=judged_verdict,
        used=used,
        test_agreement=test_agreement,
        graded_share=share,
    )
    reason = _reason(threshold, estimate, interval, result, corrected, used)
    verdict = threshold
    regression = result.regression
    notes_regression: list[str] = []
    if regression is not None:
        regression, notes_regression = _attenuated(regression, used)
    if result.threshold_verdict is not None:
        # With a baseline: the worse of the threshold's and the comparison's verdicts.
        against = regression.verdict if regression is not None else threshold
        if result.score_regression is not None and result.score_regression.verdict is Verdict.FAIL:
            against = Verdict.FAIL
        verdict = max(threshold, against, key=_SEVERITY.__getitem__)
        if regression is not None:
            reason += f"; against the baseline: {regression.verdict}"
    notes = [
        f"judge only (uncorrected): {why.rate_text(result.passed, result.n)}, "
        f"{why.ci_text(result.interval)} → {judged_verdict}",
        *(
            f"judge-only interval: {n}" if _about_interval(n) else n
            for n in result.notes
            if "more trials would likely settle" not in n
        ),
        *notes_regression,
    ]
    if result.interval.method == ANYTIME_METHOD:
        # The labels' part has no anytime-valid form here: said, not hidden.
        notes.append(
            "the corrected interval is a fixed-n one: unlike the judge's anytime-valid "
            "interval, it does not keep its error over repeated looks or adaptive stopping"
        )
    return replace(
        result,
        pass_rate=estimate,
        interval=interval,
        verdict=verdict,
        threshold_verdict=threshold if result.threshold_verdict is not None else None,
        verdict_reason=why.with_errors(reason, result.errors),
        more_trials_needed=None,
        min_trials_for_pass=None,
        notes=tuple(notes),
        judge_error=judge,
        regression=regression,
    )


_SEVERITY = {Verdict.PASS: 0, Verdict.INCONCLUSIVE: 1, Verdict.FAIL: 2}


def _attenuated(
    regression: RegressionResult, used: Agreement
) -> tuple[RegressionResult, list[str]]:
    """The regression verdict when a judge graded both versions.

    The judge shows a true drop d as d·(Se + Sp − 1): a drop it finds is a true drop (FAIL
    stands, one judge, Se + Sp > 1), but "no drop, and power to see delta" must hold for the
    true delta, so the power is taken again at delta times the Youden index's lower bound.
    """
    youden = youden_lower(used, 1 - regression.alpha)
    if regression.verdict is not Verdict.PASS:
        return regression, []
    if youden is None or youden <= 0:
        note = (
            "against the baseline: PASS needs power to see a true drop of "
            f"{why.pct(regression.delta, 0)}, which the judge may not show at all (its "
            "sensitivity + specificity is not shown to exceed 1): INCONCLUSIVE"
        )
        return replace(regression, verdict=Verdict.INCONCLUSIVE), [note]
    if regression.anytime_reason is not None or regression.test not in TESTS:
        return regression, [
            "against the baseline: the judge shows a true drop shrunk by its sensitivity + "
            f"specificity − 1 (at least {youden:.2f}); the anytime test's power was not taken "
            "again at that smaller drop"
        ]
    shrunk = regression.delta * youden
    again = regression_test(
        regression.baseline_passed,
        regression.baseline_n,
        regression.current_passed,
        regression.current_n,
        regression.test,
        regression.alpha,
        shrunk,
        regression.required_power,
    )
    verdict = Verdict.PASS if again.power >= regression.required_power else Verdict.INCONCLUSIVE
    note = (
        f"against the baseline: a true drop of {why.pct(regression.delta, 0)} shows in the "
        f"judge's rates as at least {why.pct(shrunk)} (sensitivity + specificity − 1 ≥ "
        f"{youden:.2f}); power to see that: {why.pct(again.power, 0)} → {verdict}"
    )
    return replace(regression, verdict=verdict, power=again.power), [note]


def _about_interval(note: str) -> bool:
    """A remark on the judge's own interval (its method, a PASS it cannot reach)."""
    return "Clopper–Pearson's" in note or "is impossible" in note


def _reason(
    verdict: Verdict,
    estimate: float | None,
    interval: Interval,
    result: TestResult,
    corrected: CorrectedRate,
    used: Agreement,
) -> str:
    labels = corrected_labels(corrected, used)
    if not corrected.identifiable:
        return f"the true rate cannot be recovered from the judge's: {corrected.reason} ({labels})"
    where = {
        Verdict.FAIL: "lies wholly below",
        Verdict.PASS: "lies at or above",
        Verdict.INCONCLUSIVE: "straddles",
    }[verdict]
    return (
        f"corrected for the judge's error ({labels}): {why.pct(estimate)}, "
        f"{why.ci_text(interval)} {where} the threshold {why.pct(result.threshold, 0)}"
    )


def corrected_labels(corrected: CorrectedRate, used: Agreement) -> str:
    """``200 labels: sensitivity 95.0%, specificity 70.0%``: what backs a corrected figure."""
    return (
        f"{used.labelled} labelled trial{'s' if used.labelled != 1 else ''}: sensitivity "
        f"{why.pct(used.sensitivity)}, specificity {why.pct(used.specificity)}"
    )


def agreement_text(report: JudgeReport) -> str:
    """One line on the judge against people, for the analysis's notes."""
    a = report.overall.agreement
    kappa = a.kappa

    def ci(interval: Interval | None) -> str:
        return f" [{why.pct(interval.low)}, {why.pct(interval.high)}]" if interval else ""

    k = "—" if kappa.interval is None else f"{kappa.estimate:.2f}"
    k_ci = f" [{kappa.interval.low:.2f}, {kappa.interval.high:.2f}]" if kappa.interval else ""
    names = ", ".join(report.overall.evaluations) or "no evaluation"
    named = [g for g in report.graders if g.model or g.prompt_version]
    if named:
        shown = "; ".join(
            f"{g.evaluation} by {g.model or 'an unnamed model'}"
            + (f" (prompt {g.prompt_version})" if g.prompt_version else "")
            for g in named[:3]
        )
        names += f"; graded {shown}"
    return (
        f"the judge against people ({names}; {a.labelled} labelled trials of "
        f"{report.labels} labels): sensitivity {why.pct(a.sensitivity)}"
        f"{ci(a.sensitivity_interval)}, specificity {why.pct(a.specificity)}"
        f"{ci(a.specificity_interval)}, kappa {k}{k_ci} ({100 * a.confidence:g}% CIs)"
        + "".join(
            f"; graded {own.trials} trials of {own.evaluation} more than once, flipped on "
            f"{why.pct(own.flip_rate)}{ci(own.interval)}"
            for own in report.self_agreement
        )
    )


def with_judge_error(
    tests: Sequence[TestResult],
    labelled: pl.DataFrame,
    used: Agreement,
    trials: pl.DataFrame | None = None,
    scores: pl.DataFrame | None = None,
) -> tuple[TestResult, ...]:
    """Every test's result corrected with the pooled agreement ``used``.

    Without a labelled pass/fail (``used`` empty: people only scored) the pass rates stay the
    judge's; with ``scores`` (people's scores) and the ``trials`` table, each test's judged
    scores are corrected too (:func:`score_corrections`).
    """
    out = []
    for result in tests:
        confidence = result.interval.confidence if result.interval is not None else 0.95
        if used.labelled:
            own = labelled.filter(pl.col("test_id") == result.test_id)
            mine = agreement_of(own, confidence) if own.height else None
            result = corrected_result(result, replace(used, confidence=confidence), mine)
        if scores is not None and trials is not None:
            mine_scores = scores.filter(pl.col("test_id") == result.test_id)
            if mine_scores.height:
                test_trials = trials.filter(pl.col(tc.TEST_ID) == result.test_id)
                corrected = score_corrections(test_trials, mine_scores, confidence)
                result = replace(result, judge_scores=corrected)
        out.append(result)
    return tuple(out)


def score_corrections(
    trials: pl.DataFrame, scores: pl.DataFrame, confidence: float
) -> tuple[ScoreCorrection, ...]:
    """A test's judged scores corrected by people's scores of some of its trials (PPI++).

    The judge's score of a trial is its last record of the evaluation (as ``--pass-when``
    reads it); trials without one are left out. An evaluation with fewer than two trials
    scored by both, or none scored by the judge alone, is not corrected.
    """
    judged = (
        trials.select("trace_id", pl.col(tc.SPAN_ID).alias("span_id"), tc.SCORES)
        .explode(tc.SCORES)
        .drop_nulls(tc.SCORES)
        .select(
            "trace_id",
            "span_id",
            pl.col(tc.SCORES).struct.field("name").alias("evaluation"),
            pl.col(tc.SCORES).struct.field("value").alias("judge_score"),
        )
        .group_by("trace_id", "span_id", "evaluation", maintain_order=True)
        .last()
    )
    out = []
    for name in sorted(set(scores["evaluation"].to_list())):
        mine = judged.filter(pl.col("evaluation") == name)
        people = scores.filter(pl.col("evaluation") == name).select(
            "trace_id", "span_id", "human_score"
        )
        paired = mine.join(people, on=["trace_id", "span_id"], how="inner")
        alone = mine.join(people, on=["trace_id", "span_id"], how="anti")
        if paired.height < 2 or alone.height < 1:
            continue
        mean = ppi_mean(
            paired["human_score"].to_numpy(),
            paired["judge_score"].to_numpy(),
            alone["judge_score"].to_numpy(),
            confidence,
        )
        out.append(ScoreCorrection(name, mean))
    return tuple(out)


def corrected_suites(
    suites: Sequence[SuiteResult], tests: Sequence[TestResult], used: Agreement
) -> tuple[SuiteResult, ...]:
    """Each suite's mean pass rate over cases corrected for the judge's error.

    The judge's rate is linear in the true one, so the suite's mean over cases is corrected as
    one rate (:func:`assay.stats.judges.corrected_mean`), its cluster-robust interval the first
    piece of the MOVER inversion; the verdict reads the corrected interval. A suite whose
    cases hold error trials counted as failures keeps the judge's figures (the correction is of
    graded trials), and says so.
    """
    by_id = {t.test_id: t for t in tests}
    out = []
    for suite in suites:
        if suite.comparison is not None:
            suite = judged_comparison(suite, used)
        if suite.interval is None or suite.pass_rate is None:
            out.append(suite)
            continue
        cases = [by_id[c] for c in suite.case_ids if c in by_id]
        if any(t.errors and t.n == t.trials for t in cases):
            note = (
                "not corrected for the judge's error: its cases hold error trials counted as "
                "failures, which the judge did not grade (the cases' verdicts are corrected)"
            )
            out.append(replace(suite, notes=(*suite.notes, note)))
            continue
        estimate, interval, identifiable = corrected_mean(
            suite.pass_rate, suite.interval, replace(used, confidence=suite.interval.confidence)
        )
        verdict = threshold_verdict(interval, suite.threshold).verdict
        judge_only = (
            f"judge only (uncorrected): {why.pct(suite.pass_rate)}, {why.ci_text(suite.interval)} "
            f"→ {suite.verdict}"
        )
        if identifiable:
            where = {
                Verdict.FAIL: "lies wholly below",
                Verdict.PASS: "lies at or above",
                Verdict.INCONCLUSIVE: "straddles",
            }[verdict]
            reason = (
                f"mean over cases corrected for the judge's error ({used.labelled} labelled "
                f"trials): {why.pct(estimate)}, {why.ci_text(interval)} {where} the threshold "
                f"{why.pct(suite.threshold, 0)}"
            )
        else:
            reason = (
                "the true mean cannot be recovered from the judge's: its sensitivity + "
                f"specificity is not shown to exceed 1 with {used.labelled} labels"
            )
        out.append(
            replace(
                suite,
                pass_rate=estimate,
                interval=interval,
                verdict=verdict,
                reason=reason,
                notes=(*suite.notes, judge_only),
            )
        )
    return tuple(out)


def judged_comparison(suite: SuiteResult, used: Agreement) -> SuiteResult:
    """The suite comparison's PASS when one judge graded both versions.

    The judge shows a true drop d as d·(Se + Sp − 1), so a drop it shows is a true drop (FAIL
    stands) but a PASS must hold for the true drop: without a margin, the comparison must
    detect a drop of delta times the lower bound J of Se + Sp − 1 (its smallest detectable
    drop at most delta·J); with a margin M, the drop's upper bound must lie below M·J. J is a
    one-sided 1 − alpha bound, so such a PASS rests on two bounds, each at level alpha: its
    error is at most 2·alpha, and the note says so.
    """
    comparison = suite.comparison
    if comparison is None or comparison.verdict is not Verdict.PASS or comparison.paired is None:
        return suite
    paired = comparison.paired
    youden = youden_lower(used, 1 - paired.alpha)
    if youden is None or youden <= 0:
        note = (
            "against the baseline: the judge may not show a true drop at all (its sensitivity "
            "+ specificity is not shown to exceed 1), so no PASS: INCONCLUSIVE"
        )
        return _with_comparison(suite, replace(comparison, verdict=Verdict.INCONCLUSIVE), note)
    both = f"sensitivity + specificity − 1 ≥ {youden:.2f} at {100 * (1 - paired.alpha):g}%"
    if comparison.margin is not None:
        limit = comparison.margin * youden
        holds = paired.drop_upper < limit
        note = (
            f"against the baseline: a true drop of {why.pct(comparison.margin)} shows in the "
            f"judge's rates as at least {why.pct(limit)} ({both}); the drop's upper bound "
            f"{why.pct(paired.drop_upper)} {'lies below' if holds else 'does not lie below'} it"
        )
    else:
        shrunk = comparison.delta * youden
        detectable = paired.min_detectable_drop
        holds = detectable is not None and detectable <= shrunk
        shown = why.pct(detectable) if detectable is not None else "none"
        note = (
            f"against the baseline: a true drop of {why.pct(comparison.delta, 0)} shows in the "
            f"judge's rates as at least {why.pct(shrunk)} ({both}); the smallest drop the "
            f"comparison detects with power {paired.required_power:g} is {shown}"
        )
    verdict = Verdict.PASS if holds else Verdict.INCONCLUSIVE
    note += f" → {verdict} (two bounds, each at level {paired.alpha:g}: error at most "
    note += f"{2 * paired.alpha:g})"
    return _with_comparison(suite, replace(comparison, verdict=verdict), note)


def _with_comparison(suite: SuiteResult, comparison: SuiteComparison, note: str) -> SuiteResult:
    reason = f"{comparison.reason}; {note}"
    return replace(suite, comparison=replace(comparison, reason=reason))
