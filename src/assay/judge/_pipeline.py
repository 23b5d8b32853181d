"""The one per-test pipeline: trials → judgement → figures → verdicts → typed results.

``assay analyze``, ``assay compare``, ``assay run`` (on the traces it has just written) and the
pytest plugin all judge their trials here, so that they agree test by test. Per test: the
judgement its trials record, overridden by options (:mod:`._recorded`); every figure
(:mod:`._all_figures`); the interval against the threshold (:mod:`._threshold`) — after adaptive
stopping the anytime-valid one, with the stopping rule replayed to say when it stopped
(:mod:`._sequential`); the variance limits (:mod:`._variance`); with a
baseline, the regression verdict (:mod:`._regression`) and the behaviour diff
(:mod:`._behaviour`, gated by ``--fail-on`` rules, :mod:`._gate`), once the suites are known:
a case of a compared suite is diffed as one of its cases (:mod:`._behaviour_scope`).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from functools import partial

import numpy as np
import polars as pl

from assay.analysis import columns as tc
from assay.choices import Adjustment
from assay.judge import _reasons as why
from assay.judge._all_figures import TestRows, figures_by_test, range_sums
from assay.judge._behaviour_result import BehaviourResult
from assay.judge._behaviour_scope import case_behaviours
from assay.judge._collector import collector_paused
from assay.judge._cost import CostSummary, cost_summaries
from assay.judge._exit import compared_suites, exit_adjustment, suite_adjusted_p
from assay.judge._figures import Figures
from assay.judge._gate import FailOn, gate_failures, parse_fail_on
from assay.judge._options import AnalyzeOptions
from assay.judge._recorded import Judgement, Resolved, resolve
from assay.judge._regression import (
    RegressionResult,
    ScoreRegressionResult,
    Tally,
    adjust_regressions,
    regression_result,
    tallies,
)
from assay.judge._results import TestResult
from assay.judge._sequential import ANYTIME_METHOD, SequentialOutcome, anytime_interval, replay
from assay.judge._sources import Share, shares_by_test
from assay.judge._suite import conflict_note, excluded_errors, suite_conflicts, suite_results
from assay.judge._suite_result import SuiteResult
from assay.judge._threshold import (
    Verdict,
    follow_up_advice,
    follow_up_trials_needed,
    threshold_test,
    threshold_verdict,
)
from assay.judge._variance import VarianceCheck, variance_checks
from assay.stats import Interval, IntervalMethod, false_verdict_risk, simultaneous_confidence


def by_test(trials: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """The trials of each test, by test id (sorted).

    The trials table comes sorted by test, so each test is a slice of it (no copy); a table in
    another order is grouped.
    """
    table, rows = _rows_by_test(trials)
    return {name: table.slice(start, stop - start) for name, (start, stop) in rows.items()}


def _rows_by_test(trials: pl.DataFrame) -> tuple[pl.DataFrame, dict[str, tuple[int, int]]]:
    """A table holding each test's trials as one range of rows, and each test's range.

    The table is ``trials`` itself when it comes sorted by test (as the trials table does);
    else the tests' groups, by test id, one after the other.
    """
    tests = trials[tc.TEST_ID]
    if tests.null_count() == 0 and tests.is_sorted():
        runs = tests.rle()
        lengths = runs.struct.field("len").to_list()
        names = runs.struct.field("value").to_list()
        starts = [0, *itertools.accumulate(lengths)]
        return trials, {str(n): (a, a + k) for n, a, k in zip(names, starts, lengths, strict=False)}
    groups = {str(k[0]): f for k, f in trials.group_by(tc.TEST_ID, maintain_order=True)}
    ordered = dict(sorted(groups.items()))
    starts = [0, *itertools.accumulate(f.height for f in ordered.values())]
    table = pl.concat(list(ordered.values())) if ordered else trials.clear()
    return table, {name: (a, b) for name, a, b in zip(ordered, starts, starts[1:], strict=False)}


def _counts(table: pl.DataFrame, tests: list[TestRows]) -> list[_Counts]:
    """Each test's counts, read from the table once (a null flag reads as False, as there)."""
    passed = np.asarray(table[tc.PASSED].to_numpy(), dtype=bool)
    error = np.asarray(table[tc.ERROR].to_numpy(), dtype=bool)
    ranges = [(t.start, t.stop) for t in tests]
    passing, failing = range_sums(passed, ranges), range_sums(error, ranges)
    clean = range_sums(passed & ~error, ranges)
    out = []
    for t, p, e, c in zip(tests, passing, failing, clean, strict=True):
        size = t.stop - t.start
        out.append(_Counts(size - e, c, e, size) if t.exclude_errors else _Counts(size, p, e, size))
    return out


