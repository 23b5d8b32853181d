"""The choices of the statistics, each one enum defined once.

The command line offers exactly these values (typer reads the enums), the options dataclasses
hold them, and the statistics check them; a StrEnum member is also its plain string, so
``"wilson"`` and ``IntervalMethod.WILSON`` are the same choice everywhere.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = [
    "Adjustment",
    "ErrorPolicy",
    "IntervalMethod",
    "RegressionTest",
    "ScoreInterval",
    "SequentialMethod",
]


class IntervalMethod(StrEnum):
    """Interval methods of a pass rate (docs/statistics.md)."""

    WILSON = "wilson"
    WILSON_CC = "wilson-cc"
    CLOPPER_PEARSON = "clopper-pearson"
    JEFFREYS = "jeffreys"
    AGRESTI_COULL = "agresti-coull"


class ScoreInterval(StrEnum):
    """Interval methods of a mean score."""

    T = "t"
    BOOTSTRAP = "bootstrap"


class RegressionTest(StrEnum):
    """Exact tests of a regression (a drop in pass rate between two versions)."""

    BOSCHLOO = "boschloo"
    FISHER = "fisher"
    BARNARD = "barnard"


class Adjustment(StrEnum):
    """Multiple-comparison adjustments across a suite."""

    NONE = "none"
    HOLM = "holm"
    BH = "bh"


class SequentialMethod(StrEnum):
    """Sequential tests that decide when an adaptive run stops a test."""

    SPRT = "sprt"
    CONFIDENCE_SEQUENCE = "confidence-sequence"


class ErrorPolicy(StrEnum):
    """How error trials (the harness or a dependency broke) count in a pass rate."""

    COUNT = "count"
    """As failures."""
    EXCLUDE = "exclude"
    """Left out of n (always reported)."""
