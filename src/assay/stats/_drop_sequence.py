"""An anytime-valid test of a drop in pass rate, and a confidence sequence for the drop.

Each version's trials get the beta-binomial mixture of :mod:`._confidence_sequence`
(Robbins 1970): with ``s`` passes among ``n`` and a prior ``Beta(a, b)``,

    M(p) = B(a + s, b + n - s) / (B(a, b) · p^s (1 - p)^(n - s)),

a non-negative martingale with mean 1 at the true rate ``p``, trial by trial. The trials of the
two versions may interleave in any order (which version runs next may depend on everything seen
so far): each trial multiplies one factor by a ratio whose conditional mean is 1 at the true
rates, so the product ``M_b(p_b) · M_c(p_c)`` is a non-negative martingale with mean 1 under the
pair of true rates, in the filtration of all trials. By Ville's inequality

    P(M_b(p_b) · M_c(p_c) >= 1/alpha at some moment) <= alpha,

so the set ``{(p_b, p_c) : M_b(p_b) M_c(p_c) < 1/alpha}`` covers the true pair at every moment at
once, whatever rule stopped either version (its own confidence sequence, a budget, a person
looking at the output), and so does its projection on the drop ``d = p_b - p_c`` (baseline minus
current): an anytime-valid confidence sequence for the drop.

The null "no drop" (``p_c >= p_b``) is composite; its e-value is the smallest product over it,

    E = inf over p_c >= p_b of M_b(p_b) · M_c(p_c),

which is below each martingale of the null, so ``P(E >= 1/alpha ever) <= alpha`` under every
null pair. ``log M`` is convex with its minimum at the observed rate, so when the current
version's observed rate is lower the infimum lies on the boundary ``p_b = p_c = p``, where the
product's likelihood part is that of the pooled trials: the infimum is at the pooled rate, in
closed form. When the current rate is not lower, ``E <= 1`` (no evidence). The test rejects when
``E >= 1/alpha`` — exactly when the drop's interval at confidence ``1 - alpha`` lies wholly above
0 — and its anytime-valid p-value is ``min(1, 1/E)``. A value read once at the end is valid too:
the end is one stopping time.

The prior shapes the power, never the validity, as long as it is fixed before the trials
(docs/statistics.md, "Regression after adaptive runs"): assay uses one prior for both versions,
centred on the test's threshold and worth :func:`tuned_prior_strength` of the maximum trials
(the prior ``assay run``'s own sequence uses, :func:`pass_rate_sequence`), capped at ten trials.

References:
    Robbins (1970), "Statistical methods related to the law of the iterated logarithm",
    Ann. Math. Statist. 41:1397–1409.
    Ville (1939), "Étude critique de la notion de collectif", Gauthier-Villars.
    Ramdas, Grünwald, Vovk, Shafer (2023), "Game-theoretic statistics and safe anytime-valid
    inference", Statist. Sci. 38:576–601 (e-values of composite nulls as infima).
    Turner, Ly, Grünwald (2024), "Generic E-variables for exact sequential k-sample tests that
    allow for optional stopping", J. Statist. Plann. Inference 230:106116 (the 2×2 setting).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from assay.errors import ConfigError, InsufficientDataError
from assay.stats._confidence_sequence import (
    DEFAULT_HORIZON,
    BernoulliConfidenceSequence,
    tuned_prior_strength,
)
from assay.stats._exact2x2 import _TableCache
from assay.stats._prefix_power import BoolArray, bisected_boundary, prefix_power

__all__ = [
    "DropSequence",
    "DropTest",
    "drop_sequence",
]

_EDGE = 1e-12
_BISECTIONS = 52  # 2^-52: the precision of a double on [0, 1]
# Largest number of outcome tables enumerated for the exact power (as the exact tests).
_MAX_TABLES = 5_000_000

FloatArray = npt.NDArray[np.float64]


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
    e_value: float
    """The e-value against "no drop": the smallest product of the two mixtures over the
    rates with ``p_current >= p_baseline``. ``>= 1/alpha`` shows a drop at level alpha."""
    p_value: float
    """The anytime-valid p-value ``min(1, 1/e_value)``: valid at any stopping time."""
    low: float
    """Lower end of the drop's confidence sequence (``d = p_baseline - p_current``)."""
    high: float
    """Upper end of the drop's confidence sequence."""
    confidence: float
    """The level of ``(low, high)``: it covers the true drop at every moment at once with at
    least this probability; each end alone is a one-sided bound at ``1 - confidence``."""


