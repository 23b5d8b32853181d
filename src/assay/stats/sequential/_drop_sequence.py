"""An anytime-valid test of a drop in pass rate, and a confidence sequence for the drop.

**Pairs.** The two versions' trials are paired in run order: the i-th trial of the baseline
with the i-th trial of the current version (each version's trials in the order they were
started, an order fixed before their outcomes). Pair ``i`` gives ``D_i = X_i - Y_i`` in
``{-1, 0, 1}`` (baseline pass minus current pass): independent draws with mean the drop
``d = p_b - p_c``.

**Why any interleaving and any stopping keep it valid.** Think of each version's trials as an
endless sequence of independent draws, made in advance, of which the runs reveal a prefix.
Which version runs next, and when either stops, may depend on everything seen so far: that
decides how much of each sequence is revealed, never what is in it (a trial is a fresh draw
whatever decided to run it). The pairs revealed are the first ``k = min(n_b, n_c)`` of the
endless sequence of pairs, so every value the test ever shows is one value of a process over
that sequence. When that process is a non-negative supermartingale over the pairs started at 1,
Ville's inequality bounds the chance it *ever* reaches ``1/alpha`` by alpha — whoever looked,
how often, and whatever stopped either run. Trials one version ran beyond the other's count
wait for partners: the test does not use them.

**Betting** (Shafer & Vovk; Waudby-Smith & Ramdas 2024). A gambler who bets the fraction ``u``
of its capital that the drop exceeds ``d`` multiplies it each pair by

    1 + u (D_i - d) / (1 + d),        u in [0, 1),

never negative (``D_i >= -1``), with conditional mean ``1 + u (d_true - d) / (1 + d) <= 1``
whenever the true drop is at most ``d``. The capital ``K+(d)`` of a crowd of such gamblers,
one per fraction of a fixed grid, each starting with an equal share (the mixture's prior), is
a test supermartingale under every pair of rates with ``p_b - p_c <= d``. Hence:

* **Test** of "no drop" (``p_c >= p_b``): at ``d = 0`` the factor is ``1 + u D_i``, so the
  capital depends only on the discordant pairs — ``n+`` where only the baseline passed, ``n-``
  where only the current passed: ``E = mean_u (1 + u)^n+ (1 - u)^n-``, a sequential sign test
  of the discordant pairs (each ``u`` is the likelihood ratio of "the baseline passed it" with
  probability ``(1 + u)/2`` against ``1/2``). A drop is shown once ``E`` has reached
  ``1/alpha`` at any pair so far; the anytime-valid p-value is ``min(1, 1/max_k E_k)``.
* **Confidence sequence** of the drop: the lower end is the smallest ``d`` whose capital has
  stayed below ``1/alpha`` at every pair so far; the upper end mirrors it (gamblers betting
  ``1 - u (D_i - d) / (1 - d)``, that the drop is below ``d``). Each end is a one-sided
  ``1 - alpha`` bound valid at every moment (the running intersection over the pairs), the two
  together cover at ``1 - 2 alpha``, and the lower end lies above 0 exactly when the test
  rejects.
* **Power**, exact: ``E`` is a function of ``(n+, n-)``, and concordant pairs leave it as it is,
  so the chance of rejecting within ``k`` pairs is the chance that a walk of discordant signs
  (``+`` with probability ``q = p_b (1 - p_c) / (p_b (1 - p_c) + (1 - p_b) p_c)``) crosses the
  boundary within ``m`` steps, ``m`` binomial — a dynamic programme over ``n+``.

Against the growth-rate-optimal e-value for pairs that knows both rates (Turner, Ly &
Grünwald 2024), the best single fraction loses little: at 0.9 → 0.8 it grows ``log E`` by 0.0197
a pair against their 0.0199; the grid's uniform prior pays the rest for not knowing the rates.

References:
    Ville (1939), "Étude critique de la notion de collectif", Gauthier-Villars.
    Shafer & Vovk (2019), "Game-Theoretic Foundations for Probability and Finance", Wiley.
    Waudby-Smith & Ramdas (2024), "Estimating means of bounded random variables by betting",
    J. R. Statist. Soc. B 86(1):1–27 (betting confidence sequences, running intersection).
    Turner, Ly, Grünwald (2024), "Generic E-variables for exact sequential k-sample tests that
    allow for optional stopping", J. Statist. Plann. Inference 230:106116 (2×2 data in blocks).
    Ramdas, Grünwald, Vovk, Shafer (2023), "Game-theoretic statistics and safe anytime-valid
    inference", Statist. Sci. 38:576–601.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from assay.errors import ConfigError, InsufficientDataError
from assay.stats.base import check_drop, check_open_unit, check_probability

__all__ = [
    "MAX_POWER_PAIRS",
    "DropSequence",
    "DropTest",
]

_GRID = 200
_FRACTIONS = (np.arange(_GRID) + 0.5) / _GRID
"""The fractions of capital the crowd of gamblers bets, one gambler each (the prior)."""
_EDGE = 1e-9
_NEGLIGIBLE = 60.0  # e^-60 of the richest gambler: below a double's precision of the sum
_XTOL = 1e-12  # the ends' precision: finer than any count can move them
MAX_POWER_PAIRS = 20_000
"""The most pairs the exact power enumerates (its cost grows with the square); above them the
power within the first this many pairs, a lower bound."""
_TAIL = 1e-15  # binomial mass of discordant counts left out of the exact power

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
Outcomes = Sequence[bool] | npt.NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class DropTest:
    """The anytime-valid test of "the current pass rate is below the baseline's"."""

    baseline_passed: int
    """Passing baseline trials."""
    baseline_n: int
    """Baseline trials."""
    current_passed: int
    """Passing current trials."""
    current_n: int
    """Current trials."""
    pairs: int
    """Pairs the test used: ``min(baseline_n, current_n)``, the i-th trial of each version."""
    e_value: float
    """The largest value the e-process against "no drop" reached over the pairs so far (1
    before any): ``>= 1/alpha`` shows a drop at level alpha."""
    p_value: float
    """The anytime-valid p-value ``min(1, 1/e_value)``: valid at any stopping time."""
    low: float
    """Lower end of the drop's confidence sequence (``d = p_baseline - p_current``): a
    one-sided bound at ``confidence``, above 0 exactly when the test rejects."""
    high: float
    """Upper end: a one-sided bound at ``confidence`` ("the drop is at most ``high``")."""
    confidence: float
    """``1 - alpha``: each end's level at every moment at once (the two together:
    ``1 - 2 alpha``). ``low > high`` means the pairs contradict one constant drop."""


@dataclass(frozen=True, slots=True)
class DropSequence:
    """An anytime-valid test and confidence sequence for a drop between two pass rates.

    Betting on the two versions' trials paired in run order (see the module): valid whatever
    rule stopped either version and however their trials interleaved.
    """

    confidence: float = 0.95
    """``1 - alpha``: the test's level is alpha; each end of the drop's interval covers at
    ``confidence`` at every moment."""

    def __post_init__(self) -> None:
        check_open_unit("confidence", self.confidence)

    @property
    def alpha(self) -> float:
        """``1 - confidence``: the level the test rejects at."""
        return 1 - self.confidence

    @property
    def _level(self) -> float:
        return -math.log(self.alpha)

    def log_e_value(self, plus: npt.ArrayLike, minus: npt.ArrayLike) -> FloatArray:
        """``log E`` after pairs with these counts of discordant pairs (elementwise).

        ``plus``: pairs where only the baseline passed; ``minus``: only the current.
        """
        ups, downs = (
            np.asarray(x, dtype=np.int64).ravel() for x in np.broadcast_arrays(plus, minus)
        )
        shape = np.broadcast_shapes(np.shape(plus), np.shape(minus))
        if ups.size == 0:
            return np.zeros(shape)
        # Simulations repeat the same counts many times: compute each pair of counts once.
        width = int(downs.max()) + 1
        unique, back = np.unique(ups * width + downs, return_inverse=True)
        found = _log_capital(unique // width, 0, unique % width, 0.0)
        return np.asarray(found[back].reshape(shape), dtype=np.float64)

    def log_e_process(self, baseline: npt.ArrayLike, current: npt.ArrayLike) -> FloatArray:
        """``log E`` after each pair, over the last axis (leading axes broadcast).

        Args:
            baseline: Pass (True) or fail of each baseline trial in run order, ``(..., n_b)``.
            current: The same for the current version, ``(..., n_c)``.

        Returns:
            ``(..., min(n_b, n_c))``: the log e-value after the first 1, 2, … pairs.
        """
        plus, _, minus = _pair_counts(baseline, current)
        return self.log_e_value(plus, minus)

    def test(self, baseline: Outcomes, current: Outcomes) -> DropTest:
        """The e-value, anytime-valid p-value and drop interval after these trials.

        Args:
            baseline: Pass or fail of each baseline trial, in run order (≥ 1 trial).
            current: Pass or fail of each current trial, in run order (≥ 1 trial).

        Returns:
            The result.
        """
        b, c = _outcomes(baseline, current)
        plus, zero, minus = _pair_counts(b, c)
        # The lower end's search reads the capital at a drop of 0, which is the e-process.
        low, top = self._lower_end(plus, zero, minus)
        log_e = max(top, 0.0)
        high = -self._lower_end(minus, zero, plus)[0]
        return DropTest(
            int(b.sum()),
            b.size,
            int(c.sum()),
            c.size,
            plus.size,
            math.exp(min(log_e, 700.0)),
            min(1.0, math.exp(-log_e)),
            low,
            high,
            self.confidence,
        )

    def interval(self, baseline: Outcomes, current: Outcomes) -> tuple[float, float]:
        """The drop's confidence sequence after these trials: ``(low, high)`` in ``[-1, 1]``."""
        return self._interval(*_pair_counts(*_outcomes(baseline, current)))

    def _interval(self, plus: IntArray, zero: IntArray, minus: IntArray) -> tuple[float, float]:
        # The upper end of d is minus the lower end of -d with the roles of the versions swapped.
        return self._lower_end(plus, zero, minus)[0], -self._lower_end(minus, zero, plus)[0]

    def _lower_end(self, plus: IntArray, zero: IntArray, minus: IntArray) -> tuple[float, float]:
        """The smallest drop whose capital stayed below ``1/alpha`` after every pair so far.

        And the largest log-capital at a drop of 0: the e-process's maximum.
        """
        from scipy import optimize

        level = self._level
        search = _Search(np.stack([plus, zero, minus], axis=-1).astype(np.float64), level)
        excess = search.excess  # falls as the drop grows: each gambler's factor does
        at_zero = search.largest(0.0)
        # At d near 1 no factor exceeds 1, so the top is never out; at d near -1 it may be in.
        if excess(-1 + _EDGE) < 0:
            return -1.0, at_zero
        # Which side of 0 the end lies on is the test's own decision, read at 0 exactly.
        shown = excess(0.0) >= 0
        low, high = (0.0, 1 - _EDGE) if shown else (-1 + _EDGE, 0.0)
        end = float(optimize.brentq(excess, low, high, xtol=_XTOL))
        while excess(end) >= 0 and end < high:  # step inside: an end never claims more
            end = min(end + _XTOL, high)
        return (end if shown else min(end, 0.0)), at_zero

    def boundary(self, signs: int) -> IntArray:
        """Where the test rejects, by the count ``0..signs`` of current-only passes.

        Each entry is the fewest baseline-only passes that bring ``E`` to ``1/alpha``
        (``signs + 1``: none within ``signs`` discordant pairs).
        """
        if signs < 0:
            raise ConfigError(f"signs must be ≥ 0 (got {signs})")
        return _boundary(self.confidence, signs)

    def power(
        self, baseline_n: int, current_n: int, baseline_rate: float, delta: float = 0.10
    ) -> float:
        """Exact power to show a drop of ``delta`` from ``baseline_rate`` at these group sizes.

        The chance of rejecting within ``min(baseline_n, current_n)`` pairs with the current
        rate ``max(baseline_rate - delta, 0)`` (see :meth:`rejection_probability`).
        """
        check_drop("delta", delta)
        return self.rejection_probability(
            baseline_n, current_n, baseline_rate, max(baseline_rate - delta, 0.0)
        )

    def rejection_probability(
        self, baseline_n: int, current_n: int, baseline_rate: float, current_rate: float
    ) -> float:
        """Exact probability that the test rejects within these group sizes at these rates.

        The discordant pairs among ``k = min(baseline_n, current_n)`` are binomial; given
        their number ``m``, the chance the walk of their signs crosses :meth:`boundary` within
        ``m`` steps comes from a dynamic programme over the count of ``+`` signs. Above
        :data:`MAX_POWER_PAIRS` pairs it is the probability of rejecting within the first
        :data:`MAX_POWER_PAIRS` pairs: a lower bound (more pairs can only add crossings), so a
        verdict that needs power never claims more than it has.
        """
        from scipy import stats as sps

        for name, rate in (("baseline_rate", baseline_rate), ("current_rate", current_rate)):
            check_probability(name, rate)
        pairs = _check_sizes(baseline_n, current_n)
        plus = baseline_rate * (1 - current_rate)
        discordant = plus + (1 - baseline_rate) * current_rate
        if discordant <= 0:
            return 0.0
        # Discordant counts beyond this carry less than _TAIL of the mass: count them crossed
        # no more often than at the last one kept (the chance only grows with m).
        most = min(pairs, int(sps.binom.isf(_TAIL, pairs, discordant)) + 1)
        crossed = _crossed_within(self.boundary(most), plus / discordant, most)
        weights = sps.binom.pmf(np.arange(most + 1), pairs, discordant)
        tail = max(1.0 - float(weights.sum()), 0.0)
        return float(min(max(weights @ crossed + tail * crossed[-1], 0.0), 1.0))


