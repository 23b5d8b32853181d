"""How an adaptive run behaves: exact operating characteristics, simulation, fixed-N reference.

A run stops where its rule (:mod:`._sprt`) says, and its verdict is the anytime-valid interval
there against the threshold (``test.sequence.side``): these functions report that verdict.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from assay.errors import ConfigError
from assay.stats.base import check_probability
from assay.stats.sequential._sprt import SequentialTest

__all__ = [
    "FixedSampleDesign",
    "OperatingCharacteristics",
    "fixed_sample_design",
    "operating_characteristics",
    "simulate_sequential",
]


@dataclass(frozen=True, slots=True)
class OperatingCharacteristics:
    """Exact behaviour of a truncated adaptive run at one true pass rate."""

    p: float
    """The true pass rate."""
    pass_probability: float
    """P(the verdict is PASS: the interval where it stopped lies at or above the threshold)."""
    fail_probability: float
    """P(the verdict is FAIL: the interval where it stopped lies wholly below)."""
    inconclusive_probability: float
    """P(the verdict is INCONCLUSIVE: the interval where it stopped holds the threshold)."""
    expected_trials: float
    """E[number of trials run]."""


def operating_characteristics(test: SequentialTest, p: float) -> OperatingCharacteristics:
    """The exact verdict probabilities and expected trials at true rate ``p``.

    Computed by propagating the distribution of the success count through every ``n`` up to
    ``test.max_trials`` (no simulation error). The run stops where ``test.decide_many`` is
    non-zero or at the maximum; the verdict there is ``test.sequence.side`` at the threshold.

    Args:
        test: A truncated sequential test (``max_trials`` set).
        p: The true pass rate in [0, 1].

    Returns:
        The operating characteristics.
    """
    if test.max_trials is None:
        raise ConfigError("operating characteristics need a truncated test (set max_trials)")
    check_probability("p", p)
    alive = np.array([1.0])  # P(still running with s successes) after n trials
    p_pass = p_fail = expected = 0.0
    for n in range(1, test.max_trials + 1):
        expected += float(alive.sum())  # every still-running path runs trial n
        nxt = np.zeros(n + 1)
        nxt[:-1] += alive * (1 - p)
        nxt[1:] += alive * p
        counts = np.arange(n + 1, dtype=np.int64)
        stops = test.decide_many(counts, n) != 0
        if n == test.max_trials:
            stops[:] = True
        verdicts = test.sequence.side(counts, n, test.p0)
        p_pass += float(nxt[stops & (verdicts > 0)].sum())
        p_fail += float(nxt[stops & (verdicts < 0)].sum())
        nxt[stops] = 0.0
        alive = nxt
    return OperatingCharacteristics(p, p_pass, p_fail, max(0.0, 1.0 - p_pass - p_fail), expected)


@dataclass(frozen=True, slots=True)
class FixedSampleDesign:
    """The fixed-N one-sided binomial test with given error rates."""

    n: int
    """Number of trials."""
    critical: int
    """PASS iff at least this many trials pass."""
    alpha: float
    """Realised P(PASS) at ``p0``."""
    beta: float
    """Realised P(FAIL) at ``p1``."""


def fixed_sample_design(
    p0: float, p1: float, alpha: float = 0.05, beta: float = 0.2, max_n: int = 10_000
) -> FixedSampleDesign:
    """The smallest fixed-N exact binomial test of ``p <= p0`` vs ``p >= p1`` at alpha, beta.

    For each ``n`` the critical count is the smallest ``c`` with ``P(X >= c | p0) <= alpha``;
    the first ``n`` where ``P(X < c | p1) <= beta`` is returned. The reference against which
    the sequential tests' savings are measured.

    Args:
        p0: Upper end of the failing side.
        p1: Lower end of the passing side (``> p0``).
        alpha: Bound on P(PASS | p0).
        beta: Bound on P(FAIL | p1).
        max_n: Give up beyond this many trials.

    Returns:
        The design.
    """
    from scipy import stats as sps

    if not 0 < p0 < p1 < 1:
        raise ConfigError(f"need 0 < p0 < p1 < 1 (got {p0}, {p1})")
    for n in range(1, max_n + 1):
        # smallest c with sf(c - 1) = P(X >= c) <= alpha
        c = int(sps.binom.isf(alpha, n, p0)) + 1
        while c > 0 and sps.binom.sf(c - 2, n, p0) <= alpha:
            c -= 1
        while sps.binom.sf(c - 1, n, p0) > alpha:
            c += 1
        if c > n:
            continue
        realised_beta = float(sps.binom.cdf(c - 1, n, p1))
        if realised_beta <= beta:
            return FixedSampleDesign(n, c, float(sps.binom.sf(c - 1, n, p0)), realised_beta)
    raise ConfigError(f"no fixed design up to {max_n} trials")


def simulate_sequential(
    test: SequentialTest, p: float, reps: int, seed: int | None = None
) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.int64]]:
    """Run a truncated adaptive test ``reps`` times on simulated Bernoulli(``p``) trials.

    Args:
        test: A truncated sequential test (``max_trials`` set).
        p: The true pass rate.
        reps: Number of simulated runs.
        seed: Seed of numpy's default generator.

    Returns:
        ``(verdicts, trials)``: per run, 1 PASS / -1 FAIL / 0 INCONCLUSIVE (the interval where
        it stopped against the threshold), and trials used.
    """
    if test.max_trials is None:
        raise ConfigError("simulation needs a truncated test (set max_trials)")
    rng = np.random.default_rng(seed)
    outcomes = rng.random((reps, test.max_trials)) < p
    successes = np.cumsum(outcomes, axis=1, dtype=np.int64)
    verdicts = np.zeros(reps, dtype=np.int8)
    trials = np.full(reps, test.max_trials, dtype=np.int64)
    running = np.ones(reps, dtype=bool)
    for n in range(1, test.max_trials + 1):
        idx = np.flatnonzero(running)
        if idx.size == 0:
            break
        counts = successes[idx, n - 1]
        stops = test.decide_many(counts, n) != 0
        if n == test.max_trials:
            stops[:] = True
        stopped = idx[stops]
        verdicts[stopped] = test.sequence.side(counts[stops], n, test.p0)
        trials[stopped] = n
        running[stopped] = False
    return verdicts, trials
