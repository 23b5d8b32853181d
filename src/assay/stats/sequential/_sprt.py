"""Stopping rules for adaptive runs: the confidence sequence (default), Wald's SPRT.

A stopping rule decides, after every trial, only *when a test stops*. What the verdict says is
always read off an anytime-valid interval, the confidence sequence of
:func:`~assay.stats.pass_rate_sequence`: PASS when it lies at or above the threshold, FAIL when
wholly below, INCONCLUSIVE otherwise — the meaning every fixed-n verdict has, kept valid
however early the test stopped (it covers the true rate at every n at once).

* :class:`ConfidenceSequenceTest` stops as soon as that interval lies on one side of the
  threshold (or at the maximum): its stop and its verdict are the same event.
* :class:`SPRT` stops where Wald's test decides between ``p0 = threshold`` and
  ``p1 = threshold + delta`` (errors ``alpha``, ``beta`` by Ville's boundaries). Its decision
  is a statement about the indifference zone, not about the interval; when the interval
  straddles the threshold at its stop, the verdict is INCONCLUSIVE.
* :class:`LegacyConfidenceSequenceTest` is the confidence-sequence rule of earlier versions
  (lower bound at level ``alpha`` against ``p0``, upper at level ``beta`` against ``p1``), kept
  so that ``assay analyze`` can replay when the trials it recorded stopped.

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
from assay.stats.base import check_open_unit, check_successes
from assay.stats.sequential._confidence_sequence import (
    BernoulliConfidenceSequence,
    pass_rate_sequence,
)

__all__ = [
    "SPRT",
    "ConfidenceSequenceTest",
    "LegacyConfidenceSequenceTest",
    "SequentialDecision",
    "SequentialState",
    "SequentialTest",
    "sequential_test",
]


class SequentialDecision(enum.StrEnum):
    """Where a stopping rule stands after some trials."""

    CONTINUE = "CONTINUE"
    """Not settled yet: run another trial."""
    PASS = "PASS"
    """The rule stopped on the passing side."""
    FAIL = "FAIL"
    """The rule stopped on the failing side."""
    INCONCLUSIVE = "INCONCLUSIVE"
    """The maximum number of trials was reached without the rule stopping."""


@dataclass(frozen=True, slots=True)
class SequentialState:
    """A stopping rule after ``n`` trials, and the anytime-valid interval there."""

    decision: SequentialDecision
    """The rule's own decision: CONTINUE, PASS, FAIL or (at the maximum) INCONCLUSIVE."""
    n: int
    """Trials observed."""
    successes: int
    """Passing trials among them."""
    statistic: float
    """The rule's evidence: log likelihood ratio (SPRT) or log mixture at the threshold."""
    low: float
    """Lower end of the anytime-valid interval (the one the verdict reads)."""
    high: float
    """Upper end of the anytime-valid interval."""


class SequentialTest(Protocol):
    """A stopping rule, evaluated after every trial, and the interval its verdict reads."""

    @property
    def p0(self) -> float:
        """The threshold."""
        ...

    @property
    def max_trials(self) -> int | None:
        """Truncation: the rule stops here at the latest (None: never)."""
        ...

    @property
    def name(self) -> str:
        """Short name for display."""
        ...

    @property
    def sequence(self) -> BernoulliConfidenceSequence:
        """The anytime-valid interval the verdict is read from."""
        ...

    def decide_many(self, successes: npt.NDArray[np.int64], n: int) -> npt.NDArray[np.int8]:
        """The rule's decision for many success counts at one ``n``: 1, -1 (stop), 0 go on."""
        ...

    def state(self, successes: int, n: int) -> SequentialState:
        """The decision, statistic and anytime-valid interval after ``successes`` of ``n``."""
        ...


def _decision(code: int, n: int, max_trials: int | None) -> SequentialDecision:
    if code > 0:
        return SequentialDecision.PASS
    if code < 0:
        return SequentialDecision.FAIL
    if max_trials is not None and n >= max_trials:
        return SequentialDecision.INCONCLUSIVE
    return SequentialDecision.CONTINUE


def _check_threshold(threshold: float) -> None:
    if not 0 < threshold < 1:
        raise ConfigError(
            f"a sequential test needs 0 < threshold < 1 (got {threshold}); use a fixed run"
        )