def _bet_logs(drop: float) -> FloatArray:
    """``log`` of each gambler's factor ``1 + u (D - drop) / (1 + drop)``.

    Rows ``D = +1, 0, -1``, one column per fraction ``u``: gamblers betting the drop exceeds
    ``drop``.
    """
    scale = 1.0 / (1.0 + drop)
    return np.stack(
        [
            np.log1p(_FRACTIONS * (1.0 - drop) * scale),
            np.log1p(-_FRACTIONS * drop * scale),
            np.log1p(-_FRACTIONS),
        ]
    )


def _linear(counts: FloatArray, drop: float) -> FloatArray:
    """Each gambler's log-capital, ``(..., 3)`` counts of ``D = +1, 0, -1`` → ``(..., grid)``.

    ``einsum``, not ``@``: with three terms a product is cheaper than a call into BLAS.
    """
    return np.asarray(np.einsum("...j,jg->...g", counts, _bet_logs(drop)), dtype=np.float64)


def _log_mean_exp(each: FloatArray) -> FloatArray:
    """The log of the mean of ``exp`` over the last axis (the crowd's capital), stably.

    Gamblers below ``e^-_NEGLIGIBLE`` of the richest are left out rather than computed as
    subnormal numbers (slow): the capital comes out smaller by at most ``e^-_NEGLIGIBLE``
    of itself, never larger.
    """
    top = np.max(each, axis=-1, keepdims=True)
    shifted = each - top
    kept = np.exp(shifted, out=np.zeros_like(shifted), where=shifted > -_NEGLIGIBLE)
    return np.asarray(np.log(np.mean(kept, axis=-1)) + top[..., 0])