@dataclass(frozen=True, slots=True)
class DropSequence:
    """An anytime-valid test and confidence sequence for a drop between two pass rates.

    The product of the two versions' beta-binomial mixtures (see the module): valid whatever
    rule stopped either version and however their trials interleaved.
    """

    confidence: float = 0.95
    """``1 - alpha``: the chance the drop's interval covers the true drop at every moment."""
    prior_mean: float = 0.5
    """Mean of the mixing prior of each version's rate (assay: the threshold)."""
    prior_strength: float = 2.0
    """Its weight ``a + b`` in trials (assay: tuned to the maximum trials)."""

    def __post_init__(self) -> None:
        # The per-version sequence checks the same ranges; build it once to raise early.
        self._sequence()

    def _sequence(self) -> BernoulliConfidenceSequence:
        return BernoulliConfidenceSequence(self.confidence, self.prior_mean, self.prior_strength)

    @property
    def alpha(self) -> float:
        """``1 - confidence``: the level the test rejects at."""
        return 1 - self.confidence

    def log_e_value(
        self,
        baseline_passed: npt.ArrayLike,
        baseline_n: npt.ArrayLike,
        current_passed: npt.ArrayLike,
        current_n: npt.ArrayLike,
    ) -> FloatArray:
        """``log E`` against "no drop", elementwise over broadcasting arrays of counts.

        Returns:
            The log e-value: ``<= 0`` when the current observed rate is not lower.
        """
        seq = self._sequence()
        sb, nb, sc, nc = (
            np.asarray(x, dtype=np.float64)
            for x in np.broadcast_arrays(baseline_passed, baseline_n, current_passed, current_n)
        )
        pooled = _ratio(sb + sc, nb + nc)
        boundary = seq.log_evidence(sb, nb, pooled) + seq.log_evidence(sc, nc, pooled)
        rate_b, rate_c = _ratio(sb, nb), _ratio(sc, nc)
        # Not lower: the infimum is at the observed rates themselves (each mixture's minimum).
        inside = seq.log_evidence(sb, nb, rate_b) + seq.log_evidence(sc, nc, rate_c)
        lower = (nb > 0) & (nc > 0) & (sc * nb < sb * nc)
        return np.asarray(np.where(lower, boundary, inside), dtype=np.float64)

    def _profile(self, sb: int, nb: int, sc: int, nc: int, drop: float, prior: float) -> float:
        """``min over p_b - p_c = drop`` of ``log M_b(p_b) + log M_c(p_c)`` (convex in drop).

        ``prior`` is the two mixtures' constant part (their beta functions), so each point
        costs a few logarithms.
        """
        lo, hi = max(0.0, -drop) + _EDGE, min(1.0, 1.0 - drop) - _EDGE
        if lo >= hi:
            return math.inf
        fb, fc = nb - sb, nc - sc
        # The sum is convex in p_c: bisect on the sign of its derivative.
        for _ in range(_BISECTIONS):
            q = (lo + hi) / 2
            slope = -sb / (q + drop) + fb / (1 - q - drop) - sc / q + fc / (1 - q)
            if slope > 0:
                hi = q
            else:
                lo = q
        q = (lo + hi) / 2
        pb = min(max(q + drop, _EDGE), 1 - _EDGE)
        likelihood = (
            sb * math.log(pb) + fb * math.log1p(-pb) + sc * math.log(q) + fc * math.log1p(-q)
        )
        return prior - likelihood

    def interval(
        self, baseline_passed: int, baseline_n: int, current_passed: int, current_n: int
    ) -> tuple[float, float]:
        """The drop's confidence sequence ``{d : some (p_b, p_b - d) has product < 1/alpha}``.

        Returns:
            ``(low, high)`` within ``[-1, 1]``: the drop ``p_baseline - p_current``.
        """
        _check_counts(baseline_passed, baseline_n, current_passed, current_n)
        sb, nb, sc, nc = baseline_passed, baseline_n, current_passed, current_n
        level = -math.log(self.alpha)
        centre = sb / nb - sc / nc
        # log M(p) = prior part - log-likelihood: the prior part (p = 1/2 gives it back).
        seq = self._sequence()
        half = math.log(2)
        prior = float(seq.log_evidence(sb, nb, 0.5) + seq.log_evidence(sc, nc, 0.5)) - (
            (nb + nc) * half
        )

        def outside(d: float) -> bool:
            return self._profile(sb, nb, sc, nc, d, prior) >= level

        ends = []
        for edge in (-1.0, 1.0):
            inner, outer = centre, edge
            if not outside(edge * (1 - _EDGE)):
                ends.append(edge)
                continue
            for _ in range(_BISECTIONS):
                mid = (inner + outer) / 2
                if outside(mid):
                    outer = mid
                else:
                    inner = mid
            ends.append(inner)  # the last point inside: an end never claims more
        return ends[0], ends[1]

    def test(
        self, baseline_passed: int, baseline_n: int, current_passed: int, current_n: int
    ) -> DropTest:
        """The e-value, anytime-valid p-value and drop interval after these trials.

        Args:
            baseline_passed: Passing baseline trials.
            baseline_n: Baseline trials (≥ 1).
            current_passed: Passing current trials.
            current_n: Current trials (≥ 1).

        Returns:
            The result.
        """
        _check_counts(baseline_passed, baseline_n, current_passed, current_n)
        log_e = float(self.log_e_value(baseline_passed, baseline_n, current_passed, current_n))
        e_value = math.exp(min(log_e, 700.0))
        low, high = self.interval(baseline_passed, baseline_n, current_passed, current_n)
        return DropTest(
            baseline_passed,
            baseline_n,
            current_passed,
            current_n,
            e_value,
            min(1.0, math.exp(-log_e)),
            low,
            high,
            self.confidence,
        )

    def rejection_region(self, baseline_n: int, current_n: int) -> npt.NDArray[np.bool_]:
        """Where the test rejects, over every outcome: ``[x_baseline, x_current]`` (cached)."""
        _check_sizes(baseline_n, current_n)
        return _region(self.confidence, self.prior_mean, self.prior_strength, baseline_n, current_n)

    def power(
        self, baseline_n: int, current_n: int, baseline_rate: float, delta: float = 0.10
    ) -> float:
        """Exact power to show a drop of ``delta`` from ``baseline_rate`` at these group sizes.

        Both binomials enumerated over the cached rejection region (as
        :func:`~assay.stats.regression_power`), the current rate ``max(baseline_rate - delta,
        0)``: the chance of rejecting when each version runs exactly these many trials. With
        ``delta = 0``-like equal rates see :meth:`rejection_probability`.
        """
        if not 0 < delta <= 1:
            raise ConfigError(f"delta must lie in (0, 1] (got {delta})")
        return self.rejection_probability(
            baseline_n, current_n, baseline_rate, max(baseline_rate - delta, 0.0)
        )

    def rejection_probability(
        self, baseline_n: int, current_n: int, baseline_rate: float, current_rate: float
    ) -> float:
        """Exact probability of rejecting at these group sizes and true rates (any size)."""
        from scipy import stats as sps

        for name, rate in (("baseline_rate", baseline_rate), ("current_rate", current_rate)):
            if not 0 <= rate <= 1:
                raise ConfigError(f"{name} must lie in [0, 1] (got {rate})")
        if (baseline_n + 1) * (current_n + 1) > _MAX_TABLES:
            # Too many tables to enumerate: the region is x_c < c(x_b), summed row by row.
            _check_counts(0, baseline_n, 0, current_n)
            level = -math.log(self.alpha)

            def rejects(xb: npt.NDArray[np.int64], xc: npt.NDArray[np.int64]) -> BoolArray:
                found = self.log_e_value(xb, baseline_n, xc, current_n) >= level
                return np.asarray(found, dtype=np.bool_)

            return prefix_power(
                baseline_n,
                current_n,
                baseline_rate,
                current_rate,
                lambda rows: bisected_boundary(current_n, rows, rejects),
            )
        region = self.rejection_region(baseline_n, current_n).astype(np.float64)
        pmf_b = sps.binom.pmf(np.arange(baseline_n + 1), baseline_n, baseline_rate)
        pmf_c = sps.binom.pmf(np.arange(current_n + 1), current_n, current_rate)
        return float(min(max(pmf_b @ region @ pmf_c, 0.0), 1.0))


