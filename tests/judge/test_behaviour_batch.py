"""The batched behaviour diff gives every feature the figures it gets tested alone, bit for bit."""

import math

import numpy as np
import pytest
from scipy import special
from scipy import stats as sps

from assay.choices import Adjustment
from assay.judge._behaviour_batch import EXAMPLES, feature_tests
from assay.stats import (
    MINIMAL_EFFECTS,
    BehaviourSample,
    FeaturePair,
    binary_shift,
    log_ratio_se,
    path_shift,
    permutations_for,
    ratio_power,
    ratio_powers,
    row_shifts,
    share_power,
)

PATHS = (("search",), ("search", "verify"), ("search", "search", "verify"), ())


def _suite(rng: np.random.Generator, tests: int) -> list[BehaviourSample]:
    """Tests of 5–9 trials a side (sizes repeat across tests, as in a suite)."""
    out = []
    for t in range(tests):
        n_b, n_c = (int(v) for v in rng.integers(5, 10, 2))
        paths_b = tuple(PATHS[i] for i in rng.integers(0, 4, n_b))
        paths_c = tuple(PATHS[i] for i in rng.integers(0, 4 if t % 3 else 2, n_c))
        calls_b = np.array([p.count("search") for p in paths_b], dtype=np.float64)
        calls_c = np.array([p.count("search") for p in paths_c], dtype=np.float64)
        tokens_b = np.round(rng.lognormal(6, 0.5, n_b))
        tokens_c = np.round(rng.lognormal(6.2, 0.5, n_c))
        latency_b, latency_c = rng.gamma(2, 1, n_b), rng.gamma(2, 1.3, n_c)
        errors_b = (rng.random(n_b) < 0.2) * 1.0
        features = (
            FeaturePair("path", "path", "tool path", np.empty(0), np.empty(0), paths_b, paths_c),
            FeaturePair("uses:search", "binary", "use", (calls_b > 0) * 1.0, (calls_c > 0) * 1.0),
            FeaturePair("tool_calls:search", "count", "calls", calls_b, calls_c),
            FeaturePair("input_tokens", "continuous", "tokens", tokens_b, tokens_c),
            FeaturePair("latency", "continuous", "latency", latency_b, latency_c),
            FeaturePair("constant", "count", "steps", np.ones(n_b), np.ones(n_c)),
            FeaturePair("error_spans", "binary", "errors", errors_b, np.zeros(n_c)),
        )
        ids_b = tuple(f"b{t}-{i}" for i in range(n_b))
        ids_c = tuple(f"c{t}-{i}" for i in range(n_c))
        out.append(BehaviourSample(ids_b, ids_c, features))
    out.append(BehaviourSample(("x",) * 3, ("y",) * 3, out[0].features))  # too few trials
    return out


def _alone(pair: FeaturePair, confidence: float) -> tuple[float, float, float, float, float]:
    """A ratio feature's mean ratio, interval and p-value from its own samples alone."""
    b, c = pair.baseline, pair.current
    se, df = log_ratio_se(b, c)  # each sample's own numpy mean and variance
    ratio = float(c.mean()) / float(b.mean())
    q = special.stdtrit(df, 0.5 + confidence / 2) if math.isfinite(df) else None
    q = special.ndtri(0.5 + confidence / 2) if q is None else q
    if pair.kind == "continuous":
        p = float(sps.mannwhitneyu(c, b).pvalue) if np.ptp(np.concatenate([b, c])) > 0 else 1.0
    else:
        p = float(min(1.0, 2 * special.stdtr(df, -abs(math.log(ratio) / se))))
    return ratio, ratio * math.exp(-q * se), ratio * math.exp(q * se), p, df


@pytest.mark.parametrize("adjust", [Adjustment.NONE, Adjustment.HOLM])
def test_every_feature_is_tested_as_it_would_be_alone(adjust: str) -> None:
    rng = np.random.default_rng(11)
    samples = _suite(rng, 60)
    tests = feature_tests(samples, alpha=0.05, adjust=adjust, confidence=0.9, seed=4)
    pooled = sum(len(rows) for rows in tests.rows)
    assert tests.rows[-1] == []
    assert tests.family[-1] == (1 if adjust == Adjustment.NONE else pooled)
    for sample, rows, family in zip(samples[:-1], tests.rows, tests.family, strict=False):
        assert family == (len(rows) if adjust == Adjustment.NONE else pooled)
        level = 0.05 / family
        n = (len(sample.baseline_ids), len(sample.current_ids))
        names = [r.pair.name for r in rows]
        # Only features that vary are tested, in the sample's order.
        assert "constant" not in names
        assert names == [f.name for f in sample.features if f.name in names]
        for row in rows:
            pair, shift = row.pair, row.shift
            if pair.kind == "path":
                alone = path_shift(
                    pair.baseline_paths,
                    pair.current_paths,
                    0.9,
                    permutations_for(family, 0.05),
                    4,
                    screen=0.05,
                )
                assert (shift, row.path) == (alone.shift, alone.path)
                has_b = np.array([p == row.path for p in pair.baseline_paths])
                has_c = np.array([p == row.path for p in pair.current_paths])
            elif pair.kind == "binary":
                k_b, k_c = int(pair.baseline.sum()), int(pair.current.sum())
                assert shift == binary_shift(k_b, n[0], k_c, n[1], 0.9)
                has_b, has_c = pair.baseline > 0, pair.current > 0
            if pair.kind in ("path", "binary"):
                assert row.spread == shift.baseline
                assert row.power == share_power(shift.baseline, *n, MINIMAL_EFFECTS["path"], level)
                rising = (shift.effect or 0) > 0
                want_b = has_b if not rising else ~has_b
                want_c = has_c if rising else ~has_c
                assert row.baseline_traces == tuple(np.array(sample.baseline_ids)[want_b][:3])
                assert row.current_traces == tuple(np.array(sample.current_ids)[want_c][:3])
                continue
            ratio, low, high, p, _ = _alone(pair, 0.9)
            assert (shift.effect, shift.ci_low, shift.ci_high, shift.p_value) == (
                ratio,
                low,
                high,
                p,
            )
            cv = float(pair.baseline.std(ddof=1)) / float(pair.baseline.mean())
            assert row.spread == cv
            assert row.power == ratio_power(cv, *n, MINIMAL_EFFECTS[pair.kind], level)
            for values, ids, typical in (
                (pair.baseline, sample.baseline_ids, row.baseline_traces),
                (pair.current, sample.current_ids, row.current_traces),
            ):
                order = np.argsort(np.abs(values - values.mean()), kind="stable")[:EXAMPLES]
                assert typical == tuple(ids[i] for i in order)


def test_ratio_powers_are_each_ratio_power() -> None:
    rng = np.random.default_rng(2)
    cv = np.concatenate([rng.lognormal(-1, 1, 300), [0.0]])
    alpha = rng.uniform(1e-4, 0.2, cv.size)
    powers = ratio_powers(cv, 7, 9, 1.3, alpha)
    for v, a, power in zip(cv.tolist(), alpha.tolist(), powers.tolist(), strict=True):
        assert power == ratio_power(v, 7, 9, 1.3, a)


def test_row_shifts_name_a_bad_value_as_the_pairs_do() -> None:
    from assay.errors import ConfigError

    good = np.ones((2, 5))
    bad = good.copy()
    bad[1, 2] = -1.0
    with pytest.raises(ConfigError, match="negative"):
        row_shifts("count", good, bad)