def _log_capital(
    plus: npt.ArrayLike, zero: npt.ArrayLike, minus: npt.ArrayLike, drop: float
) -> FloatArray:
    """``log K+(drop)``: the crowd's capital after pairs with these counts of ``D = +1, 0, -1``.

    Each gambler's log-capital is linear in the counts; the crowd's is their log-mean.
    """
    counts = np.stack(np.broadcast_arrays(plus, zero, minus), axis=-1).astype(np.float64)
    return _log_mean_exp(_linear(counts, drop))


_FEW = 256  # pairs whose crowds are all computed, not bounded first
_BLOCK = 64  # pairs bounded together before pair by pair
_CHUNK = 4096  # pairs whose crowds are computed at once: 4096 x 200 doubles, 6.5 MB an array
_ROUNDING = 2e-12  # thousands of ulps a unit of log-capital: above any rounding of one pair's
_SLOPES = 1000.0  # bound on |d log-factor / d u| (< 1 / 0.0025), for the rounding of slopes


def _crowd_bounds(counts: FloatArray, drop: float) -> FloatArray:
    """An upper bound on each pair's crowd's log-capital, at a cost of O(1) a pair.

    A gambler's log-capital ``f(u) = n+ log(1 + u a) + n0 log(1 - u b) + n- log(1 - u)``
    (``a = (1 - d)/(1 + d)``, ``b = d/(1 + d)``) is concave in its fraction ``u``, so each
    gambler of the grid is below the tangent at one of the two fractions around the top of
    ``f`` (the one on its side). Two bounds follow, the smaller kept: the richest gambler's
    (the larger of the two values, each raised by its tangent's rise towards the end of the
    grid on its outer side: zero when the two straddle the top, as they do unless the top was
    found wrong), and the crowd's mean capital, each side's gamblers below a geometric series.
    The top solves ``f'(u) = 0``, a quadratic once its denominators are cleared. Rounding is
    not included: see :func:`_rounding`.
    """
    plus, zero, minus = counts[:, 0], counts[:, 1], counts[:, 2]
    scale = 1.0 / (1.0 + drop)
    a, b = (1.0 - drop) * scale, drop * scale
    first, last = float(_FRACTIONS[0]), float(_FRACTIONS[-1])
    c0 = plus * a - zero * b - minus
    c1 = -(plus * (a * (1 + b)) + zero * (b * (a - 1)) + minus * (a - b))
    c2 = (a * b) * (plus + zero + minus)
    with np.errstate(all="ignore"):
        root = 2 * c0 / (-c1 + np.sqrt(c1 * c1 - 4 * c2 * c0))
    # f' <= 0 from the start: the top is the first fraction; no root in (0, 1): f' > 0 all along.
    top = np.where(c0 <= 0, first, np.where(np.isfinite(root) & (root > 0), root, last))
    left = np.clip(np.floor((top - first) * _GRID), 0, _GRID - 2).astype(np.int64)
    logs = _bet_logs(drop)
    richest = np.full(plus.shape, -np.inf)
    sides = []
    for column, outer, count in ((left, first, left + 1), (left + 1, last, _GRID - 1 - left)):
        u = _FRACTIONS[column]
        value = plus * logs[0, column] + zero * logs[1, column] + minus * logs[2, column]
        slope = plus * (a / (1 + u * a)) - zero * (b / (1 - u * b)) - minus / (1 - u)
        # The tangent's rise from u towards the outer end of the grid (never a fall).
        np.maximum(richest, value + np.maximum(slope * (outer - u), 0.0), out=richest)
        # The gamblers from u outwards, each below the tangent: a geometric sum of capitals.
        sides.append(value + _log_geometric(slope * np.sign(outer - u) / _GRID, count))
    # The crowd's log-capital: the log of the mean of the sides' capitals.
    crowd = np.logaddexp(*sides) - math.log(_GRID)
    bound = np.minimum(richest, crowd)
    return np.where(np.isnan(bound), np.inf, bound)