# A region is one byte per table: keep at most ~50 MB of them (as the exact tests' regions).
_REGIONS = _TableCache(50_000_000)


def _region(
    confidence: float, prior_mean: float, prior_strength: float, nb: int, nc: int
) -> npt.NDArray[np.bool_]:
    key = (confidence, prior_mean, prior_strength, nb, nc)
    cached = _REGIONS.get(key)
    if isinstance(cached, np.ndarray):
        return cached
    sequence = DropSequence(confidence, prior_mean, prior_strength)
    xb = np.arange(nb + 1, dtype=np.float64)[:, None]
    xc = np.arange(nc + 1, dtype=np.float64)[None, :]
    region = sequence.log_e_value(xb, nb, xc, nc) >= -math.log(sequence.alpha)
    region.setflags(write=False)
    _REGIONS.put(key, (nb + 1) * (nc + 1), region)
    return region


def _ratio(num: FloatArray, den: FloatArray) -> FloatArray:
    """``num / den``, 1/2 where ``den`` is 0 (no trials: any rate gives the mixture 1)."""
    return np.asarray(np.divide(num, den, out=np.full(num.shape, 0.5), where=den > 0), np.float64)


def _check_sizes(nb: int, nc: int) -> None:
    if nb < 1 or nc < 1:
        raise InsufficientDataError(f"both versions need at least one trial (got {nb} and {nc})")
    if (nb + 1) * (nc + 1) > _MAX_TABLES:
        raise ConfigError(
            f"the exact power enumerates (n1 + 1)(n2 + 1) outcome tables, at most "
            f"{_MAX_TABLES:,}; got {nb} and {nc} trials"
        )


