"""The judge's agreement with people and the corrected pass rate: against statsmodels and scipy,
and by seeded simulation with known truth."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps
from statsmodels.stats.inter_rater import cohens_kappa

from assay.stats.judges import (
    METHOD,
    Agreement,
    cohen_kappa,
    corrected_bounds,
    corrected_rate,
    ppi_mean,
    rogan_gladen,
)


@pytest.mark.parametrize(
    "table",
    [[[40, 5], [10, 45]], [[3, 1, 0], [2, 8, 1], [0, 3, 9]], [[90, 2], [8, 0]], [[5, 0], [0, 5]]],
)
def test_kappa_and_its_interval_are_statsmodels(table) -> None:
    ours = cohen_kappa(table)
    theirs = cohens_kappa(np.array(table))
    assert ours.estimate == pytest.approx(theirs.kappa)
    assert ours.interval is not None
    assert ours.interval.low == pytest.approx(max(theirs.kappa_low, -1))
    assert ours.interval.high == pytest.approx(min(theirs.kappa_upp, 1))


def test_kappa_without_variation_is_nan_not_a_number_made_up() -> None:
    assert np.isnan(cohen_kappa([[10, 0], [0, 0]]).estimate)


def test_sensitivity_and_specificity_intervals_are_exact() -> None:
    a = Agreement(true_pass=45, false_fail=5, false_pass=12, true_fail=38, confidence=0.95)
    assert a.sensitivity == 0.9 and a.specificity == 38 / 50
    exact = sps.binomtest(45, 50).proportion_ci(0.95, "exact")
    assert a.sensitivity_interval is not None
    assert a.sensitivity_interval.low == pytest.approx(exact.low)
    assert a.sensitivity_interval.high == pytest.approx(exact.high)
    exact = sps.binomtest(38, 50).proportion_ci(0.95, "exact")
    assert a.specificity_interval is not None
    assert a.specificity_interval.low == pytest.approx(exact.low)


@pytest.mark.parametrize("rate", [0.0, 0.3, 0.7, 1.0])
def test_rogan_gladen_inverts_the_judges_rate(rate: float) -> None:
    se, sp = 0.9, 0.75
    apparent = se * rate + (1 - sp) * (1 - rate)
    assert rogan_gladen(apparent, se, sp) == pytest.approx(rate)


def test_the_issues_judge_is_not_a_pass_and_its_interval_holds_the_true_rate() -> None:
    # A 70% agent, a judge of sensitivity 0.95 and specificity 0.7: it shows 75.5% on 3,000
    # trials (the judge-only interval lies above 0.72); 200 labels in the same proportions.
    passed = round(0.755 * 3000)
    agreement = Agreement(133, 7, 18, 42, 0.95)
    judged = sps.binomtest(passed, 3000).proportion_ci(0.95, "exact")
    assert judged.low > 0.72  # the uncorrected verdict would be PASS
    corrected = corrected_rate(passed, 3000, agreement)
    assert corrected.identifiable and corrected.interval.method == METHOD
    assert corrected.estimate == pytest.approx(0.70, abs=1e-3)
    assert corrected.interval.low <= 0.70 <= corrected.interval.high
    assert corrected.interval.low < 0.72  # so not a PASS


def test_a_judge_no_better_than_chance_gives_no_rate() -> None:
    corrected = corrected_rate(600, 1000, Agreement(30, 20, 25, 25, 0.95))
    assert not corrected.identifiable
    assert (corrected.interval.low, corrected.interval.high) == (0.0, 1.0)
    assert corrected.reason is not None and "sensitivity + specificity" in corrected.reason


def test_labels_on_one_side_only_give_no_rate_and_say_which() -> None:
    corrected = corrected_rate(600, 1000, Agreement(40, 2, 0, 0, 0.95))
    assert not corrected.identifiable and "specificity is unknown" in (corrected.reason or "")


def test_a_judges_rate_its_agreement_cannot_produce_is_said() -> None:
    # It passes 95% of trials, but people say it passes at most about half of true passes.
    corrected = corrected_rate(950, 1000, Agreement(50, 50, 0, 100, 0.95))
    assert not corrected.identifiable and "random sample" in (corrected.reason or "")


CELLS = [
    # sensitivity, specificity, labels, trials, true rate
    (0.95, 0.70, 100, 3000, 0.70),
    (0.99, 0.70, 50, 1000, 0.90),
    (0.70, 0.90, 200, 5000, 0.80),
]


@pytest.mark.parametrize(("se", "sp", "labels", "trials", "rate"), CELLS)
def test_each_side_misses_the_true_rate_at_most_alpha_over_2(se, sp, labels, trials, rate) -> None:
    # Seeded: labels are a random sample of the trials, as the method assumes.
    rng = np.random.default_rng(51)
    reps = 600
    cells = [rate * se, rate * (1 - se), (1 - rate) * (1 - sp), (1 - rate) * sp]
    tp, fn, fp, tn = rng.multinomial(labels, cells, size=reps).T
    apparent = rate * se + (1 - rate) * (1 - sp)
    passed = tp + fp + rng.binomial(trials - labels, apparent, size=reps)
    low, high, _ = corrected_bounds(passed, trials, tp, fn, fp, tn, 0.95)
    slack = 3 * np.sqrt(0.025 * 0.975 / reps)  # three Monte Carlo standard errors
    assert np.mean(low > rate) <= 0.025 + slack
    assert np.mean(high < rate) <= 0.025 + slack
    # ... where the judge's own interval misses almost always.
    judged_low = sps.beta.ppf(0.025, passed, trials - passed + 1)
    judged_high = sps.beta.isf(0.025, passed + 1, trials - passed)
    if abs(apparent - rate) > 0.05:
        assert np.mean((judged_low > rate) | (judged_high < rate)) > 0.5


def test_vectorised_bounds_equal_one_at_a_time() -> None:
    agreement = Agreement(60, 4, 9, 27, 0.9)
    one = corrected_rate(700, 1000, agreement)
    low, high, ok = corrected_bounds([700], [1000], [60], [4], [9], [27], 0.9)
    assert bool(ok[0]) and low[0] == one.interval.low and high[0] == one.interval.high


def test_ppi_mean_is_its_formula_and_covers_by_simulation() -> None:
    rng = np.random.default_rng(7)
    truth = 0.6
    hits = 0
    reps = 400
    for _ in range(reps):
        human = rng.normal(truth, 0.2, size=1100)
        judge = human + 0.1 + rng.normal(0, 0.05, size=1100)  # a judge biased up by 0.1
        result = ppi_mean(human[:100], judge[:100], judge[100:])
        hits += result.interval.low <= truth <= result.interval.high
    assert abs(hits / reps - 0.95) <= 3 * np.sqrt(0.95 * 0.05 / reps)
    y, f, g = np.array([1.0, 2.0, 4.0]), np.array([1.5, 2.0, 5.0]), np.array([2.0, 3.0])
    r = ppi_mean(y, f, g)
    assert r.estimate == pytest.approx(y.mean() + r.tuning * (g.mean() - f.mean()))
    assert r.judge_mean == pytest.approx(np.concatenate([f, g]).mean())


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(20, 3000),
    share=st.floats(0, 1),
    tp=st.integers(0, 60),
    fn=st.integers(0, 60),
    fp=st.integers(0, 60),
    tn=st.integers(0, 60),
)
def test_the_interval_lies_in_0_1_and_holds_its_estimate(n, share, tp, fn, fp, tn) -> None:
    passed = round(share * n)
    corrected = corrected_rate(passed, n, Agreement(tp, fn, fp, tn, 0.95))
    low, high = corrected.interval.low, corrected.interval.high
    assert 0 <= low <= high <= 1
    if corrected.identifiable:
        assert corrected.estimate is not None
        assert low - 1e-9 <= corrected.estimate <= high + 1e-9
    else:
        assert (low, high) == (0.0, 1.0) and corrected.reason