def _state(test: SequentialTest, successes: int, n: int, statistic: float) -> SequentialState:
    check_successes(successes, n)
    code = int(test.decide_many(np.array([successes], dtype=np.int64), n)[0]) if n else 0
    low, high = test.sequence.interval(successes, n)
    decision = _decision(code, n, test.max_trials)
    return SequentialState(decision, n, successes, statistic, low, high)


@dataclass(frozen=True, slots=True)
class ConfidenceSequenceTest:
    """Stop as soon as the anytime-valid interval lies wholly on one side of the threshold.

    The interval is the beta-binomial confidence sequence of
    :func:`~assay.stats.pass_rate_sequence` (Robbins 1970): it covers the true rate at every n
    at once with probability ``>= confidence``, so a PASS (interval at or above the threshold)
    is wrong, for a true rate below the threshold, with probability at most ``1 -
    confidence``, and likewise a FAIL — whenever the test stopped.
    """

    threshold: float
    """The required pass rate (the prior's mean)."""
    confidence: float = 0.95
    """Coverage of the sequence: the run's confidence level."""
    max_trials: int | None = None
    """Truncation: INCONCLUSIVE when reached with the interval holding the threshold."""
    prior_strength: float | None = None
    """The prior's strength in trials; None: :func:`~assay.stats.tuned_prior_strength`."""

    def __post_init__(self) -> None:
        _check_threshold(self.threshold)

    @property
    def p0(self) -> float:
        """The threshold."""
        return self.threshold

    @property
    def name(self) -> str:
        """``"confidence-sequence"``."""
        return SequentialMethod.CONFIDENCE_SEQUENCE

    @property
    def sequence(self) -> BernoulliConfidenceSequence:
        """The sequence it stops on (and the verdict reads)."""
        if self.prior_strength is None:
            return pass_rate_sequence(self.threshold, self.confidence, self.max_trials)
        return BernoulliConfidenceSequence(self.confidence, self.threshold, self.prior_strength)

    def decide_many(self, successes: npt.NDArray[np.int64], n: int) -> npt.NDArray[np.int8]:
        """1 where the interval lies at or above the threshold, -1 wholly below, 0 else."""
        return self.sequence.side(successes, n, self.threshold)

    def state(self, successes: int, n: int) -> SequentialState:
        """The decision, log mixture at the threshold and the interval after ``n`` trials."""
        statistic = float(self.sequence.log_evidence(successes, n, self.threshold))
        return _state(self, successes, n, statistic)


@dataclass(frozen=True, slots=True)
class _ZoneRule:
    """What the zone-based rules share: threshold, indifference zone, error rates, a cap."""

    threshold: float
    """The required pass rate; the upper end ``p0`` of the failing side."""
    delta: float = 0.1
    """Width of the indifference zone above the threshold."""
    alpha: float = 0.05
    """Bound on P(the rule decides PASS) when the true rate is at most ``p0``."""
    beta: float = 0.2
    """Bound on P(the rule decides FAIL) when the true rate is at least ``p1``."""
    max_trials: int | None = None
    """Truncation: the rule stops here at the latest."""
    confidence: float = 0.95
    """Coverage of the anytime-valid interval the verdict reads."""

    def __post_init__(self) -> None:
        _check_threshold(self.threshold)
        check_open_unit("delta", self.delta)
        check_open_unit("alpha", self.alpha)
        check_open_unit("beta", self.beta)

    @property
    def p0(self) -> float:
        """Upper end of the failing side (the threshold)."""
        return self.threshold

    @property
    def p1(self) -> float:
        """Lower end of the passing side; near 1 the zone is narrowed to keep ``p1 < 1``."""
        above = self.threshold + self.delta
        return above if above < 1 else (self.threshold + 1) / 2

    @property
    def sequence(self) -> BernoulliConfidenceSequence:
        """The anytime-valid interval the verdict reads (not the rule's own statistic)."""
        return pass_rate_sequence(self.threshold, self.confidence, self.max_trials)