def _log_geometric(step: FloatArray, count: IntArray) -> FloatArray:
    """``log sum_{j < count} e^(j step)``, stably whatever the sign of ``step``."""
    with np.errstate(all="ignore"):
        rising = step > 0
        t = np.where(rising, -step, step)  # <= 0: the sum from its largest term down
        ratio = np.expm1(t * count) / np.expm1(t)
        out = np.log(np.where(t == 0, count, ratio)) + np.where(rising, step * (count - 1), 0.0)
    return np.asarray(out, dtype=np.float64)


def _rounding(pairs: FloatArray, drop: float) -> FloatArray:
    """What rounding may move a pair's computed log-capital or its bound by, and far more.

    Relative errors of a few ulps in each of ``pairs`` terms no larger than the largest
    log-factor, and in slopes below :data:`_SLOPES` times ``pairs``: 2e-12 is thousands of ulps.
    """
    largest = float(np.max(np.abs(_bet_logs(drop))))
    return _ROUNDING * (1.0 + pairs * (largest + _SLOPES))


class _Search:
    """The largest log-capital over a path's pairs, at the drops a root finder asks for.

    Equal, bit for bit, to computing every pair's crowd and taking the maximum, while
    computing only the crowds that can hold it: a crowd's log-capital is at most its richest
    gambler's (so at most :func:`_crowd_bounds`), which leaves few pairs near the top at any
    one drop. And every crowd's capital falls as the drop grows, so once a drop ``lo`` is
    known to reach ``1/alpha`` and a drop ``hi`` not, at every drop between them a pair whose
    bound at ``lo`` is below the largest log-capital at ``hi`` cannot hold the maximum: the
    search keeps only the others, fewer at each step of the root finder.
    """

    def __init__(self, counts: FloatArray, level: float) -> None:
        self._counts = counts
        self._pairs = counts.sum(axis=1)
        self._level = level
        self._seen: dict[float, float] = {}
        self._lo, self._hi = -math.inf, math.inf
        self._upper = np.full(counts.shape[0], np.inf)  # each pair's bound, at every d >= lo
        self._at_hi = -math.inf  # the largest log-capital at hi: at most the one at d <= hi
        self._live = np.arange(counts.shape[0])

    def excess(self, drop: float) -> float:
        """The largest log-capital over the pairs at this drop, less ``log(1/alpha)``."""
        return self.largest(drop) - self._level

    def largest(self, drop: float) -> float:
        """The largest log-capital over the pairs at this drop."""
        if drop not in self._seen:
            inside = self._lo <= drop <= self._hi
            rows = self._live if inside else np.arange(self._counts.shape[0])
            # Bounds found at lo hold at every drop above it, even above hi.
            prior = self._upper[rows] if self._lo <= drop else None
            top, upper = self._largest(rows, drop, prior)
            self._seen[drop] = top
            if inside:
                self._narrow(drop, top, rows, upper)
        return self._seen[drop]

    def _largest(
        self, rows: IntArray, drop: float, prior: FloatArray | None
    ) -> tuple[float, FloatArray]:
        """The largest computed log-capital over these pairs (ascending), and bounds.

        Each pair's bound holds at every drop from this one up. The pairs are bounded first
        in blocks of :data:`_BLOCK`, each by counts no pair in it beats in its capital's
        favour (its last pair's ``+1`` count, its first pair's ``-1`` count, and its last or
        first pair's ``0`` count as a ``0`` raises or lowers every capital at this drop);
        then pair by pair in the blocks whose bound beats the best block's best crowd; then
        the crowds of the pairs whose bound beats the best so far are computed, richest first.
        ``prior``: bounds already known at this drop, one a pair.
        """
        whole = rows.size == self._pairs.size  # no copy of every pair's counts
        counts = self._counts if whole else self._counts[rows]
        pairs = self._pairs if whole else self._pairs[rows]
        if rows.size <= _FEW:  # bounding costs more than it saves
            values = _log_mean_exp(_linear(counts, drop))
            return float(np.max(values)), values + _rounding(pairs, drop)
        starts = np.arange(0, rows.size, _BLOCK)
        ends = np.minimum(starts + _BLOCK - 1, rows.size - 1)
        corner = counts[ends]
        corner[:, 2] = counts[starts, 2]
        if drop > 0:
            corner[:, 1] = counts[starts, 1]
        blocks = _crowd_bounds(corner, drop) + _rounding(pairs[ends], drop)
        upper = np.repeat(blocks, _BLOCK)[: rows.size]
        if prior is not None:
            np.minimum(upper, prior, out=upper)
            blocks = np.maximum.reduceat(upper, starts)
        best, top = -math.inf, int(np.argmax(blocks))
        for first in (True, False):
            # The best block alone gives a first best; then every block that may beat it.
            if first:
                span = np.arange(starts[top], ends[top] + 1)
            else:
                span = np.flatnonzero(np.repeat(blocks > best, _BLOCK)[: rows.size])
            slack = _rounding(pairs[span], drop)
            upper[span] = np.minimum(upper[span], _crowd_bounds(counts[span], drop) + slack)
            keep = upper[span] > best
            span, slack = span[keep], slack[keep]
            order = np.argsort(-upper[span], kind="stable")
            span, slack = span[order], slack[order]
            start, size = 0, 1  # the richest alone first, then growing chunks
            while start < span.size and upper[span[start]] > best:
                chunk, extra = span[start : start + size], slack[start : start + size]
                keep = upper[chunk] > best
                chunk, extra = chunk[keep], extra[keep]
                values = _log_mean_exp(_linear(counts[chunk], drop))
                upper[chunk] = np.minimum(upper[chunk], values + extra)
                best = max(best, float(np.max(values)))
                start, size = start + size, min(4 * size, _CHUNK)
        return best, upper

    def _narrow(self, drop: float, top: float, rows: IntArray, upper: FloatArray) -> None:
        if top >= self._level:  # the end lies above: later drops are at least this one
            self._lo = drop
            self._upper[rows] = upper
        else:
            self._hi, self._at_hi = drop, top
        # Rounding at any drop from lo up: the largest log-factor only shrinks as drops grow.
        slack = float(_rounding(self._pairs[-1:], max(self._lo, -1 + _EDGE))[0])
        self._live = self._live[self._upper[self._live] >= self._at_hi - slack]


