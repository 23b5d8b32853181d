"""The choices of the statistics and of the renderings, each one enum defined once.

The command line offers exactly these values (typer reads the enums), the options dataclasses
hold them, and the statistics check them; a StrEnum member is also its plain string, so
``"wilson"`` and ``IntervalMethod.WILSON`` are the same choice everywhere.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final

__all__ = [
    "Adjustment",
    "Engine",
    "ErrorPolicy",
    "IntervalMethod",
    "OutputFormat",
    "PairedDesign",
    "PairedTest",
    "RegressionTest",
    "ScoreInterval",
    "SequentialMethod",
    "SuiteInterval",
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


class SuiteInterval(StrEnum):
    """Interval methods of a suite's mean over cases, cases as clusters."""

    BETTING = "betting"
    T = "t"
    BOOTSTRAP = "bootstrap"


class PairedTest(StrEnum):
    """One-sided tests of a drop over the cases two versions both ran (chosen by the data)."""

    MCNEMAR_EXACT = "mcnemar-exact"
    BETTING = "betting"
    SIGN_FLIP_EXACT = "sign-flip-exact"
    SIGN_FLIP_MONTE_CARLO = "sign-flip-monte-carlo"


class PairedDesign(StrEnum):
    """Designs of a paired comparison that ``assay plan --paired`` plans for."""

    FIXED = "fixed"
    """Every case run K times on each version, then one paired test."""
    ADAPTIVE = "adaptive"
    """``assay run --baseline-agent``: cases in a random order until the interval settles."""


class RegressionTest(StrEnum):
    """Tests of a regression (a drop in pass rate between two versions).

    The three exact tests assume each version ran a number of trials fixed in advance;
    ``anytime`` (betting on the versions' trials paired in run order) stays valid whatever
    rule stopped either version, and is used whenever one did.
    """

    BOSCHLOO = "boschloo"
    FISHER = "fisher"
    BARNARD = "barnard"
    ANYTIME = "anytime"


DEFAULT_REGRESSION_TEST: Final = RegressionTest.BOSCHLOO
"""The test of a regression every command defaults to (``analyze``, ``compare``, ``plan``):
Boschloo's, uniformly more powerful than Fisher's at the same level (docs/statistics.md)."""


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


class Engine(StrEnum):
    """Where the spans → trials function runs (``--engine``)."""

    LOCAL = "local"
    SPARK = "spark"


class OutputFormat(StrEnum):
    """Renderings: ``--format`` of every command (``plan`` and ``describe`` render a few)."""

    CONSOLE = "console"
    JSON = "json"
    JUNIT = "junit"
    MARKDOWN = "markdown"
    GITHUB = "github"
    """GitHub's workflow annotations."""
    HTML = "html"
