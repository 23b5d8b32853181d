"""The suite's answer: one result per suite, over its cases, and its paired comparison.

A suite is the set of test cases that share an ``assay.suite`` (trials recording none form the
set's own suite). Its figures are computed once per case — the case's rate, main score, cost
and duration (:func:`case_table`, one Polars aggregation used for both versions) — and then
over cases, each case weighted equally, with cases as clusters (``assay.stats.clustered_mean``:
Miller 2024, arXiv:2411.00640). With a baseline, the cases both versions ran are paired and the
mean paired difference is tested (``assay.stats.paired_comparison``).

The verdicts keep the one meaning: the suite's threshold verdict is PASS when its interval lies
at or above the suite threshold, FAIL when wholly below, else INCONCLUSIVE; the comparison's is
the regression rule (FAIL on a significant drop, PASS when none and the power at delta reaches
the required power, else INCONCLUSIVE) or, with a margin, non-inferiority (PASS when the
one-sided upper bound of the drop lies below the margin, FAIL when its lower bound lies above).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np
import polars as pl

from assay import conventions as c
from assay.analysis import columns as tc
from assay.choices import ErrorPolicy, SuiteInterval
from assay.judge._all_figures import score_range
from assay.judge._options import DEFAULT_CONFIDENCE, DEFAULT_THRESHOLD, AnalyzeOptions
from assay.judge._reasons import pct
from assay.judge._results import TestResult
from assay.judge._suite_result import (
    SuiteComparison,
    SuiteEstimate,
    SuiteResult,
)
from assay.judge._threshold import Verdict, threshold_verdict
from assay.stats import (
    ClusteredMean,
    Interval,
    PairedComparison,
    PairedDifference,
    clustered_mean,
    paired_comparison,
    paired_mean_difference,
    suite_pass_at_k,
    suite_pass_hat_k,
)

ALL_CASES = None
"""The suite name of cases whose trials record no ``assay.suite``: the set's own suite."""

_SCORE = "_score"
_COST = "_cost"
_DURATION = "_duration"


def case_table(
    trials: pl.DataFrame, excluded: Mapping[str, bool], score: str | None
) -> pl.DataFrame:
    """One row per case: its suite, counted trials, passes, mean score, cost and duration.

    Args:
        trials: A trials table.
        excluded: Case id → whether its error trials are left out of n (its error policy).
        score: The main score's name (its mean over the case's trials), or None.

    Returns:
        Columns ``test_id``, ``suite`` (the suite most of its trials record), ``n``, ``passed``,
        ``suites`` (distinct suites recorded), ``_score``, ``_cost``, ``_duration``; sorted by id.
    """
    exclude = pl.col(tc.TEST_ID).replace_strict(
        dict(excluded), default=False, return_dtype=pl.Boolean
    )
    counted = ~(pl.col(tc.ERROR).fill_null(False) & exclude)
    score_of_trial = pl.lit(None, dtype=pl.Float64)
    if score is not None:
        score_of_trial = (
            pl.col(tc.SCORES)
            .list.eval(
                pl.when(pl.element().struct.field("name") == score).then(
                    pl.element().struct.field("value")
                )
            )
            .list.drop_nulls()
            .list.mean()
        )
    cost = pl.col(tc.COST_USD) if tc.COST_USD in trials.columns else pl.lit(None, pl.Float64)
    return (
        trials.with_columns(
            counted.alias("_counted"),
            score_of_trial.cast(pl.Float64).alias(_SCORE),
            cost.cast(pl.Float64).alias(_COST),
        )
        .group_by(tc.TEST_ID)
        .agg(
            pl.col(tc.SUITE).drop_nulls().mode().sort().first().alias(tc.SUITE),
            pl.col(tc.SUITE).n_unique().alias("suites"),
            pl.col("_counted").sum().alias("n"),
            (pl.col(tc.PASSED).fill_null(False) & pl.col("_counted")).sum().alias("passed"),
            # Sorted before the mean: the sum's order, and so its last bits, is then the same
            # whatever order the trials came in (buckets, engines).
            pl.col(_SCORE).filter(pl.col("_counted")).sort().mean(),
            pl.col(_COST).filter(pl.col("_counted")).sort().mean(),
            pl.col(tc.DURATION_S).filter(pl.col("_counted")).sort().mean().alias(_DURATION),
        )
        .sort(tc.TEST_ID)
    )