def _suite_confidence(confidence: float, options: AnalyzeOptions, tests: int) -> float:
    # Holm and BH have no interval form: the intervals use the Bonferroni level, which keeps
    # the chance of any false threshold verdict at 1 - confidence.
    if options.adjust != Adjustment.NONE and tests > 1:
        return simultaneous_confidence(confidence, tests)
    return confidence


def _level_text(level: float) -> str:
    """A confidence level in six significant digits, more where they would round it to 1.

    Four significant digits printed 1 - 0.05/2,000 as "1": a certainty nobody has.
    """
    for digits in range(6, 16):
        text = f"{level:.{digits}g}"
        if float(text) < 1 or level >= 1:
            return text
    return repr(level)


def _suite_notes(options: AnalyzeOptions, results: tuple[TestResult, ...]) -> list[str]:
    tests = len(results)
    levels = sorted({t.interval.confidence for t in results if t.interval is not None})
    if options.adjust != Adjustment.NONE and tests > 1 and levels:
        shown = ", ".join(_level_text(level) for level in levels)
        note = (
            f"intervals at {shown} confidence each (Bonferroni over {tests} tests), so all hold "
            "together at the confidence asked for"
        )
        if options.adjust == Adjustment.BH:
            # BH controls the share of false discoveries among p-values; the intervals do more.
            note += (
                ": for the threshold verdicts that is family-wise error control, stricter than "
                "the false-discovery rate --adjust bh keeps for regression p-values (no "
                "false-coverage-rate intervals are used)"
            )
        return [note]
    if tests >= 10:
        confidence = levels[0] if levels else 0.95
        return [false_verdict_risk(tests, 1 - confidence, Adjustment.NONE).note]
    return []


def judge(
    trials: pl.DataFrame,
    options: AnalyzeOptions,
    *,
    recorded: Mapping[str, Judgement] | None = None,
    baseline: pl.DataFrame | None = None,
) -> tuple[tuple[TestResult, ...], list[str]]:
    """Judge every test of a trials table.

    Args:
        trials: The trials table (of the version under test).
        options: The analysis options; a verdict option that is None means "as recorded".
        recorded: Trial span id → the judgement recorded on it (see ``read_judgements``).
        baseline: The baseline's trials: the verdicts become regression verdicts.

    Returns:
        One result per test, by test id, and notes about the whole analysis.
    """
    judged = judge_all(trials, options, recorded=recorded, baseline=baseline, suites=False)
    return judged.tests, judged.notes


@dataclass(frozen=True, slots=True)
class Judged:
    """Every verdict of an analysis: per case, per suite, and the notes on the whole."""

    tests: tuple[TestResult, ...]
    """One result per test case, by id."""
    suites: tuple[SuiteResult, ...]
    """One result per suite (``assay.suite``; the set's own suite last)."""
    notes: list[str]
    """Remarks about the whole analysis."""


