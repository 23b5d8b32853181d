import numpy as np
import pytest
from scipy import stats as sps

from assay.errors import ConfigError
from assay.stats import adjust_p_values, explain_failures


def make_trials() -> tuple[np.ndarray, dict[str, np.ndarray]]:
    rng = np.random.default_rng(4)
    passed = np.array([True] * 20 + [False] * 20)
    features = {
        "search calls": np.concatenate([rng.poisson(1, 20), rng.poisson(4, 20)]),
        "error span": np.array([False] * 19 + [True] + [True] * 12 + [False] * 8),
        "latency_s": rng.normal(5, 1, 40),  # unrelated
        "model": np.array(["m1"] * 20 + ["m1"] * 10 + ["m2"] * 10, dtype=object),
    }
    return passed, features


def test_finds_separating_features_with_holm_adjusted_exact_tests() -> None:
    passed, features = make_trials()
    found = explain_failures(passed, features)
    names = {f.feature for f in found}
    assert {"search calls", "error span", "model"} <= names
    assert "latency_s" not in names
    failed = ~passed
    raw = {
        "search calls": sps.mannwhitneyu(
            features["search calls"][failed], features["search calls"][passed]
        ).pvalue,
        "error span": sps.fisher_exact([[12, 8], [1, 19]]).pvalue,
        "latency_s": sps.mannwhitneyu(
            features["latency_s"][failed], features["latency_s"][passed]
        ).pvalue,
        "model": sps.fisher_exact([[10, 10], [0, 20]]).pvalue,
    }
    holm = dict(zip(raw, adjust_p_values(list(raw.values()), "holm"), strict=True))
    for f in found:
        assert f.p_value == pytest.approx(raw[f.feature])
        assert f.p_adjusted == pytest.approx(holm[f.feature])
    calls = next(f for f in found if f.feature == "search calls")
    ratio = features["search calls"][failed].mean() / features["search calls"][passed].mean()
    assert calls.effect == pytest.approx(ratio)
    assert f"{ratio:.1f}× as many `search calls`" in calls.detail
    model = next(f for f in found if f.feature == "model")
    assert model.level == "m2" and "50% of failing trials have `model` = `m2` (10 of 20)" in (
        model.detail
    )
    error = next(f for f in found if f.feature == "error span")
    assert error.effect == pytest.approx(12 / 20 - 1 / 20)
    assert error.detail.startswith("60% of failing trials have `error span` (12 of 20) vs 5%")


def test_labels_make_the_sentences() -> None:
    passed, features = make_trials()
    labels = {
        "search calls": "calls to `search`",
        "error span": "have error spans",
        "model": "use model",
    }
    found = {f.feature: f.detail for f in explain_failures(passed, features, labels=labels)}
    assert "as many calls to `search` as passing trials" in found["search calls"]
    assert found["error span"].startswith("60% of failing trials have error spans (12 of 20)")
    assert "of failing trials use model `m2`" in found["model"]
    assert found["search calls"].endswith("p < 0.001")


def test_float_binary_features_with_given_kinds() -> None:
    passed, features = make_trials()
    as_float = {"error span": features["error span"].astype(float)}
    found = explain_failures(passed, as_float, kinds={"error span": "binary"})
    assert [f.test for f in found] == ["fisher"]
    assert found[0].p_value == pytest.approx(sps.fisher_exact([[12, 8], [1, 19]]).pvalue)


def test_nothing_to_explain_when_all_pass() -> None:
    _, features = make_trials()
    assert explain_failures(np.ones(40, dtype=bool), features) == []


def test_wrong_length() -> None:
    passed, _ = make_trials()
    with pytest.raises(ConfigError):
        explain_failures(passed, {"x": np.arange(3)})


def test_count_feature_absent_from_every_failing_trial() -> None:
    passed = np.array([True] * 12 + [False] * 12)
    calls = np.array([2.0] * 12 + [0.0] * 12)
    (factor,) = explain_failures(passed, {"calls": calls}, kinds={"calls": "count"})
    assert "failing trials have no" in factor.detail
    assert factor.fail_value == 0 and factor.pass_value == 2