def suite_results(
    results: Sequence[TestResult],
    trials: pl.DataFrame,
    options: AnalyzeOptions,
    *,
    excluded: Mapping[str, bool],
    baseline: pl.DataFrame | None = None,
    adaptive: frozenset[str] = frozenset(),
) -> tuple[SuiteResult, ...]:
    """Every suite's answer: its mean pass rate over cases, its interval, and its verdict.

    Args:
        results: The per-case results (the cases' verdicts, main scores and thresholds).
        trials: The current version's trials table.
        options: The analysis options (``suite_threshold``, ``suite_ci``, ``margin``, ...).
        excluded: Case id → whether its error trials are left out of n.
        baseline: The baseline's trials: each suite gains its paired comparison.
        adaptive: The cases whose trials stopped adaptively (said in a note).

    Returns:
        One result per suite, the set's own suite (None) last.
    """
    score = _main_score(results)
    current = case_table(trials, excluded, score)
    base = case_table(baseline, excluded, score) if baseline is not None else None
    thresholds = {r.threshold for r in results}
    out = []
    names = current[tc.SUITE].unique().to_list()
    for name in sorted((n for n in names if n is not None), key=str) + (
        [None] if None in names else []
    ):
        rows = current.filter(
            pl.col(tc.SUITE).is_null() if name is None else pl.col(tc.SUITE) == name
        )
        base_rows = None
        if base is not None:
            base_rows = base.filter(
                pl.col(tc.SUITE).is_null() if name is None else pl.col(tc.SUITE) == name
            )
        out.append(_suite(name, rows, base_rows, results, options, thresholds, score, adaptive))
    if names == [None] and options.suite_attribute != c.SUITE:
        # Asked to group by an attribute no trial carries: said, never a silent single suite.
        missing = f"no trial carries {options.suite_attribute}: every case is in the set's suite"
        out[-1] = replace(out[-1], notes=(missing, *out[-1].notes))
    return tuple(out)


def _main_score(results: Sequence[TestResult]) -> str | None:
    """The score most cases report as their main score (ties: by name)."""
    counts: dict[str, int] = {}
    for r in results:
        if r.primary_score is not None:
            counts[r.primary_score] = counts.get(r.primary_score, 0) + 1
    if not counts:
        return None
    return min(counts, key=lambda name: (-counts[name], name))


def _suite(
    name: str | None,
    rows: pl.DataFrame,
    base_rows: pl.DataFrame | None,
    results: Sequence[TestResult],
    options: AnalyzeOptions,
    thresholds: set[float],
    score: str | None,
    adaptive: frozenset[str],
) -> SuiteResult:
    confidence = options.confidence or DEFAULT_CONFIDENCE
    method = options.suite_ci
    ids = tuple(str(i) for i in rows[tc.TEST_ID].to_list())
    n = rows["n"].to_numpy().astype(np.int64)
    passed = rows["passed"].to_numpy().astype(np.int64)
    judged = n > 0
    threshold, notes = _threshold(options, thresholds)
    rate = None
    interval = None
    if judged.sum():
        estimate = clustered_mean(
            passed[judged] / n[judged],
            n[judged],
            confidence,
            method,
            bounds=(0.0, 1.0),
            seed=options.seed,
        )
        rate, interval = estimate.mean, estimate.interval if judged.sum() >= 2 else None
    verdict, reason = _verdict(rate, interval, threshold, int(judged.sum()), int(n.sum()))
    mixed = rows.filter(pl.col("suites") > 1)[tc.TEST_ID].to_list()
    if mixed:
        notes.append(
            f"{len(mixed)} case(s) record several suites ({_names(mixed)}): each counted once, "
            "in the suite most of its trials record"
        )
    stopped = sorted(adaptive & set(ids))
    if stopped:
        notes.append(
            f"{len(stopped)} case(s) were collected under adaptive stopping or several looks "
            f"({_names(stopped)}): stopping on what was seen biases a case's observed rate a "
            "little, and the suite interval takes each rate as a fixed-n estimate, so it may "
            "cover somewhat less than its stated level"
        )
    if int((~judged).sum()):
        notes.append(f"{int((~judged).sum())} case(s) have no trial left to judge: left out")
    comparison = None
    if base_rows is not None:
        comparison = _comparison(rows, base_rows, options, confidence, score)
    return SuiteResult(
        suite=name,
        cases=len(ids),
        trials=int(n.sum()),
        pass_rate=rate,
        interval=interval,
        threshold=threshold,
        verdict=verdict,
        reason=reason,
        score=_estimate(rows[_SCORE], rows["n"], confidence, method, options.seed, score),
        score_name=score,
        pass_at_k=_pass_k(passed, n, options, confidence, hat=False),
        pass_hat_k=_pass_k(passed, n, options, confidence, hat=True),
        comparison=comparison,
        case_ids=ids,
        notes=tuple(notes),
        counts=options.suite_threshold is not None and len(ids) >= 2,
    )