def judge_all(
    trials: pl.DataFrame,
    options: AnalyzeOptions,
    *,
    recorded: Mapping[str, Judgement] | None = None,
    baseline: pl.DataFrame | None = None,
    suites: bool = True,
) -> Judged:
    """Judge every test of a trials table, and every suite over its cases.

    Args:
        trials: The trials table (of the version under test).
        options: The analysis options; a verdict option that is None means "as recorded".
        recorded: Trial span id → the judgement recorded on it (see ``read_judgements``).
        baseline: The baseline's trials: the verdicts become regression verdicts, and each
            suite gains its paired comparison.
        suites: Judge the suites too (:mod:`._suite`).

    Returns:
        The per-case results, the suites' results and the notes.
    """
    # Thousands of tests make hundreds of thousands of long-lived objects: the collector's
    # full passes over them (a second of a 5,000-test analysis) find no garbage here.
    with collector_paused():
        tests, notes, errors, pairs = _judge(trials, options, recorded=recorded, baseline=baseline)
        judged_suites: tuple[SuiteResult, ...] = ()
        if suites and tests:
            adaptive = frozenset(
                t.test_id
                for t in tests
                if t.interval is not None and t.interval.method == ANYTIME_METHOD
            )
            judged_suites = suite_results(
                tests,
                trials,
                options,
                excluded=excluded_errors(errors),
                baseline=baseline,
                adaptive=adaptive,
            )
        if pairs is not None:
            # After the suites: a case in a compared suite is diffed as one of its cases.
            tests, scope_notes = _with_behaviours(tests, pairs, options, judged_suites)
            notes += scope_notes
        if judged_suites:
            conflicts = suite_conflicts(trials, baseline)
            if conflicts:  # never merged in silence: named on the whole and on each case
                notes.append(conflict_note(conflicts))
                tests = tuple(
                    replace(t, notes=(*t.notes, _conflict(conflicts[t.test_id])))
                    if t.test_id in conflicts
                    else t
                    for t in tests
                )
            tests, notes = _at_suite_scale(tests, judged_suites, notes, options)
        return Judged(tests, judged_suites, notes)


def _at_suite_scale(
    tests: tuple[TestResult, ...],
    suites: tuple[SuiteResult, ...],
    notes: list[str],
    options: AnalyzeOptions,
) -> tuple[tuple[TestResult, ...], list[str]]:
    """With a suite comparison deciding (docs/cli.md), no per-case advice to run more trials.

    The suite's answer is the one asked for; the decision says once what the per-case tests can
    and cannot detect (:class:`Decision`). The note counting expected false per-case FAILs goes
    too: the exit code counts a case's drop only adjusted across the suite.
    """
    compared = {case for s in compared_suites(suites) for case in s.case_ids}
    if not compared:
        return tests, notes
    # Without --adjust, the only note _suite_notes writes is that count of false FAILs.
    counted = set(_suite_notes(options, tests)) if options.adjust == Adjustment.NONE else set()
    kept = [note for note in notes if note not in counted]
    by_id = {t.test_id: t for t in tests}
    method = exit_adjustment(options.adjust)
    adjusted: dict[str, tuple[float, int]] = {}
    for suite in compared_suites(suites):
        cases = [by_id[c] for c in suite.case_ids if c in by_id]
        for name, p in suite_adjusted_p(cases, method).items():
            adjusted[name] = (p, len(cases))
    return tuple(
        _case_at_suite_scale(t, adjusted.get(t.test_id), method) if t.test_id in compared else t
        for t in tests
    ), kept


def _case_at_suite_scale(
    test: TestResult, adjusted: tuple[float, int] | None, method: str
) -> TestResult:
    """The case without the advice to run more trials (its reason's and its threshold note).

    A drop shown for the case alone that does not hold adjusted across its suite says so: the
    exit code does not count it (:mod:`._exit`).
    """
    advice = (
        follow_up_advice(test.more_trials_needed, test.passed / test.n)
        if test.more_trials_needed is not None and test.n
        else None
    )
    reason = why.at_suite_scale(test.verdict_reason)
    regression = test.regression
    if regression is not None and regression.verdict is Verdict.FAIL and adjusted is not None:
        p, cases = adjusted
        if p >= regression.alpha:
            name = "Holm" if method == Adjustment.HOLM else "Benjamini–Hochberg"
            reason = (
                f"drop not counted ({name}-adjusted over the suite's {cases} cases, "
                f"p = {p:.2g}) — {reason}"
            )
    return replace(
        test,
        verdict_reason=reason,
        notes=tuple(note for note in test.notes if note != advice),
    )


def _conflict(suites: tuple[str, ...]) -> str:
    return (
        f"recorded under {len(suites)} suites ({', '.join(suites)}): this verdict pools their "
        "trials; each suite's answer counts its own"
    )