@dataclass(frozen=True, slots=True)
class SPRT(_ZoneRule):
    """Wald's sequential probability ratio test of ``p1`` against ``p0``, as a stopping rule.

    After ``s`` passes in ``n`` trials the log likelihood ratio is
    ``s·log(p1/p0) + (n-s)·log((1-p1)/(1-p0))``. It decides PASS at ``log(1/alpha)`` and FAIL
    at ``log(beta)``: Ville's boundaries, for which the decision errors hold exactly for the
    composite hypotheses, truncated or not (Wald's classical ``log((1-beta)/alpha)`` only
    approximately). The decision stops the test; the verdict is the interval's.
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
        """The SPRT's decision for many success counts at one ``n``: 1 PASS, -1 FAIL, 0 on."""
        llr = self._llr(successes, n)
        # A tiny tolerance so that an exact hit of a boundary counts despite rounding.
        eps = 1e-12
        return np.where(
            llr >= self.upper - eps, 1, np.where(llr <= self.lower + eps, -1, 0)
        ).astype(np.int8)

    def state(self, successes: int, n: int) -> SequentialState:
        """The decision, log likelihood ratio and anytime-valid interval after ``n`` trials."""
        check_successes(successes, n)
        return _state(self, successes, n, float(self._llr(successes, n)))


_LEGACY_PRIOR_STRENGTH = 10.0
"""The prior of the earlier confidence-sequence rule: centred on the threshold, ten trials."""


@dataclass(frozen=True, slots=True)
class LegacyConfidenceSequenceTest(_ZoneRule):
    """The confidence-sequence stopping rule recorded by earlier versions (replay only).

    It decided PASS once the lower bound of a ``Beta(10·threshold, 10·(1-threshold))`` mixture
    sequence at level ``alpha`` exceeded ``p0``, FAIL once the upper bound at level ``beta``
    fell below ``p1``. Trace sets recorded with it replay the same stopping trial.
    """

    @property
    def name(self) -> str:
        """``"confidence-sequence"``."""
        return SequentialMethod.CONFIDENCE_SEQUENCE

    def _bound(self, level: float) -> BernoulliConfidenceSequence:
        return BernoulliConfidenceSequence(1 - level, self.threshold, _LEGACY_PRIOR_STRENGTH)

    def decide_many(self, successes: npt.NDArray[np.int64], n: int) -> npt.NDArray[np.int8]:
        """1 once the lower bound passes ``p0``, -1 once the upper bound is below ``p1``."""
        passed = self._bound(self.alpha).side(successes, n, self.p0) > 0
        failed = self._bound(self.beta).side(successes, n, self.p1) < 0
        return np.where(passed, 1, np.where(failed, -1, 0)).astype(np.int8)

    def state(self, successes: int, n: int) -> SequentialState:
        """The decision, log mixture at the threshold and anytime-valid interval."""
        check_successes(successes, n)
        statistic = float(self._bound(self.alpha).log_evidence(successes, n, self.p0))
        return _state(self, successes, n, statistic)


def sequential_test(
    method: SequentialMethod | str,
    threshold: float,
    *,
    delta: float = 0.1,
    alpha: float = 0.05,
    beta: float = 0.2,
    max_trials: int | None = None,
    confidence: float = 0.95,
    prior_strength: float | None = None,
) -> SPRT | ConfidenceSequenceTest:
    """Build the stopping rule named ``method`` (``"confidence-sequence"`` or ``"sprt"``).

    Args:
        method: ``"confidence-sequence"`` (Robbins 1970; the default of ``assay run``) or
            ``"sprt"`` (Wald 1945).
        threshold: The required pass rate; must lie strictly in (0, 1).
        delta: SPRT only: width of the indifference zone ``[threshold, threshold + delta]``.
        alpha: SPRT only: bound on P(it decides PASS) for a true rate at most the threshold.
        beta: SPRT only: bound on P(it decides FAIL) at ``threshold + delta`` or above.
        max_trials: Truncation; the interval's verdict is taken there at the latest.
        confidence: Coverage of the anytime-valid interval every verdict reads.
        prior_strength: Confidence sequence only: the prior's strength (default: tuned to
            ``max_trials``, :func:`~assay.stats.tuned_prior_strength`).

    Returns:
        The rule, ready to :meth:`~ConfidenceSequenceTest.state` after each trial.
    """
    if max_trials is not None and max_trials < 1:
        raise ConfigError(f"max_trials must be at least 1 (got {max_trials})")
    if method == SequentialMethod.SPRT:
        return SPRT(threshold, delta, alpha, beta, max_trials, confidence)
    if method == SequentialMethod.CONFIDENCE_SEQUENCE:
        return ConfidenceSequenceTest(threshold, confidence, max_trials, prior_strength)
    choices = " or ".join(repr(m.value) for m in SequentialMethod)
    raise ConfigError(f"sequential method must be {choices} (got {method!r})")
