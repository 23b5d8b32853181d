"""Budgets for a run (trials, tokens, cost, wall time); prices live in ``assay.analysis``."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from assay.errors import ConfigError


@dataclass(frozen=True, slots=True)
class Budget:
    """Limits for a whole run. A new trial starts only while every limit has room left."""

    max_trials: int | None = None
    """Trials started, over all tests."""
    max_tokens: int | None = None
    """Prompt + completion tokens recorded by finished trials."""
    max_cost: float | None = None
    """USD spent by finished trials (needs a price table)."""
    max_time: float | None = None
    """Seconds of wall time since the run started."""

    def __post_init__(self) -> None:
        for name in ("max_trials", "max_tokens", "max_cost", "max_time"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise ConfigError(f"--{name.replace('_', '-')} must not be negative ({value})")


@dataclass(slots=True)
class Spending:
    """What a run has used so far."""

    started: float
    """``time.monotonic()`` at the start."""
    trials: int = 0
    """Trials started."""
    tokens: int = 0
    """Tokens recorded by finished trials."""
    cost: float = 0.0
    """USD of finished trials."""

    def elapsed(self) -> float:
        """Seconds since the start."""
        return time.monotonic() - self.started

    def exhausted(self, budget: Budget) -> str | None:
        """The reason no further trial may start, or None."""
        if budget.max_trials is not None and self.trials >= budget.max_trials:
            return f"budget: --max-trials {budget.max_trials} reached"
        if budget.max_tokens is not None and self.tokens >= budget.max_tokens:
            return f"budget: --max-tokens {budget.max_tokens} reached ({self.tokens} used)"
        if budget.max_cost is not None and self.cost >= budget.max_cost:
            return f"budget: --max-cost {budget.max_cost:g} reached (${self.cost:.4f} spent)"
        if budget.max_time is not None and self.elapsed() >= budget.max_time:
            return f"budget: --max-time {budget.max_time:g}s reached"
        return None


def unmetered_warning(
    calls: Mapping[str, int], budget: Budget, priced: bool, cost_checked: Sequence[str]
) -> str | None:
    """What LLM calls without token usage did to the run's limits, or None when nothing read them.

    ``calls``: such calls per test. The budgets count what was recorded, so a call whose usage is
    unknown adds 0 to ``--max-tokens`` and ``--max-cost``: the run may spend more than they say.
    ``cost_checked``: the tests with ``thresholds.max_cost``, which is not checked on a trial
    whose cost has an unknown part.
    """
    if not calls:
        return None
    missed = []
    if budget.max_tokens is not None:
        missed.append("--max-tokens")
    if budget.max_cost is not None and priced:
        missed.append("--max-cost")
    counted = f"counted as 0 by {' and '.join(missed)}" if missed else ""
    unchecked = sorted(t for t in calls if t in cost_checked) if priced else []
    skipped = f"thresholds.max_cost not checked on their trials ({', '.join(unchecked)})"
    said = [part for part in (counted, skipped if unchecked else "") if part]
    if not said:
        return None
    tests = ", ".join(sorted(calls))
    return (
        f"{sum(calls.values())} LLM call(s) recorded no token usage (tests {tests}): their "
        f"tokens and cost are unknown, {'; '.join(said)}"
    )
