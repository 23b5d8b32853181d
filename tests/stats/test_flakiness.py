import numpy as np
import pytest

from assay.errors import InsufficientDataError
from assay.stats import CATEGORIES, WEIGHTS, category, flakiness


def test_perfectly_steady_test_is_stable() -> None:
    result = flakiness(
        [True] * 20,
        errors=[False] * 20,
        scores=[90.0] * 20,
        tool_sequences=[("search", "answer")] * 20,
        step_counts=[2] * 20,
        latencies=[1.5] * 20,
    )
    assert result.score == 0.0 and result.category == "stable"
    assert {f.name for f in result.factors} == set(WEIGHTS)


def test_coin_flip_with_varied_paths_is_flaky_and_explained() -> None:
    rng = np.random.default_rng(0)
    paths = [("search",), ("search", "search"), ("read",), ("search", "read")]
    seqs = [paths[i] for i in rng.integers(0, 4, 30)]
    result = flakiness(
        [i % 2 == 0 for i in range(30)],
        errors=[i % 5 == 0 for i in range(30)],
        tool_sequences=seqs,
        latencies=rng.gamma(2.0, 1.0, 30),
    )
    assert result.category in ("high_variance", "flaky")
    top = result.factors[0]
    assert top.name == "outcome_instability" and top.value == 1.0
    assert "15 of 30 trials passed" in top.detail
    path = next(f for f in result.factors if f.name == "tool_path_inconsistency")
    assert "4 distinct sequences in 30 trials" in path.detail


def test_score_is_weighted_mean_of_available_components() -> None:
    result = flakiness([True, True, True, False], errors=[False, False, False, True])
    outcome = 4 * 0.75 * 0.25
    expected = (WEIGHTS["outcome_instability"] * outcome + WEIGHTS["error_rate"] * 0.25) / (
        WEIGHTS["outcome_instability"] + WEIGHTS["error_rate"]
    )
    assert result.score == pytest.approx(expected)
    assert result.category == category(expected)
    assert 0 <= result.score <= 1


def test_categories_cover_the_unit_interval_in_order() -> None:
    names = [category(s) for s in np.linspace(0, 1, 101)]
    order = [name for _, name in CATEGORIES]
    assert sorted(set(names), key=order.index) == order
    assert names == sorted(names, key=order.index)


def test_no_trials() -> None:
    with pytest.raises(InsufficientDataError):
        flakiness([])
