"""Flakiness: one score in [0, 1] built from named components, each explained in a sentence."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from assay.errors import ConfigError, InsufficientDataError
from assay.stats.behaviour._consistency import ToolConsistency, tool_consistency
from assay.stats.behaviour._tool_paths import ToolPaths

WEIGHTS: Final = {
    "outcome_instability": 0.40,
    "tool_path_inconsistency": 0.20,
    "error_rate": 0.15,
    "score_dispersion": 0.10,
    "path_length_dispersion": 0.10,
    "latency_dispersion": 0.05,
}
"""Weight of each component; the score is the weighted mean over the components available."""

CATEGORIES: Final = (
    (0.10, "stable"),
    (0.20, "low_variance"),
    (0.35, "moderate_variance"),
    (0.50, "high_variance"),
    (float("inf"), "flaky"),
)
"""Upper limits (exclusive) of the score for each category, in order."""


@dataclass(frozen=True, slots=True)
class Factor:
    """One component of the flakiness score."""

    name: str
    """Component name, a key of :data:`WEIGHTS`."""
    value: float
    """The component in [0, 1]; 0 is perfectly steady."""
    detail: str
    """What it means, in a sentence a person understands."""


@dataclass(frozen=True, slots=True)
class Flakiness:
    """How flaky a test is, and why."""

    score: float
    """Weighted mean of the available components, in [0, 1]."""
    category: str
    """``stable``, ``low_variance``, ``moderate_variance``, ``high_variance`` or ``flaky``."""
    factors: tuple[Factor, ...]
    """The components, largest contribution to the score first."""


def _array(values: npt.ArrayLike, n: int, name: str) -> npt.NDArray[np.float64]:
    array = np.asarray(values, dtype=np.float64).ravel()
    if array.size != n:
        raise ConfigError(f"{name} has {array.size} values for {n} trials")
    return array


def _cv(mean: float, std: float) -> float:
    """Coefficient of variation std/|mean| capped at 1, of values with this mean and std."""
    if std == 0.0:
        return 0.0
    if mean == 0.0:
        return 1.0
    return min(1.0, std / abs(mean))


def category(score: float) -> str:
    """The category name for a flakiness score (see :data:`CATEGORIES`)."""
    for limit, name in CATEGORIES:
        if score < limit:
            return name
    return CATEGORIES[-1][1]  # pragma: no cover - the last limit is infinite


def flakiness(
    passed: npt.ArrayLike,
    *,
    errors: npt.ArrayLike | None = None,
    scores: npt.ArrayLike | None = None,
    tool_sequences: Sequence[Sequence[str]] | ToolPaths | None = None,
    step_counts: npt.ArrayLike | None = None,
    latencies: npt.ArrayLike | None = None,
) -> Flakiness:
    """Score how flaky a test is from what varies between its trials.

    Components (each in [0, 1], 0 = steady), weighted by :data:`WEIGHTS`:

    * ``outcome_instability`` — 4·p·(1 − p) for pass rate p: 0 when every trial agrees,
      1 at a coin flip (the binomial variance scaled to [0, 1]).
    * ``tool_path_inconsistency`` — 1 − pairwise exact-sequence agreement: the chance that two
      trials take different tool paths.
    * ``error_rate`` — share of trials that errored (harness or dependency broke).
    * ``score_dispersion``, ``path_length_dispersion``, ``latency_dispersion`` — coefficient
      of variation (std / |mean|) of the score, of the number of steps and of the latency,
      capped at 1.

    A component without data is left out and the weights of the rest renormalised.

    Args:
        passed: One bool per trial.
        errors: One bool per trial: did it error.
        scores: One score per trial (NaN for none).
        tool_sequences: Each trial's tool names in order, or their :class:`ToolPaths`.
        step_counts: Steps (spans or tool calls) per trial.
        latencies: Wall time per trial, in seconds.

    Returns:
        The score, its category, and the factors.

    Raises:
        InsufficientDataError: For no trials.
    """
    outcome = np.asarray(passed, dtype=bool).ravel()
    n = int(outcome.size)
    if n == 0:
        raise InsufficientDataError("flakiness needs at least one trial")
    consistency = None
    if tool_sequences is not None:
        if len(tool_sequences) != n:
            raise ConfigError(f"tool_sequences has {len(tool_sequences)} entries for {n} trials")
        consistency = tool_consistency(tool_sequences, similarity=False)
    n_err = None
    if errors is not None:
        n_err = int(_array(errors, n, "errors").astype(bool).sum())
    spreads: dict[str, tuple[float, float]] = {}
    for name, values, label in (
        ("score_dispersion", scores, "score"),
        ("path_length_dispersion", step_counts, "number of steps"),
        ("latency_dispersion", latencies, "latency"),
    ):
        if values is None:
            continue
        array = _array(values, n, label)
        finite = array[np.isfinite(array)]
        if finite.size >= 2:
            spreads[name] = float(np.mean(finite)), float(np.std(finite, ddof=1))
    return flakiness_of(
        n, int(outcome.sum()), consistency=consistency, errors=n_err, spreads=spreads
    )


_SPREADS: Final = (
    ("score_dispersion", "score"),
    ("path_length_dispersion", "number of steps"),
    ("latency_dispersion", "latency"),
)


def flakiness_of(
    n: int,
    n_pass: int,
    *,
    consistency: ToolConsistency | None,
    errors: int | None,
    spreads: Mapping[str, tuple[float, float]],
) -> Flakiness:
    """:func:`flakiness` from what it reads of the trials (a caller that has it already).

    Args:
        n: Trials (≥ 1).
        n_pass: Passing trials.
        consistency: The trials' tool consistency (its agreement and distinct paths); None
            to leave the tool-path component out.
        errors: Error trials; None to leave the error rate out.
        spreads: ``score_dispersion``, ``path_length_dispersion``, ``latency_dispersion`` →
            the mean and standard deviation (ddof 1) of the finite values, where there are two
            or more.
    """
    factors: list[Factor] = []
    rate = n_pass / n
    instability = 4 * rate * (1 - rate)
    if 0 < n_pass < n:
        detail = f"outcome varies: {n_pass} of {n} trials passed ({rate:.0%})"
    else:
        trials = "trial" if n == 1 else "trials"
        detail = f"outcome is steady: {'all' if n_pass else 'none'} of {n} {trials} passed"
    factors.append(Factor("outcome_instability", instability, detail))

    if consistency is not None and consistency.agreement is not None:
        value = 1.0 - consistency.agreement
        if consistency.distinct == 1:
            detail = f"tool path is the same in all {n} trials"
        else:
            detail = (
                f"tool path varies: {consistency.distinct} distinct sequences in {n} "
                f"trials; two trials take the same path {consistency.agreement:.0%} of "
                f"the time"
            )
        factors.append(Factor("tool_path_inconsistency", value, detail))

    if errors is not None:
        detail = (
            f"{errors} of {n} trials errored ({errors / n:.0%})"
            if errors
            else f"no trial errored in {n}"
        )
        factors.append(Factor("error_rate", errors / n, detail))

    for name, label in _SPREADS:
        spread = spreads.get(name)
        if spread is None:
            continue
        mean, std = spread
        cv = _cv(mean, std)
        unit = " s" if label == "latency" else ""
        detail = (
            f"{label} varies: mean {mean:.3g}{unit}, standard deviation {std:.3g}{unit} "
            f"({std / abs(mean):.0%} of the mean)"
            if std > 0 and mean != 0
            else f"{label} is the same in every trial"
            if std == 0
            else f"{label} varies around a mean of 0 (standard deviation {std:.3g})"
        )
        factors.append(Factor(name, cv, detail))

    total_weight = sum(WEIGHTS[f.name] for f in factors)
    score = sum(WEIGHTS[f.name] * f.value for f in factors) / total_weight
    score = min(max(score, 0.0), 1.0)
    ordered = sorted(factors, key=lambda f: -WEIGHTS[f.name] * f.value)
    return Flakiness(score, category(score), tuple(ordered))