def _judge(
    trials: pl.DataFrame,
    options: AnalyzeOptions,
    *,
    recorded: Mapping[str, Judgement] | None,
    baseline: pl.DataFrame | None,
) -> tuple[tuple[TestResult, ...], list[str], dict[str, str], _Pairs | None]:
    table, rows = _rows_by_test(trials)
    runs = shares_by_test(trials, tc.RUN_ID)
    versions = shares_by_test(trials, tc.AGENT_VERSION)
    chosen: dict[str, tuple[Resolved, Judgement]] = {}
    shared: tuple[Resolved, Judgement] | None = None
    # Trials from several runs are judged with the anytime-valid interval (resolve), per test.
    one_run = table[tc.RUN_ID].n_unique() <= 1
    for name, (start, stop) in rows.items():
        if shared is not None:
            chosen[name] = shared  # nothing recorded: every test is judged alike
            continue
        resolved = resolve(table.slice(start, stop - start), recorded or {}, options)
        confidence = _suite_confidence(resolved.judgement.confidence, options, len(rows))
        chosen[name] = resolved, replace(resolved.judgement, confidence=confidence)
        if not recorded and one_run:
            shared = chosen[name]
    tests = [
        TestRows(start, stop, chosen[name][1].excludes_errors, chosen[name][1].confidence)
        for name, (start, stop) in rows.items()
    ]
    # Every test's figures, counts and cost in one pass over the table, not a dozen queries
    # a test.
    figures = figures_by_test(
        table,
        tests,
        ks=options.ks,
        score_ci=options.score_ci,
        seed=options.seed,
        alpha=options.alpha,
    )
    counted = _counts(table, tests)
    costs = cost_summaries(table, [(t.start, t.stop) for t in tests], options.prices)
    results: dict[str, TestResult] = {}
    errors: dict[str, str] = {}
    for name, figure, counts, cost in zip(rows, figures, counted, costs, strict=True):
        resolved, judgement = chosen[name]
        errors[name] = judgement.errors
        sequential = None
        if resolved.replay and judgement.sequential is not None:
            start, stop = rows[name]
            sequential = replay(
                table.slice(start, stop - start),
                judgement.sequential,
                judgement.excludes_errors,
                judgement.confidence,
            )
        results[name] = _judged(
            name,
            counts,
            judgement,
            options,
            figure,
            sequential=sequential,
            notes=resolved.notes,
            sources=(runs[name], versions[name]),
            # Unknown work would price as $0: no cost is better than a wrong one.
            cost=None if figure.work_unknown else cost,
        )
    notes = _suite_notes(options, tuple(results.values()))
    pairs = None
    if baseline is not None:
        base_table, base_rows = _rows_by_test(baseline)
        # Each test's trials are sliced only where read: over thousands of cases the
        # regression reads tallies of all at once, and few cases are diffed.
        per_test, baseline_tests = _Slices(table, rows), _Slices(base_table, base_rows)
        tallied = (tallies(base_table, base_rows, errors), tallies(table, rows, errors))
        notes += _regressions(
            results, per_test, baseline_tests, options, errors, recorded or {}, tallied
        )
        excluded = {name for name, result in results.items() if result.n < result.trials}
        sizes = {name: (tallied[0][name].n, tallied[1][name].n) for name in tallied[0]}
        pairs = _Pairs(per_test, baseline_tests, frozenset(excluded), sizes)
    return tuple(results.values()), notes, errors, pairs


class _Slices(Mapping[str, pl.DataFrame]):
    """Each test's trials by test id, sliced from one table when first read."""

    def __init__(self, table: pl.DataFrame, rows: Mapping[str, tuple[int, int]]) -> None:
        self._table, self._rows = table, rows

    def __getitem__(self, name: str) -> pl.DataFrame:
        start, stop = self._rows[name]
        return self._table.slice(start, stop - start)

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)

    def __contains__(self, name: object) -> bool:
        return name in self._rows


@dataclass(frozen=True, slots=True)
class _Pairs:
    """Each test's trials in both versions, for the behaviour diff once the suites are known."""

    current: Mapping[str, pl.DataFrame]
    """The current version's trials per test id."""
    baseline: Mapping[str, pl.DataFrame]
    """The baseline's trials per test id."""
    without_errors: frozenset[str]
    """Tests whose error trials are left out of n (and of the diff)."""
    sizes: Mapping[str, tuple[int, int]]
    """Each test's counted trials in the baseline and the current version (their tallies)."""


