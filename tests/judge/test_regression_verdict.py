import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from assay.analysis import columns as tc
from assay.errors import ConfigError
from assay.judge import Verdict, decide_regression, regression_test, score_regression_test
from assay.judge._pipeline import by_test
from assay.judge._regression import tallies, tally
from assay.stats import regression_power


def test_fields_and_fail_on_big_drop() -> None:
    result = regression_test(27, 30, 12, 30, test="fisher")
    table = [[27, 12], [3, 18]]
    assert result.p_value == pytest.approx(
        sps.fisher_exact(table, alternative="greater").pvalue, rel=1e-10
    )
    assert result.verdict is Verdict.FAIL
    assert (result.test, result.baseline_n, result.baseline_passed) == ("fisher", 30, 27)
    assert (result.current_n, result.current_passed, result.alpha, result.delta) == (
        30,
        12,
        0.05,
        0.10,
    )


def test_small_samples_without_a_drop_are_inconclusive_not_pass() -> None:
    result = regression_test(9, 10, 9, 10)
    assert result.p_value > 0.05
    assert result.power < 0.8
    assert result.verdict is Verdict.INCONCLUSIVE


def test_large_samples_without_a_drop_pass() -> None:
    result = regression_test(180, 200, 181, 200)
    assert result.power == pytest.approx(regression_power(200, 200, 0.9, 0.1, 0.05, "boschloo"))
    assert result.power >= 0.8
    assert result.verdict is Verdict.PASS


def test_power_does_not_depend_on_the_current_result() -> None:
    powers = {regression_test(170, 200, x, 200).power for x in (150, 170, 190)}
    assert len(powers) == 1


def test_decide_rule() -> None:
    assert decide_regression(0.01, 0.1) is Verdict.FAIL
    assert decide_regression(0.5, 0.9) is Verdict.PASS
    assert decide_regression(0.5, 0.5) is Verdict.INCONCLUSIVE
    assert decide_regression(0.05, 0.9, alpha=0.05) is Verdict.PASS  # p < alpha is strict


@pytest.mark.parametrize("test", ["fisher", "boschloo", "barnard"])
def test_false_pass_rate_at_a_true_drop_of_delta_is_at_most_one_minus_power(test: str) -> None:
    rng = np.random.default_rng(11)
    n, reps = 200, 400
    x1 = rng.binomial(n, 0.9, reps)
    x2 = rng.binomial(n, 0.8, reps)
    verdicts = [
        regression_test(int(a), n, int(b), n, test=test).verdict
        for a, b in zip(x1, x2, strict=True)
    ]
    false_pass = np.mean([v is Verdict.PASS for v in verdicts])
    assert false_pass <= 0.2 + 3 * np.sqrt(0.2 * 0.8 / reps)
    assert np.mean([v is Verdict.FAIL for v in verdicts]) >= 0.7


def test_score_regression_matches_scipy_and_direction() -> None:
    rng = np.random.default_rng(3)
    baseline = rng.normal(80, 5, 30)
    current = rng.normal(70, 5, 30)
    result = score_regression_test(baseline, current)
    expected = sps.mannwhitneyu(baseline, current, alternative="greater")
    assert result.shift.p_value == pytest.approx(expected.pvalue)
    assert result.shift.u_statistic == pytest.approx(expected.statistic)
    assert result.shift.superiority == pytest.approx(expected.statistic / 900)
    assert result.verdict is Verdict.FAIL
    assert score_regression_test(current, baseline).verdict is Verdict.PASS
    assert score_regression_test([1, 1], [1, 1]).shift.p_value == 1.0


def test_bad_power() -> None:
    with pytest.raises(ConfigError):
        regression_test(1, 2, 1, 2, power=1.0)


def test_adjust_regressions_redecides_on_holm_p_values() -> None:
    from assay.judge import adjust_regressions
    from assay.stats import adjust_p_values

    results = [
        regression_test(27, 30, 20, 30, test="fisher"),
        regression_test(180, 200, 178, 200, test="fisher"),
        regression_test(28, 30, 10, 30, test="fisher"),
        regression_test(90, 100, 82, 100, test="fisher"),
    ]
    adjusted = adjust_regressions(results, "holm")
    expected = adjust_p_values([r.p_value for r in results], "holm")
    for before, after, p in zip(results, adjusted, expected, strict=True):
        assert after.p_value == before.p_value and after.p_adjusted == pytest.approx(p)
        assert after.verdict is decide_regression(p, before.power, 0.05, 0.8)
    assert results[0].verdict is Verdict.FAIL and adjusted[0].verdict is not Verdict.FAIL
    assert adjust_regressions(results, "none") == results


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "c", "d"]),
            st.sampled_from([True, False, None]),
            st.sampled_from([True, False, None]),
            st.sampled_from(["r1", "r2", None]),
            st.sampled_from([[], None, [{"name": "q", "value": 0.5}]]),
        ),
        min_size=1,
        max_size=40,
    ),
    st.sampled_from(["exclude", "include"]),
)
def test_tallies_of_every_test_at_once_are_each_tests_tally(rows: list, policy: str) -> None:
    """Nulls, error trials, several runs and scores alike: the batch reads what one test reads."""
    trials = pl.DataFrame(
        rows,
        schema={
            tc.TEST_ID: pl.String,
            tc.PASSED: pl.Boolean,
            tc.ERROR: pl.Boolean,
            tc.RUN_ID: pl.String,
            tc.SCORES: pl.List(pl.Struct({"name": pl.String, "value": pl.Float64})),
        },
        orient="row",
    ).sort(tc.TEST_ID)
    frames = by_test(trials)
    starts = np.cumsum([0, *(f.height for f in frames.values())]).tolist()
    ranges = dict(zip(frames, zip(starts, starts[1:], strict=False), strict=True))
    errors = dict.fromkeys(list(frames)[1:], policy) | {next(iter(frames)): "include"}
    assert tallies(trials, ranges, errors) == {
        name: tally(frame, errors[name]) for name, frame in frames.items()
    }
