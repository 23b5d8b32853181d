"""The true pass rate behind a judge's pass rate: the Rogan–Gladen estimate and its interval.

A judge of sensitivity Se and specificity Sp passes a trial of a test whose true pass rate is π
with probability ``q(π) = Se·π + (1 − Sp)·(1 − π)``. Rogan & Gladen (1978), Am. J. Epidemiol.
107:71, invert it: ``π = (p + Sp − 1) / (Se + Sp − 1)`` for the judge's pass rate p.

**The interval** carries the sampling of both the trials (p, from n judged trials) and the
labels (Se and Sp, from the human labels): it is the set of rates π₀ not rejected by a test of
``p − q(π₀) = 0``. That difference is a sum of three independent-looking proportions with
weights 1, −π₀ and −(1 − π₀); its two one-sided confidence limits are recovered from each
proportion's Clopper–Pearson limits by MOVER (Zou & Donner 2008, Stat. Med. 27:1693: "method of
variance estimates recovery"). π₀ is kept when the lower limit is ≤ 0 ≤ the upper limit; the
interval is the hull of the rates kept. The exact limits carry the skew of a sensitivity near 1
from few labels, where the Wald-type interval of Lang & Reiczigel (2014, Prev. Vet. Med.
113:13) misses on one side up to about three times α/2 (docs/statistics.md, "When the judge is
wrong", measured by ``benchmarks/bench_judge_error.py``).

**Not identifiable**: when the judge's Youden index Se + Sp − 1 is not shown to exceed 0 (its
MOVER lower limit ≤ 0), or no label covers one side (no trial people passed, or none they
failed), or no rate in [0, 1] is kept (the judge's pass rate contradicts its measured
agreement), the rate cannot be recovered from the judge: the interval is [0, 1].
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from assay.errors import ConfigError
from assay.stats.base import check_open_unit
from assay.stats.intervals import Interval
from assay.stats.judges._agreement import Agreement

METHOD: Final = "rogan-gladen-mover"
"""The interval's method name (JSON ``ci.method``)."""

_GRID: Final = 401
"""Rates tried on [0, 1] (steps of 0.0025) before each end is refined by bisection."""
_REFINE: Final = 40
"""Bisection steps at each end: 2⁻⁴⁰ of a grid step, far below any figure shown."""

Floats = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class CorrectedRate:
    """A pass rate corrected for the judge's error, with the interval a verdict reads."""

    estimate: float | None
    """The Rogan–Gladen estimate clipped to [0, 1]; None when not identifiable."""
    interval: Interval
    """The interval of the true pass rate ([0, 1] when not identifiable)."""
    identifiable: bool
    """The judge's agreement is shown to exceed chance and the labels cover both outcomes."""
    reason: str | None
    """Why the rate is not identifiable; None when it is."""
    judged_passed: int
    """Trials the judge passed."""
    judged: int
    """Trials judged."""


