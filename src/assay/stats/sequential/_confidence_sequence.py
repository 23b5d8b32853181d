"""An anytime-valid confidence sequence for a pass rate: the beta-binomial mixture.

For Bernoulli trials with ``s`` passes among ``n`` and a prior ``Beta(a, b)``, the mixture

    M_n(p) = ∫ q^s (1-q)^(n-s) dBeta(a, b)(q) / (p^s (1-p)^(n-s))
           = B(a + s, b + n - s) / (B(a, b) · p^s (1-p)^(n-s))

is, for the true rate ``p``, a non-negative martingale with mean 1. By Ville's inequality
``P(M_n(p) >= 1/alpha for some n) <= alpha``, so the intervals ``{p : M_n(p) < 1/alpha}``
cover the true rate at every ``n`` simultaneously with probability ``>= 1 - alpha``: they may
be looked at after every trial, and a run may stop whenever it likes (Robbins 1970; Howard,
Ramdas, McAuliffe & Sekhon 2021, section 3). ``log M_n(p)`` is convex in ``p`` with its minimum
(``<= 0``) at the observed rate, so each set is an interval around the observed rate.

The prior only shapes where the sequence is tight; the coverage holds for every prior. This
module is the one place assay computes it: the adaptive runner, the replay of ``analyze`` and
``assay watch`` all read their intervals here.

References:
    Robbins (1970), "Statistical methods related to the law of the iterated logarithm",
    Ann. Math. Statist. 41:1397–1409.
    Howard, Ramdas, McAuliffe, Sekhon (2021), "Time-uniform, nonparametric, nonasymptotic
    confidence sequences", Ann. Statist. 49:1055–1080.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from assay.errors import ConfigError
from assay.stats.base import check_open_unit, check_successes

__all__ = [
    "BernoulliConfidenceSequence",
    "open_ended_sequence",
    "pass_rate_sequence",
    "tuned_prior_strength",
]

# Roots are searched inside (_EDGE, 1 - _EDGE): log p is finite there.
_EDGE = 1e-12


@dataclass(frozen=True, slots=True)
class BernoulliConfidenceSequence:
    """A two-sided anytime-valid confidence sequence for a pass rate (beta-binomial mixture).

    The true rate lies outside the interval at *any* trial count with probability at most
    ``1 - confidence``, whatever the stopping rule.
    """

    confidence: float = 0.95
    """``1 - alpha``: the probability that the sequence covers the true rate at every ``n``."""
    prior_mean: float = 0.5
    """Mean ``a / (a + b)`` of the mixing prior: where the sequence is tightest."""
    prior_strength: float = 2.0
    """``a + b``, in trials: larger is tighter near ``prior_mean`` and looser far from it."""

    def __post_init__(self) -> None:
        check_open_unit("confidence", self.confidence)
        check_open_unit("prior_mean", self.prior_mean)
        if not self.prior_strength > 0:
            raise ConfigError(f"prior_strength must be positive (got {self.prior_strength})")

    @property
    def alpha(self) -> float:
        """``1 - confidence``: the bound on P(the sequence ever misses the true rate)."""
        return 1 - self.confidence

    @property
    def _prior(self) -> tuple[float, float]:
        return self.prior_mean * self.prior_strength, (1 - self.prior_mean) * self.prior_strength

    def log_evidence(
        self, successes: npt.ArrayLike, n: int | npt.ArrayLike, p: float | npt.ArrayLike
    ) -> npt.NDArray[np.float64]:
        """``log M_n(p)``: the evidence against the rate ``p`` after ``successes`` of ``n``.

        Args:
            successes: Passing trials (a number or an array).
            n: Trials (a number or an array broadcasting with ``successes``).
            p: The rate in question, in (0, 1) (a number, or an array broadcasting with the
                others: one rate per stream, as ``assay watch``'s drift alarm asks).

        Returns:
            The log mixture martingale at ``p``, elementwise.
        """
        from scipy import special as sp

        a, b = self._prior
        s = np.asarray(successes, dtype=np.float64)
        f = np.asarray(n, dtype=np.float64) - s
        p = np.asarray(p, dtype=np.float64)
        return np.asarray(
            sp.betaln(a + s, b + f) - sp.betaln(a, b) - sp.xlogy(s, p) - sp.xlog1py(f, -p),
            dtype=np.float64,
        )

    def side(
        self, successes: npt.ArrayLike, n: int | npt.ArrayLike, p: float
    ) -> npt.NDArray[np.int8]:
        """Where the interval lies with respect to ``p``, elementwise, without root finding.

        Returns:
            ``1`` where the interval lies at or above ``p`` (its lower end ``>= p``), ``-1``
            where it lies wholly below ``p``, ``0`` where it holds ``p`` (and where ``n == 0``).
        """
        s = np.asarray(successes, dtype=np.float64)
        trials = np.asarray(n, dtype=np.float64)
        rate = np.divide(s, trials, out=np.full(np.broadcast(s, trials).shape, p), where=trials > 0)
        outside = self.log_evidence(s, trials, p) >= -math.log(self.alpha)
        return np.where(outside & (rate > p), 1, np.where(outside & (rate < p), -1, 0)).astype(
            np.int8
        )

    def interval(self, successes: int, n: int) -> tuple[float, float]:
        """The interval ``{p : M_n(p) < 1/alpha}`` after ``successes`` of ``n`` trials.

        Args:
            successes: Passing trials, in ``[0, n]``.
            n: Trials so far (``0`` gives ``[0, 1]``).

        Returns:
            ``(low, high)``.
        """
        from scipy import optimize

        check_successes(successes, n)
        if n == 0:
            return 0.0, 1.0
        rate = min(max(successes / n, _EDGE), 1 - _EDGE)
        level = math.log(self.alpha)

        def excess(p: float) -> float:
            return float(self.log_evidence(successes, n, p)) + level

        low, high = 0.0, 1.0
        if successes > 0 and excess(_EDGE) > 0:
            low = float(optimize.brentq(excess, _EDGE, rate, xtol=1e-12))
        if successes < n and excess(1 - _EDGE) > 0:
            high = float(optimize.brentq(excess, rate, 1 - _EDGE, xtol=1e-12))
        return low, high

    def running_interval(self, outcomes: npt.ArrayLike) -> tuple[float, float]:
        """The intersection of the intervals after each trial of ``outcomes``, in order.

        The sequence covers the true rate at every n at once with probability ``confidence``,
        so the intersection of its intervals so far covers it too: it is valid at any moment,
        and once it lies on one side of a rate it stays there. It is empty (``low > high``)
        only if the sequence has missed the true rate at some n, or the rate changed.

        Args:
            outcomes: Pass (true) or fail of each trial, in the order they were observed.

        Returns:
            ``(max of the lower ends, min of the upper ends)``; ``(0, 1)`` for no trials.
        """
        passed = np.asarray(outcomes, dtype=bool)
        if passed.size == 0:
            return 0.0, 1.0
        s = np.cumsum(passed).astype(np.float64)
        n = np.arange(1, passed.size + 1, dtype=np.float64)
        rate = np.clip(s / n, _EDGE, 1 - _EDGE)
        level = -math.log(self.alpha)
        # Each end by bisection, all n at once: log M is convex in p with its minimum at the
        # observed rate, so it falls below the level on the way in from each edge exactly once.
        edge_low, edge_high = np.full_like(rate, _EDGE), np.full_like(rate, 1 - _EDGE)
        lows = np.where(
            (s > 0) & (self.log_evidence(s, n, edge_low) >= level),
            self._crossing(s, n, rate, edge_low, level),
            0.0,
        )
        highs = np.where(
            (s < n) & (self.log_evidence(s, n, edge_high) >= level),
            self._crossing(s, n, rate, edge_high, level),
            1.0,
        )
        return float(lows.max()), float(highs.min())

    def _crossing(
        self,
        s: npt.NDArray[np.float64],
        n: npt.NDArray[np.float64],
        inside: npt.NDArray[np.float64],
        outside: npt.NDArray[np.float64],
        level: float,
    ) -> npt.NDArray[np.float64]:
        """Where ``log M`` reaches ``level`` between an inside and an outside point.

        Bisection, elementwise; it returns the last point inside, so an end never claims more
        than the evidence gives.
        """
        for _ in range(64):
            mid = (inside + outside) / 2
            out = self.log_evidence(s, n, mid) >= level
            inside = np.where(out, inside, mid)
            outside = np.where(out, mid, outside)
        return inside

    def fewest_to_pass(self, p: float, limit: int) -> int | None:
        """Fewest trials, all passing, after which the interval lies at or above ``p``.

        Args:
            p: The rate in question (a threshold), in (0, 1).
            limit: Look no further than this many trials.

        Returns:
            That number of trials, or None if more than ``limit`` would be needed.
        """
        n = np.arange(1, limit + 1)
        above = np.flatnonzero(self.side(n, n, p) > 0)
        return int(n[above[0]]) if above.size else None


def tuned_prior_strength(max_trials: int, confidence: float = 0.95) -> float:
    """The prior strength for which the sequence is narrowest after ``max_trials`` trials.

    In its normal approximation the mixture's radius at ``n`` trials is proportional to
    ``sqrt((n + rho) / n² · log((n + rho) / (rho · alpha²)))`` (Howard et al. 2021, the
    normal-mixture boundary, with ``rho`` the prior strength in trials). It is smallest at
    ``n = N`` when ``x = N / rho`` solves ``x - log(1 + x) = 2 log(1 / alpha)``: ``x = 8.2``
    at 95% confidence, so the prior is worth about an eighth of the maximum.

    Args:
        max_trials: The maximum number of trials (the horizon to be tight at), ``>= 1``.
        confidence: ``1 - alpha``.

    Returns:
        The prior strength ``a + b``, in trials.
    """
    from scipy import optimize

    if max_trials < 1:
        raise ConfigError(f"max_trials must be at least 1 (got {max_trials})")
    check_open_unit("confidence", confidence)
    target = -2 * math.log(1 - confidence)
    ratio = float(optimize.brentq(lambda x: x - math.log1p(x) - target, target, 4 * target + 4))
    return max_trials / ratio


def pass_rate_sequence(
    threshold: float, confidence: float = 0.95, max_trials: int | None = None
) -> BernoulliConfidenceSequence:
    """The confidence sequence assay judges a pass rate with after adaptive stopping.

    The one factory for the adaptive runner and the replay of ``assay analyze`` (``assay
    watch``, which has no maximum, takes :func:`open_ended_sequence`): a two-sided sequence at
    ``confidence`` (the run's confidence level), its prior centred on the threshold (where a
    verdict is hardest) and worth :func:`tuned_prior_strength` trials, so that at the maximum
    its width is as close to the fixed-n interval's as the construction allows (about 1.5 times
    the Wilson width; see docs/adaptive.md).

    Args:
        threshold: The required pass rate, in (0, 1): the prior's mean.
        confidence: ``1 - alpha``: the probability of covering the true rate at every n.
        max_trials: The maximum trials of the test; None tunes for a horizon of 100.

    Returns:
        The sequence.
    """
    if not 0 < threshold < 1:
        raise ConfigError(
            f"an anytime-valid interval needs 0 < threshold < 1 (got {threshold}); use a fixed run"
        )
    strength = tuned_prior_strength(max_trials or DEFAULT_HORIZON, confidence)
    return BernoulliConfidenceSequence(confidence, threshold, strength)


DEFAULT_HORIZON = 100
"""The maximum a sequence is tuned for when none is given."""

OPEN_ENDED_PRIOR_STRENGTH = 2.0
"""The prior's weight, in trials, of a sequence with no maximum (:func:`open_ended_sequence`)."""

# A stream may be judged against 0 or 1; the mixing prior's mean must lie strictly inside (0, 1).
_OPEN_ENDED_EDGE = 1e-3


def open_ended_sequence(threshold: float, confidence: float = 0.95) -> BernoulliConfidenceSequence:
    """The confidence sequence of a pass rate watched with no maximum (``assay watch``).

    The same beta-binomial mixture as :func:`pass_rate_sequence`, its prior centred on the
    threshold, but with no maximum to tune for: a broad prior worth
    :data:`OPEN_ENDED_PRIOR_STRENGTH` trials, tight from the first looks on and valid over
    unbounded time (its calibration over 10,000-trial streams is in docs/monitoring.md). A
    threshold of 0 or 1 is allowed (the prior's mean is kept just inside (0, 1)).

    Args:
        threshold: The required pass rate, in [0, 1].
        confidence: ``1 - alpha``: the probability of covering the true rate at every look.

    Returns:
        The sequence.
    """
    centre = min(max(threshold, _OPEN_ENDED_EDGE), 1 - _OPEN_ENDED_EDGE)
    return BernoulliConfidenceSequence(confidence, centre, OPEN_ENDED_PRIOR_STRENGTH)