def _with_behaviours(
    tests: tuple[TestResult, ...],
    pairs: _Pairs,
    options: AnalyzeOptions,
    suites: tuple[SuiteResult, ...],
) -> tuple[tuple[TestResult, ...], list[str]]:
    """Each case with its behaviour diff (:mod:`._behaviour_scope`), gated by ``--fail-on``."""
    compared = {
        "all cases" if s.suite is None else s.suite: s.case_ids for s in compared_suites(suites)
    }
    behaviours, notes = case_behaviours(
        pairs.current, pairs.baseline, options, pairs.without_errors, compared, pairs.sizes
    )
    rules = [parse_fail_on(rule) for rule in options.fail_on]
    return tuple(
        _gated(t, behaviours[t.test_id], rules) if t.test_id in behaviours else t for t in tests
    ), notes


def _regressions(
    results: dict[str, TestResult],
    current: _Slices,
    baseline: _Slices,
    options: AnalyzeOptions,
    errors: Mapping[str, str],
    recorded: Mapping[str, Judgement],
    tallied: tuple[Mapping[str, Tally], Mapping[str, Tally]],
) -> list[str]:
    """Turn each result into a regression verdict (in place); notes on unmatched tests."""
    pairs = {
        name: regression_result(
            partial(baseline.__getitem__, name),
            partial(current.__getitem__, name),
            options,
            errors[name],
            recorded,
            (tallied[0][name], tallied[1][name]),
        )
        for name in results
        if name in baseline
    }
    rated = [p[0] for p in pairs.values() if p[0] is not None]
    adjusted = iter(adjust_regressions(rated, options.adjust))
    for name, (rate, scores) in pairs.items():
        results[name] = with_regression(
            results[name], next(adjusted) if rate is not None else None, scores
        )
    notes = []
    new = sorted(set(current) - set(baseline))
    gone = sorted(set(baseline) - set(current))
    if new:
        notes.append(f"no baseline for {', '.join(new)}: judged against the threshold only")
    if gone:
        notes.append(f"in the baseline only, not judged: {', '.join(gone)}")
    return notes


@dataclass(frozen=True, slots=True)
class _Counts:
    """A test's trials counted: what its verdict is decided on."""

    n: int
    """Trials counted (error trials left out under ``errors="exclude"``)."""
    passed: int
    """Passing trials among them."""
    errors: int
    """Error trials, counted or not."""
    trials: int
    """Every trial."""


def _judged(
    test_id: str,
    counts: _Counts,
    judgement: Judgement,
    options: AnalyzeOptions,
    figures: Figures,
    *,
    sequential: SequentialOutcome | None,
    notes: tuple[str, ...],
    sources: tuple[tuple[Share, ...], tuple[Share, ...]],
    cost: CostSummary | None = None,
) -> TestResult:
    """A test's verdict and result, from its counts and figures."""
    n, passed, errors = counts.n, counts.passed, counts.errors
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
        if judgement.sequential is not None:
            # Stopped adaptively: the verdict is the anytime-valid interval (_adaptive).
            interval, verdict, reason, min_for_pass, adaptive_notes = _adaptive(
                passed, n, judgement, options, sequential
            )
            remarks.extend(adaptive_notes)
            design = judgement.sequential
            if verdict is Verdict.INCONCLUSIVE and design == design.follow_up(
                judgement.threshold, judgement.confidence
            ):
                more_trials = follow_up_trials_needed(
                    passed, n, judgement.threshold, judgement.confidence
                )
                if more_trials is not None:
                    remarks.append(follow_up_advice(more_trials, passed / n))
        else:
            if decided.note:
                remarks.append(decided.note)
            verdict = decided.verdict
            reason = why.threshold_reason(verdict, passed, n, interval, judgement.threshold)
            more_trials = decided.more_trials_needed
            if verdict is Verdict.INCONCLUSIVE and more_trials is not None:
                remarks.append(follow_up_advice(more_trials, passed / n))
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
        trials=counts.trials,
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
        tool_errors=figures.tool_errors,
        runs=sources[0],
        agent_versions=sources[1],
        work_unknown=figures.work_unknown,
        cost=cost,
    )


