import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from assay.errors import ConfigError
from assay.stats import adjust_p_values, false_verdict_risk

PS = st.lists(st.floats(0, 1), min_size=1, max_size=30)


def holm_reference(p: list[float]) -> list[float]:
    # Holm (1979) by its definition: step down through the sorted p-values.
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


@settings(deadline=None)  # CI machines are shared; no timing flakes
@given(PS)
def test_holm_and_bh_equal_references(p: list[float]) -> None:
    assert adjust_p_values(p, "holm") == pytest.approx(holm_reference(p))
    assert adjust_p_values(p, "bh") == pytest.approx(sps.false_discovery_control(p, method="bh"))
    assert adjust_p_values(p, "none") == pytest.approx(p)


def test_holm_equals_statsmodels() -> None:
    from statsmodels.stats.multitest import multipletests  # not at collection: slow

    p = [0.001, 0.04, 0.03, 0.2, 0.011, 0.5]
    assert adjust_p_values(p, "holm") == pytest.approx(multipletests(p, method="holm")[1])
    assert adjust_p_values(p, "bh") == pytest.approx(multipletests(p, method="fdr_bh")[1])


def test_false_verdict_risk() -> None:
    risk = false_verdict_risk(200, 0.05)
    assert risk.expected_false == pytest.approx(10.0)
    assert risk.chance_any_false == pytest.approx(1 - 0.95**200)
    assert "10.0" in risk.note
    assert false_verdict_risk(200, 0.05, "holm").chance_any_false == 0.05


def test_bad_method() -> None:
    with pytest.raises(ConfigError):
        adjust_p_values([0.1], "bonferroni")
    with pytest.raises(ConfigError):
        adjust_p_values(np.array([1.5]), "holm")


def test_simultaneous_confidence_is_bonferroni() -> None:
    from assay.stats import simultaneous_confidence

    assert simultaneous_confidence(0.95, 10) == pytest.approx(0.995)
    assert simultaneous_confidence(0.95, 1) == pytest.approx(0.95)
    with pytest.raises(ConfigError):
        simultaneous_confidence(0.95, 0)


def test_watch_family_risk_sums_the_per_test_bounds() -> None:
    from assay.stats import simultaneous_confidence, watch_family_risk

    risk = watch_family_risk(50, 0.95, 0.05)
    assert risk.expected_wrong_verdicts == pytest.approx(50 * 0.05)
    assert risk.expected_false_alarms == pytest.approx(50 * 0.05)
    assert risk.family_confidence == simultaneous_confidence(0.95, 50)
    assert risk.family_alpha == pytest.approx(0.001)
    assert "up to 100%" in risk.note  # Boole's bound, capped at 1
    assert "2.5 wrong verdict(s) and 2.5 false alarm(s)" in risk.note
    few = watch_family_risk(4, 0.99, 0.01)
    assert (few.expected_wrong_verdicts, few.expected_false_alarms) == pytest.approx((0.04, 0.04))
    assert "up to 4% and 4%" in few.note
    with pytest.raises(ConfigError):
        watch_family_risk(0, 0.95, 0.05)