def _threshold(options: AnalyzeOptions, thresholds: set[float]) -> tuple[float, list[str]]:
    """The suite threshold: ``--suite-threshold``, else ``--threshold``, else the cases' own."""
    if options.suite_threshold is not None:
        return options.suite_threshold, []
    if options.threshold is not None:
        return options.threshold, []
    if len(thresholds) == 1:
        return next(iter(thresholds)), []
    if not thresholds:
        return DEFAULT_THRESHOLD, []
    return DEFAULT_THRESHOLD, [
        f"the cases record several thresholds ({', '.join(pct(t) for t in sorted(thresholds))}):"
        f" the suite is judged against {pct(DEFAULT_THRESHOLD)} (set --suite-threshold)"
    ]


def _verdict(
    rate: float | None, interval: Interval | None, threshold: float, cases: int, trials: int
) -> tuple[Verdict, str]:
    if rate is None:
        return Verdict.INCONCLUSIVE, "no case has a trial left to judge"
    over = (
        f"mean pass rate {pct(rate)} over {cases} case(s) ({trials} trials, each case "
        "weighted equally)"
    )
    if interval is None:
        return Verdict.INCONCLUSIVE, f"{over}: one case gives no suite-level interval"
    verdict = threshold_verdict(interval, threshold).verdict
    where = {
        Verdict.PASS: "lies at or above",
        Verdict.FAIL: "lies wholly below",
        Verdict.INCONCLUSIVE: "straddles",
    }[verdict]
    return verdict, (
        f"{over}, {100 * interval.confidence:g}% cluster CI [{pct(interval.low)}, "
        f"{pct(interval.high)}] {where} the threshold {pct(threshold)}"
    )


def _estimate(
    values: pl.Series,
    sizes: pl.Series,
    confidence: float,
    method: SuiteInterval,
    seed: int,
    name: str | None,
) -> SuiteEstimate | None:
    """A per-case mean score over cases (None when no case has it), within the score's range.

    With a known range (declared, or [0, 1] when every value lies there) the interval is the
    suite interval's method within it; with none, a betting interval cannot exist and the
    cluster-robust t interval is used (``interval.method`` says which).
    """
    array = values.cast(pl.Float64).to_numpy()
    known = ~np.isnan(array)
    if not known.any():
        return None
    found = score_range(name, array[known]) if name is not None else None
    bounds = found[0] if found is not None else None
    if bounds is None and method == SuiteInterval.BETTING:
        method = SuiteInterval.T
    estimate: ClusteredMean = clustered_mean(
        array[known],
        sizes.to_numpy()[known],
        confidence,
        method,
        bounds=bounds,
        seed=seed,
        pass_rates=False,
    )
    cases = int(known.sum())
    return SuiteEstimate(estimate.mean, estimate.interval if cases >= 2 else None, cases)


def _pass_k(
    passed: np.ndarray,
    n: np.ndarray,
    options: AnalyzeOptions,
    confidence: float,
    *,
    hat: bool,
) -> dict[str, SuiteEstimate]:
    estimate = suite_pass_hat_k if hat else suite_pass_at_k
    out = {}
    for k in options.ks:
        found = estimate(passed, n, k, confidence, seed=options.seed)
        interval = found.interval if found.cases >= 2 else None
        out[str(k)] = SuiteEstimate(found.estimate, interval, found.cases)
    return out


def _comparison(
    rows: pl.DataFrame,
    base_rows: pl.DataFrame,
    options: AnalyzeOptions,
    confidence: float,
    score: str | None,
) -> SuiteComparison:
    current_ids = set(rows[tc.TEST_ID].to_list())
    baseline_ids = set(base_rows[tc.TEST_ID].to_list())
    both = rows.join(base_rows, on=tc.TEST_ID, how="inner", suffix="_base").filter(
        (pl.col("n") > 0) & (pl.col("n_base") > 0)
    )
    only_baseline = tuple(sorted(baseline_ids - current_ids))
    only_current = tuple(sorted(current_ids - baseline_ids))
    unpaired = len(only_baseline) + len(only_current)
    empty = SuiteComparison(
        baseline_cases=len(baseline_ids),
        current_cases=len(current_ids),
        paired_cases=both.height,
        unpaired_cases=unpaired,
        only_baseline=only_baseline,
        only_current=only_current,
        paired=None,
        difference=None,
        interval=None,
        test=None,
        p_value=None,
        power=None,
        delta=options.delta,
        min_detectable_drop=None,
        margin=options.margin,
        verdict=Verdict.INCONCLUSIVE,
        reason="no case was run by both versions: nothing to pair",
    )
    if both.height == 0:
        return empty
    paired = paired_comparison(
        both["passed_base"].to_numpy(),
        both["n_base"].to_numpy(),
        both["passed"].to_numpy(),
        both["n"].to_numpy(),
        alpha=options.alpha,
        delta=options.delta,
        power=options.power,
        confidence=confidence,
        seed=options.seed,
    )
    verdict, reason = _comparison_verdict(paired, options, both.height)
    if unpaired:
        reason += (
            f"; {unpaired} case(s) ran in one version only, not compared"
            f" ({_names([*only_baseline, *only_current])})"
        )
    moved = (
        both.select(
            tc.TEST_ID,
            (pl.col("passed") / pl.col("n") - pl.col("passed_base") / pl.col("n_base")).alias("d"),
        )
        .filter(pl.col("d") != 0)
        .sort([pl.col("d").abs(), tc.TEST_ID], descending=[True, False])
        .head(10)
    )
    return replace(
        empty,
        paired=paired,
        difference=paired.difference,
        interval=paired.interval,
        test=paired.test,
        p_value=paired.p_value,
        power=paired.power,
        min_detectable_drop=paired.min_detectable_drop,
        verdict=verdict,
        reason=reason,
        score=_paired(both, _SCORE, options, confidence) if score is not None else None,
        cost_usd=_paired(both, _COST, options, confidence),
        duration_s=_paired(both, _DURATION, options, confidence),
        moved=tuple((str(t), float(d)) for t, d in moved.iter_rows()),
    )


