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

__all__ = ["BernoulliConfidenceSequence"]

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
        if not 0 < self.confidence < 1:
            raise ConfigError(f"confidence must lie in (0, 1) (got {self.confidence})")
        if not 0 < self.prior_mean < 1:
            raise ConfigError(f"prior_mean must lie in (0, 1) (got {self.prior_mean})")
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

        if n < 0 or not 0 <= successes <= n:
            raise ConfigError(f"successes must lie in [0, n] (got {successes} of {n})")
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
