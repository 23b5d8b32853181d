"""Options of an analysis, checked in one place (each one a flag of ``assay analyze``).

The options that decide a verdict — threshold, confidence, the error policy and the variance
limits — default to None: what the trials record (``assay.judgement.*``, written by ``assay
run`` and the pytest plugin), else the defaults of docs/cli.md. A value given here overrides what
was recorded, and the analysis says so in a note.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from assay.choices import (
    DEFAULT_REGRESSION_TEST,
    Adjustment,
    ErrorPolicy,
    IntervalMethod,
    RegressionTest,
    ScoreInterval,
    SuiteInterval,
)
from assay.errors import OptionError
from assay.judge._gate import parse_fail_on

ErrorsPolicy = ErrorPolicy
"""How error trials count (the name the library has exported so far)."""

DEFAULT_THRESHOLD = 0.80
"""The pass rate required when neither an option nor the trials say (docs/cli.md)."""
DEFAULT_CONFIDENCE = 0.95
"""The interval confidence when neither an option nor the trials say (docs/cli.md)."""


@dataclass(frozen=True, slots=True)
class AnalyzeOptions:
    """Every option of an analysis, with the defaults of docs/cli.md."""

    threshold: float | None = None
    """Required pass rate; None: what the trials record, else 0.80."""
    confidence: float | None = None
    """Two-sided confidence of the pass-rate interval; None: as recorded, else 0.95."""
    ci_method: IntervalMethod = IntervalMethod.WILSON
    """Interval method: wilson, wilson-cc, clopper-pearson, jeffreys, agresti-coull."""
    anytime: bool = False
    """Judge with anytime-valid intervals and tests (``--anytime``): valid however often the
    trials were looked at and however their number was chosen. A pass-rate verdict then reads
    the confidence sequence (docs/statistics.md, "A second look"); it does so anyway for a
    test whose trials come from several runs, or that stopped adaptively."""
    errors: ErrorPolicy | None = None
    """``count`` error trials as failures, or ``exclude`` them from n; None: as recorded, else
    ``count``."""
    min_score: float | None = None
    """A score below this fails a trial that has no explicit outcome."""
    test_attribute: str = "assay.test.id"
    """The span attribute that names the test (another one maps production traces)."""
    suite_attribute: str = "assay.suite"
    """The attribute of a trial's span that names its suite (trials without one form the set's
    own suite)."""
    ks: tuple[int, ...] = (1, 5, 10)
    """The k of pass@k and pass^k."""
    score_ci: ScoreInterval = ScoreInterval.T
    """Interval of a mean score: ``t`` or ``bootstrap``."""
    min_mean_score: float | None = None
    """Variance check: the mean score must reach this (None: as recorded, else no check)."""
    max_std_dev: float | None = None
    """Variance check: the score std must not exceed this (None: as recorded, else no check)."""
    regression_test: RegressionTest = DEFAULT_REGRESSION_TEST
    """Test of a regression: boschloo, fisher, barnard (exact, fixed n) or anytime (used anyway
    when either version stopped adaptively or ran in several runs)."""
    alpha: float = 0.05
    """Significance level of regression tests."""
    delta: float = 0.10
    """The smallest drop in pass rate a regression check must detect."""
    power: float = 0.80
    """The power a regression check needs for PASS."""
    adjust: Adjustment = Adjustment.NONE
    """Multiple-comparison adjustment across the suite: none, holm or bh."""
    seed: int = 0
    """Seed of bootstrap resampling (results are reproducible)."""
    pass_when: str | None = None
    """A rule over evaluations, scores and checks that a passing trial meets (docs/analysis.md)."""
    fail_on: tuple[str, ...] = ()
    """``--fail-on`` rules: behaviour changes that fail a test (``behaviour``, ``tools``,
    ``cost:+20%``, ...; see :mod:`assay.judge._gate`)."""
    prices: str | None = None
    """A price table file (``--prices``); None: the dated default table."""
    suite_threshold: float | None = None
    """The mean pass rate over cases a suite must reach (None: the threshold)."""
    suite_ci: SuiteInterval = SuiteInterval.BETTING
    """Interval of a suite's mean over cases: ``betting`` (valid at every C), ``t``
    (cluster-robust) or ``bootstrap`` (asymptotic)."""
    margin: float | None = None
    """Non-inferiority margin of the suite comparison: the largest drop that still allows the
    switch (None: the regression question, "did it drop?")."""
    gate_cases: bool = False
    """Every case's verdict counts in the exit code even when a suite comparison decides it
    (``--gate-cases``; docs/cli.md, "Exit codes")."""
    case_behaviour: bool = False
    """Diff every case's behaviour in a compared suite, also where its trials cannot show a
    change adjusted across the suite (``--case-behaviour``; docs/reports.md)."""
    allow_missing_cases: bool = False
    """Let a suite comparison PASS over the cases both versions answered while some case of
    the suite has no answer from the current version (default: INCONCLUSIVE until every case
    is there; the worst case is shown either way)."""

    def __post_init__(self) -> None:
        """Raise :class:`OptionError` naming the first bad field: an invalid one cannot exist."""
        check_range("threshold", self.threshold, closed=True)
        check_range("suite_threshold", self.suite_threshold, closed=True)
        if self.margin is not None and not 0 < self.margin < 1:
            raise OptionError("margin", f"must lie strictly between 0 and 1 (got {self.margin})")
        for name in ("confidence", "alpha", "power"):
            check_range(name, getattr(self, name))
        if not 0 < self.delta <= 1:
            raise OptionError("delta", f"must lie in (0, 1] (got {self.delta})")
        choices: tuple[tuple[str, object, type[StrEnum]], ...] = (
            ("errors", self.errors, ErrorPolicy),
            ("ci_method", self.ci_method, IntervalMethod),
            ("score_ci", self.score_ci, ScoreInterval),
            ("regression_test", self.regression_test, RegressionTest),
            ("adjust", self.adjust, Adjustment),
            ("suite_ci", self.suite_ci, SuiteInterval),
        )
        for name, choice, allowed in choices:
            check_choice(name, choice, allowed)
        if not self.ks or any(k < 1 for k in self.ks):
            raise OptionError("ks", f"needs whole numbers ≥ 1 (got {list(self.ks)})")
        if self.pass_when is not None:
            from assay.analysis import parse_pass_when

            parse_pass_when(self.pass_when)
        for rule in self.fail_on:
            parse_fail_on(rule)
        if self.max_std_dev is not None and self.max_std_dev < 0:
            raise OptionError("max_std_dev", f"must be ≥ 0 (got {self.max_std_dev})")


def parse_ks(text: str) -> tuple[int, ...]:
    """Parse the ``ks`` field written as text, ``"1,5,10"``, into ``(1, 5, 10)``.

    Raises:
        OptionError: Naming ``ks``: the text is not whole numbers ≥ 1 separated by commas.
    """
    try:
        ks = tuple(sorted({int(part) for part in text.split(",") if part.strip()}))
    except ValueError:
        raise OptionError(
            "ks", f"must be whole numbers separated by commas (got {text!r})"
        ) from None
    if not ks or ks[0] < 1:
        raise OptionError("ks", f"needs whole numbers ≥ 1 (got {text!r})")
    return ks


def check_range(name: str, value: float | None, *, closed: bool = False) -> None:
    """The one range check of a rate or probability option (None: not given, nothing to check).

    Args:
        name: The options field, named in the error.
        value: Its value.
        closed: The value may be 0 or 1 (a threshold); else it lies strictly between.

    Raises:
        OptionError: The value is out of range.
    """
    if value is None:
        return
    if closed and not 0 <= value <= 1:
        raise OptionError(name, f"must lie in [0, 1] (got {value})")
    if not closed and not 0 < value < 1:
        raise OptionError(name, f"must lie strictly between 0 and 1 (got {value})")


def check_choice(name: str, value: object, allowed: type[StrEnum]) -> None:
    """The one check of a choice option: one of ``allowed``'s values (None: not given)."""
    if value is not None and value not in tuple(allowed):
        raise OptionError(name, f"must be one of {', '.join(allowed)} (got {value!r})")