def _pair_counts(
    baseline: npt.ArrayLike, current: npt.ArrayLike
) -> tuple[IntArray, IntArray, IntArray]:
    """Running counts of ``D = +1, 0, -1`` over the pairs (last axis)."""
    b = np.asarray(baseline, dtype=np.int8)
    c = np.asarray(current, dtype=np.int8)
    pairs = min(b.shape[-1], c.shape[-1])
    diff = b[..., :pairs] - c[..., :pairs]
    return tuple(  # type: ignore[return-value]
        np.cumsum(diff == value, axis=-1, dtype=np.int64) for value in (1, 0, -1)
    )


def _outcomes(
    baseline: Outcomes, current: Outcomes
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    b, c = np.asarray(baseline).ravel(), np.asarray(current).ravel()
    if b.size < 1 or c.size < 1:
        raise InsufficientDataError(
            f"both versions need at least one trial (got {b.size} and {c.size})"
        )
    for name, values in (("baseline", b), ("current", c)):
        if not np.isin(values, (0, 1)).all():
            raise ConfigError(f"{name} outcomes must be pass (True) or fail (False)")
    return b.astype(bool), c.astype(bool)


def _check_sizes(nb: int, nc: int) -> int:
    if nb < 1 or nc < 1:
        raise InsufficientDataError(f"both versions need at least one trial (got {nb} and {nc})")
    # The power within the first MAX_POWER_PAIRS pairs: its cost grows with the square.
    return min(nb, nc, MAX_POWER_PAIRS)


@functools.lru_cache(maxsize=64)
def _boundary(confidence: float, signs: int) -> IntArray:
    sequence = DropSequence(confidence)
    minus = np.arange(signs + 1, dtype=np.int64)
    # E grows with n+: bisect each column between "not reached" (lo) and "reached" (hi).
    lo = np.full(signs + 1, -1, dtype=np.int64)
    hi = np.full(signs + 1, signs + 1, dtype=np.int64)
    while (open_ := hi - lo > 1).any():
        mid = (lo + hi) // 2
        reached = sequence.log_e_value(mid, minus) >= sequence._level
        hi = np.where(open_ & reached, mid, hi)
        lo = np.where(open_ & ~reached, mid, lo)
    hi.setflags(write=False)
    return hi


def _crossed_within(boundary: IntArray, q: float, steps: int) -> FloatArray:
    """``P(the sign walk has crossed the boundary within j steps)`` for ``j = 0..steps``."""
    alive = np.zeros(steps + 1)  # by the count of + signs, not yet crossed
    alive[0] = 1.0
    crossed = np.zeros(steps + 1)
    total = 0.0
    for j in range(1, steps + 1):
        up = alive[:j] * q
        alive[: j + 1] *= 1 - q
        alive[1 : j + 1] += up
        plus = np.arange(j + 1)
        hit = plus >= boundary[j - plus]
        total += float(alive[: j + 1][hit].sum())
        alive[: j + 1][hit] = 0.0
        crossed[j] = total
    return crossed
