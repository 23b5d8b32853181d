"""Variance-config checks (EvalView style): each configured limit is its own pass/fail reason."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class VarianceCheck:
    """One configured limit and whether the test met it."""

    name: str
    """``pass_rate``, ``min_mean_score`` or ``max_std_dev``."""
    passed: bool
    """Whether the limit was met."""
    value: float | None
    """The observed figure (pass rate, mean score or score std); None if not measured."""
    limit: float
    """The configured limit."""
    reason: str
    """One sentence: what was required and what was seen."""


def variance_checks(
    pass_rate: float,
    mean_score: float | None,
    std_score: float | None,
    pass_rate_min: float | None = None,
    min_mean_score: float | None = None,
    max_std_dev: float | None = None,
) -> list[VarianceCheck]:
    """Check the configured variance limits; one :class:`VarianceCheck` per configured limit.

    Plain comparisons of observed figures with limits, as in EvalView's variance config
    (``pass_rate``, ``min_mean_score``, ``max_std_dev``); the statistical pass-rate verdict is
    the threshold verdict. A limit on a score that was not recorded fails, since the
    requirement cannot be shown to hold.

    Args:
        pass_rate: Observed pass rate.
        mean_score: Observed mean score, or None without scores.
        std_score: Observed sample std of the score, or None (no scores or one trial).
        pass_rate_min: Minimum pass rate, or None for no check.
        min_mean_score: Minimum mean score, or None for no check.
        max_std_dev: Maximum score std, or None for no check.

    Returns:
        The checks, in the order pass_rate, min_mean_score, max_std_dev (configured ones only).
    """
    checks: list[VarianceCheck] = []
    if pass_rate_min is not None:
        ok = pass_rate >= pass_rate_min
        checks.append(
            VarianceCheck(
                "pass_rate",
                ok,
                pass_rate,
                pass_rate_min,
                f"pass rate {pass_rate:.1%} {'meets' if ok else 'is below'} the minimum "
                f"{pass_rate_min:.1%}",
            )
        )
    if min_mean_score is not None:
        if mean_score is None:
            checks.append(
                VarianceCheck(
                    "min_mean_score",
                    False,
                    None,
                    min_mean_score,
                    f"mean score must be at least {min_mean_score:g} but no score was recorded",
                )
            )
        else:
            ok = mean_score >= min_mean_score
            checks.append(
                VarianceCheck(
                    "min_mean_score",
                    ok,
                    mean_score,
                    min_mean_score,
                    f"mean score {mean_score:.3g} {'meets' if ok else 'is below'} the minimum "
                    f"{min_mean_score:g}",
                )
            )
    if max_std_dev is not None:
        if std_score is None:
            checks.append(
                VarianceCheck(
                    "max_std_dev",
                    False,
                    None,
                    max_std_dev,
                    f"score std must be at most {max_std_dev:g} but needs at least two scores",
                )
            )
        else:
            ok = std_score <= max_std_dev
            checks.append(
                VarianceCheck(
                    "max_std_dev",
                    ok,
                    std_score,
                    max_std_dev,
                    f"score std {std_score:.3g} {'is within' if ok else 'exceeds'} the maximum "
                    f"{max_std_dev:g}",
                )
            )
    return checks
