"""The fixed-n verdict interval: each side's exact error at the threshold at most α/2.

Every rate is recomputed here from scipy's own intervals (``binomtest(...).proportion_ci``) and
binomial probabilities, independently of the library's vectorised search.
"""

import importlib.util
import re
import sys
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats as sps

from assay.judge import threshold_test
from assay.stats import (
    min_trials_for_pass,
    pass_probability,
    threshold_errors,
    verdict_bounds,
    verdict_interval,
    verdict_min_trials_for_pass,
    verdict_sides,
)

ROOT = Path(__file__).resolve().parents[2]
THRESHOLDS = (0.5, 0.8, 0.9, 0.95)


@cache
def _scipy_bounds(n: int, method: str) -> tuple[np.ndarray, np.ndarray]:
    cis = [sps.binomtest(x, n).proportion_ci(0.95, method) for x in range(n + 1)]
    return np.array([c.low for c in cis]), np.array([c.high for c in cis])


def _scipy_errors(n: int, t: float, low: np.ndarray, high: np.ndarray) -> tuple[float, float]:
    pmf = sps.binom.pmf(np.arange(n + 1), n, t)
    return float(pmf[low >= t].sum()), float(pmf[high < t].sum())


@pytest.mark.slow
@pytest.mark.parametrize("threshold", THRESHOLDS)
def test_the_rule_keeps_each_side_at_half_alpha_for_every_n_to_100(threshold: float) -> None:
    ns = np.arange(1, 101)
    lower_kept, upper_kept = verdict_sides(ns, threshold)
    wilson_fp, wilson_ff = threshold_errors(ns, threshold)
    replaced = 0
    for n in ns:
        w_low, w_high = _scipy_bounds(int(n), "wilson")
        cp_low, cp_high = _scipy_bounds(int(n), "exact")
        fp, ff = _scipy_errors(int(n), threshold, w_low, w_high)
        # The library's exact Wilson errors are scipy's, and a side is kept iff ≤ 2.5%.
        assert (wilson_fp[n - 1], wilson_ff[n - 1]) == pytest.approx((fp, ff), abs=1e-12)
        assert lower_kept[n - 1] == (fp <= 0.025) and upper_kept[n - 1] == (ff <= 0.025)
        low = w_low if lower_kept[n - 1] else cp_low
        high = w_high if upper_kept[n - 1] else cp_high
        rule_fp, rule_ff = _scipy_errors(int(n), threshold, low, high)
        assert rule_fp <= 0.025 and rule_ff <= 0.025
        got_low, got_high = verdict_bounds(np.arange(n + 1), n, threshold)
        np.testing.assert_allclose(got_low, low, atol=1e-9)
        np.testing.assert_allclose(got_high, high, atol=1e-9)
        replaced += int(not lower_kept[n - 1]) + int(not upper_kept[n - 1])
    assert replaced > 0  # Wilson alone misses at every threshold here: the rule matters


def test_one_failure_of_one_is_no_longer_a_fail_at_0_8() -> None:
    wilson = sps.binomtest(0, 1).proportion_ci(0.95, "wilson")
    assert wilson.high < 0.8  # Wilson alone: FAIL, with probability P(X = 0) = 0.2 at p = 0.8
    assert threshold_errors(1, 0.8)[1] == pytest.approx(sps.binom.pmf(0, 1, 0.8))
    result = threshold_test(0, 1, 0.8)
    exact = sps.binomtest(0, 1).proportion_ci(0.95, "exact")
    assert result.interval.high == pytest.approx(exact.high)
    assert result.interval.method == "wilson, clopper-pearson upper"
    assert result.verdict == "INCONCLUSIVE"
    assert result.note is not None and "upper bound is Clopper–Pearson's" in result.note


def test_a_kept_interval_is_wilsons_exactly() -> None:
    n, x = 60, 50
    assert all(bool(side) for side in verdict_sides(n, 0.8))
    wilson = sps.binomtest(x, n).proportion_ci(0.95, "wilson")
    got = verdict_interval(x, n, 0.8)
    assert (got.low, got.high, got.method) == (wilson.low, wilson.high, "wilson")


def test_both_sides_replaced_is_labelled_clopper_pearson() -> None:
    ns = np.arange(1, 101)
    lower, upper = verdict_sides(ns, 0.5)
    n = int(ns[~lower & ~upper][0])
    assert verdict_interval(n // 2, n, 0.5).method == "clopper-pearson"


@given(n=st.integers(1, 400), frac=st.floats(0, 1), t=st.floats(0.01, 0.99))
def test_the_verdict_interval_holds_the_estimate(n: int, frac: float, t: float) -> None:
    x = round(frac * n)
    interval = verdict_interval(x, n, t)
    assert 0.0 <= interval.low <= x / n <= interval.high <= 1.0


@pytest.mark.parametrize("threshold", [0.5, 0.8, 0.9, 0.95, 0.99])
def test_min_trials_for_pass_is_the_first_n_whose_all_pass_passes(threshold: float) -> None:
    needed = verdict_min_trials_for_pass(threshold)
    assert needed is not None
    plain = min_trials_for_pass(threshold)
    assert plain is not None and needed >= plain
    for n in range(1, needed + 1):
        passes = verdict_interval(n, n, threshold).low >= threshold
        assert passes == (n == needed)


def test_planning_reads_the_rule() -> None:
    ns = np.arange(1, 121)
    got = pass_probability(ns, 0.8, 0.9)
    for n, probability in zip(ns, got, strict=True):
        low, _ = verdict_bounds(np.arange(n + 1), n, 0.8)
        x_min = int(np.argmax(low >= 0.8)) if (low >= 0.8).any() else n + 1
        assert probability == pytest.approx(sps.binom.sf(x_min - 1, n, 0.9), abs=1e-12)


def test_the_docs_table_is_the_benchmarks() -> None:
    path = ROOT / "benchmarks" / "bench_verdict_errors.py"
    spec = importlib.util.spec_from_file_location("bench_verdict_errors", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    text, above = module.table()
    assert above == 0
    doc = (ROOT / "docs" / "statistics.md").read_text()
    block = re.search(r"<!-- verdict-errors:start -->\n(.*?)<!-- verdict-errors:end -->", doc, re.S)
    assert block is not None and block[1] == text, "run benchmarks/bench_verdict_errors.py --write"
