"""Many tests at once: adjusted p-values and how many false verdicts to expect by chance."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from assay.choices import Adjustment
from assay.errors import ConfigError
from assay.stats.base import check_open_unit

ADJUST_METHODS = tuple(Adjustment)
"""Multiple-comparison adjustments, by CLI name."""


def adjust_p_values(
    p_values: npt.ArrayLike, method: str = Adjustment.NONE
) -> npt.NDArray[np.float64]:
    """Adjust p-values for testing many hypotheses at once.

    * ``none`` — unchanged.
    * ``holm`` — Holm (1979), Scand. J. Statist. 6:65: step-down Bonferroni; controls the
      family-wise error rate (the chance of even one false rejection) at alpha.
    * ``bh`` — Benjamini & Hochberg (1995), JRSS B 57:289, via
      ``scipy.stats.false_discovery_control``; controls the expected share of false
      rejections among all rejections (false discovery rate).

    Compare the adjusted values with alpha as usual.

    Args:
        p_values: One p-value per test, each in [0, 1].
        method: One of :data:`ADJUST_METHODS`.

    Returns:
        The adjusted p-values, in the input order.
    """
    from scipy import stats as sps

    if method not in ADJUST_METHODS:
        raise ConfigError(f"unknown adjustment {method!r}; choose none, holm or bh")
    p = np.asarray(p_values, dtype=np.float64).ravel()
    if p.size and (np.any(~np.isfinite(p)) or p.min() < 0 or p.max() > 1):
        raise ConfigError("p-values must lie in [0, 1]")
    if method == Adjustment.NONE or p.size == 0:
        return p.copy()
    if method == Adjustment.BH:
        adjusted: npt.NDArray[np.float64] = sps.false_discovery_control(p, method="bh")
        return adjusted
    m = p.size
    order = np.argsort(p, kind="stable")
    stepped = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(stepped, 1.0)
    return out


@dataclass(frozen=True, slots=True)
class FalseVerdictRisk:
    """How many false FAIL verdicts a suite should expect by chance alone."""

    n_tests: int
    """Number of tests judged."""
    alpha: float
    """Per-test significance level."""
    method: str
    """The adjustment used, one of :data:`ADJUST_METHODS`."""
    expected_false: float
    """Upper bound on the expected number of false FAILs if no test truly failed."""
    chance_any_false: float
    """Upper bound on the chance of at least one false FAIL if no test truly failed."""
    note: str
    """The same in one sentence for the console."""


def false_verdict_risk(
    n_tests: int, alpha: float = 0.05, method: str = Adjustment.NONE
) -> FalseVerdictRisk:
    """The chance figures behind "with this many tests, expect some false FAILs".

    Without adjustment each of m true-null tests fails falsely with probability ≤ alpha, so up
    to m·alpha false FAILs are expected and, for independent tests, at least one with chance up
    to 1 − (1 − alpha)^m. Holm keeps the chance of any false FAIL ≤ alpha; so does BH when no
    test truly failed (then its false discovery rate equals the family-wise rate). The expected
    number with an adjustment is bounded by m times the chance of any, capped by m·alpha.

    Args:
        n_tests: Number of tests judged (≥ 0).
        alpha: Per-test significance level in (0, 1).
        method: One of :data:`ADJUST_METHODS`.

    Returns:
        The risk figures and a sentence.
    """
    if n_tests < 0:
        raise ConfigError(f"n_tests must be >= 0 (got {n_tests})")
    check_open_unit("alpha", alpha)
    if method not in ADJUST_METHODS:
        raise ConfigError(f"unknown adjustment {method!r}; choose none, holm or bh")
    if method == Adjustment.NONE:
        expected = n_tests * alpha
        chance = 1 - (1 - alpha) ** n_tests
        note = (
            f"{n_tests} tests at alpha = {alpha:g}: about {expected:.1f} false FAIL verdict(s) "
            f"expected by chance even if nothing regressed (--adjust holm or bh to control this)"
        )
    else:
        chance = alpha if n_tests else 0.0
        expected = min(n_tests * alpha, n_tests * chance)
        name = "Holm" if method == Adjustment.HOLM else "Benjamini–Hochberg"
        note = (
            f"{n_tests} tests, {name}-adjusted: chance of any false FAIL at most {alpha:g} "
            f"if nothing regressed"
        )
    return FalseVerdictRisk(n_tests, alpha, method, float(expected), float(chance), note)


@dataclass(frozen=True, slots=True)
class WatchFamilyRisk:
    """What the per-test guarantees of ``assay watch`` mean over all the tests watched."""

    n_tests: int
    """Number of tests watched."""
    confidence: float
    """Each test's confidence sequence level."""
    alpha: float
    """Each test's bound on P(a false drift alarm, ever)."""
    expected_wrong_verdicts: float
    """Upper bound on the expected number of tests whose verdict is ever wrong: m(1 − c)."""
    expected_false_alarms: float
    """Upper bound on the expected number of tests with a false drift alarm: m·alpha."""
    family_confidence: float
    """The per-test confidence at which every test's verdict holds at once with ``confidence``
    (Bonferroni, :func:`simultaneous_confidence`)."""
    family_alpha: float
    """The per-test alpha at which the chance of any false alarm is at most ``alpha``."""
    note: str
    """The same in one sentence, for the console and ``/metrics``."""


