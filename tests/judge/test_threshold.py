import pytest
from scipy.stats import binomtest

from assay.judge import Verdict, exit_code, threshold_verdict
from assay.stats import wilson_interval


def _expected(k: int, n: int, threshold: float) -> Verdict:
    ci = binomtest(k, n).proportion_ci(0.95, method="wilson")
    if ci.low >= threshold:
        return Verdict.PASS
    if ci.high < threshold:
        return Verdict.FAIL
    return Verdict.INCONCLUSIVE


@pytest.mark.parametrize(
    ("k", "n", "threshold", "verdict"),
    [
        (28, 30, 0.8, Verdict.INCONCLUSIVE),
        (15, 30, 0.8, Verdict.FAIL),
        (29, 30, 0.7, Verdict.PASS),
    ],
)
def test_issue_examples(k: int, n: int, threshold: float, verdict: Verdict) -> None:
    result = threshold_verdict(wilson_interval(k, n), threshold)
    assert result.verdict is verdict
    assert result.verdict is _expected(k, n, threshold)


@pytest.mark.parametrize("n", [1, 5, 20, 30, 60])
@pytest.mark.parametrize("threshold", [0.5, 0.8, 0.9])
def test_verdict_follows_scipy_bounds(n: int, threshold: float) -> None:
    for k in range(n + 1):
        assert threshold_verdict(wilson_interval(k, n), threshold).verdict is _expected(
            k, n, threshold
        )


def test_exit_codes() -> None:
    assert exit_code([Verdict.PASS]) == 0
    assert exit_code([Verdict.PASS, Verdict.FAIL, Verdict.INCONCLUSIVE]) == 1
    assert exit_code([Verdict.PASS, Verdict.INCONCLUSIVE]) == 3
    assert exit_code([Verdict.INCONCLUSIVE], inconclusive_ok=True) == 0
