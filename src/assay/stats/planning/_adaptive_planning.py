"""Planning the adaptive paired comparison: the suite size it needs, and the cases it uses.

The adaptive comparison (``assay run --baseline-agent``) stops once the betting confidence
sequence of the mean paired difference settles, so its power and the cases it uses have no
closed form: they are found by running that same rule (:func:`simulate_paired_sequence`) over
simulated suites. One simulation of ``replicates`` suites of up to a cap of cases answers every
suite size at once: a suite of C cases is the first C cases of a longer one (cases are fed in a
random order, so they are independent draws), and it FAILs exactly when the longer run showed
the drop within its first C cases.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

import numpy as np
import numpy.typing as npt

from assay.errors import ConfigError
from assay.stats.planning._suite_planning import (
    DEFAULT_TRIALS_PER_CASE,
    PairedPlan,
    PairedPlanOption,
    plan_paired,
)
from assay.stats.sequential import PairedDecision, simulate_paired_sequence

__all__ = ["plan_adaptive_paired"]

ADAPTIVE_REPLICATES: Final = 200
"""Simulated suites per trials-per-case option (the power's Monte Carlo error is about ±0.03)."""
_CAP_FACTOR: Final = 8
"""The simulation runs up to this many times the fixed design's cases."""


def plan_adaptive_paired(
    delta: float,
    *,
    alpha: float = 0.05,
    power: float = 0.80,
    between_case_sd: float,
    within_case_var: float,
    trials_per_case: Sequence[int] = DEFAULT_TRIALS_PER_CASE,
    replicates: int = ADAPTIVE_REPLICATES,
    seed: int = 0,
    max_cases: int = 20_000,
) -> PairedPlan:
    """The suite size at which the adaptive comparison FAILs a drop of ``delta`` with ``power``.

    The model of the cases, from the two variances of Miller's decomposition (as
    :func:`plan_paired` takes them): every case's baseline pass rate is the level ``p >= 1/2``
    with ``2 p (1 - p) = within_case_var``; the current version's is ``p - delta`` plus a normal
    spread of SD ``between_case_sd``, clipped to [0, 1]; each version runs K trials of a case.
    For each K, ``replicates`` suites are run through the adaptive rule (confidence ``1 -
    alpha``, "no drop of delta" at ``delta``) up to ``_CAP_FACTOR`` times the fixed design's
    cases (at most ``max_cases``): the plan's ``cases`` is the smallest suite size whose FAIL
    share reaches ``power``, ``mean_cases_at_delta`` the cases such a suite uses on average at
    the drop, ``mean_cases_no_change`` when nothing changed (same spread, no drop).

    Args:
        delta: The mean drop over cases to detect, > 0.
        alpha: The sequence's miss rate (bounds a wrong FAIL and a wrong PASS).
        power: The FAIL share wanted at a drop of delta.
        between_case_sd: σ_between ≥ 0.
        within_case_var: σ²_within in [0, 0.5] (two pass rates' ``p (1 - p)``).
        trials_per_case: The K options.
        replicates: Simulated suites per option.
        seed: Seed of the simulation.
        max_cases: The largest suite simulated.

    Returns:
        The plan, ``design="adaptive"``; an option's ``cases`` is None when no suite up to the
        cap reaches the power.
    """
    fixed = plan_paired(
        delta,
        alpha=alpha,
        power=power,
        between_case_sd=between_case_sd,
        within_case_var=within_case_var,
        trials_per_case=trials_per_case,
    )  # checks the arguments
    if within_case_var > 0.5:
        raise ConfigError(
            f"within_case_var {within_case_var:g} exceeds 0.5, the most two pass rates give "
            "(2 p (1 - p))"
        )
    if replicates < 10 or max_cases < 1:
        raise ConfigError("replicates must be at least 10 and max_cases at least 1")
    level = (1 + math.sqrt(1 - 2 * within_case_var)) / 2
    rng = np.random.default_rng(seed)
    options = []
    for option in fixed.options:
        k = option.trials_per_case
        cap = min(max_cases, _CAP_FACTOR * (option.cases or max_cases))
        drop = simulate_paired_sequence(
            _differences(rng, replicates, cap, k, level, delta, between_case_sd),
            confidence=1 - alpha,
            delta=delta,
        )
        failed = np.sort(drop.cases[drop.decisions == PairedDecision.DROP.value])
        needed = math.ceil(power * replicates)
        if failed.size < needed:
            options.append(PairedPlanOption(k, None, None, None, option.sd_of_difference))
            continue
        cases = int(failed[needed - 1])
        achieved = np.count_nonzero(failed <= cases) / replicates
        unchanged = simulate_paired_sequence(
            _differences(rng, replicates, cases, k, level, 0.0, between_case_sd),
            confidence=1 - alpha,
            delta=delta,
        )
        options.append(
            PairedPlanOption(
                k,
                cases,
                achieved,
                2 * cases * k,
                option.sd_of_difference,
                mean_cases_at_delta=float(np.minimum(drop.cases, cases).mean()),
                mean_cases_no_change=float(unchanged.cases.mean()),
            )
        )
    return PairedPlan(
        tuple(options),
        delta,
        alpha,
        power,
        between_case_sd,
        within_case_var,
        "adaptive",
        f"simulation of the adaptive rule ({replicates} suites per option, seed {seed}; power "
        f"±{math.sqrt(power * (1 - power) / replicates):.2f}): cases at pass rate "
        f"{level:.3f} (2p(1 - p) = the within-case variance), the current version {delta:g} "
        "lower plus the between-case spread",
    )


def _differences(
    rng: np.random.Generator,
    rows: int,
    cases: int,
    k: int,
    level: float,
    drop: float,
    spread: float,
) -> npt.NDArray[np.float64]:
    """Per-case differences of K-trial pass rates, current − baseline, one suite a row."""
    current = np.clip(level - drop + spread * rng.standard_normal((rows, cases)), 0.0, 1.0)
    return (rng.binomial(k, current) - rng.binomial(k, level, (rows, cases))) / k