def _comparison_verdict(
    paired: PairedComparison, options: AnalyzeOptions, cases: int
) -> tuple[Verdict, str]:
    """The regression rule, or non-inferiority when a margin is given."""
    shown = (
        f"mean difference {_points(paired.difference)} over {cases} paired case(s), "
        f"{100 * paired.interval.confidence:g}% CI [{_points(paired.interval.low)}, "
        f"{_points(paired.interval.high)}]"
    )
    test = paired.test.replace("-", " ")
    p = f"one-sided {test} p = {paired.p_value:.3g}"
    if paired.p_value_error is not None:
        p += f" (± {paired.p_value_error:.2g} Monte Carlo)"
    if options.margin is not None:
        margin = options.margin
        limit = _points(margin, signed=False)
        bounds = (
            f"{100 * (1 - options.alpha):g}% one-sided bounds of the drop "
            f"[{_points(paired.drop_lower, signed=False)}, "
            f"{_points(paired.drop_upper, signed=False)}]"
        )
        if paired.drop_upper < margin:
            return Verdict.PASS, (
                f"non-inferior within the margin {limit}: {shown}; the {bounds} lie below "
                "the margin"
            )
        if paired.drop_lower > margin:
            return Verdict.FAIL, (
                f"worse by more than the margin {limit}: {shown}; the {bounds} lie above the margin"
            )
        return Verdict.INCONCLUSIVE, (
            f"not shown within the margin {limit}: {shown}; the {bounds} hold it"
        )
    if paired.p_value < options.alpha:
        return Verdict.FAIL, f"pass rate dropped: {shown}; {p} < {options.alpha:g}"
    detects = (
        f"detects drops of {_points(paired.min_detectable_drop, signed=False)} with power "
        f"{options.power:g}"
        if paired.min_detectable_drop is not None
        else f"no drop is detectable with power {options.power:g} from {cases} case(s)"
    )
    simulated = (
        f" (simulated, ± {paired.power_error:.1g})" if paired.power_error is not None else ""
    )
    power = (
        f"power {paired.power:.2f}{simulated} at a drop of "
        f"{_points(options.delta, signed=False)} ({detects})"
    )
    if paired.power >= options.power:
        return Verdict.PASS, f"no drop shown: {shown}; {p}; {power}"
    return Verdict.INCONCLUSIVE, f"no drop shown, but too little power: {shown}; {p}; {power}"


def _paired(
    both: pl.DataFrame, column: str, options: AnalyzeOptions, confidence: float
) -> PairedDifference | None:
    """The mean paired difference of one per-case figure over the cases that have it."""
    pairs = both.select(column, f"{column}_base").drop_nulls().drop_nans()
    if pairs.height == 0:
        return None
    return paired_mean_difference(
        pairs[f"{column}_base"].to_numpy(),
        pairs[column].to_numpy(),
        alpha=options.alpha,
        confidence=confidence,
        seed=options.seed,
    )


def _points(value: float | None, *, signed: bool = True) -> str:
    """A difference of rates in percentage points (``−5.1 points``; a size: ``5.1 points``)."""
    if value is None or not np.isfinite(value):
        return "—"
    return f"{100 * value:{'+' if signed else ''}.1f} points".replace("-", "−")


def _names(ids: Sequence[str], shown: int = 3) -> str:
    head = ", ".join(str(i) for i in ids[:shown])
    return head + (f", … {len(ids) - shown} more" if len(ids) > shown else "")


def excluded_errors(errors: Mapping[str, str]) -> dict[str, bool]:
    """Case id → whether its error policy leaves error trials out of n."""
    return {name: policy == ErrorPolicy.EXCLUDE for name, policy in errors.items()}
