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
from assay.judge._suite_behaviour import behaviour_table, suite_behaviour
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
        One row per case and suite it records — a test id recorded under two suites is a case
        of each, with that suite's trials (never merged into one of them) — with columns
        ``test_id``, ``suite``, ``n``, ``passed``, ``answered`` (trials that are not errors),
        ``trials`` (every trial), ``suites`` (distinct suites its id records), ``_score``,
        ``_cost``, ``_duration``; sorted by id and suite.
    """
    exclude = pl.col(tc.TEST_ID).replace_strict(
        dict(excluded), default=False, return_dtype=pl.Boolean
    )
    counted = ~(pl.col(tc.ERROR).fill_null(False) & exclude)
    score_of_trial = pl.lit(None, dtype=pl.Float64)
    if score is not None:
        score_of_trial = _score_of_trial(trials, score)
    cost = pl.col(tc.COST_USD) if tc.COST_USD in trials.columns else pl.lit(None, pl.Float64)
    return (
        trials.with_columns(
            counted.alias("_counted"),
            score_of_trial.cast(pl.Float64).alias(_SCORE),
            cost.cast(pl.Float64).alias(_COST),
            pl.col(tc.SUITE).n_unique().over(tc.TEST_ID).alias("suites"),
        )
        .group_by(tc.TEST_ID, tc.SUITE)
        .agg(
            pl.col("suites").first(),
            pl.col("_counted").sum().alias("n"),
            (~pl.col(tc.ERROR).fill_null(False)).sum().alias("answered"),
            pl.len().alias("trials"),
            (pl.col(tc.PASSED).fill_null(False) & pl.col("_counted")).sum().alias("passed"),
            # Sorted before the mean: the sum's order, and so its last bits, is then the same
            # whatever order the trials came in (buckets, engines).
            pl.col(_SCORE).filter(pl.col("_counted")).sort().mean(),
            pl.col(_COST).filter(pl.col("_counted")).sort().mean(),
            pl.col(tc.DURATION_S).filter(pl.col("_counted")).sort().mean().alias(_DURATION),
        )
        .sort(tc.TEST_ID, tc.SUITE, nulls_last=True)
    )


def _score_of_trial(trials: pl.DataFrame, score: str) -> pl.Expr:
    """Each trial's mean of its values of ``score`` (null when it records none).

    Where no trial records more than one score (the usual case), that mean is the one value
    named ``score``, read without evaluating an expression on every list (4M trials: 0.74
    CPU-s, against a few hundredths); the same number either way.
    """
    named = pl.element().struct.field("name") == score
    value = pl.element().struct.field("value")
    if not (trials[tc.SCORES].list.len() > 1).any():
        first = pl.col(tc.SCORES).list.first().struct
        return pl.when(first.field("name") == score).then(first.field("value"))
    return pl.col(tc.SCORES).list.eval(pl.when(named).then(value)).list.drop_nulls().list.mean()


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
    behaviour: tuple[pl.DataFrame, pl.DataFrame] | None = None
    if baseline is not None:  # the behaviour diff's per-case means, one pass a version
        behaviour = (behaviour_table(trials, excluded), behaviour_table(baseline, excluded))
    thresholds = {r.threshold for r in results}
    out = []
    names = current[tc.SUITE].unique().to_list()
    if base is not None:
        # A suite the baseline ran and the current version did not is answered too: its
        # comparison cannot PASS (every case missing), never dropped in silence.
        names += [n for n in base[tc.SUITE].unique().to_list() if n not in names]
    for name in sorted((n for n in names if n is not None), key=str) + (
        [None] if None in names else []
    ):
        rows = current.filter(
            pl.col(tc.SUITE).is_null() if name is None else pl.col(tc.SUITE) == name
        )
        in_suite = pl.col(tc.SUITE).is_null() if name is None else pl.col(tc.SUITE) == name
        base_rows = None
        features = None
        if base is not None and behaviour is not None:
            base_rows = base.filter(in_suite)
            features = (behaviour[0].filter(in_suite), behaviour[1].filter(in_suite))
        out.append(
            _suite(name, rows, base_rows, results, options, thresholds, score, adaptive, features)
        )
    if names == [None] and options.suite_attribute != c.SUITE:
        # Asked to group by an attribute no trial carries: said, never a silent single suite.
        missing = f"no trial carries {options.suite_attribute}: every case is in the set's suite"
        out[-1] = replace(out[-1], notes=(missing, *out[-1].notes))
    return tuple(out)


def suite_conflicts(*tables: pl.DataFrame | None) -> dict[str, tuple[str, ...]]:
    """Test ids recorded under several suites, with those suites (in any of the tables).

    Each suite's answer counts only its own trials of such an id (:func:`case_table`), but the
    per-case results are keyed by test id and pool them: a conflict every report names.
    """
    frames = [
        t.select(pl.col(tc.TEST_ID).cast(pl.Utf8), pl.col(tc.SUITE).cast(pl.Utf8))
        for t in tables
        if t is not None and t.height
    ]
    if not frames:
        return {}
    several = (
        pl.concat(frames)
        .unique()
        .group_by(tc.TEST_ID)
        .agg(pl.col(tc.SUITE).fill_null("(none)").sort())
        .filter(pl.col(tc.SUITE).list.len() > 1)
        .sort(tc.TEST_ID)
    )
    return {str(t): tuple(s) for t, s in several.iter_rows()}


def conflict_note(conflicts: Mapping[str, tuple[str, ...]]) -> str:
    """The analysis-wide note naming every test id recorded under several suites."""
    named = "; ".join(f"{t} ({', '.join(s)})" for t, s in conflicts.items())
    return (
        f"{len(conflicts)} test id(s) recorded under several suites: {named}. Each suite's "
        "answer counts only its own trials of them; the per-case verdict of each id pools the "
        "suites' trials (give each suite's case its own test id)"
    )


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
    features: tuple[pl.DataFrame, pl.DataFrame] | None = None,
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
    if not ids:  # a suite only the baseline ran
        reason = "the current version ran no case of this suite"
    mixed = rows.filter(pl.col("suites") > 1)[tc.TEST_ID].to_list()
    if mixed:
        notes.append(
            f"{len(mixed)} test id(s) of this suite are recorded under other suites too "
            f"({_names(mixed)}): this suite counts only its own trials of them"
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
        comparison = _comparison(rows, base_rows, options, confidence, score, features)
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
    features: tuple[pl.DataFrame, pl.DataFrame] | None = None,
) -> SuiteComparison:
    current_ids = set(rows[tc.TEST_ID].to_list())
    baseline_ids = set(base_rows[tc.TEST_ID].to_list())
    joined = rows.join(base_rows, on=tc.TEST_ID, how="inner", suffix="_base")
    # A version that answered none of a case's trials (every one an error) did not run it.
    current_silent = joined.filter(pl.col("answered") == 0)[tc.TEST_ID].to_list()
    baseline_silent = joined.filter((pl.col("answered_base") == 0) & (pl.col("answered") > 0))[
        tc.TEST_ID
    ].to_list()
    both = joined.filter(
        (pl.col("n") > 0)
        & (pl.col("n_base") > 0)
        & (pl.col("answered") > 0)
        & (pl.col("answered_base") > 0)
    )
    only_baseline = tuple(sorted(baseline_ids - current_ids))
    only_current = tuple(sorted(current_ids - baseline_ids))
    missing = tuple(sorted({*only_baseline, *current_silent}))
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
        missing_current=missing,
        baseline_silent=tuple(sorted(baseline_silent)),
    )
    silent = _silent_version(rows, base_rows)
    if silent is not None:
        return replace(empty, reason=silent)
    if both.height == 0:
        if not missing:
            return empty
        worst, worst_verdict, _, coverage = _coverage(
            both, base_rows, missing, Verdict.INCONCLUSIVE, options, confidence
        )
        return replace(
            empty,
            reason=f"no case was answered by both versions: {coverage}",
            worst_case=worst,
            worst_case_verdict=worst_verdict,
        )
    paired = _paired_rates(both, options, confidence)
    verdict, reason = _comparison_verdict(paired, options, both.height)
    if only_current:  # the cases the current version lacks are said with the coverage below
        reason += (
            f"; {len(only_current)} case(s) the baseline did not run, not compared"
            f" ({_names(only_current)})"
        )
    if baseline_silent:
        reason += (
            f"; the baseline answered none of the trials of {len(baseline_silent)} case(s) "
            f"(every one an error), not compared ({_names(sorted(baseline_silent))})"
        )
    worst, worst_verdict = None, None
    if missing:
        worst, worst_verdict, verdict, coverage = _coverage(
            both, base_rows, missing, verdict, options, confidence
        )
        reason += f"; {coverage}"
    moved = (
        both.select(
            tc.TEST_ID,
            (pl.col("passed") / pl.col("n") - pl.col("passed_base") / pl.col("n_base")).alias("d"),
        )
        .filter(pl.col("d") != 0)
        .sort([pl.col("d").abs(), tc.TEST_ID], descending=[True, False])
        .head(10)
    )
    spent = _no_cost(both)
    behaviour = None
    if features is not None:
        paired_ids = [str(i) for i in both[tc.TEST_ID].to_list()]
        behaviour = suite_behaviour(*features, paired_ids, options, confidence)
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
        cost_usd=_paired(both, _COST, options, confidence) if spent is None else None,
        cost_usd_reason=spent,
        duration_s=_paired(both, _DURATION, options, confidence),
        moved=tuple((str(t), float(d)) for t, d in moved.iter_rows()),
        worst_case=worst,
        worst_case_verdict=worst_verdict,
        behaviour=behaviour,
    )


def _paired_rates(
    both: pl.DataFrame, options: AnalyzeOptions, confidence: float
) -> PairedComparison:
    """The paired comparison of the pass rates of the cases in ``both``."""
    return paired_comparison(
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


def _silent_version(rows: pl.DataFrame, base_rows: pl.DataFrame) -> str | None:
    """Why there is no evidence when a version answered none of its trials, else None."""
    for side, table in (("baseline", base_rows), ("current version", rows)):
        trials = int(table["trials"].sum())
        if trials and int(table["answered"].sum()) == 0:
            return (
                f"no evidence: the {side} answered none of its {trials} trial(s) in this suite "
                "(every one an error: an exception, a timeout or no trial span); a version "
                "that never answered is not compared"
            )
    return None


def _coverage(
    both: pl.DataFrame,
    base_rows: pl.DataFrame,
    missing: tuple[str, ...],
    verdict: Verdict,
    options: AnalyzeOptions,
    confidence: float,
) -> tuple[PairedComparison | None, Verdict | None, Verdict, str]:
    """Cases with no answer from the current version: the worst case, and whether PASS holds.

    The worst case counts each missing case as failing every trial of the current version
    (as many trials as its baseline ran) beside the baseline's own rate on it. A PASS over the
    cases both ran is given only with ``--allow-missing-cases``: a case never run can hide a
    drop (docs/suites.md, "Cases one version did not run").
    """
    filled = (
        base_rows.filter(pl.col(tc.TEST_ID).is_in(list(missing)) & (pl.col("answered") > 0))
        .select(
            tc.TEST_ID,
            pl.col("passed").alias("passed_base"),
            pl.col("n").alias("n_base"),
            pl.lit(0, pl.Int64).alias("passed"),
            pl.col("n"),
        )
        .filter(pl.col("n_base") > 0)
    )
    worst, worst_verdict = None, None
    shown = f"{len(missing)} case(s) have no answer from the current version ({_names(missing)})"
    if filled.height:
        columns = [tc.TEST_ID, "passed_base", "n_base", "passed", "n"]
        table = pl.concat(
            [
                both.select(columns).cast({c: pl.Int64 for c in columns[1:]}),
                filled.select(columns).cast({c: pl.Int64 for c in columns[1:]}),
            ]
        )
        worst = _paired_rates(table, options, confidence)
        worst_verdict, _ = _comparison_verdict(worst, options, table.height)
        shown += (
            f"; worst case, counting them as failing every trial: mean difference "
            f"{_points(worst.difference)} over {table.height} case(s), "
            f"{100 * worst.interval.confidence:g}% CI [{_points(worst.interval.low)}, "
            f"{_points(worst.interval.high)}] ({worst_verdict.value})"
        )
    if verdict is Verdict.PASS and not options.allow_missing_cases:
        return (
            worst,
            worst_verdict,
            Verdict.INCONCLUSIVE,
            (
                f"{shown}; no PASS while cases are missing (--allow-missing-cases judges the "
                "cases both answered)"
            ),
        )
    if verdict is Verdict.PASS:
        shown += "; PASS over the cases both answered (--allow-missing-cases)"
    return worst, worst_verdict, verdict, shown


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


def _no_cost(both: pl.DataFrame) -> str | None:
    """Why the paired cases have no cost change to show, or None when they have one.

    A difference of 0 with p = 1 from costs nobody recorded (an agent without LLM calls, or
    calls that carry no cost) would read as a measured "no change".
    """
    costs = both.select(_COST, f"{_COST}_base").drop_nulls().drop_nans()
    if costs.height == 0:
        return "no paired case has a cost in both versions (a model without a price: --prices)"
    if not ((costs[_COST] != 0).any() or (costs[f"{_COST}_base"] != 0).any()):
        return "nothing spent in either version: no LLM call recorded a cost or had a price"
    return None


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
