"""The failure explanations test many features at once; each p-value must be scipy's own."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from assay.stats import explain_failures, mann_whitney_p_values


@settings(deadline=None, max_examples=60)
@given(st.integers(0, 2**32 - 1), st.integers(2, 40), st.integers(2, 40))
def test_batched_rank_sums_equal_one_scipy_call_each(seed: int, fails: int, passes: int) -> None:
    rng = np.random.default_rng(seed)
    samples = []
    for k in range(4):
        if k % 2:  # counts, with ties
            samples.append((rng.integers(0, 4, fails) * 1.0, rng.integers(0, 5, passes) * 1.0))
        else:
            samples.append((rng.normal(size=fails), rng.normal(0.3, size=passes)))
    expected = [float(sps.mannwhitneyu(f, p, alternative="two-sided").pvalue) for f, p in samples]
    assert mann_whitney_p_values(samples) == expected


def test_explanations_do_not_depend_on_the_order_of_features() -> None:
    rng = np.random.default_rng(7)
    passed = rng.random(200) < 0.6
    features = {
        "uses:search": (~passed & (rng.random(200) < 0.8)).astype(float),
        "steps": np.where(passed, rng.poisson(3, 200), rng.poisson(6, 200)).astype(float),
        "latency": np.where(passed, 1.0, 1.6) + rng.random(200),
        "llm_calls": rng.poisson(2, 200).astype(float),
    }
    kinds = {
        "uses:search": "binary",
        "steps": "count",
        "latency": "continuous",
        "llm_calls": "count",
    }
    forward = explain_failures(passed, features, kinds=kinds)
    backward = explain_failures(passed, dict(reversed(features.items())), kinds=kinds)
    assert forward == backward
    assert {f.feature for f in forward} >= {"uses:search", "steps", "latency"}


@settings(deadline=None, max_examples=60)
@given(st.integers(0, 2**32 - 1), st.integers(1, 8), st.integers(1, 8))
def test_small_samples_of_one_rank_pattern_share_scipys_p_value(
    seed: int, fails: int, passes: int
) -> None:
    # Small tests (exact when untied, asymptotic when tied): values of the same ranks (ties
    # included) must give each its own scipy p-value, bit for bit.
    rng = np.random.default_rng(seed)
    ranks = rng.integers(0, 4, fails + passes) * 1.0
    for scale in (1.0, 3.5, 1e-3):
        values = ranks * scale - 2.0  # the same ranks, other values
        fail_x, pass_x = values[:fails], values[fails:]
        if np.ptp(values) == 0:
            continue
        expected = float(sps.mannwhitneyu(fail_x, pass_x, alternative="two-sided").pvalue)
        assert mann_whitney_p_values([(fail_x, pass_x)]) == [expected]


def _pairs(seed: int, count: int) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        n1, n2 = (int(v) for v in rng.integers(1, 120, 2))
        kind = len(out) % 4
        if kind == 0:
            pair = rng.normal(size=n1), rng.normal(0.2, size=n2)
        elif kind == 1:
            pair = rng.integers(0, 4, n1) * 1.0, rng.integers(0, 5, n2) * 1.0
        elif kind == 2:
            pair = np.round(rng.normal(size=n1), 1), np.round(rng.normal(size=n2), 1)
        else:
            pair = rng.integers(0, 2, n1) * 1.0, rng.integers(0, 2, n2) * 1.0
        if np.ptp(np.concatenate(pair)) > 0:
            out.append(pair)
    return out


@settings(deadline=None, max_examples=30)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["two-sided", "less", "greater"]))
def test_vectorised_asymptotic_tests_are_scipys(seed: int, alternative: str) -> None:
    from assay.stats.two_sample._mann_whitney import _asymptotic_p_values

    samples = _pairs(seed, 40)
    expected = [
        float(sps.mannwhitneyu(f, p, alternative=alternative, method="asymptotic").pvalue)
        for f, p in samples
    ]
    assert _asymptotic_p_values(samples, alternative).tolist() == expected
    # And the "auto" choice (exact for small samples without ties) as scipy makes it.
    auto = [float(sps.mannwhitneyu(f, p, alternative=alternative).pvalue) for f, p in samples]
    assert mann_whitney_p_values(samples, alternative) == auto


def test_explaining_many_cases_is_explaining_each() -> None:
    from assay.stats import FailureRequest, explain_many

    rng = np.random.default_rng(5)
    requests = []
    for case in range(40):
        n = int(rng.integers(4, 150))
        passed = rng.random(n) < rng.uniform(0.2, 0.9)
        features = {
            "uses:search": (~passed & (rng.random(n) < 0.7)).astype(float),
            "steps": np.where(passed, rng.poisson(3, n), rng.poisson(5, n)).astype(float),
            "latency": np.where(passed, 1.0, 1.4) + np.round(rng.random(n), 1),
            "model": np.array(rng.choice(["a", "b", "c", None], n), dtype=object),
        }
        if case % 5 == 0:
            features["latency"][0] = np.nan  # an unknown value: left out of its test
        kinds = {"uses:search": "binary", "steps": "count", "latency": "continuous"}
        requests.append(FailureRequest(passed, features, kinds, {"steps": "tool steps"}))
    together = explain_many(requests, alpha=0.2)
    alone = [
        explain_failures(r.passed, r.features, kinds=r.kinds, alpha=0.2, labels=r.labels)
        for r in requests
    ]
    assert together == alone
    assert together == [_feature_by_feature(r, 0.2) for r in requests]
    assert sum(map(len, together)) > 10


def test_cases_tested_in_batches_are_explained_as_all_at_once() -> None:
    # The judge tests each run of cases in its own thread and adjusts them all together.
    from assay.stats import explain_many, explain_tested, failure_tests

    requests = _requests(np.random.default_rng(11), 30)
    for across in (True, False):
        at_once = explain_many(requests, alpha=0.2, across_tests=across)
        batches = [failure_tests(requests[a:b]) for a, b in ((0, 7), (7, 7), (7, 19), (19, 30))]
        assert explain_tested(batches, alpha=0.2, across_tests=across) == at_once
        assert sum(map(len, at_once)) > 5


def _requests(rng: np.random.Generator, cases: int) -> list:
    from assay.stats import FailureRequest

    requests = []
    for _ in range(cases):
        n = int(rng.integers(4, 150))
        passed = rng.random(n) < rng.uniform(0.2, 0.9)
        features = {
            "uses:search": (~passed & (rng.random(n) < 0.7)).astype(float),
            "steps": np.where(passed, rng.poisson(3, n), rng.poisson(5, n)).astype(float),
        }
        kinds = {"uses:search": "binary", "steps": "count"}
        requests.append(FailureRequest(passed, features, kinds, {}))
    return requests


def _feature_by_feature(request, alpha: float) -> list:
    """The explanations as they were made before tests were batched: each feature on its own,
    each U test one scipy call, every finding worded before the adjustment."""
    from assay.stats import FailureFactor, adjust_p_values
    from assay.stats.behaviour._explain import _kind, _numeric_factor, _numeric_samples, _p, _Share
    from assay.stats.two_sample._fisher import fisher_two_sided

    ok = np.asarray(request.passed, dtype=bool)
    failed = ~ok
    shares, numeric = [], []
    for name, raw in request.features.items():
        values = np.asarray(raw)
        kind = request.kinds.get(name) or _kind(values)
        label = request.labels.get(name)
        if kind == "binary":
            shares.append(_Share.of(name, None, kind, values.astype(bool), failed, label))
        elif kind == "categorical":
            known = np.array([v is not None for v in values.tolist()], dtype=bool)
            names = np.array([str(v) for v in values.tolist()], dtype=object)
            sub = failed[known]
            levels = sorted(set(names[known].tolist()))
            if sub.all() or not sub.any() or len(levels) < 2:
                continue
            if len(levels) == 2:
                lab = names[known]
                gap = [float((lab[sub] == lv).mean() - (lab[~sub] == lv).mean()) for lv in levels]
                levels = [levels[int(np.argmax(gap))]]
            for level in levels:
                shares.append(_Share.of(name, level, kind, names[known] == level, sub, label))
        else:
            sample = _numeric_samples(values.astype(np.float64), failed)
            if sample is not None:
                numeric.append((name, kind, *sample, label))
    found = [
        s.factor(float(fisher_two_sided(np.array([s.table]).reshape(-1, 2, 2))[0])) for s in shares
    ]
    for name, kind, fail_x, pass_x, label in numeric:
        p = float(sps.mannwhitneyu(fail_x, pass_x, alternative="two-sided").pvalue)
        found.append(_numeric_factor(name, kind, fail_x, pass_x, p, label))
    if not found:
        return []
    adjusted = adjust_p_values([f.p_value for f in found], "holm")
    out = [
        FailureFactor(
            *(f.feature, f.level, f.kind, f.test, f.effect, f.fail_value, f.pass_value),
            f.p_value,
            float(a),
            f.detail.replace("{p}", _p(float(a))),
        )
        for f, a in zip(found, adjusted, strict=True)
        if a < alpha and not _too_small(f)
    ]
    return sorted(out, key=lambda f: (f.p_adjusted, f.feature, f.level or ""))


def _too_small(f) -> bool:
    """A numeric difference below 10% of the larger value: tested, but not reported."""
    if f.test != "mannwhitney":
        return False
    return abs(f.fail_value - f.pass_value) < 0.1 * max(abs(f.fail_value), abs(f.pass_value))
