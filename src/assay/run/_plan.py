"""The dry-run plan: each test's maximum and expected trials, without running anything."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from assay.run._options import DEFAULT_DELTA, RunOptions, build_sequential, test_plan
from assay.run._suite import TestCase
from assay.stats import SPRT, operating_characteristics

FIXED = "fixed"
"""The method of a plan row whose test runs every trial (no stopping rule)."""


@dataclass(frozen=True, slots=True)
class PlanRow:
    """The plan for one test."""

    test_id: str
    """The test case."""
    max_runs: int
    """The most trials."""
    threshold: float
    """Required pass rate."""
    method: str
    """``sprt``, ``confidence-sequence`` or ``fixed``."""
    expected_at_p0: float
    """Expected trials if the true rate equals the threshold."""
    expected_at_p1: float
    """Expected trials if the true rate is ``threshold + delta`` (0.1 unless ``--delta``)."""


def plan(tests: Sequence[TestCase], options: RunOptions) -> list[PlanRow]:
    """Maximum and expected trials per test, without running anything."""
    rows = []
    for test in tests:
        runs, threshold, _ = test_plan(test, options)
        design = build_sequential(test, options)
        if design is None:
            rows.append(PlanRow(test.id, runs, threshold, FIXED, runs, runs))
            continue
        seq = design.build(test.variance.confidence_level)
        above = SPRT(threshold, design.delta or DEFAULT_DELTA).p1  # the zone's upper end
        at_p0 = operating_characteristics(seq, threshold).expected_trials
        at_p1 = operating_characteristics(seq, above).expected_trials
        rows.append(PlanRow(test.id, runs, threshold, seq.name, at_p0, at_p1))
    return rows
