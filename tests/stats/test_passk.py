from math import comb

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.errors import ConfigError
from assay.stats import pass_at_k, pass_at_ks, pass_hat_k, pass_hat_ks


@pytest.mark.parametrize("n", [1, 2, 5, 10, 30])
def test_equals_binomial_formulas(n: int) -> None:
    for c in range(n + 1):
        for k in range(1, n + 1):
            at = pass_at_k(n, c, k).value
            hat = pass_hat_k(n, c, k).value
            assert at == pytest.approx(1 - comb(n - c, k) / comb(n, k), abs=1e-12)
            assert hat == pytest.approx(comb(c, k) / comb(n, k), abs=1e-12)


def test_stable_for_large_n() -> None:
    # C(2000, 1000) overflows a float; the product form does not.
    value = pass_at_k(2000, 3, 1000).value
    assert value == pytest.approx(1 - comb(1997, 1000) / comb(2000, 1000), rel=1e-12)
    assert pass_hat_k(2000, 1990, 500).value == pytest.approx(
        comb(1990, 500) / comb(2000, 500), rel=1e-10
    )


def test_k_greater_than_n_is_none_with_reason() -> None:
    result = pass_at_k(3, 2, 5)
    assert result.value is None and result.reason and "5" in result.reason
    assert pass_hat_k(3, 2, 5).value is None
    ks = pass_at_ks(3, 2, (1, 5, 10))
    assert list(ks) == [1, 5, 10]
    assert ks[1].value == pytest.approx(2 / 3) and ks[10].value is None


@settings(deadline=None)  # CI machines are shared; no timing flakes
@given(n=st.integers(1, 200), data=st.data())
def test_properties(n: int, data: st.DataObject) -> None:
    c = data.draw(st.integers(0, n))
    assert pass_at_k(n, c, 1).value == pytest.approx(c / n)
    assert pass_hat_k(n, c, 1).value == pytest.approx(c / n)
    ks = list(range(1, n + 1))
    at = [v.value for v in pass_at_ks(n, c, ks).values()]
    hat = [v.value for v in pass_hat_ks(n, c, ks).values()]
    assert all(a is not None and 0 <= a <= 1 for a in at)
    assert all(a <= b + 1e-12 for a, b in zip(at, at[1:], strict=False))  # type: ignore[operator]
    assert all(a >= b - 1e-12 for a, b in zip(hat, hat[1:], strict=False))  # type: ignore[operator]


@pytest.mark.parametrize(("n", "c", "k"), [(5, 6, 1), (5, -1, 1), (5, 2, 0)])
def test_rejects_bad_arguments(n: int, c: int, k: int) -> None:
    with pytest.raises(ConfigError):
        pass_at_k(n, c, k)


def _pass_at_k_by_loop(n: int, c: int, k: int) -> float | None:
    """pass@k as it was computed: the product of the terms one at a time, in order."""
    if k > n:
        return None
    if n - c < k:
        return 1.0
    product = 1.0
    for i in range(n - c + 1, n + 1):
        product *= 1.0 - k / i
    return 1.0 - product


@settings(deadline=None, max_examples=300)
@given(st.integers(1, 80_000), st.data())
def test_pass_at_k_is_the_loops_product_to_the_bit(n: int, data: st.DataObject) -> None:
    c = data.draw(st.integers(0, n))
    k = data.draw(st.integers(1, min(n, 100)))
    assert pass_at_k(n, c, k).value == _pass_at_k_by_loop(n, c, k)