def _exact_limits(successes: Floats, n: Floats, confidence: float) -> tuple[Floats, Floats, Floats]:
    """Estimate and two-sided Clopper–Pearson limits, vectorised (n = 0: 0.5 in [0, 1])."""
    from scipy import stats as sps

    alpha = 1 - confidence
    safe = np.maximum(n, 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        low = np.where(successes > 0, sps.beta.ppf(alpha / 2, successes, safe - successes + 1), 0)
        high = np.where(
            successes < safe, sps.beta.isf(alpha / 2, successes + 1, safe - successes), 1
        )
    empty = n <= 0
    estimate = np.where(empty, 0.5, successes / safe)
    return (
        estimate.astype(np.float64),
        np.where(empty, 0.0, low).astype(np.float64),
        np.where(empty, 1.0, high).astype(np.float64),
    )


@dataclass(frozen=True, slots=True)
class _Pieces:
    """Each proportion's estimate and its distances to its limits (MOVER's inputs)."""

    p: Floats
    p_down: Floats
    p_up: Floats
    se: Floats
    se_down: Floats
    se_up: Floats
    f: Floats
    f_down: Floats
    f_up: Floats
    identifiable: npt.NDArray[np.bool_]

    def limits(self, rate: Floats) -> tuple[Floats, Floats]:
        """MOVER lower and upper limits of ``p − q(rate)`` (rates broadcast against cases)."""
        gap = self.p - rate * self.se - (1 - rate) * self.f
        # The upper limit of -rate·Se uses Se's lower limit, and so on (Zou & Donner 2008).
        up = np.sqrt(self.p_up**2 + (rate * self.se_down) ** 2 + ((1 - rate) * self.f_down) ** 2)
        down = np.sqrt(self.p_down**2 + (rate * self.se_up) ** 2 + ((1 - rate) * self.f_up) ** 2)
        return gap - down, gap + up

    def kept(self, rate: Floats) -> npt.NDArray[np.bool_]:
        """Whether each rate is not rejected: lower limit ≤ 0 ≤ upper limit."""
        lower, upper = self.limits(rate)
        return (lower <= 0) & (upper >= 0)


def _pieces(
    judged_passed: npt.ArrayLike,
    judged: npt.ArrayLike,
    true_pass: npt.ArrayLike,
    false_fail: npt.ArrayLike,
    false_pass: npt.ArrayLike,
    true_fail: npt.ArrayLike,
    confidence: float,
) -> _Pieces:
    x, n = np.asarray(judged_passed, float), np.asarray(judged, float)
    tp, fn = np.asarray(true_pass, float), np.asarray(false_fail, float)
    fp, tn = np.asarray(false_pass, float), np.asarray(true_fail, float)
    x, n, tp, fn, fp, tn = np.broadcast_arrays(x, n, tp, fn, fp, tn)
    p, p_low, p_high = _exact_limits(x, n, confidence)
    return _pieces_from(p, p_low, p_high, n > 0, tp, fn, fp, tn, confidence)


def _pieces_from(
    p: Floats,
    p_low: Floats,
    p_high: Floats,
    judged: npt.NDArray[np.bool_],
    tp: Floats,
    fn: Floats,
    fp: Floats,
    tn: Floats,
    confidence: float,
) -> _Pieces:
    """MOVER's inputs from the judge's rate and its limits, and the labels' exact limits."""
    se, se_low, se_high = _exact_limits(tp, tp + fn, confidence)
    # The false-pass rate f = 1 − Sp: the judge passes a trial people failed.
    f, f_low, f_high = _exact_limits(fp, fp + tn, confidence)
    youden_low = (se - f) - np.sqrt((se - se_low) ** 2 + (f_high - f) ** 2)
    covered = (tp + fn > 0) & (fp + tn > 0) & judged
    return _Pieces(
        p,
        p - p_low,
        p_high - p,
        se,
        se - se_low,
        se_high - se,
        f,
        f - f_low,
        f_high - f,
        covered & (youden_low > 0),
    )


def corrected_bounds(
    judged_passed: npt.ArrayLike,
    judged: npt.ArrayLike,
    true_pass: npt.ArrayLike,
    false_fail: npt.ArrayLike,
    false_pass: npt.ArrayLike,
    true_fail: npt.ArrayLike,
    confidence: float = 0.95,
) -> tuple[Floats, Floats, npt.NDArray[np.bool_]]:
    """Vectorised :func:`corrected_rate` bounds for many cases at once (simulations).

    Arrays broadcast. Each case's bounds are the first and last of 401 rates kept, each end
    then refined by bisection to the boundary between a kept and a rejected rate.

    Returns:
        ``(low, high, identifiable)``; a case not identifiable has bounds 0 and 1.
    """
    check_open_unit("confidence", confidence)
    pieces = _pieces(
        judged_passed, judged, true_pass, false_fail, false_pass, true_fail, confidence
    )
    return _bounds(pieces)


def _bounds(pieces: _Pieces) -> tuple[Floats, Floats, npt.NDArray[np.bool_]]:
    """The hull of the rates kept, per case: (low, high, identifiable)."""
    grid = np.linspace(0.0, 1.0, _GRID)
    shape = pieces.p.shape
    flat = _Pieces(*(np.reshape(a, (-1, 1)) for a in _fields(pieces)))
    kept = flat.kept(grid[None, :])
    some = kept.any(axis=1)
    first = np.argmax(kept, axis=1)
    last = _GRID - 1 - np.argmax(kept[:, ::-1], axis=1)
    low = _refine(flat, grid, first, towards=-1)
    high = _refine(flat, grid, last, towards=1)
    identifiable = flat.identifiable[:, 0] & some
    low = np.where(identifiable, low, 0.0)
    high = np.where(identifiable, high, 1.0)
    return low.reshape(shape), high.reshape(shape), identifiable.reshape(shape)


def _fields(pieces: _Pieces) -> list[npt.NDArray[np.generic]]:
    return [getattr(pieces, name) for name in _Pieces.__dataclass_fields__]


def _refine(pieces: _Pieces, grid: Floats, index: npt.NDArray[np.intp], towards: int) -> Floats:
    """Bisect between each end's kept grid rate and its rejected neighbour (none: the end)."""
    inside = grid[index]
    neighbour = np.clip(index + towards, 0, _GRID - 1)
    outside = grid[neighbour]
    open_end = neighbour == index  # the kept rate is 0 or 1 itself
    for _ in range(_REFINE):
        middle = (inside + outside) / 2
        keep = pieces.kept(middle[:, None])[:, 0]
        inside = np.where(keep, middle, inside)
        outside = np.where(keep, outside, middle)
    return np.where(open_end, grid[index], inside)


def corrected_mean(
    estimate: float, interval: Interval, agreement: Agreement
) -> tuple[float | None, Interval, bool]:
    """A mean of judged pass rates (a suite's, over cases) corrected for the judge's error.

    The judge's rate is linear in the true one, so the mean over cases of the true rates is
    the Rogan–Gladen transform of the mean of the judged ones; its interval is the same MOVER
    inversion with the judged mean's own interval (e.g. cluster-robust) as its first piece.

    Returns:
        ``(estimate, interval, identifiable)``; not identifiable: None and [0, 1].
    """
    level = interval.confidence
    one = np.array([1.0])
    counts = (
        agreement.true_pass,
        agreement.false_fail,
        agreement.false_pass,
        agreement.true_fail,
    )
    tp, fn, fp, tn = (np.array([float(k)]) for k in counts)
    pieces = _pieces_from(
        one * estimate,
        one * min(max(interval.low, 0.0), 1.0),
        one * min(max(interval.high, 0.0), 1.0),
        np.array([True]),
        tp,
        fn,
        fp,
        tn,
        level,
    )
    low, high, ok = _bounds(pieces)
    if not bool(ok[0]):
        return None, Interval(0.0, 1.0, level, METHOD), False
    se, sp = agreement.sensitivity, agreement.specificity
    assert se is not None and sp is not None
    value = rogan_gladen(min(max(estimate, 0.0), 1.0), se, sp)
    return value, Interval(float(low[0]), float(high[0]), level, METHOD), True


def youden_lower(agreement: Agreement, confidence: float | None = None) -> float | None:
    """The lower confidence limit of the judge's Youden index Se + Sp − 1 (MOVER, exact pieces).

    A true difference d between two pass rates shows in the judge's rates as d·(Se + Sp − 1):
    this bound is how much of it, at least, the judge passes on. None without labels on both
    sides.
    """
    if not agreement.human_passed or not agreement.human_failed:
        return None
    level = agreement.confidence if confidence is None else confidence
    se, se_low, _ = _exact_limits(
        np.array([float(agreement.true_pass)]), np.array([float(agreement.human_passed)]), level
    )
    f, _, f_high = _exact_limits(
        np.array([float(agreement.false_pass)]), np.array([float(agreement.human_failed)]), level
    )
    lower = (se - f) - np.sqrt((se - se_low) ** 2 + (f_high - f) ** 2)
    return float(lower[0])


def rogan_gladen(apparent: float, sensitivity: float, specificity: float) -> float:
    """The Rogan–Gladen estimate ``(p + Sp − 1) / (Se + Sp − 1)``, clipped to [0, 1].

    Rogan & Gladen (1978), "Estimating prevalence from the results of a screening test",
    Am. J. Epidemiol. 107:71–76.

    Raises:
        ConfigError: Se + Sp ≤ 1 (the judge does no better than chance: nothing to invert).
    """
    youden = sensitivity + specificity - 1
    if youden <= 0:
        raise ConfigError(f"sensitivity + specificity must exceed 1 (got {youden + 1:g})")
    return min(max((apparent + specificity - 1) / youden, 0.0), 1.0)


def corrected_rate(
    judged_passed: int, judged: int, agreement: Agreement, confidence: float | None = None
) -> CorrectedRate:
    """The pass rate corrected for the judge's measured error, with its interval.

    Args:
        judged_passed: Trials the judge passed.
        judged: Trials judged (≥ 1).
        agreement: The judge against human labels (its own confidence is used unless given).
        confidence: Two-sided confidence of the interval.

    Returns:
        The estimate, the interval (``method`` :data:`METHOD`) and whether it is identifiable,
        with the reason when it is not.
    """
    level = agreement.confidence if confidence is None else confidence
    if judged < 1 or not 0 <= judged_passed <= judged:
        raise ConfigError(f"need 0 ≤ passed ≤ n, n ≥ 1 (got {judged_passed} of {judged})")
    low, high, ok = corrected_bounds(
        judged_passed,
        judged,
        agreement.true_pass,
        agreement.false_fail,
        agreement.false_pass,
        agreement.true_fail,
        level,
    )
    identifiable = bool(ok)
    interval = Interval(float(low), float(high), level, METHOD)
    if identifiable:
        se, sp = agreement.sensitivity, agreement.specificity
        assert se is not None and sp is not None  # both sides labelled when identifiable
        # Identifiable means Se + Sp − 1 is shown to exceed 0, so its estimate does too.
        estimate = rogan_gladen(judged_passed / judged, se, sp)
        return CorrectedRate(estimate, interval, True, None, judged_passed, judged)
    why = _why_not(judged_passed, judged, agreement, level)
    return CorrectedRate(None, interval, False, why, judged_passed, judged)


def _why_not(judged_passed: int, judged: int, agreement: Agreement, confidence: float) -> str:
    if not agreement.human_passed:
        return "no labelled trial was passed by people: the judge's sensitivity is unknown"
    if not agreement.human_failed:
        return "no labelled trial was failed by people: the judge's specificity is unknown"
    pieces = _pieces(
        judged_passed,
        judged,
        agreement.true_pass,
        agreement.false_fail,
        agreement.false_pass,
        agreement.true_fail,
        confidence,
    )
    if not bool(pieces.identifiable):
        return (
            "the judge's sensitivity + specificity is not shown to exceed 1 with "
            f"{agreement.labelled} labels: its verdicts may carry no information on the true "
            "rate"
        )
    return (
        "the judge's pass rate lies outside what its measured agreement allows (are the "
        "labelled trials a random sample of the test's trials?)"
    )