def _check_counts(sb: int, nb: int, sc: int, nc: int) -> None:
    if nb < 1 or nc < 1:
        raise InsufficientDataError(f"both versions need at least one trial (got {nb} and {nc})")
    if not (0 <= sb <= nb and 0 <= sc <= nc):
        raise ConfigError(f"passes must lie in [0, n] (got {sb} of {nb} and {sc} of {nc})")


def drop_sequence(
    threshold: float = 0.5, confidence: float = 0.95, max_trials: int | None = None
) -> DropSequence:
    """The anytime-valid drop test assay's regression verdict uses after adaptive runs.

    One prior for both versions, fixed before any trial: centred on the test's threshold and
    worth :func:`tuned_prior_strength` trials of the maximum — the prior of ``assay run``'s
    own sequence (:func:`pass_rate_sequence`) — but at most :data:`MAX_PRIOR_STRENGTH` trials:
    a stronger prior pulls both versions' rates towards the threshold, and versions far from
    it lose nearly all power at large maxima (docs/statistics.md, "After adaptive runs").

    Args:
        threshold: The test's required pass rate; kept inside ``[0.01, 0.99]`` as the prior's
            mean.
        confidence: ``1 - alpha``: the test rejects at ``alpha``; the drop's interval covers
            at ``confidence`` at every moment.
        max_trials: The maximum trials per version (None: a horizon of 100).

    Returns:
        The sequence.
    """
    if not 0 < confidence < 1:
        raise ConfigError(f"confidence must lie in (0, 1) (got {confidence})")
    centre = min(max(threshold, 0.01), 0.99)
    strength = tuned_prior_strength(max_trials or DEFAULT_HORIZON, confidence)
    return DropSequence(confidence, centre, min(strength, MAX_PRIOR_STRENGTH))


MAX_PRIOR_STRENGTH = 10.0
"""The most trials the drop test's prior is worth (:func:`drop_sequence`)."""