def _adaptive(
    passed: int,
    n: int,
    judgement: Judgement,
    options: AnalyzeOptions,
    sequential: SequentialOutcome | None,
) -> tuple[Interval, Verdict, str, int | None, tuple[str, ...]]:
    """The verdict of trials collected under adaptive stopping: its anytime-valid interval.

    The number of trials depended on the outcomes, so a fixed-n interval would cover less
    often than it says; the confidence sequence covers at every n at once, whenever the run
    stopped (and with the trials in flight at the stop). The stopping rule's own decision
    (``sequential``, when replayed) is only reported.

    Returns:
        ``(interval, verdict, reason, fewest all-passing trials for a PASS, notes)``.
    """
    design = judgement.sequential
    assert design is not None
    interval = anytime_interval(passed, n, design, judgement.confidence)
    notes = []
    if sequential is not None and sequential.low <= sequential.high:
        # In index order: the intersection of the intervals so far, as narrow as it got.
        interval = replace(interval, low=sequential.low, high=sequential.high)
    elif sequential is not None:
        notes.append(
            "the anytime-valid intervals after each trial have no rate in common (did the pass "
            "rate change during the run?): judged by the interval over all trials"
        )
    if not interval.low <= passed / n <= interval.high:
        notes.append(
            f"the observed rate {passed / n:.1%} lies outside the interval: earlier trials "
            "ruled it out (the interval is the intersection over every trial, still valid)"
        )
    verdict = threshold_verdict(interval, judgement.threshold).verdict
    reason = why.anytime_reason(verdict, passed, n, interval, judgement.threshold, sequential)
    sequence = design.sequence(judgement.confidence)
    limit = max(design.max_trials, n)
    needed = (
        sequence.fewest_to_pass(judgement.threshold, limit) if judgement.threshold < 1 else None
    )
    if needed is None:
        notes.append(
            f"PASS at {judgement.threshold:g} is impossible within {limit} trials even if all "
            f"pass: the {judgement.confidence:g} anytime-valid interval needs more"
        )
    if options.ci_method != IntervalMethod.WILSON:
        notes.append(f"--ci-method {options.ci_method} does not apply after adaptive stopping")
    return interval, verdict, reason, needed, tuple(notes)


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


def with_regression(
    result: TestResult,
    regression: RegressionResult | None,
    score_regression: ScoreRegressionResult | None,
) -> TestResult:
    """The test's result judged against its baseline, keeping both answers.

    With a baseline the question is also "did it get worse?". The test's verdict is the worse
    of its threshold verdict and its regression verdict (FAIL over INCONCLUSIVE over PASS; a
    score regression FAIL counts as a regression FAIL), so a test that fails its threshold is
    never reported as merely unsettled. Both verdicts are kept (``threshold_verdict``,
    ``regression``) and the reason names both.
    """
    if regression is None:
        return result
    notes = list(result.notes)
    if regression.test_reason is not None:
        notes.append(regression.test_reason)
    scores_dropped = score_regression is not None and score_regression.verdict is Verdict.FAIL
    if score_regression is not None and scores_dropped:
        notes.append(
            f"scores dropped: one-sided Mann–Whitney p = {score_regression.shift.p_value:.3g}"
        )
    against_baseline = Verdict.FAIL if scores_dropped else regression.verdict
    verdict = max(against_baseline, result.verdict, key=_SEVERITY.__getitem__)
    # The reason reads the counts, interval and threshold, which the regression leaves as
    # they are: one copy of the result, not two.
    reason = why.regression_reason(
        result, regression, scores_dropped=scores_dropped, threshold_verdict=result.verdict
    )
    if _SEVERITY[result.verdict] > _SEVERITY[against_baseline]:
        reason = f"{result.verdict} against the threshold — " + reason
    return replace(
        result,
        verdict=verdict,
        regression=regression,
        score_regression=score_regression,
        threshold_verdict=result.verdict,
        notes=tuple(notes),
        verdict_reason=why.with_errors(reason, result.errors),
    )


_SEVERITY = {Verdict.PASS: 0, Verdict.INCONCLUSIVE: 1, Verdict.FAIL: 2}
"""How bad a verdict is, for the worse of two."""


def _gated(result: TestResult, behaviour: BehaviourResult, rules: list[FailOn]) -> TestResult:
    broken = gate_failures(behaviour, rules)
    if not broken:
        return replace(result, behaviour=behaviour)
    # What the pass rate said stays in the reason, after the rule that decided.
    return replace(
        result,
        verdict=Verdict.FAIL,
        behaviour=behaviour,
        verdict_reason=f"{'; '.join(broken)}; pass rate: {result.verdict_reason}",
    )