def watch_family_risk(n_tests: int, confidence: float, alpha: float) -> WatchFamilyRisk:
    """The family-wide statement of ``assay watch``: per-test guarantees summed over tests.

    Each test's verdict is wrong at any look with probability at most 1 − confidence (its
    confidence sequence), and its drift alarm false with probability at most alpha. Over m
    tests, by linearity of expectation and with no assumption about how tests depend on each
    other, at most m(1 − confidence) wrong verdicts and m·alpha false alarms are expected, and
    the chance of any is at most the smaller of 1 and those sums (Boole's inequality). To hold
    the whole family at the per-test levels asked, each test needs Bonferroni's levels
    1 − (1 − confidence)/m and alpha/m (Dunn 1961); a stream does not know m in advance, so
    that is offered as advice for the tests seen, not applied.

    Args:
        n_tests: Number of tests watched (≥ 1).
        confidence: Each sequence's confidence, in (0, 1).
        alpha: Each drift alarm's bound, in (0, 1).

    Returns:
        The figures and a sentence.
    """
    if n_tests < 1:
        raise ConfigError(f"n_tests must be >= 1 (got {n_tests})")
    check_open_unit("alpha", alpha)
    family_confidence = simultaneous_confidence(confidence, n_tests)
    wrong, alarms = n_tests * (1 - confidence), n_tests * alpha
    note = (
        f"{n_tests} tests watched, each at {confidence:.0%} (drift alpha {alpha:g}): over all of "
        f"them up to {wrong:.2g} wrong verdict(s) and {alarms:.2g} false alarm(s) expected by "
        f"chance (any at all: up to {min(1.0, wrong):.0%} and {min(1.0, alarms):.0%}); for "
        f"{confidence:.0%} over the family use --confidence {family_confidence:.6g} --drift-alpha "
        f"{alpha / n_tests:.3g}"
    )
    return WatchFamilyRisk(
        n_tests,
        confidence,
        alpha,
        float(wrong),
        float(alarms),
        family_confidence,
        alpha / n_tests,
        note,
    )


def simultaneous_confidence(confidence: float, n_tests: int) -> float:
    """Per-test confidence level so that all ``n_tests`` intervals hold at once (Bonferroni).

    1 − (1 − confidence) / n_tests (Dunn 1961, JASA 56:52): with it, the chance that any of the
    suite's intervals misses its true rate is at most 1 − confidence. Use it to make
    interval-based threshold verdicts family-wise when ``--adjust holm`` is asked for (Holm's
    step-down has no interval counterpart; Bonferroni is its conservative bound).

    Args:
        confidence: The family-wise confidence wanted, in (0, 1).
        n_tests: Number of intervals (≥ 1).

    Returns:
        The per-test confidence level.
    """
    check_open_unit("confidence", confidence)
    if n_tests < 1:
        raise ConfigError(f"n_tests must be at least 1 (got {n_tests})")
    return 1 - (1 - confidence) / n_tests
