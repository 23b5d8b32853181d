"""Sequential tests of a pass rate against a threshold: Wald's SPRT and a confidence sequence.

Both decide, after every trial, between three things: the pass rate is at least
``threshold + delta``-ish good (PASS), it is at most ``threshold`` (FAIL), or keep sampling.
The indifference zone is ``[p0, p1] = [threshold, threshold + delta]``:

* a PASS is wrong when the true rate ``p <= p0``; that happens with probability ``<= alpha``;
* a FAIL is wrong when ``p >= p1``; that happens with probability ``<= beta``;
* inside the zone either answer is acceptable.

This keeps PASS meaning what it means for the fixed-N threshold verdict ("the pass rate is at
least the threshold, with confidence"). Both tests use boundaries that hold these error rates
*exactly* (by Ville's inequality), not approximately as Wald's classical ``(1 - beta) / alpha``
boundaries do, and therefore also under truncation at ``max_trials`` (an unsettled test at the
maximum is INCONCLUSIVE, which only removes wrong decisions).

References:
    Wald (1945), "Sequential tests of statistical hypotheses", Ann. Math. Statist. 16:117–186.
    Ville (1939), "Étude critique de la notion de collectif".
    Robbins (1970), "Statistical methods related to the law of the iterated logarithm",
    Ann. Math. Statist. 41:1397–1409 (mixture martingales, confidence sequences).
    Howard, Ramdas, McAuliffe, Sekhon (2021), "Time-uniform, nonparametric, nonasymptotic
    confidence sequences", Ann. Statist. 49:1055–1080.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from assay.choices import SequentialMethod
from assay.errors import ConfigError

__all__ = [
    "SPRT",
    "ConfidenceSequenceTest",
    "SequentialDecision",
    "SequentialState",
    "SequentialTest",
    "sequential_test",
]


class SequentialDecision(enum.StrEnum):
    """Where a sequential test stands after some trials."""

    CONTINUE = "CONTINUE"
    """Not settled yet: run another trial."""
    PASS = "PASS"
    """Settled: the pass rate is above the threshold (wrong with probability <= alpha)."""
    FAIL = "FAIL"
    """Settled: the pass rate is not ``delta`` above the threshold (wrong w.p. <= beta)."""
    INCONCLUSIVE = "INCONCLUSIVE"
    """The maximum number of trials was reached without settling."""


@dataclass(frozen=True, slots=True)
class SequentialState:
    """The state of a sequential test after ``n`` trials."""

    decision: SequentialDecision
    """CONTINUE, PASS, FAIL or (at the maximum) INCONCLUSIVE."""
    n: int
    """Trials observed."""
    successes: int
    """Passing trials among them."""
    statistic: float
    """The log evidence for PASS: the log likelihood ratio (SPRT) or log mixture martingale."""
    low: float
    """Lower end of the current anytime-valid bound on the pass rate (0 if not computed)."""
    high: float
    """Upper end of the current anytime-valid bound on the pass rate (1 if not computed)."""


def _validate(threshold: float, delta: float, alpha: float, beta: float) -> None:
    if not 0 < threshold < 1:
        raise ConfigError(
            f"a sequential test needs 0 < threshold < 1 (got {threshold}); use a fixed run"
        )
    if not 0 < delta < 1:
        raise ConfigError(f"delta must lie in (0, 1) (got {delta})")
    if not 0 < alpha < 1 or not 0 < beta < 1:
        raise ConfigError(f"alpha and beta must lie in (0, 1) (got {alpha}, {beta})")


def _zone(threshold: float, delta: float) -> tuple[float, float]:
    """The indifference zone; near 1 it is narrowed to keep ``p1 < 1``."""
    p1 = threshold + delta if threshold + delta < 1 else (threshold + 1) / 2
    return threshold, p1


class SequentialTest(Protocol):
    """A sequential test of ``p >= p1`` against ``p <= p0``, evaluated after every trial."""

    @property
    def p0(self) -> float:
        """Upper end of the failing side (the threshold)."""
        ...

    @property
    def p1(self) -> float:
        """Lower end of the passing side."""
        ...

    @property
    def max_trials(self) -> int | None:
        """Truncation: INCONCLUSIVE when reached unsettled (None: never)."""
        ...

    @property
    def alpha(self) -> float:
        """Bound on P(PASS) when the true rate is at most ``p0``."""
        ...

    @property
    def beta(self) -> float:
        """Bound on P(FAIL) when the true rate is at least ``p1``."""
        ...

    @property
    def name(self) -> str:
        """Short name for display."""
        ...

    def decide_many(self, successes: npt.NDArray[np.int64], n: int) -> npt.NDArray[np.int8]:
        """Decision codes for many success counts at one ``n``: 1 PASS, -1 FAIL, 0 continue."""
        ...

    def state(self, successes: int, n: int) -> SequentialState:
        """The decision, statistic and bounds after ``successes`` of ``n`` trials."""
        ...


def _decision(code: int, n: int, max_trials: int | None) -> SequentialDecision:
    if code > 0:
        return SequentialDecision.PASS
    if code < 0:
        return SequentialDecision.FAIL
    if max_trials is not None and n >= max_trials:
        return SequentialDecision.INCONCLUSIVE
    return SequentialDecision.CONTINUE


def _check_counts(successes: int, n: int) -> None:
    if n < 0 or not 0 <= successes <= n:
        raise ConfigError(f"successes must lie in [0, n] (got {successes} of {n})")


@dataclass(frozen=True, slots=True)
class _Design:
    """What both sequential tests are given: the threshold, its zone, error rates, a cap."""

    threshold: float
    """The required pass rate; the upper end ``p0`` of the failing side."""
    delta: float = 0.1
    """Width of the indifference zone above the threshold."""
    alpha: float = 0.05
    """Bound on P(PASS) when the true rate is at most ``p0``."""
    beta: float = 0.2
    """Bound on P(FAIL) when the true rate is at least ``p1``."""
    max_trials: int | None = None
    """Truncation: INCONCLUSIVE when reached unsettled."""

    def __post_init__(self) -> None:
        _validate(self.threshold, self.delta, self.alpha, self.beta)

    @property
    def p0(self) -> float:
        """Upper end of the failing side."""
        return _zone(self.threshold, self.delta)[0]

    @property
    def p1(self) -> float:
        """Lower end of the passing side."""
        return _zone(self.threshold, self.delta)[1]


@dataclass(frozen=True, slots=True)
class SPRT(_Design):
    """Wald's sequential probability ratio test of ``p1`` against ``p0`` for Bernoulli trials.

    After ``s`` passes in ``n`` trials the log likelihood ratio is
    ``s·log(p1/p0) + (n-s)·log((1-p1)/(1-p0))``. PASS when it reaches ``log(1/alpha)``, FAIL
    when it falls to ``log(beta)``. These are the boundaries of Ville's inequality: the ratio is
    a non-negative supermartingale for every ``p <= p0`` (and its inverse for every
    ``p >= p1``), so the error rates hold exactly, for the composite hypotheses, truncated or
    not — Wald's classical ``log((1-beta)/alpha)`` and ``log(beta/(1-alpha))`` only hold them
    approximately (up to ``alpha/(1-beta)``), for a few per cent more trials here.
    """

    @property
    def name(self) -> str:
        """``"sprt"``."""
        return SequentialMethod.SPRT

    @property
    def upper(self) -> float:
        """The PASS boundary of the log likelihood ratio, ``log(1/alpha)``."""
        return -math.log(self.alpha)

    @property
    def lower(self) -> float:
        """The FAIL boundary of the log likelihood ratio, ``log(beta)``."""
        return math.log(self.beta)

    def _llr(self, successes: npt.NDArray[np.int64] | int, n: int) -> npt.NDArray[np.float64]:
        p0, p1 = self.p0, self.p1
        s = np.asarray(successes, dtype=np.float64)
        return np.asarray(
            s * math.log(p1 / p0) + (n - s) * math.log((1 - p1) / (1 - p0)), dtype=np.float64
        )

    def decide_many(self, successes: npt.NDArray[np.int64], n: int) -> npt.NDArray[np.int8]:
        """Decision codes for many success counts at one ``n``: 1 PASS, -1 FAIL, 0 continue."""
        llr = self._llr(successes, n)
        # A tiny tolerance so that an exact hit of a boundary counts despite rounding.
        eps = 1e-12
        return np.where(
            llr >= self.upper - eps, 1, np.where(llr <= self.lower + eps, -1, 0)
        ).astype(np.int8)

    def state(self, successes: int, n: int) -> SequentialState:
        """The decision, log likelihood ratio and Wilson-free bounds after ``n`` trials."""
        _check_counts(successes, n)
        llr = float(self._llr(successes, n))
        code = int(self.decide_many(np.array([successes], dtype=np.int64), n)[0]) if n else 0
        low, high = _mixture_bounds(successes, n, self.alpha, self.beta, _prior(self.threshold))
        return SequentialState(_decision(code, n, self.max_trials), n, successes, llr, low, high)


_PRIOR_STRENGTH = 10.0


def _prior(threshold: float) -> tuple[float, float]:
    """Beta prior of the mixture: centred on the threshold, worth ten trials (see docs)."""
    return threshold * _PRIOR_STRENGTH, (1 - threshold) * _PRIOR_STRENGTH


def _log_mixture(
    successes: npt.NDArray[np.float64] | float, n: int, p: float, a: float, b: float
) -> npt.NDArray[np.float64]:
    """Log of ``∫ L(q) dBeta(a, b)(q) / L(p)``: the beta-binomial mixture martingale at ``p``."""
    from scipy import special as sp

    s = np.asarray(successes, dtype=np.float64)
    f = n - s
    return np.asarray(
        sp.betaln(a + s, b + f) - sp.betaln(a, b) - sp.xlogy(s, p) - sp.xlog1py(f, -p),
        dtype=np.float64,
    )


def _mixture_bounds(
    successes: int, n: int, alpha: float, beta: float, prior: tuple[float, float]
) -> tuple[float, float]:
    """Anytime-valid lower (level alpha) and upper (level beta) bounds on the pass rate."""
    from scipy import optimize

    if n == 0:
        return 0.0, 1.0
    a, b = prior
    mle = min(max(successes / n, 1e-12), 1 - 1e-12)

    def excess(p: float, level: float) -> float:
        return float(_log_mixture(float(successes), n, p, a, b)) + math.log(level)

    low, high = 0.0, 1.0
    if successes > 0 and excess(1e-12, alpha) > 0:
        low = float(optimize.brentq(excess, 1e-12, mle, args=(alpha,), xtol=1e-10))
    if successes < n and excess(1 - 1e-12, beta) > 0:
        high = float(optimize.brentq(excess, mle, 1 - 1e-12, args=(beta,), xtol=1e-10))
    return low, high


@dataclass(frozen=True, slots=True)
class ConfidenceSequenceTest(_Design):
    """A test read off an anytime-valid confidence sequence for the pass rate.

    The beta-binomial mixture ``M_n(p) = ∫ q^s (1-q)^(n-s) dBeta(a, b)(q) / (p^s (1-p)^(n-s))``
    is, for the true ``p``, a non-negative martingale with mean 1, so by Ville's inequality
    ``{p : M_n(p) < 1/alpha}`` covers the true rate at *every* ``n`` simultaneously with
    probability ``>= 1 - alpha`` (Robbins 1970). PASS once the lower bound (level alpha) exceeds
    ``p0`` (the threshold); FAIL once the upper bound (level beta) falls below ``p1``. The
    prior is ``Beta(10·threshold, 10·(1-threshold))``: centred on the threshold, worth ten
    trials. Valid under any stopping rule: peeking, resuming a run later, a new maximum.
    """

    @property
    def name(self) -> str:
        """``"confidence-sequence"``."""
        return SequentialMethod.CONFIDENCE_SEQUENCE

    def decide_many(self, successes: npt.NDArray[np.int64], n: int) -> npt.NDArray[np.int8]:
        """Decision codes for many success counts at one ``n``: 1 PASS, -1 FAIL, 0 continue."""
        a, b = _prior(self.threshold)
        s = np.asarray(successes, dtype=np.float64)
        mle = s / max(n, 1)
        # The lower bound exceeds p0 iff p0 is rejected at level alpha from below the estimate.
        pass_ = (mle > self.p0) & (_log_mixture(s, n, self.p0, a, b) >= -math.log(self.alpha))
        fail = (mle < self.p1) & (_log_mixture(s, n, self.p1, a, b) >= -math.log(self.beta))
        return np.where(pass_, 1, np.where(fail, -1, 0)).astype(np.int8)

    def state(self, successes: int, n: int) -> SequentialState:
        """The decision, log mixture at the threshold and confidence-sequence bounds."""
        _check_counts(successes, n)
        a, b = _prior(self.threshold)
        statistic = float(_log_mixture(float(successes), n, self.p0, a, b))
        code = int(self.decide_many(np.array([successes], dtype=np.int64), n)[0]) if n else 0
        low, high = _mixture_bounds(successes, n, self.alpha, self.beta, (a, b))
        return SequentialState(
            _decision(code, n, self.max_trials), n, successes, statistic, low, high
        )


def sequential_test(
    method: SequentialMethod | str,
    threshold: float,
    *,
    delta: float = 0.1,
    alpha: float = 0.05,
    beta: float = 0.2,
    max_trials: int | None = None,
) -> SPRT | ConfidenceSequenceTest:
    """Build the sequential test named ``method`` (``"sprt"`` or ``"confidence-sequence"``).

    Args:
        method: ``"sprt"`` (Wald 1945) or ``"confidence-sequence"`` (Robbins 1970).
        threshold: The required pass rate (``p0``); must lie strictly in (0, 1).
        delta: Width of the indifference zone ``[threshold, threshold + delta]``.
        alpha: Bound on P(PASS) for a true rate at or below the threshold.
        beta: Bound on P(FAIL) for a true rate at or above ``threshold + delta``.
        max_trials: Truncation; INCONCLUSIVE when reached unsettled.

    Returns:
        The test, ready to :meth:`~SPRT.state` after each trial.
    """
    if max_trials is not None and max_trials < 1:
        raise ConfigError(f"max_trials must be at least 1 (got {max_trials})")
    if method == SequentialMethod.SPRT:
        return SPRT(threshold, delta, alpha, beta, max_trials)
    if method == SequentialMethod.CONFIDENCE_SEQUENCE:
        return ConfidenceSequenceTest(threshold, delta, alpha, beta, max_trials)
    choices = " or ".join(repr(m.value) for m in SequentialMethod)
    raise ConfigError(f"sequential method must be {choices} (got {method!r})")
